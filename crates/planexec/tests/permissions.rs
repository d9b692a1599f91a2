//! The modes are enforced by the runtime: plan mode refuses tools with side
//! effects whatever the plan says, ask mode confirms every such call with its
//! resolved arguments (including a call an executor model repaired), and auto
//! mode asks only for irreversible tools that are not explicitly allowed.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::*;
use planexec::{Approval, Approver, Effect, Mode, Plan, RunStatus, Step, ToolError};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

/// Approves plans; answers confirmations with `yes` and records what it was asked.
struct Recording {
    yes: bool,
    asked: Mutex<Vec<(String, Value, Effect)>>,
}

impl Recording {
    fn new(yes: bool) -> Arc<Recording> {
        Arc::new(Recording {
            yes,
            asked: Mutex::default(),
        })
    }
    fn asked(&self) -> Vec<(String, Value, Effect)> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl Approver for Recording {
    async fn review(&self, _plan: &Plan, _check: planexec::policy::PlanCheck<'_>) -> Approval {
        Approval::Approve
    }
    async fn confirm_step(&self, step: &Step, args: &Value, effect: Effect) -> bool {
        self.asked.lock().unwrap().push((step.id.clone(), args.clone(), effect));
        self.yes
    }
}

fn tool(name: &str, effect: Effect) -> TestTool {
    let mut t = TestTool::new(name);
    t.effect = effect;
    t
}

fn with_mode(mode: Mode) -> planexec::RunOptions {
    let mut o = options();
    o.mode = mode;
    o.max_replans = 0;
    o
}

#[tokio::test]
async fn plan_mode_refuses_a_plan_with_side_effects_before_anything_runs() {
    let server = ScriptedServer::start();
    let writer = tool("writer", Effect::WritesWorkspace);
    let writes = writer.counter();
    let approver = Recording::new(true);
    let agent = builder(&server, registry(vec![TestTool::new("echo"), writer]))
        .options(with_mode(Mode::Plan))
        .approver(approver.clone())
        .build();
    let plan: Plan = serde_json::from_value(plan_json(vec![
        step("s1", Some("echo"), json!({"input": "a"}), &[]),
        step("s2", Some("writer"), json!({"input": "b"}), &["s1"]),
    ]))
    .unwrap();
    let report = agent.run_plan("t", plan).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap_or_default();
    assert!(
        error.contains(
            "step s2 uses `writer`, which writes inside the workspace; this run is in plan mode, where only read-only tools may run"
        ),
        "{error}"
    );
    assert_eq!(writes.load(Ordering::SeqCst), 0);
    assert!(approver.asked().is_empty(), "nothing is asked: it is refused");
}

#[tokio::test]
async fn plan_mode_sends_the_planner_back_and_runs_only_reads() {
    let server = ScriptedServer::start();
    let writer = tool("writer", Effect::External);
    let writes = writer.counter();
    server.role("planner").replies(vec![
        Reply::json(&plan_json(vec![step("s1", Some("writer"), json!({"input": "x"}), &[])])),
        Reply::json(&plan_json(vec![step("s1", Some("echo"), json!({"input": "x"}), &[])])),
    ]);
    server.role("synthesizer").reply(Reply::content("done"));
    let report = builder(&server, registry(vec![TestTool::new("echo"), writer]))
        .options(with_mode(Mode::Plan))
        .build()
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(writes.load(Ordering::SeqCst), 0);
    let asks = server.requests_from("planner");
    assert!(asks[0].prompt_text().contains("This run is in plan mode"));
    assert!(
        asks[1]
            .prompt_text()
            .contains("which has effects outside the workspace; this run is in plan mode"),
        "{}",
        asks[1].prompt_text()
    );
}

#[tokio::test]
async fn ask_mode_confirms_each_side_effect_and_a_no_stops_it() {
    let server = ScriptedServer::start();
    let writer = tool("writer", Effect::WritesWorkspace);
    let writes = writer.counter();
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", Some("echo"), json!({"input": "hello"}), &[]),
        step("s2", Some("writer"), json!({"input": "{{s1.input}} world"}), &["s1"]),
    ])));
    let approver = Recording::new(false);
    let report = builder(&server, registry(vec![TestTool::new("echo"), writer]))
        .options(with_mode(Mode::Ask))
        .approver(approver.clone())
        .build()
        .run("t")
        .await;
    assert_eq!(report.status, RunStatus::Failed);
    assert_eq!(writes.load(Ordering::SeqCst), 0);
    assert_eq!(
        approver.asked(),
        [(
            "s2".to_string(),
            json!({"input": "hello world"}),
            Effect::WritesWorkspace
        )]
    );
    assert!(report
        .step("s2")
        .unwrap()
        .error
        .as_deref()
        .unwrap()
        .contains("declined"));
}

