//! The ledger from the terminal: runs are recorded, listed, shown, exported,
//! removed and resumed; model exchanges are recorded to a cassette and
//! replayed with no server.

mod common;

use std::path::Path;
use std::process::Command;

use common::run;

use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

/// The binary with its ledger at `db` (outside the workspace).
fn planexec(workspace: &Path, db: &Path) -> Command {
    let mut cmd = common::planexec(workspace);
    cmd.env("PLANEXEC_DB", db);
    cmd
}

fn two_step_plan() -> Value {
    json!({"goal": "note and read", "steps": [
        {"id": "s1", "description": "write the note", "tool": "write_file", "args": {"path": "note.txt", "content": "hello"}, "depends_on": []},
        {"id": "s2", "description": "read the number", "tool": "read_file", "args": {"path": "number.txt"}, "depends_on": ["s1"]}
    ]})
}

#[test]
fn a_failed_run_is_recorded_shown_resumed_exported_and_removed() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("ledger.db");
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&two_step_plan()));
    server.role("executor").always(Reply::error(400, "cannot fix that"));
    server.role("synthesizer").always(Reply::content("the number is 42"));
    let cli = |args: &[&str]| {
        let mut cmd = planexec(ws.path(), &db);
        cmd.env("OPENAI_BASE_URL", server.base_url()).args(args);
        run(&mut cmd)
    };

    let (out, _, stderr) = cli(&[
        "run",
        "Write a note, then read number.txt",
        "--yes",
        "--max-replans",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("continue with: planexec resume run-"), "{stderr}");
    let run_id = stderr
        .split_whitespace()
        .find(|w| w.starts_with("run-"))
        .unwrap()
        .trim_end_matches(':')
        .to_string();

    let (out, stdout, _) = cli(&["runs", "list"]);
    assert!(out.status.success());
    assert!(stdout.contains(&run_id) && stdout.contains("failed"), "{stdout}");
    let (_, stdout, _) = cli(&["runs", "list", "--status", "succeeded"]);
    assert!(!stdout.contains(&run_id), "{stdout}");

    // Someone edits the note, the missing file appears; resume by a prefix of the id.
    std::fs::write(ws.path().join("note.txt"), "edited since").unwrap();
    std::fs::write(ws.path().join("number.txt"), "42").unwrap();
    let prefix = &run_id[..run_id.len() - 2];
    let (out, stdout, stderr) = cli(&["resume", prefix]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "the number is 42");
    assert!(stderr.contains("1 finished step(s) kept"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("note.txt")).unwrap(),
        "edited since",
        "the finished write was not run again"
    );
    assert_eq!(
        server.requests_from("planner").len(),
        1,
        "the plan came from the ledger"
    );

    let (out, stdout, _) = cli(&["runs", "show", &run_id]);
    assert!(out.status.success());
    for needle in [
        "succeeded",
        "resumed 1x",
        "[done] s1",
        "[done] s2",
        "plan v1: initial plan",
        "the number is 42",
    ] {
        assert!(stdout.contains(needle), "runs show lacks {needle:?}:\n{stdout}");
    }
    assert!(
        stdout.contains("s2     failed"),
        "the failed execution is listed:\n{stdout}"
    );

    let export = ws.path().join("run.json");
    let (out, _, _) = cli(&["runs", "export", &run_id, "-o", export.to_str().unwrap()]);
    assert!(out.status.success());
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(exported["status"], "succeeded");
    assert_eq!(exported["plans"].as_array().unwrap().len(), 1);
    assert_eq!(exported["resumes"], 1);
    let roles: Vec<&str> = exported["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.contains(&"planner") && roles.contains(&"synthesizer"),
        "{roles:?}"
    );
    assert!(exported["options"]["workspace"].as_str().is_some());

    // A finished run: resuming says so and changes nothing.
    let (out, _, stderr) = cli(&["resume", &run_id]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr.contains("already finished (succeeded)"), "{stderr}");

    let (out, _, _) = cli(&["runs", "rm", &run_id]);
    assert!(out.status.success());
    let (out, _, stderr) = cli(&["runs", "show", &run_id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains(&format!("there is no run {run_id}")), "{stderr}");
}

#[test]
fn a_recorded_run_replays_without_a_server() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("ledger.db");
    let cassette = data.path().join("run.jsonl");
    std::fs::write(ws.path().join("number.txt"), "42").unwrap();
    let task = "Write a note, then read number.txt";
    {
        let server = ScriptedServer::start();
        server.role("planner").always(Reply::json(&two_step_plan()));
        server
            .role("synthesizer")
            .containing("You are the checker")
            .always(Reply::json(&serde_json::json!({"done": true, "wrong": ""})));
        server.role("synthesizer").always(Reply::content("the number is 42"));
        let (out, stdout, stderr) = run(planexec(ws.path(), &db)
            .env("OPENAI_BASE_URL", server.base_url())
            .args(["run", task, "--yes", "--record", cassette.to_str().unwrap()]));
        assert!(out.status.success(), "{stderr}");
        assert_eq!(stdout.trim(), "the number is 42");
    } // the server is gone

    let lines = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(
        lines.lines().count(),
        3,
        "planner, synthesizer and check exchanges:\n{lines}"
    );
    // A replay starts from where the recording started: the planner is shown
    // the workspace's files, and the recorded run wrote one.
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("number.txt"), "42").unwrap();
    let (out, stdout, stderr) =
        run(planexec(ws.path(), &db).args(["run", task, "--yes", "--replay", cassette.to_str().unwrap()]));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "the number is 42");

    // A different task asks what the cassette does not hold.
    let (out, _, stderr) = run(planexec(ws.path(), &db).args([
        "run",
        "Something else entirely",
        "--yes",
        "--replay",
        cassette.to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("holds no reply for this planner request"), "{stderr}");
    assert!(stderr.contains("Something else entirely"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_ledger_is_refused_and_kept() {
    let ws = tempfile::tempdir().unwrap();
    let db = ws.path().join("notes.txt");
    std::fs::write(&db, "my precious notes\n").unwrap();
    let (out, _, stderr) = run(planexec(ws.path(), &db).args(["runs", "list"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("is not a SQLite database"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "my precious notes\n");
}

/// SIGKILL in the middle of an agent step, after its inner shell call has
/// appended to a file and while the loop waits for its next turn; `planexec
/// resume` runs the step again, and the call, replayed from the ledger, does
/// not append a second time.
#[test]
fn a_run_killed_inside_an_agent_step_resumes_with_its_inner_write_done_once() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("ledger.db");
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&json!({"goal": "log it", "steps": [
        {"id": "s1", "description": "append a line to log.txt with the shell and say what you did", "agent": "worker", "depends_on": []}
    ]})));
    let append = json!({"command": "echo appended >> log.txt"});
    server.role("agent").replies(vec![
        Reply::tool_call("shell", &append),
        // The process is killed while it waits for this turn.
        Reply::content("too late").with_delay(std::time::Duration::from_secs(8)),
        // The resumed session: the loop makes the same call again, then answers.
        Reply::tool_call("shell", &append),
        Reply::content("appended one line to log.txt"),
    ]);
    server
        .role("synthesizer")
        .always(Reply::content("One line was appended."));
    let cli = || {
        let mut cmd = planexec(ws.path(), &db);
        cmd.env("OPENAI_BASE_URL", server.base_url());
        cmd
    };

    let mut child = cli()
        .args(["run", "Append a line to log.txt", "--yes", "--mode", "auto"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The second turn is asked only after the call's result is in the ledger:
    // kill while the server holds that request.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(ws.path().join("log.txt").exists() && server.in_flight() > 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent step never reached its second turn"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let lines = |ws: &Path| std::fs::read_to_string(ws.join("log.txt")).unwrap().lines().count();
    assert_eq!(lines(ws.path()), 1);

    let (_, listed, _) = run(cli().args(["runs", "list"]));
    let run_id = listed
        .split_whitespace()
        .find(|w| w.starts_with("run-"))
        .unwrap_or_else(|| panic!("no run listed:\n{listed}"))
        .to_string();
    assert!(listed.contains("running"), "{listed}");

    let (out, stdout, stderr) = run(cli().args(["resume", &run_id, "--yes"]));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "One line was appended.");
    assert_eq!(lines(ws.path()), 1, "the inner write happened exactly once");
    assert!(stderr.contains("s1.1 shell replayed"), "the replay is shown:\n{stderr}");

    let (_, shown, _) = run(cli().args(["runs", "show", &run_id]));
    assert!(shown.contains("agent worker"), "{shown}");
    assert!(
        shown.contains("↳ s1.1") && shown.contains("shell"),
        "inner calls are listed:\n{shown}"
    );
}
