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
///
/// The tests take turns: Restate sends a service's new invocations to the
/// deployment registered last, so two tests' workers on one server would
/// take each other's steps.
fn restate() -> Option<(String, String, std::sync::MutexGuard<'static, ()>)> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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
        Some((Some(ingress), Some(admin))) => Some((ingress, admin, turn)),
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

/// `planexec worker` with `args` (where it listens, its pool), registered
/// with `admin`: the worker and the URL it serves at, once it has
/// registered or joined its pool.
fn worker_at(workspace: &Path, name: &str, args: &[&str], admin: &str, model: &ScriptedServer) -> (Worker, String) {
    let mut child = common::planexec(workspace)
        .env("OPENAI_BASE_URL", model.base_url())
        .args(["worker", "--name", name, "--register", admin])
        .args(if args.contains(&"--mode") {
            &[][..]
        } else {
            &["--mode", "auto"][..]
        })
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Killed and waited for when dropped, whatever happens next.
    let worker = Worker(child);
    let mut seen = Vec::new();
    let mut url = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if let Some((_, at)) = line.split_once("serving Restate handlers at ") {
            url = at.trim().to_string();
        }
        if line.starts_with("registered with Restate") || line.starts_with("joined the pool") {
            std::thread::spawn(move || lines.for_each(drop));
            return (worker, url);
        }
    }
    panic!("the worker never registered: {seen:#?}");
}

/// A plain HTTP server that answers each GET with its path and counts the
/// requests per path: how many times each step's call was made.
struct CountingServer {
    addr: std::net::SocketAddr,
    counts: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u32>>>,
}

