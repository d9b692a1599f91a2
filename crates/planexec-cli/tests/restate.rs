//! `planexec worker` on a real Restate server (`scripts/restate.sh`, which the
//! README's test command starts): the worker registers, Restate routes a
//! step to it through the ingress, the step runs with the worker's tools, and
//! a retried request (same idempotency key) gets the journaled response
//! without running the step again.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use planexec_testkit::ScriptedServer;
use serde_json::{json, Value};

/// The running server's ingress and admin URLs, from `scripts/restate.sh`
/// (it reuses a running server); `None` when it cannot start one, unless
/// `PLANEXEC_REQUIRE_RESTATE` says the test must not skip.
fn restate() -> Option<(String, String)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/restate.sh");
    let out = Command::new("bash").arg(script).stderr(Stdio::inherit()).output();
    let urls = out.ok().filter(|o| o.status.success()).map(|o| {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let get = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .map(str::to_string)
        };
        (get("RESTATE_INGRESS"), get("RESTATE_ADMIN"))
    });
    match urls {
        Some((Some(ingress), Some(admin))) => Some((ingress, admin)),
        _ => {
            assert!(
                std::env::var_os("PLANEXEC_REQUIRE_RESTATE").is_none(),
                "scripts/restate.sh could not start the Restate server"
            );
            eprintln!("skipped: no Restate server (scripts/restate.sh failed)");
            None
        }
    }
}

struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `planexec worker` on a free port, registered with `admin`; returns once it says so.
fn worker(workspace: &Path, name: &str, admin: &str, model: &ScriptedServer) -> Worker {
    let mut child = common::planexec(workspace)
        .env("OPENAI_BASE_URL", model.base_url())
        .args([
            "worker",
            "--listen",
            "127.0.0.1:0",
            "--name",
            name,
            "--register",
            admin,
            "--mode",
            "auto",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Killed and waited for when dropped, whatever happens next.
    let worker = Worker(child);
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("registered with Restate") {
            std::thread::spawn(move || lines.for_each(drop));
            return worker;
        }
    }
    panic!("the worker never registered: {seen:#?}");
}

/// POST `body` to `url` with an idempotency key (through curl, as the ingress
/// speaks plain HTTP): the status and the JSON answer.
fn post(url: &str, body: &Value, key: &str) -> (u16, Value) {
    let out = Command::new("curl")
        .args([
            "-sS",
            "-m",
            "60",
            "-w",
            "\n%{http_code}",
            "-H",
            "content-type: application/json",
        ])
        .args(["-H", &format!("idempotency-key: {key}"), "-d", &body.to_string(), url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (answer, status) = text.rsplit_once('\n').unwrap_or((&text, "0"));
    let answer = serde_json::from_str(answer).unwrap_or(Value::String(answer.to_string()));
    (status.trim().parse().unwrap_or(0), answer)
}

#[test]
fn a_step_sent_through_restate_runs_on_the_registered_worker_once() {
    let Some((ingress, admin)) = restate() else { return };
    let ws = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start();
    let _worker = worker(ws.path(), "w1", &admin, &model);
    let step = json!({"id": "s2", "description": "write the sum", "tool": "write_file",
        "args": {"path": "sum.txt", "content": "{{s1}}"}, "depends_on": ["s1"]});
    let request = json!({
        "plan": {"goal": "sum", "steps": [
            {"id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "17 + 25"}, "depends_on": []},
            step
        ]},
        "plan_version": 1,
        "step": step,
        "deps": [["s1", 42]],
    });
    let key = format!("test-{}", std::process::id());
    let url = format!("{ingress}/PlanexecSteps/run");
    let start = Instant::now();
    let (status, response) = loop {
        // Right after registration the ingress may not route to the service yet.
        let (status, response) = post(&url, &request, &key);
        if status != 404 || start.elapsed() > Duration::from_secs(20) {
            break (status, response);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["worker"], "w1", "{response}");
    assert_eq!(response["result"]["status"], "succeeded", "{response}");
    assert_eq!(std::fs::read_to_string(ws.path().join("sum.txt")).unwrap(), "42");

    // The same request again: Restate answers from its journal; the step does not run again.
    std::fs::remove_file(ws.path().join("sum.txt")).unwrap();
    let (status, again) = post(&url, &request, &key);
    assert_eq!(status, 200, "{again}");
    assert_eq!(again, response);
    assert!(!ws.path().join("sum.txt").exists(), "the step ran a second time");
}
