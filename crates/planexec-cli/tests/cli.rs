//! The real `planexec` binary against the scripted OpenAI-compatible server.

use std::process::{Command, Output, Stdio};

use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn planexec(workspace: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planexec"));
    cmd.current_dir(workspace)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("PLANEXEC_MODEL")
        .stdin(Stdio::null());
    cmd
}

fn run(cmd: &mut Command) -> (Output, String, String) {
    let out = cmd.output().expect("run planexec");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

fn script_happy_path(server: &ScriptedServer) {
    let plan = json!({"goal": "total with VAT", "steps": [
        {"id": "s1", "description": "read prices", "tool": "read_file", "args": {"path": "prices.txt"}, "depends_on": []},
        {"id": "s2", "description": "add VAT", "tool": "calculator", "args": {"expression": "{{s1}} * 1.5"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "write it", "tool": "write_file", "args": {"path": "total.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
    ]});
    server.role("planner").reply(Reply::json(&plan));
    server
        .role("synthesizer")
        .reply(Reply::content("The total is 15 [s2], written to total.txt [s3]."));
}

#[test]
fn run_json_prints_one_complete_report() {
    let server = ScriptedServer::start();
    script_happy_path(&server);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prices.txt"), "10").unwrap();
    let (out, stdout, stderr) = run(planexec(dir.path())
        .args([
            "run",
            "Add 50% to the price",
            "--yes",
            "--json",
            "--model",
            "m1",
            "--price",
            "m1=1,2",
        ])
        .args(["--base-url", &server.base_url()]));
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("stdout is exactly one JSON report");
    for key in [
        "run_id",
        "task",
        "status",
        "plan",
        "plans",
        "steps",
        "replans",
        "answer",
        "usage",
        "elapsed_ms",
    ] {
        assert!(report.get(key).is_some(), "missing {key}: {report}");
    }
    assert_eq!(report["status"], "succeeded");
    assert_eq!(report["task"], "Add 50% to the price");
    assert_eq!(report["answer"], "The total is 15 [s2], written to total.txt [s3].");
    assert_eq!(report["plans"][0]["reason"], "initial plan");
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    for s in steps {
        for key in [
            "id",
            "tool",
            "status",
            "attempts",
            "output",
            "error",
            "started_at",
            "finished_at",
        ] {
            assert!(s.get(key).is_some(), "step missing {key}: {s}");
        }
        assert_eq!(s["status"], "succeeded");
    }
    assert_eq!(report["usage"]["planner"]["calls"], 1);
    assert_eq!(report["usage"]["planner"]["prompt_tokens"], 100);
    assert_eq!(report["usage"]["synthesizer"]["completion_tokens"], 20);
    // 100 prompt tokens at $1/M plus 20 completion at $2/M.
    assert!((report["usage"]["planner"]["cost"].as_f64().unwrap() - 0.00014).abs() < 1e-12);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "15");
    // Progress and the usage summary go to stderr, never into the JSON.
    assert!(stderr.contains("✓ s2 ") && stderr.contains(" ms 15"), "{stderr}");
    assert!(
        stderr.contains("write_file(path=\"total.txt\", content=\"{{s2}}\") !"),
        "side effects are marked: {stderr}"
    );
    assert!(stderr.contains("planner"), "{stderr}");
    assert!(server.requests().iter().all(|r| r.body["model"] == "m1"));
}

#[test]
fn run_prints_the_answer_on_stdout() {
    let server = ScriptedServer::start();
    script_happy_path(&server);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prices.txt"), "10").unwrap();
    let (out, stdout, stderr) = run(planexec(dir.path())
        .args(["run", "t", "-y", "--planner-model", "big", "--executor-model", "small"])
        .env("OPENAI_BASE_URL", server.base_url()));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "The total is 15 [s2], written to total.txt [s3].");
    assert!(stderr.contains("Plan: total with VAT"), "{stderr}");
    assert_eq!(server.requests_from("planner")[0].body["model"], "big");
    assert_eq!(server.requests_from("synthesizer")[0].body["model"], "gpt-4o-mini");
}

#[test]
fn without_a_terminal_or_yes_it_refuses_before_calling_any_model() {
    let server = ScriptedServer::start();
    script_happy_path(&server);
    let dir = tempfile::tempdir().unwrap();
    let (out, _, stderr) = run(planexec(dir.path()).args(["run", "t", "--base-url", &server.base_url()]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("standard input is not a terminal; pass --yes"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn no_provider_configured_says_how_to_configure_one() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _, stderr) = run(planexec(dir.path()).args(["run", "t", "--yes"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("no model provider is configured: set OPENAI_API_KEY"),
        "{stderr}"
    );
}

#[test]
fn a_failed_run_exits_1_with_the_reason() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&json!({"goal": "g", "steps": [
        {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "../outside.txt"}, "depends_on": []}
    ]})));
    let dir = tempfile::tempdir().unwrap();
    let (out, stdout, stderr) = run(planexec(dir.path())
        .args(["run", "t", "--yes", "--json", "--max-replans", "0"])
        .args(["--base-url", &server.base_url()]));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["status"], "failed");
    assert!(report["error"].as_str().unwrap().contains("outside the workspace"));
    assert!(stderr.contains("failed: step s1 failed"), "{stderr}");
}

#[test]
fn connection_refused_is_one_clear_line() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let (out, _, stderr) = run(planexec(dir.path())
        .args(["run", "t", "--yes"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}/v1")]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains(&format!("cannot connect to http://127.0.0.1:{port}/v1")),
        "{stderr}"
    );
}

#[test]
fn bad_flags_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _, stderr) =
        run(planexec(dir.path()).args(["run", "t", "--yes", "--base-url", "http://x/v1", "--price", "oops"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("price for `oops` (from flag --price) should be INPUT,OUTPUT"),
        "{stderr}"
    );
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "run",
        "t",
        "--yes",
        "--base-url",
        "http://x/v1",
        "--workspace",
        "/no/such/dir",
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("workspace folder /no/such/dir cannot be used"),
        "{stderr}"
    );
}
