//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set, `planexec run` exports its trace to
//! a local OTLP receiver (the standard variables choose the protocol).

mod common;

use common::{planexec, run};
use planexec_testkit::otlp::OtlpReceiver;
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn script(server: &ScriptedServer) {
    server.role("planner").always(Reply::json(&json!({"goal": "sum", "steps": [
        {"id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "2 + 40"}, "depends_on": []}]})));
    server
        .role("synthesizer")
        .containing("You are the checker")
        .always(Reply::json(&json!({"done": true, "wrong": ""})));
    server.role("synthesizer").always(Reply::content("42 [s1]"));
}

#[test]
fn a_run_is_exported_to_the_otlp_endpoint_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    script(&server);
    let otlp = OtlpReceiver::start();
    let (out, stdout, stderr) = run(planexec(dir.path())
        .args([
            "run",
            "add",
            "--yes",
            "--json",
            "--model",
            "m1",
            "--base-url",
            &server.base_url(),
        ])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "planexec-test"));
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let spans = otlp.spans();
    let run_span = spans
        .iter()
        .find(|s| s.name == "invoke_agent planexec")
        .unwrap_or_else(|| panic!("no run span in {:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>()));
    assert_eq!(run_span.attributes["planexec.run.id"], report["run_id"]);
    let step = spans.iter().find(|s| s.name == "execute_tool calculator").unwrap();
    let plan = spans.iter().find(|s| s.name == "plan v1").unwrap();
    assert_eq!(step.parent, plan.id);
    assert_eq!(plan.parent, run_span.id);
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat m1").collect();
    assert_eq!(chats.len(), 3, "planner, synthesizer and the check of the work");
    assert!(chats.iter().all(|c| c.parent == run_span.id));
    assert_eq!(chats[0].attributes["gen_ai.usage.input_tokens"], 100);
}
