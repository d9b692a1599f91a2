//! `planexec serve`, as a client meets it: the real binary on a loopback port
//! over the scripted model; plain HTTP/1.1 requests; the viewer in a real
//! headless Chromium driven over WebDriver (Debian's `chromium` and
//! `chromium-driver`, installed by scripts/setup.sh).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

/// A `planexec serve` process, killed when dropped.
struct Serve {
    child: Child,
    addr: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(workspace: &Path, db: &Path, model: &ScriptedServer, extra: &[&str]) -> Serve {
    let mut cmd = common::planexec(workspace);
    cmd.env("PLANEXEC_DB", db)
        .env("OPENAI_BASE_URL", model.base_url())
        .args(["serve", "--listen", "127.0.0.1:0"])
        // Auto unless the test chooses a mode.
        .args(if extra.contains(&"--mode") {
            &[][..]
        } else {
            &["--mode", "auto"][..]
        })
        .args(extra)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Serve { child, addr }
}

/// One HTTP/1.1 request; returns the status and the body.
fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\nContent-Type: application/json\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    // Read by Content-Length: some servers (chromedriver) keep the connection open.
    let mut reader = BufReader::new(stream);
    let (mut status, mut length, mut line) = (0u16, None::<usize>, String::new());
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        let l = line.trim_end().to_string();
        line.clear();
        if status == 0 {
            status = l.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        } else if l.is_empty() {
            break;
        } else if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok();
            }
        }
    }
    let mut raw = Vec::new();
    match length {
        Some(n) => {
            raw.resize(n, 0);
            let _ = reader.read_exact(&mut raw);
        }
        None => {
            let _ = reader.read_to_end(&mut raw);
        }
    }
    let body = String::from_utf8_lossy(&raw).to_string();
    (status, body)
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Poll `GET /runs/{id}` until its status is `status`.
fn wait_for(addr: &str, headers: &[(&str, &str)], run_id: &str, status: &str) -> Value {
    let start = Instant::now();
    loop {
        let (code, body) = http(addr, "GET", &format!("/runs/{run_id}"), headers, b"");
        if code == 200 && json_of(&body)["status"] == status {
            return json_of(&body);
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "run {run_id} never became {status}: {body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn model() -> ScriptedServer {
    let model = ScriptedServer::start();
    model.role("planner").always(Reply::json(&json!({"goal": "note", "steps": [
        {"id": "s1", "description": "write the note", "tool": "write_file", "args": {"path": "note.txt", "content": "hello"}, "depends_on": []},
        {"id": "s2", "description": "read it back", "tool": "read_file", "args": {"path": "note.txt"}, "depends_on": ["s1"]}
    ]})));
    model.role("synthesizer").always(Reply::content("the note says hello"));
    model
}

#[test]
fn a_run_started_over_http_waits_is_approved_and_its_events_resume_without_loss() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = model();
    let server = serve(ws.path(), &data.path().join("ledger.db"), &model, &[]);
    let a = server.addr.as_str();

    let (code, body) = http(a, "POST", "/runs", &[], br#"{"task": "Write a note and read it"}"#);
    assert_eq!(code, 202, "{body}");
    let run_id = json_of(&body)["run_id"].as_str().unwrap().to_string();
    let waiting = wait_for(a, &[], &run_id, "awaiting_approval");
    assert_eq!(waiting["waiting"], json!({"for": "plan", "version": 1}));
    assert!(!ws.path().join("note.txt").exists());

    // Bad requests change nothing and say why.
    let runs_before = json_of(&http(a, "GET", "/runs", &[], b"").1)["runs"]
        .as_array()
        .unwrap()
        .len();
    let (code, body) = http(a, "POST", "/runs", &[], b"{\"task\": ");
    assert_eq!(code, 400, "{body}");
    assert!(json_of(&body)["error"].as_str().unwrap().contains("EOF"), "{body}");
    let (code, body) = http(a, "POST", "/runs", &[], br#"{"task": "x", "aprove": "auto"}"#);
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("aprove"), "{body}");
    let big = format!("{{\"task\": \"{}\"}}", "x".repeat(300 * 1024));
    let (code, _) = http(a, "POST", "/runs", &[], big.as_bytes());
    assert_eq!(code, 413);
    let (code, body) = http(a, "POST", &format!("/runs/{run_id}/reject"), &[], b"{}");
    assert_eq!(code, 400, "a rejection needs a reason: {body}");
    let runs_after = json_of(&http(a, "GET", "/runs", &[], b"").1)["runs"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(runs_before, runs_after);
    assert_eq!(wait_for(a, &[], &run_id, "awaiting_approval")["decisions"], json!([]));

    let (code, body) = http(
        a,
        "POST",
        &format!("/runs/{run_id}/approve"),
        &[],
        br#"{"by": "alice"}"#,
    );
    assert_eq!(code, 200, "{body}");
    let done = wait_for(a, &[], &run_id, "succeeded");
    assert_eq!(done["report"]["answer"], "the note says hello");
    assert_eq!(done["decisions"][0]["by"], "alice");
    let (code, _) = http(a, "POST", &format!("/runs/{run_id}/approve"), &[], b"");
    assert_eq!(code, 409, "nothing left to approve");

    // Events: read some, drop the connection, reconnect with Last-Event-ID.
    let first = read_events(a, &run_id, None, 3);
    let last = first.last().unwrap().0;
    let rest = read_events(a, &run_id, Some(last), usize::MAX);
    let ids: Vec<u64> = first.iter().chain(&rest).map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "no event lost or repeated"
    );
    let kinds: Vec<&str> = first.iter().chain(&rest).map(|(_, k)| k.as_str()).collect();
    for kind in [
        "run_started",
        "plan_proposed",
        "run_finished",
        "run_resumed",
        "step_finished",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }

    let (code, body) = http(a, "GET", "/openapi.json", &[], b"");
    assert_eq!(code, 200);
    assert!(json_of(&body)["paths"]["/runs/{id}/events"].is_object());
}

/// The OpenAPI document `planexec serve` publishes, checked in for readers and
/// client generators. `PLANEXEC_BLESS_OPENAPI=1 cargo test -p planexec-cli --test
/// serve` writes it anew after a handler changes.
const OPENAPI_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");

#[test]
fn the_served_openapi_document_is_the_checked_in_one_and_every_path_in_it_is_routed() {
    let dir = tempfile::tempdir().unwrap();
    let model = model();
    let server = serve(dir.path(), &dir.path().join("ledger.db"), &model, &[]);
    let a = server.addr.as_str();
    let (code, body) = http(a, "GET", "/openapi.json", &[], b"");
    assert_eq!(code, 200);
    let served = json_of(&body);
    let written = serde_json::to_string_pretty(&served).unwrap() + "\n";
    if std::env::var_os("PLANEXEC_BLESS_OPENAPI").is_some() {
        std::fs::write(OPENAPI_FILE, &written).unwrap();
    }
    let checked_in = std::fs::read_to_string(OPENAPI_FILE).unwrap_or_default();
    assert!(
        checked_in == written,
        "docs/openapi.json differs from what planexec serve publishes: run PLANEXEC_BLESS_OPENAPI=1 cargo test -p planexec-cli --test serve, and read the diff"
    );
    // Generated from the handlers: their request and response bodies are described.
    let schemas = &served["components"]["schemas"];
    for name in ["NewRun", "RunStarted", "RunShown", "Decide", "ApiError"] {
        assert!(schemas[name].is_object(), "{name} missing from {schemas}");
    }
    assert_eq!(
        served["paths"]["/runs"]["post"]["responses"]["202"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RunStarted"
    );
    // Every path and method it names is one the server routes: axum answers an
    // unrouted method 405 and an unrouted path 404 with no body; a handler's
    // 404 says what is missing.
    let paths = served["paths"].as_object().unwrap();
    assert!(paths.len() >= 10, "{paths:?}");
    for (path, item) in paths {
        for (method, operation) in item.as_object().unwrap() {
            let streams = operation["responses"]["200"]["content"]["text/event-stream"].is_object();
            if streams {
                continue; // an endless stream; its route is exercised by the events test
            }
            let concrete = path.replace("{id}", "run-that-is-not-there");
            let (code, body) = http(a, &method.to_uppercase(), &concrete, &[], b"{}");
            assert!(
                code != 405 && !(code == 404 && body.is_empty()),
                "{} {path} is in the document but not routed ({code})",
                method.to_uppercase()
            );
        }
    }
}

/// Up to `max` events `(id, kind)` of the run's stream (all it has so far when
/// `max` is larger), starting after `last` (sent as `Last-Event-ID`).
fn read_events(addr: &str, run_id: &str, last: Option<u64>, max: usize) -> Vec<(u64, String)> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_millis(700))).unwrap();
    let resume = last.map(|l| format!("Last-Event-ID: {l}\r\n")).unwrap_or_default();
    write!(
        stream,
        "GET /runs/{run_id}/events HTTP/1.1\r\nHost: {addr}\r\n{resume}\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let (mut events, mut id, mut line) = (Vec::new(), None, String::new());
    while events.len() < max {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break, // the stream stays open: a quiet moment means all are in
            Ok(_) => {}
        }
        if let Some(v) = line.strip_prefix("id:") {
            id = v.trim().parse().ok();
        } else if let (Some(kind), Some(n)) = (line.strip_prefix("event:"), id) {
            events.push((n, kind.trim().to_string()));
        }
    }
    events
}

