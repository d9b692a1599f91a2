//! `--max-tokens` stops a run as budget_exhausted with its spend shown against
//! the budget, and `planexec resume` finishes it with a larger budget.

mod common;

use common::{planexec, run};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::json;

#[test]
fn a_run_out_of_tokens_stops_and_resumes_with_a_larger_budget() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    server.role("planner").reply(
        Reply::json(&json!({"goal": "sum", "steps": [
            {"id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "2 + 40"}, "depends_on": []}]}))
        .with_usage(4400, 200),
    );
    server.role("synthesizer").reply(Reply::content("42 [s1]"));
    let url = server.base_url();
    let (out, _, stderr) =
        run(planexec(dir.path()).args(["run", "add", "--yes", "--max-tokens", "4650", "--base-url", &url]));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("budget_exhausted: the token budget (4,650) would be exceeded by the synthesizer call"),
        "{stderr}"
    );
    assert!(stderr.contains("budget: tokens 4600 / 4650"), "{stderr}");
    let hint = stderr
        .lines()
        .find(|l| l.contains("continue with: planexec resume"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        hint.ends_with("with a larger --max-tokens, --max-cost or --max-time"),
        "{hint}"
    );
    let run_id = hint
        .split("planexec resume ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();

    // Without a larger budget the run stops again at once; with one, it finishes.
    let (out, _, stderr) = run(planexec(dir.path()).args(["resume", run_id, "--base-url", &url]));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("budget_exhausted"), "{stderr}");
    let (out, stdout, stderr) =
        run(planexec(dir.path()).args(["resume", run_id, "--max-tokens", "8000", "--base-url", &url]));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "42 [s1]");
    assert!(stderr.contains("budget: tokens 4720 / 8000"), "{stderr}");
}

#[test]
fn max_cost_without_a_price_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "run",
        "t",
        "--yes",
        "--max-cost",
        "0.5",
        "--model",
        "m1",
        "--base-url",
        &server.base_url(),
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("--max-cost needs the price of model `m1`: pass --price m1=INPUT,OUTPUT"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}
