//! `--strategy` on the command line: a run takes one by name, and `resume`
//! finishes a run with the strategy it was started with.

mod common;

use common::{planexec, run};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::json;

#[test]
fn run_takes_a_strategy_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.txt"), "20\n").unwrap();
    let server = ScriptedServer::start();
    server.role("executor").replies(vec![
        Reply::tool_call("read_file", &json!({"path": "n.txt"})),
        Reply::content("It says 20."),
    ]);
    let url = server.base_url();
    let (out, stdout, stderr) = run(planexec(dir.path()).args([
        "run",
        "what does n.txt say?",
        "--yes",
        "--strategy",
        "react",
        "--base-url",
        &url,
    ]));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "It says 20.");
    assert!(server.requests_from("planner").is_empty(), "react makes no plan");
    let tools = &server.requests_from("executor")[0].body["tools"];
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == json!("read_file")));

    let (out, _, stderr) =
        run(planexec(dir.path()).args(["run", "x", "--yes", "--strategy", "magic", "--base-url", &url]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("unknown strategy `magic`"), "{stderr}");
}

#[test]
fn resume_keeps_the_strategy_the_run_was_started_with() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    let calc = |id: &str, e: &str| json!({"id": id, "description": id, "tool": "calculator", "args": {"expression": e}, "depends_on": []});
    server.role("planner").reply(Reply::json(
        &json!({"goal": "sums", "steps": [calc("s1", "1+1"), calc("s2", "2+2"), calc("s3", "3+3")]}),
    ));
    // replan-each-step asks the replanner after s1 (which fails this time), then after s2.
    server.role("replanner").replies(vec![
        Reply::error(400, "bad luck"),
        Reply::json(&json!({"goal": "sums", "steps": [calc("s3", "3+3")]})),
    ]);
    server.role("synthesizer").reply(Reply::content("2, 4 and 6"));
    let url = server.base_url();
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "run",
        "sums",
        "--yes",
        "--strategy",
        "replan-each-step",
        "--base-url",
        &url,
    ]));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("replanning after step s1 failed"), "{stderr}");
    let run_id = stderr
        .split("planexec resume ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_string();

    // No --strategy: the resumed run consults the replanner after s2 again.
    let (out, stdout, stderr) = run(planexec(dir.path()).args(["resume", &run_id, "--yes", "--base-url", &url]));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "2, 4 and 6");
    let replanner = server.requests_from("replanner");
    assert_eq!(replanner.len(), 2);
    assert!(replanner[1].prompt_text().contains("Step [s2] has just completed"));
}
