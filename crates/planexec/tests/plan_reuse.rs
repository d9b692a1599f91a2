//! Plan reuse: a run that succeeded leaves its plan as a template; a task of
//! the same shape with other literals runs it with no planner call (still
//! reviewed, its version saying where it came from); `plan_reuse = off`
//! plans again; a reused plan that has to be revised marks its template,
//! which is then not reused until a new plan of its shape succeeds.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use planexec::{Event, MemoryStore, PlanReuse, RunOptions, RunStatus, RunStore};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn sum_plan(a: &str, b: &str, out: &str) -> Value {
    json!({"goal": format!("Add {a} and {b} into {out}"), "steps": [
        {"id": "s1", "description": format!("read {a}"), "tool": "read_file", "args": {"path": a}, "depends_on": []},
        {"id": "s2", "description": format!("read {b}"), "tool": "read_file", "args": {"path": b}, "depends_on": []},
        {"id": "s3", "description": "add", "tool": "calculator", "args": {"expression": "{{s1}} + {{s2}}"}, "depends_on": ["s1", "s2"]},
        {"id": "s4", "description": format!("write {out}"), "tool": "write_file", "args": {"path": out, "content": "{{s3}}"}, "depends_on": ["s3"]}
    ]})
}

fn task(a: &str, b: &str, out: &str) -> String {
    format!("Read {a} and {b}, add the two numbers, and write the sum to {out}.")
}

struct Setup {
    server: ScriptedServer,
    store: Arc<MemoryStore>,
    dir: tempfile::TempDir,
    tools: Arc<planexec::ToolRegistry>,
}

fn setup() -> Setup {
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("Done [s4]."));
    let (dir, tools) = workspace_tools();
    for (file, n) in [
        ("a.txt", 2),
        ("b.txt", 40),
        ("x.txt", 5),
        ("y.txt", 6),
        ("p.txt", 1),
        ("q.txt", 1),
    ] {
        std::fs::write(dir.path().join(file), format!("{n}\n")).unwrap();
    }
    Setup {
        server,
        store: Arc::new(MemoryStore::new()),
        dir,
        tools: Arc::new(tools),
    }
}

impl Setup {
    async fn run(&self, task: &str, reuse: PlanReuse) -> (planexec::RunReport, Vec<Event>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let agent = builder(&self.server, planexec::ToolRegistry::new())
            .tools(self.tools.clone())
            .store(self.store.clone())
            .options(RunOptions {
                plan_reuse: reuse,
                ..options()
            })
            .build();
        let log = seen.clone();
        agent.events().on_event(move |e| log.lock().unwrap().push(e.clone()));
        let report = agent.run(task).await;
        let events = seen.lock().unwrap().clone();
        (report, events)
    }

    /// The a.txt + b.txt task, planned by the planner: it leaves the template.
    async fn plan_and_run_the_first_task(&self) -> (planexec::RunReport, Vec<Event>) {
        self.server
            .role("planner")
            .reply(Reply::json(&sum_plan("a.txt", "b.txt", "sum.txt")));
        let (first, events) = self.run(&task("a.txt", "b.txt", "sum.txt"), PlanReuse::Similar).await;
        assert_eq!(first.status, RunStatus::Succeeded, "{:?}", first.error);
        (first, events)
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(file)).unwrap_or_default()
    }
}

#[tokio::test]
async fn a_task_of_the_same_shape_runs_the_stored_plan_with_no_planner_call() {
    let s = setup();
    let (first, _) = s.plan_and_run_the_first_task().await;
    assert_eq!(s.read("sum.txt"), "42");
    let templates = s.store.list_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].params, ["a.txt", "b.txt", "sum.txt"]);

    let (second, events) = s.run(&task("x.txt", "y.txt", "total.txt"), PlanReuse::Similar).await;
    assert_eq!(second.status, RunStatus::Succeeded, "{:?}", second.error);
    assert_eq!(s.read("total.txt"), "11", "the plan ran with the new task's files");
    assert_eq!(
        s.server.requests_from("planner").len(),
        1,
        "no planner call the second time"
    );
    assert!(second.usage.0.keys().all(|role| role.to_string() != "planner"));
    let reason = &second.plans[0].reason;
    assert!(
        reason.starts_with(&format!("reused from run {}", first.run_id)),
        "{reason}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::PlanReused { from_run, .. } if *from_run == first.run_id)));
    // Reviewed as any plan: the approver saw it and it was approved.
    assert!(events.iter().any(|e| matches!(e, Event::PlanApproved { version: 1 })));
    assert_eq!(s.store.list_templates().await.unwrap()[0].reused, 1);

    // Off: the planner plans again.
    s.server
        .role("planner")
        .reply(Reply::json(&sum_plan("p.txt", "q.txt", "two.txt")));
    let (third, events) = s.run(&task("p.txt", "q.txt", "two.txt"), PlanReuse::Off).await;
    assert_eq!(third.status, RunStatus::Succeeded, "{:?}", third.error);
    assert_eq!(s.server.requests_from("planner").len(), 2);
    assert!(!events.iter().any(|e| matches!(e, Event::PlanReused { .. })));

    // Exact: only the same literals.
    let (fourth, _) = s.run(&task("a.txt", "b.txt", "sum.txt"), PlanReuse::Exact).await;
    assert_eq!(fourth.status, RunStatus::Succeeded, "{:?}", fourth.error);
    assert_eq!(
        s.server.requests_from("planner").len(),
        2,
        "the same task reuses its plan"
    );
    s.server
        .role("planner")
        .reply(Reply::json(&sum_plan("x.txt", "a.txt", "mix.txt")));
    let (fifth, _) = s.run(&task("x.txt", "a.txt", "mix.txt"), PlanReuse::Exact).await;
    assert_eq!(fifth.status, RunStatus::Succeeded, "{:?}", fifth.error);
    assert_eq!(
        s.server.requests_from("planner").len(),
        3,
        "other literals: planned anew"
    );
}

