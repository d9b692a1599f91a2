//! Plan review on a real terminal: the binary runs under `script`, which gives it
//! a pseudo-terminal on stdin, and we type the answers.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use planexec_testkit::{Reply, ScriptedServer};
use serde_json::json;

/// Run planexec on a pty with `input` typed in; returns (exit code, everything it printed).
fn on_terminal(dir: &Path, args: &[&str], input: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut line = String::from(env!("CARGO_BIN_EXE_planexec"));
    for a in args {
        line.push(' ');
        line.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(dir)
        .env("SHELL", "/bin/sh")
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("PLANEXEC_MODEL")
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .env("XDG_DATA_HOME", dir.join(".no-user-config").join("data"))
        .env_remove("PLANEXEC_DB")
        .env("PLANEXEC_MODEL_DIR", dir.join(".no-models"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("script(1) from util-linux");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    (out.status.code(), text)
}

fn write_plan() -> serde_json::Value {
    json!({"goal": "write a greeting", "steps": [
        {"id": "s1", "description": "write it", "tool": "write_file", "args": {"path": "out.txt", "content": "hello"}, "depends_on": []}
    ]})
}

#[test]
fn approving_runs_the_plan() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&write_plan()));
    server
        .role("synthesizer")
        .reply(Reply::content("Wrote the greeting [s1]."));
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = on_terminal(
        dir.path(),
        &["run", "greet", "--base-url", &server.base_url()],
        "a\ny\n",
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("Run this plan? [a]pprove, [r]eject, [e]dit, give [f]eedback"),
        "{out}"
    );
    assert!(
        out.contains("write_file(path=\"out.txt\", content=\"hello\") !"),
        "{out}"
    );
    assert!(out.contains("Wrote the greeting [s1]."), "{out}");
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "hello");
}

#[test]
fn rejecting_runs_nothing() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&write_plan()));
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = on_terminal(
        dir.path(),
        &["run", "greet", "--base-url", &server.base_url()],
        "r\n",
        &[],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("rejected: the plan was rejected"), "{out}");
    assert!(!dir.path().join("out.txt").exists());
}

#[test]
fn feedback_goes_to_the_replanner_and_the_new_plan_is_shown() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&write_plan()));
    server.role("replanner").reply(Reply::json(&json!({"goal": "write a greeting", "steps": [
        {"id": "s1", "description": "write it politely", "tool": "write_file", "args": {"path": "out.txt", "content": "good day"}, "depends_on": []}
    ]})));
    server.role("synthesizer").reply(Reply::content("done"));
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = on_terminal(
        dir.path(),
        &["run", "greet", "--base-url", &server.base_url()],
        "f\nbe more polite\na\ny\n",
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("plan version 2:"), "{out}");
    assert!(server.requests_from("replanner")[0]
        .prompt_text()
        .contains("be more polite"));
    assert_eq!(std::fs::read_to_string(dir.path().join("out.txt")).unwrap(), "good day");
}

#[test]
fn editing_revalidates_and_reopens_the_editor_on_errors() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&write_plan()));
    server.role("synthesizer").reply(Reply::content("done"));
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(
        &good,
        json!({"goal": "edited", "steps": [
            {"id": "e1", "description": "write the edited file", "tool": "write_file", "args": {"path": "edited.txt", "content": "from the editor"}, "depends_on": []}
        ]})
        .to_string(),
    )
    .unwrap();
    // An editor that first breaks the JSON, then names an unknown tool, then writes a good plan.
    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\nc={dir}/count\nn=$(cat \"$c\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$c\"\n\
             case $n in\n 1) printf '{{\\n  \"goal\": \"g\",\\n  \"steps\": [' > \"$1\" ;;\n \
             2) printf '{{\"goal\":\"g\",\"steps\":[{{\"id\":\"x\",\"description\":\"d\",\"tool\":\"nope\",\"args\":{{}},\"depends_on\":[]}}]}}' > \"$1\" ;;\n \
             *) cat {good} > \"$1\" ;;\nesac\n",
            dir = dir.path().display(),
            good = good.display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&editor).status().unwrap();
    let (code, out) = on_terminal(
        dir.path(),
        &["run", "greet", "--base-url", &server.base_url()],
        "e\na\ny\n",
        &[("EDITOR", editor.to_str().unwrap()), ("VISUAL", "")],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("the JSON is malformed at line 3"), "{out}");
    assert!(out.contains("step x uses tool `nope`, which does not exist"), "{out}");
    assert_eq!(out.matches("reopening the editor on your text").count(), 2, "{out}");
    assert_eq!(std::fs::read_to_string(dir.path().join("count")).unwrap().trim(), "3");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("edited.txt")).unwrap(),
        "from the editor"
    );
    assert!(!dir.path().join("out.txt").exists(), "the original plan did not run");
}

