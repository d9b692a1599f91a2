//! Plan reuse from the terminal: a second task of the same shape with other
//! file names runs with no planner call and the right result, `--plan-reuse
//! off` plans again, and `planexec plans list|show|forget` work on the
//! templates in the ledger.

mod common;

use common::{planexec, run};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn sum_plan(a: &str, b: &str, out: &str) -> Value {
    json!({"goal": "sum", "steps": [
        {"id": "s1", "description": format!("read {a}"), "tool": "read_file", "args": {"path": a}, "depends_on": []},
        {"id": "s2", "description": format!("read {b}"), "tool": "read_file", "args": {"path": b}, "depends_on": []},
        {"id": "s3", "description": "add", "tool": "calculator", "args": {"expression": "{{s1}} + {{s2}}"}, "depends_on": ["s1", "s2"]},
        {"id": "s4", "description": format!("write {out}"), "tool": "write_file", "args": {"path": out, "content": "{{s3}}"}, "depends_on": ["s3"]}
    ]})
}

fn task(a: &str, b: &str, out: &str) -> String {
    format!("Read {a} and {b}, add the two numbers, and write the sum to {out}.")
}

#[test]
fn a_task_of_the_same_shape_reuses_the_plan_and_plans_can_be_listed_shown_and_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    for (file, n) in [("a.txt", 2), ("b.txt", 40), ("c.txt", 7), ("d.txt", 8)] {
        std::fs::write(dir.path().join(file), format!("{n}\n")).unwrap();
    }
    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::json(&sum_plan("a.txt", "b.txt", "sum.txt")));
    server
        .role("synthesizer")
        .containing("You are the checker")
        .always(Reply::json(&json!({"done": true, "wrong": ""})));
    server.role("synthesizer").always(Reply::content("Done [s4]."));
    let url = server.base_url();
    let db = dir.path().join("ledger.db");
    let db = db.to_str().unwrap();
    let planexec_run = |task: &str, extra: &[&str]| {
        let mut cmd = planexec(dir.path());
        cmd.args(["run", task, "--yes", "--base-url", &url, "--db", db])
            .args(extra);
        run(&mut cmd)
    };

    let (out, _, stderr) = planexec_run(&task("a.txt", "b.txt", "sum.txt"), &[]);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("sum.txt")).unwrap(), "42");

    let (out, _, stderr) = planexec_run(&task("c.txt", "d.txt", "total.txt"), &[]);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "15");
    assert_eq!(
        server.requests_from("planner").len(),
        1,
        "no planner call for the second task"
    );
    assert!(stderr.contains("plan reused from run run-"), "{stderr}");
    assert!(
        stderr.contains("read c.txt"),
        "the plan shown is the filled one: {stderr}"
    );

    let (out, stdout, stderr) = run(planexec(dir.path()).args(["plans", "list", "--db", db]));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("reused 1x"), "{stdout}");
    assert!(
        stdout.contains("read {0} and {1} , add the two numbers , and write the sum to {2}"),
        "{stdout}"
    );
    let (_, stdout, _) = run(planexec(dir.path()).args(["plans", "list", "--json", "--db", db]));
    let templates: Value = serde_json::from_str(&stdout).unwrap();
    let id = templates[0]["id"].as_str().unwrap().to_string();
    let (out, stdout, stderr) = run(planexec(dir.path()).args(["plans", "show", &id[..6], "--db", db]));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("{0} = a.txt") && stdout.contains("{2} = sum.txt"),
        "{stdout}"
    );
    assert!(stdout.contains("read_file"), "{stdout}");

    // Off: the planner plans again.
    server
        .role("planner")
        .reply(Reply::json(&sum_plan("a.txt", "c.txt", "both.txt")));
    let (out, _, stderr) = planexec_run(&task("a.txt", "c.txt", "both.txt"), &["--plan-reuse", "off"]);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(server.requests_from("planner").len(), 2);
    assert!(!stderr.contains("plan reused"), "{stderr}");

    let (out, stdout, _) = run(planexec(dir.path()).args(["plans", "forget", &id, "--db", db]));
    assert!(out.status.success());
    assert!(stdout.contains(&format!("forgot plan template {id}")), "{stdout}");
    let (out, _, stderr) = run(planexec(dir.path()).args(["plans", "show", &id, "--db", db]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("no plan template") && stderr.contains("planexec plans list"),
        "{stderr}"
    );
    let (out, _, stderr) = planexec_run(&task("a.txt", "b.txt", "sum.txt"), &["--plan-reuse", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("unknown plan reuse setting `sometimes`: use off, exact or similar"),
        "{stderr}"
    );
}
