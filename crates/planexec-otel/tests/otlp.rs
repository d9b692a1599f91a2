//! A run traced into a local OTLP/HTTP receiver that the test starts: the span
//! tree (run → plan versions → steps → executor calls; role calls under the
//! run) and the GenAI and planexec attributes, with and without content; the
//! GenAI client metrics; a failed model call as an error span.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::{Agent, RunOptions, Tool, ToolError, ToolRegistry};
use planexec_otel::{TraceOptions, Tracing};
use planexec_testkit::otlp::{OtlpReceiver, ReceivedPoint, ReceivedSpan};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

struct Flaky(Mutex<u32>);

#[async_trait::async_trait]
impl Tool for Flaky {
    fn name(&self) -> &str {
        "lookup"
    }
    fn description(&self) -> &str {
        "looks something up"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]})
    }
    fn effect(&self) -> planexec::Effect {
        planexec::Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        if args["key"] == "bad" {
            return Err(ToolError::failed("no such key"));
        }
        let mut n = self.0.lock().unwrap();
        *n += 1;
        if *n == 1 {
            return Err(ToolError::retryable("busy"));
        }
        Ok(json!(format!("value of {}", args["key"])))
    }
}

async fn traced_run(content: bool) -> (Vec<ReceivedSpan>, Vec<ReceivedPoint>) {
    let otlp = OtlpReceiver::start();
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&json!({"goal": "g", "steps": [
        {"id": "s1", "description": "look up", "tool": "lookup", "args": {"key": "bad"}, "depends_on": []}]})));
    // The failed call goes to a recovery agent first, which gives up (in
    // words twice: the first time it is asked once for the call).
    let gives_up = Reply::content("there is no key `bad` to look up").with_usage(60, 6);
    server.role("agent").replies(vec![gives_up.clone(), gives_up]);
    server
        .role("replanner")
        .reply(Reply::json(&json!({"goal": "g", "steps": [
        {"id": "s2", "description": "look up again", "tool": "lookup", "args": {"key": "good"}, "depends_on": []},
        {"id": "s3", "description": "explain", "tool": null, "args": {}, "depends_on": ["s2"]}]})));
    server
        .role("executor")
        .reply(Reply::content("it is the value").with_usage(70, 7));
    server
        .role("synthesizer")
        .reply(Reply::content("done").with_usage(50, 5));
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Flaky(Mutex::new(0)))).unwrap();
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: Some("k".into()),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let agent = Agent::builder(Arc::new(provider), "gpt-test")
        .tools(tools)
        .options(RunOptions {
            retry_backoff: Duration::from_millis(5),
            ..RunOptions::default()
        })
        .build();
    let tracing = Tracing::to(&otlp.traces_url(), true).unwrap();
    tracing.attach(agent.events(), TraceOptions { content });
    let report = agent.run("look it up").await;
    assert!(report.succeeded(), "{:?}", report.error);
    tokio::task::spawn_blocking(move || tracing.shutdown()).await.unwrap();
    (otlp.spans(), otlp.histogram_points())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_becomes_a_span_tree_with_gen_ai_attributes() {
    let (spans, _) = traced_run(false).await;
    let by_name = |name: &str| -> Vec<&ReceivedSpan> { spans.iter().filter(|s| s.name == name).collect() };
    let run = by_name("invoke_agent planexec");
    assert_eq!(run.len(), 1, "{:#?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    let run = run[0];
    assert_eq!(run.parent, "");
    assert_eq!(run.attributes["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(run.attributes["planexec.run.status"], "succeeded");
    assert!(spans.iter().all(|s| s.trace == run.trace), "one trace");

    let v1 = by_name("plan v1")[0];
    let v2 = by_name("plan v2")[0];
    assert_eq!(
        (v1.parent.as_str(), v2.parent.as_str()),
        (run.id.as_str(), run.id.as_str())
    );
    assert_eq!(v1.attributes["planexec.replan"], 0);
    assert_eq!(v2.attributes["planexec.replan"], 1);
    assert_eq!(v2.attributes["planexec.plan.version"], 2);

    let steps = by_name("execute_tool lookup");
    assert_eq!(steps.len(), 2);
    let failed = steps.iter().find(|s| s.attributes["planexec.step.id"] == "s1").unwrap();
    assert!(failed.error);
    assert!(failed.attributes.contains_key("error.type"), "{:?}", failed.attributes);
    assert_eq!(failed.kind, 1, "a tool step is internal");
    assert_eq!(failed.parent, v1.id, "a step belongs to its plan version");
    let good = steps.iter().find(|s| s.attributes["planexec.step.id"] == "s2").unwrap();
    assert_eq!(good.parent, v2.id);
    assert_eq!(good.attributes["planexec.step.attempts"], 2, "one retry");
    assert_eq!(good.attributes["gen_ai.tool.name"], "lookup");
    let reason = by_name("reason s3")[0];
    assert_eq!(reason.parent, v2.id);

    let chats = by_name("chat gpt-test");
    assert_eq!(
        chats.len(),
        6,
        "planner, recovery agent (twice), replanner, executor, synthesizer"
    );
    let role = |r: &str| chats.iter().find(|c| c.attributes["planexec.role"] == r).unwrap();
    assert_eq!(role("planner").parent, run.id);
    assert_eq!(role("synthesizer").parent, run.id);
    let executor = role("executor");
    assert_eq!(executor.parent, reason.id, "the executor call sits under its step");
    assert_eq!(executor.attributes["gen_ai.provider.name"], "openai");
    assert_eq!(executor.attributes["gen_ai.request.model"], "gpt-test");
    assert_eq!(executor.attributes["gen_ai.usage.input_tokens"], 70);
    assert_eq!(executor.attributes["gen_ai.usage.output_tokens"], 7);
    assert_eq!(executor.attributes["planexec.step.id"], "s3");
    assert!(chats.iter().all(|c| c.kind == 3), "model calls are CLIENT spans");
    assert_eq!(executor.attributes["gen_ai.usage.cache_read.input_tokens"], 0);
    assert!(
        !chats.iter().any(|c| c.attributes.contains_key("gen_ai.input.messages")),
        "no prompt text unless asked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_calls_are_counted_in_gen_ai_client_metrics() {
    let (_, points) = traced_run(false).await;
    let tokens = |role: &str, kind: &str| -> Vec<&ReceivedPoint> {
        points
            .iter()
            .filter(|p| {
                p.metric == "gen_ai.client.token.usage"
                    && p.attributes["planexec.role"] == role
                    && p.attributes["gen_ai.token.type"] == kind
            })
            .collect()
    };
    let input = tokens("executor", "input");
    assert_eq!(input.len(), 1, "{points:#?}");
    assert_eq!((input[0].count, input[0].sum), (1, 70.0));
    assert_eq!(input[0].unit, "{token}");
    assert_eq!(input[0].attributes["gen_ai.operation.name"], "chat");
    assert_eq!(input[0].attributes["gen_ai.provider.name"], "openai");
    assert_eq!(input[0].attributes["gen_ai.request.model"], "gpt-test");
    assert_eq!(tokens("synthesizer", "output")[0].sum, 5.0);
    let durations: Vec<&ReceivedPoint> = points
        .iter()
        .filter(|p| p.metric == "gen_ai.client.operation.duration")
        .collect();
    assert_eq!(durations.iter().map(|p| p.count).sum::<u64>(), 6, "six model calls");
    assert!(durations
        .iter()
        .all(|p| p.unit == "s" && !p.attributes.contains_key("error.type")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_model_call_is_an_error_span_and_a_duration_with_its_error_type() {
    let otlp = OtlpReceiver::start();
    let server = ScriptedServer::start();
    server
        .role("planner")
        .always(Reply::error(401, "Incorrect API key provided"));
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: Some("wrong".into()),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let agent = Agent::builder(Arc::new(provider), "gpt-test").build();
    let tracing = Tracing::to(&otlp.traces_url(), true).unwrap();
    tracing.attach(agent.events(), TraceOptions::default());
    let report = agent.run("anything").await;
    assert!(!report.succeeded());
    tokio::task::spawn_blocking(move || tracing.shutdown()).await.unwrap();

    let spans = otlp.spans();
    let chat = spans
        .iter()
        .find(|s| s.name == "chat gpt-test")
        .expect("a span for the failed call");
    assert!(chat.error, "{chat:?}");
    assert_eq!(chat.kind, 3);
    assert_eq!(chat.attributes["error.type"], "auth");
    assert_eq!(chat.attributes["planexec.role"], "planner");
    let failed: Vec<ReceivedPoint> = otlp
        .histogram_points()
        .into_iter()
        .filter(|p| p.metric == "gen_ai.client.operation.duration")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].attributes["error.type"], "auth");
    assert_eq!(failed[0].count, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_replies_only_when_enabled() {
    let (spans, _) = traced_run(true).await;
    let synth = spans
        .iter()
        .find(|s| s.attributes.get("planexec.role") == Some(&json!("synthesizer")))
        .unwrap();
    assert!(synth.attributes["gen_ai.input.messages"]
        .as_str()
        .unwrap()
        .contains("look it up"));
    assert!(synth.attributes["gen_ai.output.messages"]
        .as_str()
        .unwrap()
        .contains("done"));
}

/// An agent step: an `invoke_agent` span for the step, under its plan
/// version, with the loop's `chat` turns and its `execute_tool` calls
/// (a refused one marked as an error) as children.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_step_is_an_invoke_agent_span_with_its_calls_and_turns() {
    let otlp = OtlpReceiver::start();
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&json!({"goal": "g", "steps": [
        {"id": "s1", "description": "look the key up", "agent": "worker", "depends_on": []}]})));
    server.role("agent").replies(vec![
        Reply::tool_call("lookup", &json!({"key": "good"})),
        Reply::tool_call("no_such_tool", &json!({})),
        Reply::content("value of good"),
    ]);
    server.role("synthesizer").reply(Reply::content("done"));
    let mut tools = ToolRegistry::new();
    // The first call of Flaky is busy (retryable) and retried inside the call.
    tools.register(Arc::new(Flaky(Mutex::new(1)))).unwrap();
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: server.base_url(),
        api_key: Some("k".into()),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let agent = Agent::builder(Arc::new(provider), "gpt-test").tools(tools).build();
    let tracing = Tracing::to(&otlp.traces_url(), true).unwrap();
    tracing.attach(agent.events(), TraceOptions { content: false });
    let report = agent.run("look it up").await;
    assert!(report.succeeded(), "{:?}", report.error);
    tokio::task::spawn_blocking(move || tracing.shutdown()).await.unwrap();
    let spans = otlp.spans();

    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let step = spans
        .iter()
        .find(|s| s.name == "invoke_agent worker")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(step.attributes["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(step.attributes["gen_ai.agent.name"], "worker");
    assert_eq!(step.attributes["planexec.step.id"], "s1");
    let v1 = spans.iter().find(|s| s.name == "plan v1").unwrap();
    assert_eq!(step.parent, v1.id);

    let children: Vec<&ReceivedSpan> = spans.iter().filter(|s| s.parent == step.id).collect();
    let turns = children.iter().filter(|s| s.name == "chat gpt-test").count();
    assert_eq!(turns, 3, "{names:?}");
    let lookup = children.iter().find(|s| s.name == "execute_tool lookup").unwrap();
    assert_eq!(lookup.attributes["gen_ai.tool.call.id"], "s1.1");
    assert!(!lookup.error);
    let refused = children
        .iter()
        .find(|s| s.name == "execute_tool no_such_tool")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert!(refused.error, "a refused call is an error span");
}