#[test]
fn off_loopback_the_api_needs_its_token() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("ledger.db");
    let model = model();
    let mut cmd = common::planexec(ws.path());
    cmd.env("PLANEXEC_DB", &db).args(["serve", "--listen", "0.0.0.0:0"]);
    let (out, _, stderr) = common::run(&mut cmd);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs a bearer token"), "{stderr}");

    let server = serve(ws.path(), &db, &model, &["--token", "s3cret-token"]);
    let a = server.addr.as_str();
    let (code, body) = http(a, "GET", "/runs", &[], b"");
    assert_eq!(code, 401, "{body}");
    let (code, _) = http(a, "GET", "/runs", &[("Authorization", "Bearer s3cret-tokem")], b"");
    assert_eq!(code, 401);
    let (code, _) = http(a, "POST", "/runs", &[], br#"{"task": "sneak in"}"#);
    assert_eq!(code, 401);
    let (code, body) = http(a, "GET", "/runs", &[("Authorization", "Bearer s3cret-token")], b"");
    assert_eq!(code, 200, "{body}");
    assert_eq!(json_of(&body)["runs"], json!([]), "the refused request started nothing");
}

// ---------------------------------------------------------------------------
// The viewer in a real browser.
// ---------------------------------------------------------------------------

/// A WebDriver session on chromedriver (headless Chromium).
struct Browser {
    driver: Child,
    addr: String,
    session: String,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(&self.addr, "DELETE", &format!("/session/{}", self.session), &[], b"");
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    fn start() -> Option<Browser> {
        let driver = ["chromedriver", "/usr/bin/chromedriver"].into_iter().find(|d| {
            Command::new(d)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
        let Some(driver) = driver else {
            assert!(
                std::env::var_os("PLANEXEC_REQUIRE_BROWSER").is_none(),
                "PLANEXEC_REQUIRE_BROWSER is set but chromedriver is missing: run scripts/setup.sh"
            );
            eprintln!(
                "SKIPPED: the viewer's browser test needs chromium and chromedriver (scripts/setup.sh installs them)"
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = format!("127.0.0.1:{port}");
        let start = Instant::now();
        while TcpStream::connect(&addr).is_err() {
            assert!(start.elapsed() < Duration::from_secs(20), "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"]
        }}}});
        let (code, body) = http(&addr, "POST", "/session", &[], caps.to_string().as_bytes());
        assert_eq!(code, 200, "no WebDriver session: {body}");
        let session = json_of(&body)["value"]["sessionId"].as_str().unwrap().to_string();
        Some(Browser {
            driver: child,
            addr,
            session,
        })
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let (code, text) = http(&self.addr, method, &path, &[], body.to_string().as_bytes());
        assert_eq!(code, 200, "{method} {path}: {text}");
        json_of(&text)["value"].clone()
    }