impl CountingServer {
    /// A server that waits `delay` before each answer (a slow step).
    fn answering_after(delay: Duration) -> CountingServer {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let counts = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
        let kept = counts.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let counts = kept.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let n = stream.read(&mut buf).unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    *counts.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
                    std::thread::sleep(delay);
                    let body = format!("page {path}");
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        CountingServer { addr, counts }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn count(&self, path: &str) -> u32 {
        self.counts.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn total(&self) -> u32 {
        self.counts.lock().unwrap().values().sum()
    }
}

/// A user config for the test's processes: the counting server is a host
/// `http_get` may read, and plans may be as wide as the test's.
/// The run's check asks for a program that derives the file again; this one
/// prints what the file should hold, a second route that confirms the run
/// (registered before the synthesizer's other replies: the first rule that
/// matches answers).
fn confirmed_by_a_program(model: &ScriptedServer, code: &str) {
    model
        .role("synthesizer")
        .containing("prints that content and nothing else")
        .always(planexec_testkit::Reply::json(&json!({ "code": code })));
}

fn user_config(workspace: &Path) {
    let dir = workspace.join(".no-user-config").join("planexec");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[http]\nallow_hosts = [\"127.0.0.1\"]\n\n[limits]\nmax_steps = 40\nparallelism = 8\n",
    )
    .unwrap();
}

/// The JSON report a command printed on stdout.
fn report_of(out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): stdout {stdout}\nstderr {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `plan.json`: 32 independent steps, each fetching its own page of `pages`.
fn wide_plan(workspace: &Path, pages: &CountingServer) {
    let steps: Vec<Value> = (1..=32)
        .map(|i| {
            json!({"id": format!("s{i}"), "description": format!("fetch page {i}"), "tool": "http_get",
            "args": {"url": pages.url(&format!("/p{i}"))}, "depends_on": []})
        })
        .collect();
    let plan = json!({"goal": "fetch 32 pages", "steps": steps});
    std::fs::write(workspace.join("plan.json"), plan.to_string()).unwrap();
}

/// A loopback address nobody listens on now.
fn free_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// A run of the wide plan on two pooled workers (the first serves the pool),
/// each page answered after `delay`, submitted detached; returned once
/// `started` pages were fetched.
struct WideRun {
    ws: tempfile::TempDir,
    pages: CountingServer,
    _model: ScriptedServer,
    workers: Vec<Worker>,
    run_id: String,
}

impl WideRun {
    fn start(ingress: &str, admin: &str, delay: Duration, started: u32) -> WideRun {
        let ws = tempfile::tempdir().unwrap();
        user_config(ws.path());
        let pages = CountingServer::answering_after(delay);
        wide_plan(ws.path(), &pages);
        let model = ScriptedServer::start();
        model
            .role("synthesizer")
            .always(planexec_testkit::Reply::content("fetched the 32 pages"));
        let pool = free_address();
        let workers = ["w1", "w2"].map(|name| worker_at(ws.path(), name, &["--pool", &pool], admin, &model).0);
        let run_id = submit(ws.path(), ingress, &["exec", "plan.json", "--yes"]);
        let start = Instant::now();
        while pages.total() < started {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the run never started its steps"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        WideRun {
            ws,
            pages,
            _model: model,
            workers: workers.into(),
            run_id,
        }
    }
}

#[test]
fn a_wide_plan_on_two_workers_runs_each_step_once_on_both_and_ends_as_a_local_run() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    user_config(ws.path());
    let pages = CountingServer::answering_after(Duration::from_millis(50));
    wide_plan(ws.path(), &pages);
    let model = ScriptedServer::start();
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("fetched the 32 pages"));
    let pool = free_address();
    let _w1 = worker_at(ws.path(), "w1", &["--pool", &pool], &admin, &model).0;
    let _w2 = worker_at(ws.path(), "w2", &["--pool", &pool], &admin, &model).0;

    let out = exec_followed(ws.path(), &ingress);
    let on_restate = report_of(&out);
    assert_eq!(on_restate["status"], "succeeded", "{on_restate:#}");
    // Followed as a local run is: a line per finished step, with its worker.
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.matches("✓ s").count(), 32, "{said}");
    let steps = on_restate["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 32, "{on_restate:#}");
    for step in steps {
        assert_eq!(step["status"], "succeeded", "{step}");
    }
    for name in ["w1", "w2"] {
        assert!(
            steps.iter().any(|s| s["worker"] == name),
            "{name} ran no step: {on_restate:#}"
        );
    }
    for i in 1..=32 {
        assert_eq!(
            pages.count(&format!("/p{i}")),
            1,
            "page {i} was fetched more or less than once"
        );
    }

    // The same plan in this process: the same steps with the same outputs, the same answer.
    let out = common::planexec(ws.path())
        .env("OPENAI_BASE_URL", model.base_url())
        .args(["exec", "plan.json", "--yes", "--json"])
        .output()
        .unwrap();
    let local = report_of(&out);
    assert_eq!(local["status"], "succeeded", "{local:#}");
    assert_eq!(local["answer"], on_restate["answer"]);
    let outputs = |report: &Value| -> std::collections::BTreeMap<String, Value> {
        report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["id"].as_str().unwrap().to_string(), s["output"].clone()))
            .collect()
    };
    assert_eq!(outputs(&local), outputs(&on_restate));
}

/// Submit `command` (`run …` or `exec …`) to Restate, detached: the run's id.
fn submit(ws: &Path, ingress: &str, command: &[&str]) -> String {
    let out = common::planexec(ws)
        .args(command)
        .args(["--engine", "restate", "--ingress", ingress, "--detach", "--json"])
        .output()
        .unwrap();
    report_of(&out)["run_id"].as_str().unwrap().to_string()
}

/// `exec plan.json` on Restate, followed to its end: the output, its report on stdout.
fn exec_followed(ws: &Path, ingress: &str) -> std::process::Output {
    common::planexec(ws)
        .args([
            "exec",
            "plan.json",
            "--engine",
            "restate",
            "--ingress",
            ingress,
            "--yes",
            "--json",
        ])
        .output()
        .unwrap()
}

