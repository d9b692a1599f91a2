//! The shell tool runs real commands (with `sh` when they use shell syntax): in the workspace, with no
//! input, a time limit that stops the command's children too, capped output,
//! and an effect class that depends on the allowlist.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use planexec::tools::output::OutputCaps;
use planexec::tools::shell::{Shell, ShellConfig};
use planexec::tools::workspace::Workspace;
use planexec::{Effect, Tool};
use serde_json::json;

fn shell(dir: &std::path::Path, config: ShellConfig) -> Shell {
    Shell::new(Arc::new(Workspace::new(dir).unwrap()), config)
}

#[tokio::test]
async fn runs_in_the_workspace_with_no_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("here.txt"), "x").unwrap();
    let sh = shell(dir.path(), ShellConfig::default());
    let out = sh.call(json!({"command": "ls; cat; echo err >&2"})).await.unwrap();
    assert_eq!(out["exit_code"], 0);
    assert_eq!(
        out["stdout"], "here.txt\n",
        "cat read an empty stdin instead of waiting"
    );
    assert_eq!(out["stderr"], "err\n");
}

#[tokio::test]
async fn a_failing_command_is_a_failure_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let sh = shell(dir.path(), ShellConfig::default());
    let err = sh
        .call(json!({"command": "echo 'no such thing' >&2; exit 3"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "`echo 'no such thing' >&2; exit 3` exited with code 3: no such thing"
    );
}

#[tokio::test]
async fn a_command_past_its_time_limit_is_stopped_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let sh = shell(
        dir.path(),
        ShellConfig {
            timeout: Duration::from_millis(500),
            ..ShellConfig::default()
        },
    );
    let started = Instant::now();
    // The background child holds stdout open: only killing the group ends the read.
    let err = sh
        .call(json!({"command": "sleep 30 & sleep 30; echo never"}))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        err.message.contains("did not finish within 0.5s and was stopped"),
        "{}",
        err.message
    );
    // A killed process can stay listed for a moment while the kernel tears
    // it down: look again for up to 5 s before calling it a survivor.
    let sleeps = || {
        let ps = std::process::Command::new("sh")
            .args(["-c", "ps -eo args | grep -c '^sleep 30$' || true"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&ps.stdout).trim().to_string()
    };
    let mut left = sleeps();
    for _ in 0..50 {
        if left == "0" {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        left = sleeps();
    }
    assert_eq!(left, "0", "no sleep survived");
}

#[tokio::test]
async fn output_is_capped_and_binary_is_described() {
    let dir = tempfile::tempdir().unwrap();
    let sh = shell(
        dir.path(),
        ShellConfig {
            caps: OutputCaps {
                max_bytes: 1000,
                max_lines: 10,
            },
            ..ShellConfig::default()
        },
    );
    let out = sh.call(json!({"command": "seq 1 100000"})).await.unwrap();
    let text = out["stdout"].as_str().unwrap();
    assert!(text.starts_with("1\n2\n"), "{text}");
    assert!(text.contains("[... output truncated: showing 10 of"), "{text}");
    assert!(text.ends_with("more bytes not kept]"), "{text}");
    let out = sh
        .call(json!({"command": "printf '\\211PNG\\r\\n\\032\\n\\000\\000'"}))
        .await
        .unwrap();
    assert_eq!(out["stdout"], "[binary output: 10 bytes, a PNG image; not shown]");
}

#[test]
fn only_allowlisted_commands_are_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let sh = shell(
        dir.path(),
        ShellConfig {
            allow: vec!["git status".into(), "ls *".into()],
            ..ShellConfig::default()
        },
    );
    assert_eq!(sh.effect_for(&json!({"command": "ls -la"})), Effect::ReadOnly);
    assert_eq!(sh.effect_for(&json!({"command": "git status"})), Effect::ReadOnly);
    assert_eq!(sh.effect_for(&json!({"command": "ls; rm -rf ."})), Effect::External);
    assert_eq!(sh.effect_for(&json!({"command": "rm -rf ."})), Effect::External);
    assert_eq!(sh.effect(), Effect::External);
    assert!(sh.description().contains("git status, ls *"));
}

/// In plan mode a shell call that is not read-only is refused with the rule
/// that decided it, both when the plan is checked and when the call runs.
#[test]
fn a_refusal_names_the_rule_that_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sh = std::sync::Arc::new(shell(
        dir.path(),
        ShellConfig {
            allow: vec!["find *".into()],
            ..ShellConfig::default()
        },
    ));
    let mut tools = planexec::ToolRegistry::new();
    tools.register(sh).unwrap();
    let plan: planexec::Plan = serde_json::from_value(json!({"goal": "g", "steps": [
        {"id": "s1", "description": "clean", "tool": "shell", "args": {"command": "find . -name '*.tmp' -delete"}, "depends_on": []}
    ]}))
    .unwrap();
    let limits = planexec::plan::PlanLimits {
        read_only: true,
        ..planexec::plan::PlanLimits::default()
    };
    let err = planexec::plan::validate(&plan, &tools, &limits)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("(because `find` with `-delete` writes files or runs commands)"),
        "{err}"
    );
}

/// A command with no shell syntax runs without `sh`, so nothing in it is read
/// as shell code: a missing program is the tool's own "no such program"
/// (through `sh -c` it would be sh's exit code 127).
#[tokio::test]
async fn a_plain_command_runs_as_argv_without_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let sh = shell(dir.path(), ShellConfig::default());
    let out = sh.call(json!({"command": "printf %s%s a b"})).await.unwrap();
    assert_eq!(out["stdout"], "ab");
    let err = sh.call(json!({"command": "no-such-program-here x"})).await.unwrap_err();
    assert!(err.message.contains("no such program"), "{}", err.message);
}

/// A python step of a plan sees its dependencies' results as variables
/// named by their ids, with no `{{s1}}` spliced into its code; the step's
/// recorded arguments are the code the plan wrote, not those results.
#[tokio::test]
async fn a_python_step_reads_its_dependencies_as_variables() {
    use planexec::tools::python::Python;
    use planexec_testkit::{Reply, ScriptedServer};
    let server = ScriptedServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("VERSION"), "2.4.9\n").unwrap();
    let ws = Arc::new(Workspace::new(dir.path()).unwrap());
    let mut tools = planexec::tools::builtin::registry((*ws).clone());
    let python = Python::find(ws, ShellConfig::default(), "python3").expect("python3 on PATH");
    tools.register(Arc::new(python)).unwrap();
    let code = "major, minor, patch = s1.strip().split('.')\nprint(f'{major}.{minor}.{int(patch) + 1}')";
    server.role("planner").reply(Reply::json(&json!({"goal": "bump", "steps": [
        {"id": "s1", "description": "read the version", "tool": "read_file", "args": {"path": "VERSION"}, "depends_on": []},
        {"id": "s2", "description": "bump the patch part", "tool": "python", "args": {"code": code}, "depends_on": ["s1"]},
        {"id": "s3", "description": "save it", "tool": "write_file", "args": {"path": "VERSION", "content": "{{s2}}"}, "depends_on": ["s2"]}
    ]})));
    server
        .role("synthesizer")
        .always(Reply::content("VERSION is now 2.4.10."));
    let report = common::builder(&server, tools)
        .build()
        .run("VERSION holds our release number. Bump the patch part and save it in VERSION.")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("VERSION")).unwrap(), "2.4.10");
    let s2 = report.steps.iter().find(|s| s.id == "s2").unwrap();
    assert_eq!(
        s2.args,
        Some(json!({"code": code})),
        "the inputs are not part of the recorded call"
    );
}