    fn script(&self, js: &str) -> Value {
        self.call("POST", "/execute/sync", json!({"script": js, "args": []}))
    }

    /// Wait until `js` (an expression) is truthy in the page.
    fn until(&self, js: &str) {
        let start = Instant::now();
        while self.script(&format!("return !!({js});")) != json!(true) {
            assert!(start.elapsed() < Duration::from_secs(30), "the page never showed: {js}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn click(&self, css: &str) {
        let found = self.call("POST", "/element", json!({"using": "css selector", "value": css}));
        let id = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        self.call("POST", &format!("/element/{id}/click"), json!({}));
    }
}

#[test]
fn the_viewer_shows_a_waiting_run_approves_it_and_draws_the_finished_dag() {
    let Some(browser) = Browser::start() else { return };
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = model();
    let server = serve(ws.path(), &data.path().join("ledger.db"), &model, &[]);
    let (code, body) = http(
        &server.addr,
        "POST",
        "/runs",
        &[],
        br#"{"task": "Write a note and read it"}"#,
    );
    assert_eq!(code, 202, "{body}");
    let run_id = json_of(&body)["run_id"].as_str().unwrap().to_string();
    wait_for(&server.addr, &[], &run_id, "awaiting_approval");

    browser.call("POST", "/url", json!({"url": format!("http://{}/", server.addr)}));
    browser.until(&format!("document.querySelector('[data-run=\"{run_id}\"]')"));
    browser.click(&format!("[data-run=\"{run_id}\"]"));
    browser.until("document.getElementById('status').textContent === 'awaiting_approval'");
    browser.until("document.querySelectorAll('#dag g.step').length === 2");
    assert!(!ws.path().join("note.txt").exists());

    browser.click("#approve");
    browser.until("document.getElementById('status').textContent === 'succeeded'");
    browser.until("[...document.querySelectorAll('#dag g.step')].every(g => g.dataset.status === 'succeeded')");
    let answer = browser.script("return document.getElementById('answer').textContent;");
    assert_eq!(answer, "the note says hello");
    assert_eq!(std::fs::read_to_string(ws.path().join("note.txt")).unwrap(), "hello");
    let decided = browser.script("return document.getElementById('decisions').textContent;");
    assert!(decided.as_str().unwrap().contains("viewer"), "{decided}");

    // The DAG as the page drew it, kept as a test artifact.
    let shot = browser.call("GET", "/screenshot", json!({}));
    let png = decode_base64(shot.as_str().unwrap());
    assert_eq!(&png[1..4], b"PNG");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/artifacts");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("viewer-dag.png"), &png).unwrap();
}

fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = text.bytes().filter(|c| !matches!(c, b'=' | b'\n' | b'\r')).collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &c)| acc | (value(c) as u32) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// A server's elicitation in a run of `planexec serve`: the run waits for an
/// answer (`waiting.for` = `answer`, with the form), and `approve` with an
/// `answer` gives it (from the viewer's form, or the API without a browser);
/// the resumed step hands it to the server.
#[test]
fn an_mcp_servers_question_waits_and_is_answered_in_the_viewer() {
    let Some(home) = planexec_testkit::mcp::mcp_home() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    home.everything_in_user_config(ws.path(), "");
    let model = ScriptedServer::start();
    model.role("planner").always(Reply::json(&json!({"goal": "ask", "steps": [
        {"id": "s1", "description": "ask the user", "tool": "ev.trigger-elicitation-request", "args": {}, "depends_on": []}]})));
    model.role("synthesizer").always(Reply::content("asked [s1]"));
    let server = serve(ws.path(), &data.path().join("ledger.db"), &model, &["--verify", "off"]);
    let a = server.addr.as_str();
    let (code, body) = http(a, "POST", "/runs", &[], br#"{"task": "Ask me for my name"}"#);
    assert_eq!(code, 202, "{body}");
    let run_id = json_of(&body)["run_id"].as_str().unwrap().to_string();
    wait_for(a, &[], &run_id, "awaiting_approval");
    let (code, body) = http(a, "POST", &format!("/runs/{run_id}/approve"), &[], b"{}");
    assert_eq!(code, 200, "{body}");
    // The step ran, the server asked: the run waits for the answer.
    let start = Instant::now();
    let waiting = loop {
        let run = wait_for(a, &[], &run_id, "awaiting_approval");
        if run["waiting"]["for"] == "answer" {
            break run;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{run}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        waiting["waiting"]["question"]
            .as_str()
            .unwrap()
            .starts_with("Please provide inputs"),
        "{waiting}"
    );
    assert_eq!(waiting["waiting"]["schema"]["required"], json!(["name"]));
    // Answered in the viewer when a browser is here, else through the API.
    match Browser::start() {
        Some(browser) => {
            browser.call("POST", "/url", json!({"url": format!("http://{a}/")}));
            browser.until(&format!("document.querySelector('[data-run=\"{run_id}\"]')"));
            browser.click(&format!("[data-run=\"{run_id}\"]"));
            browser.until("!document.getElementById('answer-form').hidden");
            let question = browser.script("return document.getElementById('question').textContent;");
            assert!(
                question.as_str().unwrap().starts_with("Please provide inputs"),
                "{question}"
            );
            browser
                .script("document.getElementById('answer-json').value = '{\"name\": \"Ada Lovelace\"}'; return null;");
            browser.click("#send-answer");
            // The viewer has sent it once its form is gone (or says why not).
            browser
                .until("document.getElementById('answer-form').hidden || document.getElementById('error').textContent");
            let error = browser.script("return document.getElementById('error').textContent;");
            assert_eq!(error, json!(""), "the viewer could not send the answer");
        }
        None => {
            let answer = br#"{"answer": {"name": "Ada Lovelace"}}"#;
            let (code, body) = http(a, "POST", &format!("/runs/{run_id}/approve"), &[], answer);
            assert_eq!(code, 200, "{body}");
        }
    }
    let done = wait_for(a, &[], &run_id, "succeeded");
    assert!(done["report"]["steps"].to_string().contains("Ada Lovelace"), "{done}");
}

/// Two writes of one wave in ask mode wait together: the viewer's button for
/// s2 approves it alone and the run goes on with it while s1 waits; the API
/// then approves s1 and the run finishes.
#[test]
fn parallel_calls_waiting_together_are_approved_one_by_one_over_http_and_in_the_viewer() {
    let Some(browser) = Browser::start() else { return };
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start();
    model.role("planner").always(Reply::json(&json!({"goal": "notes", "steps": [
        {"id": "s1", "description": "write a", "tool": "write_file", "args": {"path": "a.txt", "content": "A"}, "depends_on": []},
        {"id": "s2", "description": "write b", "tool": "write_file", "args": {"path": "b.txt", "content": "B"}, "depends_on": []}
    ]})));
    model.role("synthesizer").always(Reply::content("both written"));
    let server = serve(ws.path(), &data.path().join("ledger.db"), &model, &["--mode", "ask"]);
    let (code, body) = http(&server.addr, "POST", "/runs", &[], br#"{"task": "Write two notes"}"#);
    assert_eq!(code, 202, "{body}");
    let run_id = json_of(&body)["run_id"].as_str().unwrap().to_string();
    wait_for(&server.addr, &[], &run_id, "awaiting_approval");
    let approve = |body: &[u8]| http(&server.addr, "POST", &format!("/runs/{run_id}/approve"), &[], body);
    let (code, body) = approve(br#"{"by": "alice"}"#);
    assert_eq!(code, 200, "{body}");

    // Both calls wait at once.
    let both = || {
        let (_, body) = http(&server.addr, "GET", &format!("/runs/{run_id}"), &[], b"");
        let shown = json_of(&body);
        (shown["status"] == "awaiting_approval" && shown["waiting"]["also"].as_array().is_some_and(|a| a.len() == 1))
            .then_some(shown)
    };
    let start = Instant::now();
    let shown = loop {
        if let Some(shown) = both() {
            break shown;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the two calls never waited together"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let waiting: Vec<&str> = std::iter::once(&shown["waiting"])
        .chain(shown["waiting"]["also"].as_array().unwrap())
        .map(|c| c["step_id"].as_str().unwrap())
        .collect();
    assert!(waiting.contains(&"s1") && waiting.contains(&"s2"), "{shown:#}");

    // In the viewer, each waiting call has its own button: s2 alone runs, s1 still waits.
    browser.call("POST", "/url", json!({"url": format!("http://{}/", server.addr)}));
    browser.until(&format!("document.querySelector('[data-run=\"{run_id}\"]')"));
    browser.click(&format!("[data-run=\"{run_id}\"]"));
    browser.until("document.querySelectorAll('.approve-call').length === 2");
    // Clicked from the page itself: the event stream's refreshes cannot swap the button in between.
    browser.script("document.querySelector(\".approve-call[data-step='s2']\").click();");
    let start = Instant::now();
    while !ws.path().join("b.txt").exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "s2 never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    let shown = wait_for(&server.addr, &[], &run_id, "awaiting_approval");
    assert_eq!(shown["waiting"]["step_id"], "s1", "{shown:#}");
    assert!(shown["waiting"].get("also").is_none(), "{shown:#}");
    assert!(!ws.path().join("a.txt").exists());

    // Then s1, over the API: the run finishes.
    let (code, body) = approve(br#"{"step": "s1", "by": "alice"}"#);
    assert_eq!(code, 200, "{body}");
    wait_for(&server.addr, &[], &run_id, "succeeded");
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "A");
    assert_eq!(std::fs::read_to_string(ws.path().join("b.txt")).unwrap(), "B");
}