#[tokio::test]
async fn auto_mode_asks_only_for_irreversible_tools_not_allowed() {
    let server = ScriptedServer::start();
    let (writer, external, drop_db, rm) = (
        tool("writer", Effect::WritesWorkspace),
        tool("notify", Effect::External),
        tool("drop_db", Effect::Irreversible),
        tool("rm", Effect::Irreversible),
    );
    let counters = [writer.counter(), external.counter(), drop_db.counter(), rm.counter()];
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", Some("writer"), json!({"input": "a"}), &[]),
        step("s2", Some("notify"), json!({"input": "b"}), &[]),
        step("s3", Some("drop_db"), json!({"input": "c"}), &[]),
        step("s4", Some("rm"), json!({"input": "d"}), &[]),
    ])));
    server.role("synthesizer").reply(Reply::content("done"));
    let mut options = with_mode(Mode::Auto);
    options.allow_irreversible = vec!["rm".to_string()];
    let approver = Recording::new(true);
    let report = builder(&server, registry(vec![writer, external, drop_db, rm]))
        .options(options)
        .approver(approver.clone())
        .build()
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(counters.map(|c| c.load(Ordering::SeqCst)), [1, 1, 1, 1]);
    let asked: Vec<String> = approver.asked().into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(asked, ["s3"], "only the irreversible tool that config does not allow");
}

#[tokio::test]
async fn a_call_made_by_a_recovery_is_confirmed_again() {
    let server = ScriptedServer::start();
    let writer = tool("writer", Effect::External).failing(1, ToolError::invalid_args("no such target"));
    let calls = writer.counter();
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("writer"),
        json!({"input": "first"}),
        &[],
    )])));
    server
        .role("agent")
        .reply(Reply::tool_call("writer", &json!({"input": "second"})));
    server.role("synthesizer").reply(Reply::content("done"));
    let approver = Recording::new(true);
    let report = builder(&server, registry(vec![writer]))
        .options(with_mode(Mode::Ask))
        .approver(approver.clone())
        .build()
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let asked: Vec<Value> = approver.asked().into_iter().map(|(_, args, _)| args).collect();
    assert_eq!(asked, [json!({"input": "first"}), json!({"input": "second"})]);
}

#[tokio::test]
async fn configured_effect_classes_override_the_tools_own() {
    let server = ScriptedServer::start();
    let tools = registry(vec![tool("lookup", Effect::External)]);
    tools.override_effect("lookup", Effect::ReadOnly);
    let plan: Plan =
        serde_json::from_value(plan_json(vec![step("s1", Some("lookup"), json!({"input": "a"}), &[])])).unwrap();
    server.role("synthesizer").reply(Reply::content("done"));
    let report = builder(&server, tools)
        .options(with_mode(Mode::Plan))
        .build()
        .run_plan("t", plan)
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
}

