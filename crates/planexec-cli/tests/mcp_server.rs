//! `planexec mcp-server` driven by a real MCP client, the official Python SDK
//! (installed by scripts/mcp-servers.sh), against the scripted
//! OpenAI-compatible server: the client lists planexec's tools, calls `run`
//! on a task that writes a file, gets progress notifications and the answer;
//! the file exists and the run is in the ledger. Without `--yes` a run waits
//! for the `approve` tool, which runs it.

mod common;

use std::path::Path;
use std::process::Command;

use common::{planexec, run};
use planexec_testkit::{mcp::mcp_home, Reply, ScriptedServer};
use serde_json::{json, Value};

fn script(server: &ScriptedServer) {
    server.role("planner").always(Reply::json(&json!({"goal": "double", "steps": [
        {"id": "s1", "description": "read n.txt", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []},
        {"id": "s2", "description": "double it", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "write out.txt", "tool": "write_file", "args": {"path": "out.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}]})));
    // The run checks its work (verify, on by default): with python, a
    // program written from the task alone derives out.txt again, and agrees.
    server
        .role("synthesizer")
        .containing("Write a short Python 3 program")
        .always(Reply::json(&json!({"code": "print(int(open('n.txt').read()) * 2)"})));
    server
        .role("synthesizer")
        .containing("You are the checker")
        .always(Reply::json(&json!({"done": true, "wrong": ""})));
    server
        .role("synthesizer")
        .always(Reply::content("out.txt now holds 42 [s3]."));
}

/// The Python client calling `tool` with `args` on `planexec mcp-server SERVER_ARGS`.
fn call(python: &Path, dir: &Path, tool: &str, args: Value, server_args: &[&str]) -> Value {
    call_eliciting(python, dir, tool, args, server_args, None)
}

/// [`call`] by a client that can elicit, answering every request with `answer`.
fn call_eliciting(
    python: &Path,
    dir: &Path,
    tool: &str,
    args: Value,
    server_args: &[&str],
    answer: Option<Value>,
) -> Value {
    let answer = answer.map(|a| a.to_string());
    let env: Vec<(&str, &str)> = answer.iter().map(|a| ("ELICIT_ANSWER", a.as_str())).collect();
    call_with_env(python, dir, tool, args, server_args, &env)
}

/// [`call`] with the client's environment variables `env` (see mcp_client.py).
fn call_with_env(
    python: &Path,
    dir: &Path,
    tool: &str,
    args: Value,
    server_args: &[&str],
    env: &[(&str, &str)],
) -> Value {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_client.py");
    // The server is started by the client, with the test's isolated environment.
    let isolated = planexec(dir);
    let mut cmd = Command::new(python);
    cmd.current_dir(dir)
        .arg(client)
        .arg(env!("CARGO_BIN_EXE_planexec"))
        .arg(tool)
        .arg(args.to_string())
        .arg("--")
        .args(server_args)
        .env_clear();
    for (key, value) in isolated.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::var_os("HOME").unwrap_or_default());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let (out, stdout, stderr) = run(&mut cmd);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

#[test]
fn a_python_mcp_client_runs_a_task_with_progress_and_the_run_is_in_the_ledger() {
    let Some(home) = mcp_home() else {
        return;
    };
    let python = home.python("python");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "21\n").unwrap();
    let server = ScriptedServer::start();
    script(&server);
    let url = server.base_url();
    let db = dir.path().join("ledger.db");
    let db = db.to_str().unwrap();
    let workspace = dir.path().to_str().unwrap();
    let base = [
        "--workspace",
        workspace,
        "--base-url",
        &url,
        "--db",
        db,
        "--mode",
        "auto",
    ];

    let args: Vec<&str> = base.iter().copied().chain(["--yes"]).collect();
    let task = json!({"task": "Double the number in n.txt and write it to out.txt."});
    let got = call(&python, dir.path(), "run", task, &args);
    assert_eq!(got["tools"], json!(["plan", "run", "runs_show", "approve", "reject"]));
    assert_eq!(got["text"], json!("out.txt now holds 42 [s3]."), "{got}");
    assert_eq!(got["is_error"], json!(false));
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "42");
    let progress = got["progress"].as_array().unwrap();
    assert!(
        progress
            .iter()
            .any(|p| p["message"] == json!("s3 done") && p["total"] == json!(3.0)),
        "{got}"
    );
    let run_id = got["structured"]["run_id"].as_str().unwrap().to_string();
    assert_eq!(got["structured"]["status"], json!("succeeded"));
    let (_, stdout, _) = run(planexec(dir.path()).args(["runs", "list", "--json", "--db", db]));
    assert!(stdout.contains(&run_id), "the run is in the ledger: {stdout}");

    // A client may narrow the server's mode, not widen it.
    let got = call(
        &python,
        dir.path(),
        "run",
        json!({"task": "x", "mode": "auto"}),
        &[
            "--workspace",
            workspace,
            "--base-url",
            &url,
            "--db",
            db,
            "--mode",
            "plan",
        ],
    );
    assert_eq!(got["is_error"], json!(true));
    assert!(
        got["text"]
            .as_str()
            .unwrap()
            .contains("a client may narrow the mode, not widen it"),
        "{got}"
    );

    // Without --yes the run waits; the `approve` tool runs it.
    std::fs::remove_file(dir.path().join("out.txt")).unwrap();
    let task = json!({"task": "Double the number in n.txt and write it to out.txt.", "mode": "auto"});
    let got = call(&python, dir.path(), "run", task, &base);
    assert_eq!(got["structured"]["status"], json!("awaiting_approval"), "{got}");
    assert!(
        got["text"].as_str().unwrap().contains("call `approve` with run_id"),
        "{got}"
    );
    assert!(!dir.path().join("out.txt").exists(), "nothing ran before the approval");
    let waiting = got["structured"]["run_id"].as_str().unwrap().to_string();
    let got = call(&python, dir.path(), "approve", json!({"run_id": waiting}), &base);
    assert_eq!(got["structured"]["status"], json!("succeeded"), "{got}");
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "42");
    let got = call(&python, dir.path(), "runs_show", json!({"run_id": waiting}), &base);
    assert_eq!(got["structured"]["report"]["status"], json!("succeeded"), "{got}");
}

#[test]
fn a_client_that_can_elicit_approves_the_plan_and_confirms_each_write() {
    let Some(home) = mcp_home() else {
        return;
    };
    let python = home.python("python");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "21\n").unwrap();
    let server = ScriptedServer::start();
    script(&server);
    let url = server.base_url();
    let db = dir.path().join("ledger.db");
    let workspace = dir.path().to_str().unwrap();
    // ask mode, no --yes: the person behind the client decides.
    let args = [
        "--workspace",
        workspace,
        "--base-url",
        &url,
        "--db",
        db.to_str().unwrap(),
        "--mode",
        "ask",
    ];
    let task = json!({"task": "Double the number in n.txt and write it to out.txt."});
    let yes = json!({"approve": true, "confirm": true});
    let got = call_eliciting(&python, dir.path(), "run", task.clone(), &args, Some(yes));
    assert_eq!(got["structured"]["status"], json!("succeeded"), "{got}");
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "42");
    let asked = got["elicited"].as_array().unwrap();
    assert!(
        asked[0].as_str().unwrap().starts_with("planexec planned this; run it?"),
        "{got}"
    );
    assert!(
        asked.iter().any(|m| m.as_str().unwrap().contains("calls write_file")),
        "the write was confirmed: {got}"
    );

    // Declined: the run ends rejected and nothing is written.
    std::fs::remove_file(dir.path().join("out.txt")).unwrap();
    let no = json!({"approve": false});
    let got = call_eliciting(&python, dir.path(), "run", task, &args, Some(no));
    assert_eq!(got["structured"]["status"], json!("rejected"), "{got}");
    assert!(!dir.path().join("out.txt").exists());
}

/// `planexec mcp-server --http`, started here; killed when dropped.
struct HttpServer(std::process::Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `planexec mcp-server --http 127.0.0.1:0 ARGS` and read its URL from its first line.
fn start_http(dir: &Path, args: &[&str]) -> (HttpServer, String) {
    use std::io::BufRead;
    let mut child = planexec(dir)
        .args(["mcp-server", "--http", "127.0.0.1:0"])
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    let server = HttpServer(child);
    let first = lines.next().unwrap().unwrap();
    let url = first
        .split("listening on ")
        .nth(1)
        .unwrap_or_else(|| panic!("{first}"))
        .trim()
        .to_string();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.by_ref() {});
    (server, url)
}

#[test]
fn over_streamable_http_with_a_token_a_client_runs_a_task() {
    let Some(home) = mcp_home() else {
        return;
    };
    let python = home.python("python");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "21\n").unwrap();
    let server = ScriptedServer::start();
    script(&server);
    let db = dir.path().join("ledger.db");
    let workspace = dir.path().to_str().unwrap();
    let base = server.base_url();
    let args = [
        "--workspace",
        workspace,
        "--base-url",
        &base,
        "--db",
        db.to_str().unwrap(),
        "--mode",
        "auto",
        "--yes",
        "--token",
        "s3cret",
    ];
    let (_running, url) = start_http(dir.path(), &args);
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_client.py");
    let task = json!({"task": "Double the number in n.txt and write it to out.txt."}).to_string();
    let out = Command::new(&python)
        .args([client.to_str().unwrap(), &url, "run", &task])
        .env("MCP_TOKEN", "s3cret")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(got["structured"]["status"], json!("succeeded"), "{got}");
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "42");
    // Without the token: refused.
    let out = Command::new(&python)
        .args([client.to_str().unwrap(), &url, "run", &task])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a client without the token is refused");

    // Off loopback, no token: refused before anything starts.
    let (out, _, stderr) = run(planexec(dir.path()).args(["mcp-server", "--http", "0.0.0.0:0"]));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs a bearer token: pass --token"), "{stderr}");
}

