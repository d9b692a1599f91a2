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
    // The CLI checks a run's work before it may succeed (verify, on by
    // default): with python, a new file is first derived again by a program,
    // and when it agrees no verdict is asked.
    // An answer in text is confirmed by a program that prints what it says.
    server
        .role("synthesizer")
        .containing("computes the answer this task asks for")
        .always(Reply::json(&json!({"code": "print(int(open('n.txt').read()))"})));
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
    assert_eq!(
        row("double", "plan-execute")[3],
        "3",
        "planner, synthesizer and the check (a program that agrees, or the verdict without python)"
    );
    assert_eq!(row("wrong", "rewoo")[2], "0/1");
    assert_eq!(row("(all)", "plan-execute")[2], "1/2");
    // The answer in text: planner, synthesizer, verdict and the program that confirms it.
    assert_eq!(row("(all)", "rewoo")[3], "7");
    // Prompt tokens per role, cached and not, below the table.
    assert!(
        stdout.contains("double / plan-execute: planner ") && stdout.contains(" cached), synthesizer "),
        "{stdout}"
    );
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

/// The prompt tokens an LLMCompiler-style peer sends for the same plans on
/// the same mock (its planner and its joiner), from issue 40.
const PEER_PROMPT_TOKENS: [(&str, u64); 4] = [("chain8", 598), ("diamond", 587), ("fanout8", 617), ("wide32", 924)];

fn read(id: &str, path: &str) -> Value {
    json!({"id": id, "description": format!("read {path}"), "tool": "read_file", "args": {"path": path}, "depends_on": []})
}

fn calc(id: &str, expression: &str, deps: &[String]) -> Value {
    json!({"id": id, "description": "calculate", "tool": "calculator", "args": {"expression": expression}, "depends_on": deps})
}

fn write(id: &str, path: &str, from: &str) -> Value {
    json!({"id": id, "description": format!("write {path}"), "tool": "write_file",
           "args": {"path": path, "content": format!("{{{{{from}}}}}")}, "depends_on": [from]})
}

/// The plan a good planner writes for each workload of `examples/bench/workloads.jsonl`.
fn workload_plans() -> Vec<(&'static str, Value)> {
    let chain: Vec<Value> = std::iter::once(read("s1", "start.txt"))
        .chain(
            ["+ 3", "* 4", "- 2", "/ 5", "^ 2", "+ 10"]
                .iter()
                .enumerate()
                .map(|(i, op)| {
                    calc(
                        &format!("s{}", i + 2),
                        &format!("{{{{s{}}}}} {op}", i + 1),
                        &[format!("s{}", i + 1)],
                    )
                }),
        )
        .chain([write("s8", "result.txt", "s7")])
        .collect();
    let diamond = vec![
        read("s1", "prices.txt"),
        calc("s2", "sum({{s1}})", &["s1".into()]),
        calc("s3", "max({{s1}})", &["s1".into()]),
        calc("s4", "{{s2}} - {{s3}}", &["s2".into(), "s3".into()]),
        write("s5", "rest.txt", "s4"),
    ];
    let sum_of = |files: Vec<String>| -> Vec<Value> {
        let n = files.len();
        let ids: Vec<String> = (1..=n).map(|i| format!("s{i}")).collect();
        let mut steps: Vec<Value> = files.iter().zip(&ids).map(|(f, id)| read(id, f)).collect();
        let expression = ids
            .iter()
            .map(|id| format!("{{{{{id}}}}}"))
            .collect::<Vec<_>>()
            .join(" + ");
        steps.push(calc(&format!("s{}", n + 1), &expression, &ids));
        steps.push(write(&format!("s{}", n + 2), "total.txt", &format!("s{}", n + 1)));
        steps
    };
    let regions = ["north", "south", "east", "west", "centre", "coast", "hills", "lakes"];
    let fanout = sum_of(regions.iter().map(|r| format!("{r}.txt")).collect());
    let wide = sum_of((1..=32).map(|i| format!("n{i:02}.txt")).collect());
    [
        ("chain8", chain),
        ("diamond", diamond),
        ("fanout8", fanout),
        ("wide32", wide),
    ]
    .into_iter()
    .map(|(name, steps)| (name, json!({"goal": name, "steps": steps, "infeasible": null})))
    .collect()
}

