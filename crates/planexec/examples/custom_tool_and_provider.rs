//! A custom tool with typed arguments, and a custom provider, in one run that
//! needs no network and no API key:
//!
//! ```sh
//! cargo run -p planexec --example custom_tool_and_provider
//! ```
//!
//! The tool is a struct with a `schemars`-derived schema and an async
//! function ([`TypedTool`]). The provider is anything that implements
//! [`ChatModel`]; this one answers from rules, standing in for your own
//! inference server, so the example runs anywhere. Swap it for
//! `planexec::llm::openai::OpenAiCompatible` to plan with a real model.

use std::sync::Arc;

use async_trait::async_trait;
use planexec::llm::{ChatModel, ChatRequest, ChatResponse, LlmError, Message, Role, TokenUsage};
use planexec::tools::{Effect, ToolError, ToolRegistry, TypedTool};
use planexec::{Agent, Event};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The arguments of `word_count`. Doc comments become the schema's
/// descriptions, which the planner reads; unknown fields are refused.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordCount {
    /// The text whose words to count.
    text: String,
    /// Count only words at least this long (default 1).
    #[serde(default)]
    min_len: Option<usize>,
}

/// The tool: the struct above in, anything serializable out.
fn word_count(args: WordCount) -> serde_json::Value {
    let min = args.min_len.unwrap_or(1);
    let words = args
        .text
        .split_whitespace()
        .filter(|w| w.chars().count() >= min)
        .count();
    json!({ "words": words })
}

/// A provider that plans every task as one `word_count` call over the quoted
/// text in it, and answers with the step results it is shown.
struct RuleModel;

#[async_trait]
impl ChatModel for RuleModel {
    fn describe(&self) -> String {
        "rules (example)".to_string()
    }

    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let prompt = last_user_text(&request);
        let content = match request.role {
            Role::Planner => {
                // The planner's prompt ends with the task.
                let task = prompt.rsplit("Task:").next().unwrap_or(prompt);
                let quoted = task.split('"').nth(1).unwrap_or(task);
                json!({
                    "goal": "count the words",
                    "steps": [{
                        "id": "s1",
                        "description": "count the words of the quoted text",
                        "tool": "word_count",
                        "args": {"text": quoted},
                        "depends_on": []
                    }]
                })
                .to_string()
            }
            // The synthesizer (and anything else) is shown the results as text.
            _ => match prompt.split("\"words\":").nth(1) {
                Some(rest) => format!(
                    "The text has {} words.",
                    rest.trim_start().split(['}', ',']).next().unwrap_or("?")
                ),
                None => "I could not count the words.".to_string(),
            },
        };
        Ok(ChatResponse {
            content: Some(content),
            tool_calls: Vec::new(),
            usage: TokenUsage::default(),
            finish_reason: Some("stop".to_string()),
        })
    }
}

fn last_user_text(request: &ChatRequest) -> &str {
    request
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(TypedTool::new(
        "word_count",
        "Count the words of a text",
        Effect::ReadOnly,
        |args: WordCount| async move { Ok::<_, ToolError>(word_count(args)) },
    )))?;
    let agent = Agent::builder(Arc::new(RuleModel), "rules").tools(tools).build();
    agent.events().on_event(|e| {
        if let Event::StepFinished { step_id, summary, .. } = e {
            eprintln!("{step_id}: {summary}");
        }
    });
    let report = agent
        .run("How many words are in \"plans before it acts, then acts on the plan\"?")
        .await;
    println!("{:?}: {}", report.status, report.answer.unwrap_or_default());
    Ok(())
}