#[test]
fn a_client_that_cancels_run_stops_the_run() {
    let Some(home) = mcp_home() else {
        return;
    };
    let python = home.python("python");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "21\n").unwrap();
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&json!({"goal": "double", "steps": [
        {"id": "s1", "description": "read n.txt", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []}]})));
    // The answer would take a minute: the client cancels long before.
    server
        .role("synthesizer")
        .always(Reply::content("too late").with_delay(std::time::Duration::from_secs(60)));
    let url = server.base_url();
    let db = dir.path().join("ledger.db");
    let args = [
        "--workspace",
        dir.path().to_str().unwrap(),
        "--base-url",
        &url,
        "--db",
        db.to_str().unwrap(),
        "--mode",
        "auto",
        "--yes",
        "--verify",
        "off",
    ];
    let task = json!({"task": "Double the number in n.txt and write it to out.txt."});
    let got = call_with_env(&python, dir.path(), "run", task, &args, &[("CANCEL_AFTER", "3")]);
    assert!(
        got["progress"][0]["message"].as_str().unwrap().starts_with("run run-"),
        "{got}"
    );
    assert_eq!(got["shown"]["report"]["status"], json!("interrupted"), "{got}");
}

/// A run of the MCP server whose step's own MCP server asks a question:
/// with a client that cannot elicit, the run waits, and `approve` with an
/// `answer` gives it.
#[test]
fn a_question_from_a_steps_server_is_answered_with_the_approve_tool() {
    let Some(home) = mcp_home() else {
        return;
    };
    let python = home.python("python");
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&json!({"goal": "ask", "steps": [
        {"id": "s1", "description": "ask the user", "tool": "ev.trigger-elicitation-request", "args": {}, "depends_on": []}]})));
    server.role("synthesizer").always(Reply::content("asked [s1]"));
    let url = server.base_url();
    let db = dir.path().join("ledger.db");
    let everything = format!("ev={}", home.npm("mcp-server-everything").display());
    let args = [
        "--workspace",
        dir.path().to_str().unwrap(),
        "--base-url",
        &url,
        "--db",
        db.to_str().unwrap(),
        "--mode",
        "auto",
        "--verify",
        "off",
        "--mcp",
        &everything,
    ];
    let got = call(&python, dir.path(), "run", json!({"task": "Ask me for my name"}), &args);
    let run_id = got["structured"]["run_id"].as_str().unwrap().to_string();
    // The plan first, then the question: two decisions.
    let got = call(&python, dir.path(), "approve", json!({"run_id": run_id}), &args);
    assert_eq!(got["structured"]["status"], json!("awaiting_approval"), "{got}");
    assert!(
        got["text"]
            .as_str()
            .unwrap()
            .contains("an answer to the question of step s1"),
        "{got}"
    );
    let answer = json!({"run_id": run_id, "answer": {"name": "Ada Lovelace"}});
    let got = call(&python, dir.path(), "approve", answer, &args);
    assert_eq!(got["structured"]["status"], json!("succeeded"), "{got}");
    assert!(
        got["structured"]["report"]["steps"]
            .to_string()
            .contains("Ada Lovelace"),
        "{got}"
    );
}
