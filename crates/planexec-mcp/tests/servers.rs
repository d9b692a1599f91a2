//! Real MCP servers from npm and PyPI (installed by `scripts/mcp-servers.sh`),
//! over stdio and streamable HTTP, driven through the agent: tools registered
//! as `server.tool` with their effect classes, plans calling them, a server
//! that will not start, one killed mid-call, an `isError` result, a call past
//! its timeout, `tools/list_changed`, and the modes over MCP tools.
//!
//! Without the servers installed the tests skip, unless PLANEXEC_REQUIRE_MCP=1
//! (as in CI), where they fail.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::{
    Agent, Approval, Approver, Effect, Event, Mode, Plan, RunOptions, RunReport, RunStatus, Step, ToolRegistry,
};
use planexec_mcp::{McpServerConfig, McpServers};
use planexec_testkit::mcp::{mcp_home, McpHome};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn npm_bin(home: &McpHome, name: &str) -> String {
    home.npm(name).display().to_string()
}

fn venv_bin(home: &McpHome, name: &str) -> String {
    home.python(name).display().to_string()
}

fn agent(server: &ScriptedServer, tools: Arc<ToolRegistry>, options: RunOptions) -> planexec::AgentBuilder {
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: Some("test-key".into()),
        timeout: Duration::from_secs(10),
        max_retries: 0,
        retry_base: Duration::from_millis(10),
    })
    .unwrap();
    Agent::builder(Arc::new(provider), "test-model")
        .tools(tools)
        .options(options)
}

fn options(mode: Mode) -> RunOptions {
    RunOptions {
        mode,
        max_replans: 0,
        // These tests are about the adapter: a failed call ends its step as
        // the server failed it (recovery is tested in planexec's own tests).
        recover: planexec::Recover::Replan,
        retry_backoff: Duration::from_millis(10),
        ..RunOptions::default()
    }
}

fn plan(steps: Value) -> Plan {
    serde_json::from_value(json!({"goal": "test", "steps": steps})).unwrap()
}

async fn run(registry: &Arc<ToolRegistry>, mode: Mode, steps: Value) -> RunReport {
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("done"));
    agent(&server, registry.clone(), options(mode))
        .build()
        .run_plan("test", plan(steps))
        .await
}

fn output(report: &RunReport, id: &str) -> String {
    let step = report.step(id).unwrap();
    match step.output.as_ref() {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => panic!("{id} has no output: {:?}", step.error),
    }
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

#[tokio::test]
async fn filesystem_over_stdio_registers_namespaced_tools_with_effects_and_runs_a_plan() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let registry = Arc::new(ToolRegistry::new());
    let servers = McpServers::start(
        &[McpServerConfig::stdio(
            "fs",
            &npm_bin(&home, "mcp-server-filesystem"),
            &[&root],
        )],
        &registry,
    )
    .await
    .unwrap();
    let effect = |name: &str| registry.get(name).unwrap().declared_effect();
    assert_eq!(effect("fs.read_text_file"), Effect::ReadOnly);
    assert_eq!(effect("fs.list_directory"), Effect::ReadOnly);
    assert_eq!(effect("fs.write_file"), Effect::Irreversible, "destructiveHint");
    assert_eq!(
        effect("fs.create_directory"),
        Effect::External,
        "no hint: the cautious default"
    );
    assert!(registry
        .get("fs.read_text_file")
        .unwrap()
        .tool
        .description()
        .contains("file"));

    let report = run(
        &registry,
        Mode::Plan,
        json!([
            {"id": "s1", "description": "list", "tool": "fs.list_directory", "args": {"path": root}, "depends_on": []},
            {"id": "s2", "description": "read", "tool": "fs.read_text_file", "args": {"path": format!("{root}/notes.txt")}, "depends_on": ["s1"]}
        ]),
    )
    .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert!(
        output(&report, "s1").contains("[FILE] notes.txt"),
        "{}",
        output(&report, "s1")
    );
    // The server gives structured content, which is the step's output.
    assert_eq!(
        report.step("s2").unwrap().output,
        Some(json!({"content": "alpha\nbeta\n"}))
    );

    let pid = servers.get("fs").unwrap().pid().await.unwrap();
    assert!(alive(pid));
    servers.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!alive(pid), "the server process is stopped when the run ends");
    assert!(registry.names().is_empty(), "its tools are gone with it");
}

