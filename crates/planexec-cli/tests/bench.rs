//! `planexec bench` on a two-task file against the scripted server: one task
//! passes its check and one fails it; the table, the JSON and the exit code say so.

mod common;

use common::{planexec, run};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn write_task_file(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("fx")).unwrap();
    std::fs::write(dir.join("fx/n.txt"), "20\n").unwrap();
    let file = dir.join("tasks.jsonl");
    std::fs::write(
        &file,
        [
            json!({"name": "double", "task": "double the number in n.txt into out.txt", "workspace": "fx",
                   "check": [{"file": "out.txt", "equals": "40"}, {"command": "grep -q 40 out.txt"}]}),
            json!({"name": "wrong", "task": "say the number in n.txt", "workspace": "fx",
                   "check": {"answer_contains": "twenty-one"}}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    )
    .unwrap();
    file
}

fn script(server: &ScriptedServer) {
    let double = json!({"goal": "double", "steps": [
        {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []},
        {"id": "s2", "description": "double", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "out.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}]});
    let say = json!({"goal": "say", "steps": [
        {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []}]});
    server
        .role("planner")
        .containing("double the number")
        .always(Reply::json(&double));
    server
        .role("planner")
        .containing("say the number")
        .always(Reply::json(&say));
    // The CLI checks a run's work before it may succeed (verify, on by default).
    server
        .role("synthesizer")
        .containing("You are the checker")
        .always(Reply::json(&json!({"done": true, "wrong": ""})));
    server
        .role("synthesizer")
        .always(Reply::content("The number is 20 [s1]."));
}

#[test]
fn bench_runs_every_task_under_each_strategy_and_reports_pass_and_fail() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_task_file(dir.path());
    let server = ScriptedServer::start();
    script(&server);
    let url = server.base_url();
    let tasks = file.to_str().unwrap();
    let (out, stdout, stderr) = run(planexec(dir.path()).args([
        "bench",
        tasks,
        "--strategy",
        "plan-execute,rewoo",
        "--base-url",
        &url,
        "--price",
        "*=1,2",
    ]));
    // One task fails its check, so the command fails.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("double / plan-execute: pass"), "{stderr}");
    assert!(
        stderr.contains("wrong / rewoo: FAIL (the answer does not contain \"twenty-one\""),
        "{stderr}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("task") && lines[0].contains("success") && lines[0].contains("replans"));
    let row = |task: &str, strategy: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().take(2).eq([task, strategy]))
            .unwrap_or_else(|| panic!("no row {task} {strategy} in\n{stdout}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("double", "plan-execute")[2], "1/1");
    assert_eq!(row("double", "plan-execute")[3], "3", "planner, synthesizer and check");
    assert_eq!(row("wrong", "rewoo")[2], "0/1");
    assert_eq!(row("(all)", "plan-execute")[2], "1/2");
    assert_eq!(row("(all)", "rewoo")[3], "6");
    // The fixture was copied: the original folder has no out.txt.
    assert!(!dir.path().join("fx/out.txt").exists());
    // Four runs, two planner calls each way.
    assert_eq!(server.requests_from("planner").len(), 4);

    let (out, stdout, stderr) = run(planexec(dir.path()).args([
        "bench",
        tasks,
        "--strategy",
        "react",
        "--json",
        "--repeat",
        "2",
        "--base-url",
        &url,
    ]));
    // React's model was not scripted: every run fails, and says why.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs
        .iter()
        .all(|r| r["passed"] == json!(false) && r["strategy"] == json!("react")));
    assert!(
        runs[0]["failure"].as_str().unwrap().contains("no reply scripted"),
        "{}",
        runs[0]
    );
    let summary = report["summary"].as_array().unwrap();
    assert_eq!(summary.last().unwrap()["task"], json!("(all)"));
    assert_eq!(summary.last().unwrap()["runs"], json!(4));
}

#[test]
fn bench_explains_a_bad_task_file_and_a_bad_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.jsonl");
    std::fs::write(&file, "{\"task\": \"x\"}\n").unwrap();
    let (out, _, stderr) = run(planexec(dir.path()).args(["bench", file.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("tasks.jsonl:1: not a task"), "{stderr}");
    let file = write_task_file(dir.path());
    let (out, _, stderr) = run(planexec(dir.path()).args(["bench", file.to_str().unwrap(), "--strategy", "magic"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("unknown strategy `magic`; use one of plan-execute"),
        "{stderr}"
    );
}