/// `planexec bench examples/bench/workloads.jsonl` on plan-execute against
/// `server` (as `provider`: `openai` or `anthropic`), with the prompt style
/// given: the JSON report's runs.
fn bench_workloads(server: &ScriptedServer, style: &str, provider: &str) -> Vec<Value> {
    let workloads = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bench/workloads.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let (out, stdout, stderr) = run(planexec(dir.path())
        .env("PLANEXEC_PROVIDER", provider)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args([
            "bench",
            workloads.to_str().unwrap(),
            "--strategy",
            "plan-execute",
            "--max-steps",
            "40",
            "--verify",
            "false",
            "--prompt-style",
            style,
            "--json",
            "--base-url",
            &server.base_url(),
        ]));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    report["runs"].as_array().unwrap().clone()
}

#[test]
fn the_bench_workloads_send_at_most_twice_the_peer_prompt_tokens_in_two_calls() {
    let workloads = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bench/workloads.jsonl");
    let text = std::fs::read_to_string(&workloads).unwrap();
    let tasks: Vec<Value> = text
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let server = ScriptedServer::start();
    server.count_tokens();
    for (name, plan) in workload_plans() {
        let task = tasks.iter().find(|t| t["name"] == json!(name)).unwrap()["task"]
            .as_str()
            .unwrap();
        server.role("planner").containing(task).always(Reply::json(&plan));
    }
    server
        .role("synthesizer")
        .always(Reply::content("Done: the total is in the file [s2]."));
    let compact = bench_workloads(&server, "auto", "openai");
    let shared = bench_workloads(&server, "shared", "openai");
    let anthropic = bench_workloads(&server, "auto", "anthropic");
    let tokens = |runs: &[Value], name: &str| -> (u64, Value) {
        let run = runs.iter().find(|r| r["task"] == json!(name)).unwrap();
        assert_eq!(
            run["model_calls"],
            json!(2),
            "{name}: planner and synthesizer only\n{run}"
        );
        (
            run["prompt_tokens"].as_u64().unwrap(),
            run["prompt_tokens_by_role"].clone(),
        )
    };
    let mut figures = String::new();
    for (name, peer) in PEER_PROMPT_TOKENS {
        let (prompt, by_role) = tokens(&compact, name);
        let (shared_prompt, _) = tokens(&shared, name);
        let (anthropic_prompt, anthropic_roles) = tokens(&anthropic, name);
        figures.push_str(&format!(
            "{name}: {prompt} prompt tokens ({:.2}x the peer's {peer}; shared prompt {shared_prompt}; anthropic {anthropic_prompt} by role {anthropic_roles}), by role {by_role}\n",
            prompt as f64 / peer as f64
        ));
        assert!(
            prompt <= 2 * peer,
            "{name}: {prompt} prompt tokens, over 2x the peer's {peer}\n{figures}"
        );
        assert!(
            shared_prompt > prompt,
            "{name}: the shared prompt is the long one\n{figures}"
        );
    }
    eprintln!("{figures}");
}

/// With `--db`, every bench run is recorded: a failure's line names its run,
/// and `runs show RUN --db` shows that run's plan and why it failed.
#[test]
fn bench_with_a_ledger_records_each_run_for_runs_show() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_task_file(dir.path());
    let server = ScriptedServer::start();
    script(&server);
    let url = server.base_url();
    let db = dir.path().join("bench.db");
    let db = db.to_str().unwrap();
    let (out, _, stderr) = run(planexec(dir.path()).args([
        "bench",
        file.to_str().unwrap(),
        "--strategy",
        "plan-execute",
        "--db",
        db,
        "--base-url",
        &url,
    ]));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let failed = stderr
        .lines()
        .find(|l| l.contains("wrong / plan-execute: FAIL"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let run_id = failed
        .rsplit_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("no run id in: {failed}"));
    let (out, shown, stderr) = run(planexec(dir.path()).args(["runs", "show", &run_id, "--db", db]));
    assert!(out.status.success(), "{stderr}");
    assert!(
        shown.contains("say the number in n.txt") && shown.contains("read_file"),
        "{shown}"
    );
    let (_, listed, _) = run(planexec(dir.path()).args(["runs", "list", "--db", db]));
    assert_eq!(listed.lines().filter(|l| l.starts_with("run-")).count(), 2, "{listed}");
}
