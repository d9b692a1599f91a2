//! The Anthropic provider over real HTTP: a whole run against the scripted
//! server's `/v1/messages`, and response bodies from Anthropic's documentation
//! (`tests/fixtures/anthropic`) for text, tool use, prompt caching and errors.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use planexec::accounting::{Price, Pricing};
use planexec::llm::anthropic::{Anthropic, AnthropicConfig};
use planexec::llm::{ChatModel, ChatRequest, Message, Role, ToolChoice, ToolSpec};
use planexec::{Agent, LlmError, RunStatus};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/anthropic/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn claude(server: &ScriptedServer) -> Anthropic {
    Anthropic::new(AnthropicConfig {
        base_url: server.base_url(),
        api_key: Some("sk-ant-test".into()),
        timeout: Duration::from_secs(10),
        max_retries: 2,
        retry_base: Duration::from_millis(10),
        max_tokens: 1024,
    })
    .unwrap()
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest::new(
        Role::Executor,
        "claude-test",
        vec![Message::system("sys"), Message::user(text)],
    )
}

#[tokio::test]
async fn a_whole_run_on_the_messages_api_with_cached_prompts_counted() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    std::fs::write(dir.path().join("n.txt"), "20").unwrap();
    // The planner's structured reply comes as the forced tool's input, as Claude sends it.
    server.role("planner").reply(Reply::raw(
        200,
        json!({"type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "plan",
            "input": {"goal": "double it", "steps": [
                {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []},
                {"id": "s2", "description": "double", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": ["s1"]}]}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 50, "output_tokens": 60, "cache_creation_input_tokens": 900, "cache_read_input_tokens": 0}}),
    ));
    server
        .role("synthesizer")
        .reply(Reply::content("It is 40 [s2].").with_usage(30, 10).with_cache(900, 0));
    let mut pricing = Pricing::default();
    pricing.models.insert(
        "claude-test".into(),
        Price {
            input_per_million: 3.0,
            output_per_million: 15.0,
            ..Price::default()
        },
    );
    let report = Agent::builder(Arc::new(claude(&server)), "claude-test")
        .tools(tools)
        .options(options())
        .pricing(pricing)
        .build()
        .run("double the number in n.txt")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.answer.as_deref(), Some("It is 40 [s2]."));
    assert_eq!(report.step("s2").unwrap().output, Some(json!(40)));

    let planner = &server.requests_from("planner")[0];
    assert_eq!(planner.authorization.as_deref(), Some("sk-ant-test"));
    assert_eq!(planner.body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert!(planner.body["system"][0]["text"]
        .as_str()
        .unwrap()
        .contains("read_file"));
    assert_eq!(planner.body["tool_choice"], json!({"type": "tool", "name": "plan"}));

    let planner_usage = report.usage.role(Role::Planner);
    assert_eq!(planner_usage.prompt_tokens, 950, "input + cache writes");
    assert_eq!(planner_usage.cache_write_tokens, 900);
    let synth = report.usage.role(Role::Synthesizer);
    assert_eq!((synth.prompt_tokens, synth.cache_read_tokens), (930, 900));
    // Planner: 50 × $3 + 900 × $3.75 + 60 × $15; synthesizer: 30 × $3 + 900 × $0.30 + 10 × $15 (per million).
    let expected = (50.0 * 3.0 + 900.0 * 3.75 + 60.0 * 15.0 + 30.0 * 3.0 + 900.0 * 0.3 + 10.0 * 15.0) / 1e6;
    let cost = planner_usage.cost.unwrap() + synth.cost.unwrap();
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
}

#[tokio::test]
async fn documented_replies_parse() {
    let server = ScriptedServer::start();
    server.on(None).replies(vec![
        Reply::raw(200, fixture("message.json")),
        Reply::raw(200, fixture("tool_use.json")),
        Reply::raw(200, fixture("prompt_caching.json")),
    ]);
    let model = claude(&server);

    let text = model.chat(ask("hi")).await.unwrap();
    assert_eq!(text.content.as_deref(), Some("Hi! My name is Claude."));
    assert_eq!(text.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!((text.usage.prompt_tokens, text.usage.completion_tokens), (2095, 503));

    let mut with_tool = ask("weather in SF?");
    with_tool.tools = vec![ToolSpec {
        name: "get_weather".into(),
        description: "Get the current weather".into(),
        parameters: json!({"type": "object", "properties": {"location": {"type": "string"}}}),
    }];
    with_tool.tool_choice = ToolChoice::Auto;
    let call = model.chat(with_tool).await.unwrap();
    assert_eq!(call.tool_calls.len(), 1);
    assert_eq!(call.tool_calls[0].id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(call.tool_calls[0].arguments["location"], "San Francisco, CA");
    assert_eq!(call.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        call.usage.prompt_tokens, 0,
        "no usage in this example: zero, not an error"
    );

    let cached = model.chat(ask("themes?")).await.unwrap();
    assert_eq!(cached.usage.cache_write_tokens, 188_086);
    assert_eq!(cached.usage.prompt_tokens, 21 + 188_086);

    let sent = server.requests();
    assert_eq!(
        sent[1].body["tools"][0]["input_schema"]["properties"]["location"]["type"],
        "string"
    );
    assert_eq!(sent[1].body["tool_choice"], json!({"type": "auto"}));
}

#[tokio::test]
async fn overloaded_is_retried_after_retry_after_and_errors_read_clearly() {
    let server = ScriptedServer::start();
    server.on(None).replies(vec![
        Reply::raw(529, fixture("overloaded_error.json")).with_header("retry-after", "0.2"),
        Reply::raw(200, fixture("message.json")),
    ]);
    let model = claude(&server);
    let started = std::time::Instant::now();
    let reply = model.chat(ask("hi")).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("Hi! My name is Claude."));
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "waited as retry-after said"
    );
    assert_eq!(server.requests().len(), 2);

    server
        .on(None)
        .always(Reply::raw(529, fixture("overloaded_error.json")));
    let err = model.chat(ask("hi")).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Server(m) if m.contains("is overloaded (HTTP 529) after 3 attempts: Overloaded")),
        "{err}"
    );

    let server = ScriptedServer::start();
    server
        .on(None)
        .always(Reply::raw(401, fixture("authentication_error.json")));
    let err = claude(&server).chat(ask("hi")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} rejected the API key (HTTP 401: invalid x-api-key); set ANTHROPIC_API_KEY or --api-key",
            server.base_url()
        )
    );

    let refused = Anthropic::new(AnthropicConfig {
        base_url: "http://127.0.0.1:9".into(),
        ..AnthropicConfig::default()
    })
    .unwrap();
    let err = refused.chat(ask("hi")).await.unwrap_err();
    assert!(
        err.to_string().contains("Set --base-url or ANTHROPIC_BASE_URL"),
        "{err}"
    );
}