#[tokio::test]
async fn arguments_are_checked_against_the_servers_schema_before_a_call() {
    let Some(home) = mcp_home() else { return };
    let registry = Arc::new(ToolRegistry::new());
    let servers = McpServers::start(
        &[McpServerConfig::stdio(
            "time",
            &venv_bin(&home, "mcp-server-time"),
            &["--local-timezone", "UTC"],
        )],
        &registry,
    )
    .await
    .unwrap();
    let report = run(
        &registry,
        Mode::Plan,
        json!([{"id": "s1", "description": "now", "tool": "time.get_current_time", "args": {"zone": "UTC"}, "depends_on": []}]),
    )
    .await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap();
    assert!(
        error.contains("step s1: arguments for `time.get_current_time` are invalid") && error.contains("timezone"),
        "{error}"
    );
    let report = run(
        &registry,
        Mode::Plan,
        json!([{"id": "s1", "description": "now", "tool": "time.get_current_time", "args": {"timezone": "UTC"}, "depends_on": []}]),
    )
    .await;
    assert!(report.succeeded(), "{:?}", report.error);
    let now: Value = serde_json::from_str(&output(&report, "s1")).unwrap();
    assert_eq!(now["timezone"], "UTC");
    servers.shutdown().await;
}

#[tokio::test]
async fn an_is_error_result_fails_the_step_with_the_servers_message() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let registry = Arc::new(ToolRegistry::new());
    let servers = McpServers::start(
        &[McpServerConfig::stdio(
            "fs",
            &npm_bin(&home, "mcp-server-filesystem"),
            &[&root],
        )],
        &registry,
    )
    .await
    .unwrap();
    let report = run(
        &registry,
        Mode::Plan,
        json!([{"id": "s1", "description": "read", "tool": "fs.read_text_file", "args": {"path": format!("{root}/missing.txt")}, "depends_on": []}]),
    )
    .await;
    assert_eq!(report.status, RunStatus::Failed);
    let step = report.step("s1").unwrap();
    let error = step.error.as_deref().unwrap();
    assert!(
        error.starts_with("`fs.read_text_file` failed: ENOENT: no such file or directory"),
        "{error}"
    );
    assert_eq!(step.attempts, 1, "a tool's own error is not retried");
    servers.shutdown().await;
}