#[tokio::test]
async fn huge_tool_output_is_capped_with_a_marker() {
    struct Loud;
    #[async_trait]
    impl planexec::Tool for Loud {
        fn name(&self) -> &str {
            "loud"
        }
        fn description(&self) -> &str {
            "prints a lot"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn effect(&self) -> Effect {
            Effect::ReadOnly
        }
        async fn call(&self, _args: Value) -> Result<Value, ToolError> {
            Ok(json!({"stdout": "line\n".repeat(100_000)}))
        }
    }
    let server = ScriptedServer::start();
    server.role("synthesizer").reply(Reply::content("done"));
    let mut tools = planexec::ToolRegistry::new();
    tools.register(Arc::new(Loud)).unwrap();
    let plan: Plan = serde_json::from_value(plan_json(vec![step("s1", Some("loud"), json!({}), &[])])).unwrap();
    let report = agent(&server, tools).run_plan("t", plan).await;
    let out = report.step("s1").unwrap().output.as_ref().unwrap()["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(out.len() < 20_000, "{} bytes kept", out.len());
    assert!(
        out.ends_with("[... output truncated: showing 2000 of 100000 lines, 9999 of 500000 bytes]"),
        "{}",
        &out[out.len() - 100..]
    );
}

#[tokio::test]
async fn plan_mode_refuses_a_replan_that_brings_in_a_side_effect() {
    let server = ScriptedServer::start();
    let writer = tool("writer", Effect::WritesWorkspace);
    let writes = writer.counter();
    let bad = TestTool::new("bad").failing(u32::MAX, ToolError::failed("no data"));
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("bad"),
        json!({"input": "a"}),
        &[],
    )])));
    server.role("replanner").replies(vec![
        Reply::json(&plan_json(vec![step("s2", Some("writer"), json!({"input": "b"}), &[])])),
        Reply::json(&plan_json(vec![step("s3", Some("echo"), json!({"input": "c"}), &[])])),
    ]);
    server.role("synthesizer").reply(Reply::content("done"));
    let mut options = with_mode(Mode::Plan);
    options.max_replans = 1;
    let report = builder(&server, registry(vec![TestTool::new("echo"), writer, bad]))
        .options(options)
        .build()
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(writes.load(Ordering::SeqCst), 0);
    assert!(report.step("s2").is_none());
    let asks = server.requests_from("replanner");
    assert_eq!(asks.len(), 2);
    assert!(
        asks[1]
            .prompt_text()
            .contains("step s2 uses `writer`, which writes inside the workspace; this run is in plan mode"),
        "{}",
        asks[1].prompt_text()
    );
}

#[test]
fn a_configured_effect_class_decides_idempotence_too() {
    // The tool says it is read-only; configuration says it has external effects,
    // so a resume must not re-run it unasked.
    let tools = registry(vec![tool("lookup", Effect::ReadOnly)]);
    assert!(tools.is_idempotent("lookup"));
    tools.override_effect("lookup", Effect::External);
    assert!(!tools.is_idempotent("lookup"));
    assert!(tools.has_side_effects("lookup"));
}

/// A tiny HTTP server on loopback that answers every request with `pong`
/// and counts the requests it got.
fn pong_server() -> (String, Arc<std::sync::atomic::AtomicU32>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 2048];
            let _ = stream.read(&mut buf);
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\npong");
        }
    });
    (format!("http://127.0.0.1:{port}/x"), hits)
}

/// `http_get` is a network call, not a read: a URL can carry workspace data
/// out. Plan mode refuses it and ask mode confirms it, unless its host is
/// one the user allowed, where it runs as a read.
#[tokio::test]
async fn http_get_is_a_network_call_unless_its_host_is_allowed() {
    let (url, hits) = pong_server();
    let plan = plan_json(vec![step("s1", Some("http_get"), json!({"url": url}), &[])]);
    let tools = |hosts: Vec<String>| {
        let mut reg = planexec::ToolRegistry::new();
        reg.register(planexec::tools::builtin::http_get(hosts)).unwrap();
        reg
    };
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&plan));
    server.role("synthesizer").always(Reply::content("done"));

    let report = builder(&server, tools(vec![]))
        .options(with_mode(Mode::Plan))
        .build()
        .run("t")
        .await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = report.error.clone().unwrap_or_default();
    assert!(error.contains("reaches the network"), "{error}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent in plan mode");

    let approver = Recording::new(false);
    let report = builder(&server, tools(vec![]))
        .options(with_mode(Mode::Ask))
        .approver(approver.clone())
        .build()
        .run("t")
        .await;
    assert_eq!(report.status, RunStatus::Failed);
    assert_eq!(
        approver.asked(),
        [("s1".to_string(), json!({"url": url}), Effect::Network)]
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "declined, so nothing was sent");

    for mode in [Mode::Plan, Mode::Ask] {
        let approver = Recording::new(false);
        let report = builder(&server, tools(vec!["127.0.0.1".to_string()]))
            .options(with_mode(mode))
            .approver(approver.clone())
            .build()
            .run("t")
            .await;
        assert_eq!(report.status, RunStatus::Succeeded, "{mode:?}: {:?}", report.error);
        assert!(approver.asked().is_empty(), "an allowed host is not confirmed");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}