/// `runs show RUN --engine restate --json` until `done` says the answer is what it waits for.
fn show_until(ws: &Path, ingress: &str, run_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let out = common::planexec(ws)
            .args([
                "runs",
                "show",
                run_id,
                "--engine",
                "restate",
                "--ingress",
                ingress,
                "--json",
            ])
            .output()
            .unwrap();
        let shown = serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null);
        if done(&shown) {
            return shown;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "run {run_id} never got there: {shown:#} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_run_waiting_for_approval_outlives_its_worker_and_is_approved_from_another_process() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start();
    model.role("planner").always(planexec_testkit::Reply::json(&json!({"goal": "sum", "steps": [
        {"id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "17 + 25"}, "depends_on": []},
        {"id": "s2", "description": "write the sum", "tool": "write_file",
         "args": {"path": "sum.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
    ]})));
    confirmed_by_a_program(&model, "print(17 + 25)");
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("sum.txt holds 42"));
    let (first, url) = worker_at(ws.path(), "w1", &["--listen", "127.0.0.1:0"], &admin, &model);

    let run_id = submit(
        ws.path(),
        &ingress,
        &["run", "Add 17 and 25 into sum.txt", "--approve", "later"],
    );
    let waiting = show_until(ws.path(), &ingress, &run_id, |s| !s["waiting"].is_null());
    assert_eq!(
        waiting["waiting"]["plan"]["steps"][1]["tool"], "write_file",
        "{waiting:#}"
    );
    assert!(
        !ws.path().join("sum.txt").exists(),
        "a step ran before the plan was approved"
    );

    // Every worker stops while the run waits; one comes back where the first
    // was, and the decision is made from another process.
    drop(first);
    std::thread::sleep(Duration::from_secs(1));
    let listen = url.trim_start_matches("http://");
    let _second = worker_at(ws.path(), "w2", &["--listen", listen], &admin, &model).0;
    let out = common::planexec(ws.path())
        .args([
            "approve",
            &run_id,
            "--engine",
            "restate",
            "--ingress",
            &ingress,
            "--by",
            "ana",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let report = show_until(ws.path(), &ingress, &run_id, |s| s["status"].is_string());
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(std::fs::read_to_string(ws.path().join("sum.txt")).unwrap(), "42");
    assert_eq!(report["steps"][1]["worker"], "w2", "{report:#}");
    assert_eq!(model.requests_from("planner").len(), 1, "the plan was made again");

    // A second decision on a run that waits for none is refused.
    let out = common::planexec(ws.path())
        .args(["approve", &run_id, "--engine", "restate", "--ingress", &ingress])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not waiting"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_worker_killed_mid_run_leaves_the_run_to_the_other_and_no_finished_step_runs_again() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let mut wide = WideRun::start(&ingress, &admin, Duration::from_millis(400), 10);
    let run_id = wide.run_id.clone();
    wide.workers[0].0.kill().unwrap(); // SIGKILL: no goodbye to the pool or to Restate
    let (ws, pages) = (&wide.ws, &wide.pages);
    let report = show_until(ws.path(), &ingress, &run_id, |s| s["status"].is_string());
    assert_eq!(report["status"], "succeeded", "{report:#}");
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 32);
    for step in steps {
        let page = step["args"]["url"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        let fetched = pages.count(&format!("/{page}"));
        // A step journaled as done on w1 was never run again; one in flight when
        // w1 died ran again on w2 (at most twice in all).
        match step["worker"].as_str() {
            Some("w1") => assert_eq!(fetched, 1, "{step} ran again after it finished"),
            Some("w2") => assert!((1..=2).contains(&fetched), "{step} fetched {fetched} times"),
            other => panic!("step ran on {other:?}: {step}"),
        }
    }
    assert!(
        steps.iter().any(|s| s["worker"] == "w1"),
        "w1 finished no step before it died: {report:#}"
    );
    assert!(steps.iter().any(|s| s["worker"] == "w2"), "{report:#}");
}

/// Stop the Restate server `scripts/restate.sh` started and start it again
/// on its data folder; the admin API must have gone away in between.
fn restart_restate(admin: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/restate.sh");
    let stopped = Command::new("bash").arg(&script).arg("stop").status().unwrap();
    assert!(stopped.success());
    let health = Command::new("curl")
        .args(["-sf", "-m", "2", &format!("{admin}/health")])
        .status()
        .unwrap();
    assert!(
        !health.success(),
        "the Restate server is still up: it was not started by scripts/restate.sh"
    );
    let started = Command::new("bash")
        .arg(&script)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(started.success(), "scripts/restate.sh could not start the server again");
}

#[test]
fn a_run_goes_on_after_the_restate_server_restarts_on_its_data() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let wide = WideRun::start(&ingress, &admin, Duration::from_millis(300), 12);
    let (ws, pages, run_id) = (&wide.ws, &wide.pages, wide.run_id.clone());
    restart_restate(&admin);
    let before_restart = pages.total();

    let report = show_until(ws.path(), &ingress, &run_id, |s| s["status"].is_string());
    assert_eq!(report["status"], "succeeded", "{report:#}");
    // Each page at least once; again only the calls in flight at the stop
    // (at most the 8 running at a time), never one whose result was kept.
    for i in 1..=32 {
        assert!(pages.count(&format!("/p{i}")) >= 1, "page {i} was never fetched");
    }
    let again = pages.total() - 32;
    assert!(
        again <= 8,
        "{again} calls ran again (fetched {before_restart} before the restart)"
    );
}

#[test]
fn a_hundred_runs_submitted_at_once_on_two_workers_all_finish() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    user_config(ws.path());
    let pages = CountingServer::answering_after(Duration::from_millis(20));
    let plan = json!({"goal": "fetch a page and double 21", "steps": [
        {"id": "s1", "description": "fetch", "tool": "http_get", "args": {"url": pages.url("/page")}, "depends_on": []},
        {"id": "s2", "description": "double", "tool": "calculator", "args": {"expression": "21 * 2"}, "depends_on": []}
    ]});
    std::fs::write(ws.path().join("plan.json"), plan.to_string()).unwrap();
    let model = ScriptedServer::start();
    model.role("synthesizer").always(planexec_testkit::Reply::content("42"));
    let pool = free_address();
    let _w1 = worker_at(ws.path(), "w1", &["--pool", &pool], &admin, &model).0;
    let _w2 = worker_at(ws.path(), "w2", &["--pool", &pool], &admin, &model).0;

    let run_ids: Vec<String> = (0..100)
        .map(|_| {
            let out = common::planexec(ws.path())
                .args([
                    "exec",
                    "plan.json",
                    "--engine",
                    "restate",
                    "--ingress",
                    &ingress,
                    "--yes",
                    "--detach",
                ])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        })
        .collect();
    let mut workers = std::collections::BTreeSet::new();
    for run_id in &run_ids {
        let report = show_until(ws.path(), &ingress, run_id, |s| s["status"].is_string());
        assert_eq!(report["status"], "succeeded", "{report:#}");
        assert_eq!(common::report_step(&report, "s2")["output"], 42, "{report:#}");
        for step in report["steps"].as_array().unwrap() {
            workers.insert(step["worker"].as_str().unwrap_or("none").to_string());
        }
    }
    assert_eq!(pages.count("/page"), 100, "a run's call ran more or less than once");
    assert_eq!(workers.into_iter().collect::<Vec<_>>(), ["w1", "w2"]);
}

#[test]
fn calls_of_one_wave_wait_for_their_decisions_together_and_each_is_decided_on_its_own() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start();
    model.role("planner").always(planexec_testkit::Reply::json(&json!({"goal": "two notes", "steps": [
        {"id": "s1", "description": "write a", "tool": "write_file", "args": {"path": "a.txt", "content": "A"}, "depends_on": []},
        {"id": "s2", "description": "write b", "tool": "write_file", "args": {"path": "b.txt", "content": "B"}, "depends_on": []}
    ]})));
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("wrote the notes"));
    let _worker = worker_at(
        ws.path(),
        "w1",
        &["--listen", "127.0.0.1:0", "--mode", "ask"],
        &admin,
        &model,
    )
    .0;

    let run_id = submit(ws.path(), &ingress, &["run", "Write a.txt and b.txt", "--yes"]);
    let waiting_for = |shown: &Value| -> Vec<String> {
        let waiting = serde_json::from_value::<planexec::store::Waiting>(shown["waiting"].clone());
        waiting
            .map(|w| w.calls().into_iter().map(|c| c.step_id).collect())
            .unwrap_or_default()
    };
    // Both calls wait at once.
    show_until(ws.path(), &ingress, &run_id, |s| waiting_for(s) == ["s1", "s2"]);
    let decide = |verb: &str, step: &str| {
        common::planexec(ws.path())
            .args([
                verb,
                &run_id,
                "--step",
                step,
                "--engine",
                "restate",
                "--ingress",
                &ingress,
            ])
            .args(if verb == "reject" {
                &["--reason", "not a.txt"][..]
            } else {
                &[][..]
            })
            .output()
            .unwrap()
    };

    // s2 first: it runs while s1 still waits.
    let out = decide("approve", "s2");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    show_until(ws.path(), &ingress, &run_id, |s| waiting_for(s) == ["s1"]);
    let start = Instant::now();
    while !ws.path().join("b.txt").exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "s2 never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!ws.path().join("a.txt").exists(), "s1 ran before it was decided");

    // s1 rejected: s2's effect stays done and recorded; s1 never ran.
    let out = decide("reject", "s1");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = show_until(ws.path(), &ingress, &run_id, |s| s["status"].is_string());
    assert_eq!(report["status"], "failed", "{report:#}");
    let step = |id: &str| common::report_step(&report, id);
    assert_eq!(step("s2")["status"], "succeeded", "{report:#}");
    assert_eq!(step("s1")["refused"], true, "{report:#}");
    assert!(
        step("s1")["error"].as_str().unwrap().contains("not a.txt"),
        "{report:#}"
    );
    assert_eq!(std::fs::read_to_string(ws.path().join("b.txt")).unwrap(), "B");
    assert!(!ws.path().join("a.txt").exists());

    // Decided once: a second decision on s1 is refused.
    let out = decide("approve", "s1");
    assert!(!out.status.success());
}