#[tokio::test]
async fn everything_over_streamable_http_on_loopback() {
    let Some(home) = mcp_home() else { return };
    let port = free_port();
    let mut child = tokio::process::Command::new(npm_bin(&home, "mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    wait_for_port(port).await;
    let registry = Arc::new(ToolRegistry::new());
    let servers = McpServers::start(&[McpServerConfig::http("web", &url)], &registry)
        .await
        .unwrap();
    assert_eq!(registry.get("web.echo").unwrap().declared_effect(), Effect::ReadOnly);
    let report = run(
        &registry,
        Mode::Plan,
        json!([
            {"id": "s1", "description": "echo", "tool": "web.echo", "args": {"message": "over http"}, "depends_on": []},
            {"id": "s2", "description": "sum", "tool": "web.get-sum", "args": {"a": 2, "b": 40}, "depends_on": []},
            {"id": "s3", "description": "image", "tool": "web.get-tiny-image", "args": {}, "depends_on": []}
        ]),
    )
    .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(output(&report, "s1"), "Echo: over http");
    assert!(output(&report, "s2").contains("42"), "{}", output(&report, "s2"));
    let image = output(&report, "s3");
    assert!(
        image.contains("[about") || image.contains("image/png image; not shown]"),
        "an image is described, not dumped: {image}"
    );
    assert!(image.len() < 300, "{image}");
    servers.shutdown().await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_server_that_will_not_start_is_named_with_its_command_and_stderr() {
    let registry = Arc::new(ToolRegistry::new());
    let broken = McpServerConfig::stdio(
        "broken",
        "sh",
        &[
            "-c",
            "echo 'loading config' >&2; echo 'fatal: no API token set' >&2; exit 3",
        ],
    );
    let error = McpServers::start(&[broken], &registry).await.err().unwrap().0;
    assert!(
        error.starts_with("MCP server `broken` did not start (`sh -c echo 'loading config'"),
        "{error}"
    );
    assert!(error.contains("fatal: no API token set"), "{error}");

    let missing = McpServerConfig::stdio("nope", "/no/such/mcp-server", &[]);
    let error = McpServers::start(&[missing], &registry).await.err().unwrap().0;
    assert!(
        error.contains("MCP server `nope` did not start (`/no/such/mcp-server`): cannot run `/no/such/mcp-server`"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_killed_mid_call_fails_the_attempt_and_the_retry_starts_it_again() {
    let Some(home) = mcp_home() else { return };
    let registry = Arc::new(ToolRegistry::new());
    let servers = McpServers::start(
        &[McpServerConfig::stdio(
            "ev",
            &npm_bin(&home, "mcp-server-everything"),
            &[],
        )],
        &registry,
    )
    .await
    .unwrap();
    let server = servers.get("ev").unwrap().clone();
    let pid = server.pid().await.unwrap();
    let scripted = ScriptedServer::start();
    scripted.role("synthesizer").always(Reply::content("done"));
    let agent = agent(&scripted, registry.clone(), options(Mode::Plan)).build();
    let retries = Arc::new(Mutex::new(Vec::new()));
    let seen = retries.clone();
    agent.events().on_event(move |e| match e {
        Event::StepStarted { .. } => {
            // Kill it while the long call is in flight.
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(500));
                kill_9(pid);
            });
        }
        Event::StepRetried { error, .. } => seen.lock().unwrap().push(error.clone()),
        _ => {}
    });
    let report = agent
        .run_plan(
            "t",
            plan(
                json!([{"id": "s1", "description": "slow", "tool": "ev.trigger-long-running-operation",
                "args": {"duration": 2, "steps": 2}, "depends_on": []}]),
            ),
        )
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().attempts, 2);
    let retries = retries.lock().unwrap().clone();
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert!(
        retries[0].starts_with("MCP server `ev` stopped during the call to `trigger-long-running-operation`"),
        "{}",
        retries[0]
    );
    assert_eq!(server.starts(), 2, "started again for the retry");
    assert_ne!(server.pid().await, Some(pid));
    servers.shutdown().await;
}

/// SIGKILL, as a crash would.
fn kill_9(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
}

#[tokio::test]
async fn a_call_past_its_timeout_is_cancelled() {
    let Some(home) = mcp_home() else { return };
    let registry = Arc::new(ToolRegistry::new());
    let mut config = McpServerConfig::stdio("ev", &npm_bin(&home, "mcp-server-everything"), &[]);
    config.timeout = Duration::from_millis(800);
    let servers = McpServers::start(&[config], &registry).await.unwrap();
    let started = Instant::now();
    let report = run(
        &registry,
        Mode::Plan,
        json!([{"id": "s1", "description": "slow", "tool": "ev.trigger-long-running-operation",
            "args": {"duration": 30, "steps": 3}, "depends_on": []}]),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(report.status, RunStatus::Failed);
    assert_eq!(
        report.step("s1").unwrap().error.as_deref(),
        Some("`ev.trigger-long-running-operation` did not answer within 0.8s; the call was cancelled")
    );
    // The connection is still good for the next call.
    let report = run(
        &registry,
        Mode::Plan,
        json!([{"id": "s1", "description": "echo", "tool": "ev.echo", "args": {"message": "still here"}, "depends_on": []}]),
    )
    .await;
    assert_eq!(output(&report, "s1"), "Echo: still here");
    servers.shutdown().await;
}

#[tokio::test]
async fn tools_list_changed_refreshes_the_registry() {
    let Some(home) = mcp_home() else { return };
    let registry = Arc::new(ToolRegistry::new());
    // server-everything announces a changed tool list once it is initialized.
    let servers = McpServers::start(
        &[McpServerConfig::stdio(
            "ev",
            &npm_bin(&home, "mcp-server-everything"),
            &[],
        )],
        &registry,
    )
    .await
    .unwrap();
    let server = servers.get("ev").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.refreshes() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(server.refreshes() >= 1, "the notification was handled");
    assert!(registry.get("ev.echo").is_some());
    // Its tools, and the one tool that reads every server's resources.
    assert!(registry.get("mcp_resource").is_some());
    assert_eq!(server.tool_names().len() + 1, registry.names().len());
    servers.shutdown().await;
}

#[tokio::test]
async fn git_and_memory_servers_side_by_side_in_one_plan() {
    let Some(home) = mcp_home() else { return };
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("a.txt"), "a").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first commit"]);
    let repo_path = repo.path().canonicalize().unwrap().display().to_string();
    let memory_file = repo.path().join("memory.jsonl");

    let registry = Arc::new(ToolRegistry::new());
    let mut memory = McpServerConfig::stdio("mem", &npm_bin(&home, "mcp-server-memory"), &[]);
    if let planexec_mcp::McpTransport::Stdio { env, .. } = &mut memory.transport {
        env.insert("MEMORY_FILE_PATH".into(), memory_file.display().to_string());
    }
    let servers = McpServers::start(
        &[
            McpServerConfig::stdio("git", &venv_bin(&home, "mcp-server-git"), &["--repository", &repo_path]),
            memory,
        ],
        &registry,
    )
    .await
    .unwrap();
    assert_eq!(
        registry.get("git.git_reset").unwrap().declared_effect(),
        Effect::Irreversible
    );
    assert_eq!(
        registry.get("git.git_commit").unwrap().declared_effect(),
        Effect::External
    );
    assert_eq!(
        registry.get("mem.read_graph").unwrap().declared_effect(),
        Effect::ReadOnly
    );

    let report = run(
        &registry,
        Mode::Auto,
        json!([
            {"id": "s1", "description": "log", "tool": "git.git_log", "args": {"repo_path": repo_path, "max_count": 1}, "depends_on": []},
            {"id": "s2", "description": "remember", "tool": "mem.create_entities",
             "args": {"entities": [{"name": "repo", "entityType": "project", "observations": ["{{s1}}"]}]}, "depends_on": ["s1"]},
            {"id": "s3", "description": "recall", "tool": "mem.read_graph", "args": {}, "depends_on": ["s2"]}
        ]),
    )
    .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert!(output(&report, "s1").contains("first commit"));
    assert!(
        output(&report, "s3").contains("first commit"),
        "{}",
        output(&report, "s3")
    );
    assert!(std::fs::read_to_string(&memory_file).unwrap().contains("first commit"));
    servers.shutdown().await;
}

/// Records confirmations and answers `yes`.
#[derive(Default)]
struct Confirmations(Mutex<Vec<(String, Value, Effect)>>);

#[async_trait]
impl Approver for Confirmations {
    async fn review(&self, _plan: &Plan, _check: planexec::policy::PlanCheck<'_>) -> Approval {
        Approval::Approve
    }
    async fn confirm_step(&self, step: &Step, args: &Value, effect: Effect) -> bool {
        self.0.lock().unwrap().push((step.id.clone(), args.clone(), effect));
        true
    }
}

#[tokio::test]
async fn the_modes_hold_for_mcp_tools() {
    let Some(home) = mcp_home() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let registry = Arc::new(ToolRegistry::new());
    let servers = McpServers::start(
        &[McpServerConfig::stdio(
            "fs",
            &npm_bin(&home, "mcp-server-filesystem"),
            &[&root],
        )],
        &registry,
    )
    .await
    .unwrap();
    let steps = json!([
        {"id": "s1", "description": "list", "tool": "fs.list_directory", "args": {"path": root}, "depends_on": []},
        {"id": "s2", "description": "mkdir", "tool": "fs.create_directory", "args": {"path": format!("{root}/out")}, "depends_on": ["s1"]},
        {"id": "s3", "description": "write", "tool": "fs.write_file", "args": {"path": format!("{root}/out/a.txt"), "content": "hi"}, "depends_on": ["s2"]}
    ]);

    // plan: refused before anything runs.
    let report = run(&registry, Mode::Plan, steps.clone()).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap();
    assert!(error.contains("step s2 uses `fs.create_directory`, which has effects outside the workspace"));
    assert!(error.contains("step s3 uses `fs.write_file`, which cannot be undone"));
    assert!(!dir.path().join("out").exists());

    let scripted = ScriptedServer::start();
    scripted.role("synthesizer").always(Reply::content("done"));
    let modes = [(Mode::Ask, vec!["s2", "s3"]), (Mode::Auto, vec!["s3"])];
    for (mode, expected) in modes {
        let _ = std::fs::remove_dir_all(dir.path().join("out"));
        let approver = Arc::new(Confirmations::default());
        let report = agent(&scripted, registry.clone(), options(mode))
            .approver(approver.clone())
            .build()
            .run_plan("t", plan(steps.clone()))
            .await;
        assert!(report.succeeded(), "{mode:?}: {:?}", report.error);
        let asked = approver.0.lock().unwrap().clone();
        let ids: Vec<&str> = asked.iter().map(|(id, _, _)| id.as_str()).collect();
        assert_eq!(ids, expected, "{mode:?}");
        let last = asked.last().unwrap();
        assert_eq!(last.1["content"], "hi", "shown with its resolved arguments");
        assert_eq!(last.2, Effect::Irreversible);
        assert_eq!(std::fs::read_to_string(dir.path().join("out/a.txt")).unwrap(), "hi");
    }

    // auto, with fs.write_file allowed in config: nothing asks.
    let _ = std::fs::remove_dir_all(dir.path().join("out"));
    let approver = Arc::new(Confirmations::default());
    let mut opts = options(Mode::Auto);
    opts.allow_irreversible = vec!["fs.write_file".into()];
    let report = agent(&scripted, registry.clone(), opts)
        .approver(approver.clone())
        .build()
        .run_plan("t", plan(steps))
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert!(approver.0.lock().unwrap().is_empty());
    servers.shutdown().await;
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("server-everything did not listen on {port}");
}