#[test]
fn clarifying_questions_are_asked_and_answered() {
    let server = ScriptedServer::start();
    server.role("planner").replies(vec![
        Reply::json(&json!({"goal": "g", "steps": [], "questions": ["Which greeting?"]})),
        Reply::json(&write_plan()),
    ]);
    server.role("synthesizer").reply(Reply::content("done"));
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = on_terminal(
        dir.path(),
        &["run", "greet", "--base-url", &server.base_url()],
        "hello please\na\ny\n",
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("? Which greeting?"), "{out}");
    let second = server.requests_from("planner")[1].prompt_text();
    assert!(second.contains("A: hello please"), "{second}");
}

#[test]
fn ask_mode_asks_before_each_side_effect_even_with_yes() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&write_plan()));
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = on_terminal(
        dir.path(),
        &[
            "run",
            "greet",
            "--yes",
            "--max-replans",
            "0",
            "--base-url",
            &server.base_url(),
        ],
        "n\n",
        &[],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("Step s1 (write it) runs write_file, which writes inside the workspace. Run it with {"),
        "{out}"
    );
    assert!(out.contains("\"content\": \"hello\""), "{out}");
    assert!(out.contains("the user declined to run `write_file`"), "{out}");
    assert!(!dir.path().join("out.txt").exists());
}

/// server-everything's `trigger-elicitation-request` asks its client's user
/// for a form: planexec puts it to the person at the terminal, field by
/// field, sends the answers back, and records the exchange in the ledger.
#[test]
fn a_servers_elicitation_is_answered_at_the_terminal_and_recorded() {
    let Some(home) = planexec_testkit::mcp::mcp_home() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    home.everything_in_user_config(dir.path(), "");
    let plan = dir.path().join("plan.json");
    let steps = json!([{"id": "s1", "description": "ask the user", "tool": "ev.trigger-elicitation-request", "args": {}, "depends_on": []}]);
    std::fs::write(&plan, json!({"goal": "ask", "steps": steps}).to_string()).unwrap();
    let server = ScriptedServer::start();
    server.role("synthesizer").always(Reply::content("asked [s1]"));
    let db = dir.path().join("ledger.db");
    // Answer it, give the one required field (the name), Enter for every other field.
    let typed = format!("y\nAda Lovelace\n{}", "\n".repeat(20));
    let (code, out) = on_terminal(
        dir.path(),
        &[
            "exec",
            plan.to_str().unwrap(),
            "--yes",
            "--mode",
            "auto",
            "--verify",
            "off",
            "--json",
            "--db",
            db.to_str().unwrap(),
            "--base-url",
            &server.base_url(),
        ],
        &typed,
        &[],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("Step s1 (ev.trigger-elicitation-request) asks: Please provide inputs"),
        "{out}"
    );
    assert!(out.contains("name: Your full, legal name (required): "), "{out}");
    assert!(
        out.contains("User provided the requested information") && out.contains("Ada Lovelace"),
        "{out}"
    );
    // The ledger holds the question and the answer.
    let run_id = out.split("\"run_id\": \"").nth(1).unwrap().split('"').next().unwrap();
    let exported = Command::new(env!("CARGO_BIN_EXE_planexec"))
        .args(["runs", "export", run_id, "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let exported = String::from_utf8_lossy(&exported.stdout);
    assert!(
        exported.contains("\"action\": \"answer\"") && exported.contains("Ada Lovelace"),
        "{exported}"
    );
}