#[test]
fn a_call_with_side_effects_in_flight_when_its_workers_die_is_not_run_again_blindly() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let plan = json!({"goal": "log", "steps": [
        {"id": "s1", "description": "log, slowly", "tool": "shell",
         "args": {"command": "echo started >> log.txt; sleep 5; echo done >> log.txt"}, "depends_on": []}
    ]});
    std::fs::write(ws.path().join("plan.json"), plan.to_string()).unwrap();
    let model = ScriptedServer::start();
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("logged"));
    let pool = free_address();
    let w1 = worker_at(ws.path(), "w1", &["--pool", &pool], &admin, &model).0;

    let run_id = submit(ws.path(), &ingress, &["exec", "plan.json", "--yes"]);
    let log = ws.path().join("log.txt");
    let start = Instant::now();
    while !log.exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "the step never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(w1); // killed mid-call, and with it the pool
    let _w2 = worker_at(ws.path(), "w2", &["--pool", &pool], &admin, &model).0;

    let report = show_until(ws.path(), &ingress, &run_id, |s| s["status"].is_string());
    assert_eq!(report["status"], "failed", "{report:#}");
    let error = report["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("may or may not have happened") && error.contains("w1"),
        "{report:#}"
    );
    // (The first call's shell may finish on its own: a killed worker's child lives on.)
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("started").count(), 1, "the call ran again: {text}");
}