#[tokio::test]
async fn the_recovery_loop_speaks_tool_use_and_tool_result_turns() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    std::fs::write(dir.path().join("right.txt"), "found it").unwrap();
    server.role("planner").reply(Reply::json(&json!({"goal": "read", "steps": [
        {"id": "s1", "description": "read the file", "tool": "read_file", "args": {"path": "wrong.txt"}, "depends_on": []}]})));
    // The recovery's first call is wrong too; the second sees its error as a tool_result.
    server.role("agent").replies(vec![
        Reply::tool_call("read_file", &json!({"path": "still-wrong.txt"})),
        Reply::tool_call("read_file", &json!({"path": "right.txt"})),
    ]);
    server.role("synthesizer").reply(Reply::content("found it [s1]"));
    let report = Agent::builder(Arc::new(claude(&server)), "claude-test")
        .tools(tools)
        .options(options())
        .build()
        .run("read the file wrong.txt")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("found it")));
    let second = &server.requests_from("agent")[1];
    assert_eq!(second.status, 200, "the scripted server checks the Messages rules");
    let turns = second.body["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 3, "user, assistant tool_use, user tool_result");
    assert_eq!(turns[1]["content"][0]["type"], "tool_use");
    let result = &turns[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], turns[1]["content"][0]["id"]);
    assert_eq!(result["is_error"], true);
}

/// The compiler strategy on Anthropic: the plan arrives as the forced answer
/// tool's `input_json_delta` events, and steps start while it is still coming.
#[tokio::test]
async fn the_compiler_streams_the_plan_from_the_answer_tools_input() {
    let server = ScriptedServer::start();
    let plan = json!({"goal": "g", "steps": [
        {"id": "s1", "description": "first", "tool": "echo", "args": {"input": "first"}, "depends_on": []},
        {"id": "s2", "description": "second", "tool": "echo", "args": {"input": "second"}, "depends_on": []},
        {"id": "s3", "description": "both", "tool": "echo", "args": {"input": "{{s1}} {{s2}}"}, "depends_on": ["s1", "s2"]}]});
    server.role("planner").reply(
        Reply::tool_call("plan", &plan)
            .streamed(8)
            .with_delay(Duration::from_millis(1200)),
    );
    server.role("synthesizer").reply(Reply::content("done"));
    let echo = TestTool::new("echo").sleeping(Duration::from_millis(20));
    let calls = echo.counter();
    let started = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = started.clone();
    let agent = Agent::builder(Arc::new(claude(&server)), "claude-test")
        .tools(registry(vec![echo]))
        .options(planexec::RunOptions {
            strategy: planexec::Strategy::Compiler,
            ..options()
        })
        .build();
    agent.events().on_event(move |e| {
        if let planexec::Event::StepStarted { step_id, .. } = e {
            seen.lock().unwrap().push((step_id.clone(), planexec::result::now_ms()));
        }
    });
    let report = agent.run("go").await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 3);
    let planner = &server.requests_from("planner")[0];
    assert_eq!(planner.body["stream"], json!(true));
    let started = started.lock().unwrap().clone();
    let s1 = started.iter().find(|(id, _)| id == "s1").unwrap().1;
    assert!(
        s1 < planner.replied_ms,
        "s1 at {s1}, plan complete at {}",
        planner.replied_ms
    );
    assert_eq!(report.plans[0].reason, "initial plan (streamed)");
    // Usage came from the stream's message_start and message_delta.
    assert!(report.usage.role(Role::Planner).prompt_tokens > 0);
}
