//! Runs that wait for people, from the terminal: `run --approve later` exits
//! with the run paused in the ledger; `approve`, `reject`, `edit` and `steer`
//! decide from another process; `resume` (or `approve --resume`) finishes it.

mod common;

use std::path::Path;
use std::process::Command;

use common::run;
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn planexec(workspace: &Path, db: &Path, server: &ScriptedServer) -> Command {
    let mut cmd = common::planexec(workspace);
    cmd.env("PLANEXEC_DB", db).env("OPENAI_BASE_URL", server.base_url());
    cmd
}

fn plan() -> Value {
    json!({"goal": "note", "steps": [
        {"id": "s1", "description": "write the note", "tool": "write_file", "args": {"path": "note.txt", "content": "hello"}, "depends_on": []}
    ]})
}

/// A workspace, a folder for the ledger, and a model server that plans
/// [`plan`] and answers `answer`.
fn setting(answer: &str) -> (tempfile::TempDir, tempfile::TempDir, ScriptedServer) {
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&plan()));
    server.role("synthesizer").always(Reply::content(answer));
    (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), server)
}

fn run_id_in(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with("run-"))
        .expect("a run id")
        .trim_end_matches([':', '.', ','])
        .to_string()
}

#[test]
fn a_run_waits_in_the_ledger_is_approved_from_another_process_and_finishes() {
    let (ws, data, server) = setting("the note is written");
    let db = data.path().join("ledger.db");
    let cli = |args: &[&str]| run(planexec(ws.path(), &db, &server).args(args));

    // No terminal, no --yes: with --approve later the run is recorded and the process exits 0.
    let (out, _, stderr) = cli(&["run", "Write a note", "--approve", "later", "--mode", "auto"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("waits for approval of plan v1"), "{stderr}");
    assert!(stderr.contains("planexec approve run-"), "{stderr}");
    let run_id = run_id_in(&stderr[stderr.find("planexec approve").unwrap()..]);
    assert!(!ws.path().join("note.txt").exists(), "nothing ran before the approval");
    let (_, stdout, _) = cli(&["runs", "list", "--status", "awaiting_approval"]);
    assert!(stdout.contains(&run_id), "{stdout}");

    // Resuming before a decision says how to decide.
    let (out, _, stderr) = cli(&["resume", &run_id]);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("waits for approval of plan v1"), "{stderr}");

    let (out, stdout, stderr) = cli(&["approve", &run_id, "--by", "alice", "--resume"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("approved approval of plan v1") || stderr.contains("approved"),
        "{stderr}"
    );
    assert_eq!(stdout.trim(), "the note is written");
    assert_eq!(std::fs::read_to_string(ws.path().join("note.txt")).unwrap(), "hello");
    assert_eq!(
        server.requests_from("planner").len(),
        1,
        "the plan came from the ledger"
    );

    let (_, exported, _) = cli(&["runs", "export", &run_id]);
    let exported: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(exported["status"], "succeeded");
    assert_eq!(exported["decisions"][0]["by"], "alice");
    assert_eq!(exported["decisions"][0]["action"], "approve");
}

#[test]
fn a_rejected_run_shows_the_reason_and_an_edited_plan_runs_the_edit() {
    let (ws, data, server) = setting("done");
    let db = data.path().join("ledger.db");
    let cli = |args: &[&str]| run(planexec(ws.path(), &db, &server).args(args));

    let (_, _, stderr) = cli(&["run", "Write a note", "--approve", "later"]);
    let first = run_id_in(&stderr[stderr.find("planexec approve").unwrap()..]);
    let (out, _, stderr) = cli(&["reject", &first, "--reason", "not that file", "--by", "bob"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (_, shown, _) = cli(&["runs", "show", &first]);
    assert!(shown.contains("rejected"), "{shown}");
    assert!(shown.contains("rejected by bob: not that file"), "{shown}");

    // The editor (a script here) changes the pending plan's content; the edit is what runs.
    let (_, _, stderr) = cli(&["run", "Write a note", "--approve", "later", "--mode", "auto"]);
    let second = run_id_in(&stderr[stderr.find("planexec approve").unwrap()..]);
    let mut edit = planexec(ws.path(), &db, &server);
    edit.env("VISUAL", "sed -i s/hello/edited/").args(["edit", &second]);
    let (out, _, stderr) = run(&mut edit);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("plan v2"), "{stderr}");
    let (out, _, stderr) = cli(&["resume", &second]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(ws.path().join("note.txt")).unwrap(), "edited");

    // An edit to a tool that does not exist is refused until fixed; an empty file cancels.
    let (_, _, stderr) = cli(&["run", "Write a note", "--approve", "later"]);
    let third = run_id_in(&stderr[stderr.find("planexec approve").unwrap()..]);
    let mut bad = planexec(ws.path(), &db, &server);
    bad.env("VISUAL", "truncate -s 0").args(["edit", &third]);
    let (out, _, stderr) = run(&mut bad);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cancelled"), "{stderr}");
    let (_, shown, _) = cli(&["runs", "show", &third]);
    assert!(shown.contains("awaiting_approval"), "the run still waits:\n{shown}");
}

#[test]
fn approval_later_in_the_config_file_makes_runs_wait_unless_yes_says_otherwise() {
    let (ws, data, server) = setting("the note is written");
    let db = data.path().join("ledger.db");
    let cli = |args: &[&str]| run(planexec(ws.path(), &db, &server).args(args));
    std::fs::write(
        ws.path().join("planexec.toml"),
        "approval = \"later\"\nmode = \"auto\"\n",
    )
    .unwrap();

    // No terminal and no flag: the file's `later` records the run as waiting.
    let (out, _, stderr) = cli(&["run", "Write a note"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("waits for approval of plan v1"), "{stderr}");
    assert!(!ws.path().join("note.txt").exists(), "nothing ran before the approval");
    let (_, shown, _) = cli(&["config", "show"]);
    let line = shown.lines().find(|l| l.starts_with("approval")).unwrap_or_default();
    assert!(line.contains("later") && line.contains("planexec.toml"), "{shown}");

    // --yes approves now, whatever the file says.
    let (out, stdout, stderr) = cli(&["run", "Write a note", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "the note is written");
    assert_eq!(std::fs::read_to_string(ws.path().join("note.txt")).unwrap(), "hello");

    // A value that is neither says what it may be and where it came from.
    std::fs::write(ws.path().join("planexec.toml"), "approval = \"sometimes\"\n").unwrap();
    let (out, _, stderr) = cli(&["run", "Write a note"]);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("approval must be \"now\" or \"later\"") && stderr.contains("planexec.toml"),
        "{stderr}"
    );
    assert_eq!(
        server.requests_from("planner").len(),
        2,
        "the bad value stopped the run before planning"
    );
}

/// Two writes of one wave in ask mode wait together; the terminal says how to
/// approve each; `approve --step s2 --resume` runs s2 while s1 still waits;
/// `reject` then ends the run with s2's file written and recorded.
#[test]
fn two_parallel_writes_wait_together_and_one_is_approved_before_the_other() {
    let server = ScriptedServer::start();
    server.role("planner").always(Reply::json(&json!({"goal": "notes", "steps": [
        {"id": "s1", "description": "write a", "tool": "write_file", "args": {"path": "a.txt", "content": "A"}, "depends_on": []},
        {"id": "s2", "description": "write b", "tool": "write_file", "args": {"path": "b.txt", "content": "B"}, "depends_on": []}
    ]})));
    server.role("synthesizer").always(Reply::content("written"));
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db = data.path().join("ledger.db");
    let cli = |args: &[&str]| run(planexec(ws.path(), &db, &server).args(args));

    let (out, _, stderr) = cli(&["run", "Write the notes", "--approve", "later", "--mode", "ask"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let run_id = run_id_in(&stderr[stderr.find("planexec approve").unwrap()..]);
    let (out, _, stderr) = cli(&["approve", &run_id, "--resume", "--approve", "later"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("confirmation of step s1: write_file") && stderr.contains("step s2: write_file"),
        "both writes wait at once: {stderr}"
    );
    assert!(
        stderr.contains(&format!("planexec approve {run_id} --step s2")),
        "{stderr}"
    );

    let (out, _, stderr) = cli(&["approve", &run_id, "--step", "s2", "--resume", "--approve", "later"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(ws.path().join("b.txt")).unwrap(), "B");
    assert!(!ws.path().join("a.txt").exists(), "s1 still waits: {stderr}");
    assert!(stderr.contains("waits for confirmation of step s1"), "{stderr}");

    let (out, _, stderr) = cli(&["reject", &run_id, "--reason", "no a.txt"]);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (_, exported, _) = cli(&["runs", "export", &run_id]);
    let exported: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(exported["status"], "rejected");
    let s2 = exported["steps"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|s| s["result"]["id"] == "s2")
        .cloned();
    assert_eq!(s2.unwrap()["result"]["status"], "succeeded", "{exported:#}");
    assert!(!ws.path().join("a.txt").exists());
}