/// GET or POST (with `body`) `url` through curl: the JSON answer.
fn http(method: &str, url: &str, body: Option<&Value>) -> Value {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-m", "30", "-X", method, url]);
    if let Some(body) = body {
        cmd.args(["-H", "content-type: application/json", "-d", &body.to_string()]);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn serve_on_restate_starts_a_run_and_its_viewer_api_approves_it() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let db = ws.path().join("ledger.db");
    let model = ScriptedServer::start();
    model.role("planner").always(planexec_testkit::Reply::json(&json!({"goal": "sum", "steps": [
        {"id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "17 + 25"}, "depends_on": []},
        {"id": "s2", "description": "write the sum", "tool": "write_file",
         "args": {"path": "sum.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
    ]})));
    confirmed_by_a_program(&model, "print(17 + 25)");
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("sum.txt holds 42"));
    let db_arg = db.to_str().unwrap();
    let _worker = worker_at(
        ws.path(),
        "w1",
        &["--listen", "127.0.0.1:0", "--db", db_arg],
        &admin,
        &model,
    )
    .0;
    let mut serve = common::planexec(ws.path())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--engine",
            "restate",
            "--ingress",
            &ingress,
            "--db",
            db_arg,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(serve.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split("http://")
        .nth(1)
        .unwrap_or_else(|| panic!("serve said: {line}"));
    let base = base.split('/').next().unwrap().to_string();
    let serve = Worker(serve); // stopped when dropped
    let api = |path: &str| format!("http://{base}{path}");

    let started = http(
        "POST",
        &api("/runs"),
        Some(&json!({"task": "Add 17 and 25 into sum.txt", "approve": "later"})),
    );
    let run_id = started["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_string();
    let start = Instant::now();
    let shown = loop {
        let shown = http("GET", &api(&format!("/runs/{run_id}")), None);
        if shown["status"] == "awaiting_approval" {
            break shown;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never waited: {shown:#}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(shown["waiting"]["for"], "plan", "{shown:#}");
    let approved = http(
        "POST",
        &api(&format!("/runs/{run_id}/approve")),
        Some(&json!({"by": "ana"})),
    );
    assert_eq!(approved["run_id"], run_id.as_str(), "{approved}");
    let start = Instant::now();
    loop {
        let shown = http("GET", &api(&format!("/runs/{run_id}")), None);
        if shown["status"] == "succeeded" {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never finished: {shown:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(std::fs::read_to_string(ws.path().join("sum.txt")).unwrap(), "42");
    drop(serve);
}

#[test]
fn a_run_on_restate_follows_a_steering_message_sent_from_another_process() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    user_config(ws.path());
    let pages = CountingServer::answering_after(Duration::from_millis(1500));
    let model = ScriptedServer::start();
    model.role("planner").always(planexec_testkit::Reply::json(&json!({"goal": "fetch", "steps": [
        {"id": "s1", "description": "fetch the page", "tool": "http_get", "args": {"url": pages.url("/page")}, "depends_on": []}
    ]})));
    model.role("replanner").always(planexec_testkit::Reply::json(&json!({"goal": "fetch, then note it", "steps": [
        {"id": "s1", "description": "fetch the page", "tool": "http_get", "args": {"url": pages.url("/page")}, "depends_on": []},
        {"id": "s2", "description": "note it", "tool": "write_file",
         "args": {"path": "note.txt", "content": "fetched"}, "depends_on": ["s1"]}
    ]})));
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("fetched and noted"));
    let _worker = worker_at(ws.path(), "w1", &["--listen", "127.0.0.1:0"], &admin, &model).0;

    let run_id = submit(ws.path(), &ingress, &["run", "Fetch the page", "--yes"]);
    let start = Instant::now();
    while pages.count("/page") == 0 {
        assert!(start.elapsed() < Duration::from_secs(30), "the step never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = common::planexec(ws.path())
        .args([
            "steer",
            &run_id,
            "also write note.txt",
            "--engine",
            "restate",
            "--ingress",
            &ingress,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let report = show_until(ws.path(), &ingress, &run_id, |s| s["status"].is_string());
    assert_eq!(report["status"], "succeeded", "{report:#}");
    assert_eq!(std::fs::read_to_string(ws.path().join("note.txt")).unwrap(), "fetched");
    let reasons: Vec<&str> = report["plans"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["reason"].as_str())
        .collect();
    assert!(
        reasons.iter().any(|r| r.starts_with("steered: also write note.txt")),
        "{reasons:?}"
    );
    assert_eq!(pages.count("/page"), 1, "the fetched page was fetched again");
    let asked = model.requests_from("replanner");
    assert_eq!(asked.len(), 1);
    assert!(asked[0].prompt_text().contains("also write note.txt"));
}

#[test]
fn the_model_calls_a_worker_makes_for_a_step_count_in_the_runs_usage() {
    let Some((ingress, admin, _turn)) = restate() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let plan = json!({"goal": "a haiku", "steps": [
        {"id": "s1", "description": "write a haiku about rivers", "depends_on": []}
    ]});
    std::fs::write(ws.path().join("plan.json"), plan.to_string()).unwrap();
    let model = ScriptedServer::start();
    model
        .role("executor")
        .always(planexec_testkit::Reply::content("water finds its way").with_usage(40, 6));
    model
        .role("synthesizer")
        .always(planexec_testkit::Reply::content("a haiku"));
    let _worker = worker_at(ws.path(), "w1", &["--listen", "127.0.0.1:0"], &admin, &model).0;
    let report = report_of(&exec_followed(ws.path(), &ingress));
    assert_eq!(report["status"], "succeeded", "{report:#}");
    // The reasoning step's call, made on the worker, is in the run's usage.
    assert_eq!(report["usage"]["executor"]["calls"], 1, "{report:#}");
    assert_eq!(report["usage"]["executor"]["prompt_tokens"], 40, "{report:#}");
    assert!(
        report["usage"]["synthesizer"]["calls"].as_u64().unwrap_or(0) >= 1,
        "{report:#}"
    );
}