#[tokio::test]
async fn a_reused_plan_that_fails_is_replanned_and_its_template_marked() {
    let s = setup();
    s.plan_and_run_the_first_task().await;

    // missing.txt does not exist: the reused plan's read fails (no recovery
    // agent is scripted), and the replanner revises the plan as usual.
    s.server
        .role("executor")
        .always(Reply::content("The file does not exist."));
    s.server.role("replanner").reply(Reply::json(&json!({"goal": "sum", "steps": [
        {"id": "s1", "description": "read x.txt", "tool": "read_file", "args": {"path": "x.txt"}, "depends_on": []},
        {"id": "s2", "description": "read y.txt", "tool": "read_file", "args": {"path": "y.txt"}, "depends_on": []},
        {"id": "s3", "description": "add", "tool": "calculator", "args": {"expression": "{{s1}} + {{s2}}"}, "depends_on": ["s1", "s2"]},
        {"id": "s4", "description": "write out.txt", "tool": "write_file", "args": {"path": "out.txt", "content": "{{s3}}"}, "depends_on": ["s3"]}
    ]})));
    let (second, _) = s
        .run(&task("missing.txt", "y.txt", "out.txt"), PlanReuse::Similar)
        .await;
    assert!(
        second.plans[0].reason.starts_with("reused from run"),
        "{:?}",
        second.plans
    );
    assert!(second.replans >= 1, "the reused plan was revised");
    let template = &s.store.list_templates().await.unwrap()[0];
    assert!(
        template.failed.as_deref().unwrap_or_default().contains(&second.run_id),
        "{template:?}"
    );

    // A marked template is not reused: the next task of its shape is planned.
    s.server
        .role("planner")
        .reply(Reply::json(&sum_plan("p.txt", "q.txt", "two.txt")));
    let (third, _) = s.run(&task("p.txt", "q.txt", "two.txt"), PlanReuse::Similar).await;
    assert_eq!(third.status, RunStatus::Succeeded, "{:?}", third.error);
    assert_eq!(s.server.requests_from("planner").len(), 2);
    // Its success replaced the marked template with a fresh one.
    let templates = s.store.list_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert!(templates[0].failed.is_none() && templates[0].run_id == third.run_id);
}

#[tokio::test]
async fn a_plan_is_reused_only_in_the_workspace_it_was_made_for() {
    let s = setup();
    s.plan_and_run_the_first_task().await;
    let here = s.store.list_templates().await.unwrap()[0].workspace.clone().unwrap();
    assert!(
        here.ends_with(s.dir.path().file_name().unwrap().to_str().unwrap()),
        "{here}"
    );

    // The same shape in another folder: its files are not the ones the plan was made for.
    let (other_dir, other_tools) = workspace_tools();
    for file in ["x.txt", "y.txt"] {
        std::fs::write(other_dir.path().join(file), "1\n").unwrap();
    }
    s.server
        .role("planner")
        .reply(Reply::json(&sum_plan("x.txt", "y.txt", "z.txt")));
    let report = builder(&s.server, planexec::ToolRegistry::new())
        .tools(Arc::new(other_tools))
        .store(s.store.clone())
        .options(options())
        .build()
        .run(&task("x.txt", "y.txt", "z.txt"))
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(s.server.requests_from("planner").len(), 2, "planned anew");
    assert_eq!(
        s.store.list_templates().await.unwrap().len(),
        2,
        "one template per workspace"
    );
}

#[tokio::test]
async fn a_react_trace_is_not_learned_and_a_rejected_reused_plan_marks_its_template() {
    let s = setup();
    // A ReAct run has a trace of calls, not a plan: nothing to learn from it.
    s.server.role("executor").replies(vec![
        Reply::tool_call("read_file", &json!({"path": "a.txt"})),
        Reply::content("a.txt holds 2."),
    ]);
    let react = builder(&s.server, planexec::ToolRegistry::new())
        .tools(s.tools.clone())
        .store(s.store.clone())
        .options(RunOptions {
            strategy: planexec::Strategy::React,
            ..options()
        })
        .build()
        .run("What number is in a.txt?")
        .await;
    assert_eq!(react.status, RunStatus::Succeeded, "{:?}", react.error);
    assert!(s.store.list_templates().await.unwrap().is_empty());

    s.plan_and_run_the_first_task().await;
    // A run that waits for a person, decided later from elsewhere: rejected.
    let waiting = builder(&s.server, planexec::ToolRegistry::new())
        .tools(s.tools.clone())
        .store(s.store.clone())
        .approver(Arc::new(planexec::ApproveLater))
        .options(options())
        .build()
        .run(&task("x.txt", "y.txt", "total.txt"))
        .await;
    assert_eq!(waiting.status, RunStatus::AwaitingApproval, "{:?}", waiting.error);
    assert!(waiting.plans[0].reason.starts_with("reused from run"));
    planexec::decisions::reject(s.store.as_ref(), &waiting.run_id, "wrong files", "me")
        .await
        .unwrap();
    let template = &s.store.list_templates().await.unwrap()[0];
    let why = template.failed.as_deref().unwrap_or_default();
    assert!(why.contains("rejected by me: wrong files"), "{template:?}");
}
