//! Anthropic Messages API provider (`POST /v1/messages`).
//!
//! Maps the port's [`ChatRequest`] onto Messages: system messages become the
//! `system` blocks, tool calls and results become `tool_use` / `tool_result`
//! blocks in alternating turns, and a JSON-Schema reply is asked for as a
//! forced call of one tool whose input schema is that schema (the Messages
//! API's dependable way to get structured output).
//!
//! Every call of a run repeats the system prompt and the tool list, so both
//! are marked `cache_control: ephemeral`; cached input comes back as
//! `cache_read_input_tokens` / `cache_creation_input_tokens` and is counted
//! separately. 429 and 529 (overloaded) and 5xx are retried with backoff,
//! honouring `retry-after`; errors read as the OpenAI-compatible provider's do.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::http::{self, error_message, Endpoint};
use super::{ChatModel, ChatRequest, ChatResponse, LlmError, Message, TokenUsage, ToolCall, ToolChoice};

/// The `anthropic-version` header this provider speaks.
pub const API_VERSION: &str = "2023-06-01";

/// Settings for the Anthropic API (or a server that speaks it).
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// `https://api.anthropic.com` (a trailing `/v1` is accepted).
    pub base_url: String,
    /// Sent as `x-api-key`; usually from `ANTHROPIC_API_KEY`.
    pub api_key: Option<String>,
    pub timeout: Duration,
    /// Retries for 429, 529, 5xx and timeouts.
    pub max_retries: u32,
    /// First backoff delay; doubles each retry.
    pub retry_base: Duration,
    /// `max_tokens` when a request sets none (the API requires one).
    pub max_tokens: u32,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            base_url: "https://api.anthropic.com".to_string(),
            api_key: None,
            timeout: Duration::from_secs(120),
            max_retries: 3,
            retry_base: Duration::from_millis(500),
            max_tokens: 4096,
        }
    }
}

/// The Anthropic provider.
pub struct Anthropic {
    config: AnthropicConfig,
    client: reqwest::Client,
}

/// Description of the tool that carries a structured reply.
const ANSWER_TOOL: &str = "Give your reply by calling this tool: its input is the reply.";

impl Anthropic {
    pub fn new(mut config: AnthropicConfig) -> Result<Anthropic, LlmError> {
        config.base_url = config.base_url.trim_end_matches('/').to_string();
        if !(config.base_url.starts_with("http://") || config.base_url.starts_with("https://")) {
            return Err(LlmError::BadRequest(format!(
                "base URL `{}` must start with http:// or https:// (e.g. https://api.anthropic.com)",
                config.base_url
            )));
        }
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(concat!("planexec/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Connection(format!("cannot build an HTTP client: {e}")))?;
        Ok(Anthropic { config, client })
    }

    fn endpoint(&self) -> String {
        match self.config.base_url.strip_suffix("/v1") {
            Some(base) => format!("{base}/v1/messages"),
            None => format!("{}/v1/messages", self.config.base_url),
        }
    }

    /// The request body. Public so tests and tools can see exactly what is sent.
    pub fn body(&self, req: &ChatRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(req.model));
        body.insert(
            "max_tokens".into(),
            json!(req.max_tokens.unwrap_or(self.config.max_tokens)),
        );
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::System { content } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        if !system.is_empty() {
            body.insert(
                "system".into(),
                json!([{"type": "text", "text": system.join("\n\n"), "cache_control": {"type": "ephemeral"}}]),
            );
        }
        body.insert("messages".into(), Value::Array(turns(&req.messages)));

        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        let mut choice = match (req.tool_choice.clone(), tools.len()) {
            (ToolChoice::Required, 1) => Some(json!({"type": "tool", "name": req.tools[0].name})),
            (ToolChoice::Required, _) => Some(json!({"type": "any"})),
            (ToolChoice::None, _) => Some(json!({"type": "none"})),
            (ToolChoice::Auto, _) => Some(json!({"type": "auto"})),
        };
        if let (Some(format), true) = (&req.response_format, tools.is_empty()) {
            tools.push(json!({"name": format.name, "description": ANSWER_TOOL, "input_schema": format.schema}));
            choice = Some(json!({"type": "tool", "name": format.name}));
        }
        if !tools.is_empty() {
            // One breakpoint after the last tool caches the whole tool list.
            if let Some(last) = tools.last_mut() {
                last["cache_control"] = json!({"type": "ephemeral"});
            }
            body.insert("tools".into(), Value::Array(tools));
            if let Some(choice) = choice {
                body.insert("tool_choice".into(), choice);
            }
        }
        if let Some(t) = req.temperature {
            body.insert("temperature".into(), json!(t));
        }
        Value::Object(body)
    }
}

/// The conversation as alternating user/assistant turns of content blocks:
/// consecutive messages of one side are merged, tool results go in user turns.
fn turns(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| match out.last_mut() {
        Some((r, existing)) if *r == role => existing.extend(blocks),
        _ => out.push((role, blocks)),
    };
    for m in messages {
        match m {
            Message::System { .. } => {}
            Message::User { content } => push("user", vec![json!({"type": "text", "text": content})]),
            Message::Assistant { content, tool_calls } => {
                let mut blocks = Vec::new();
                if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = if c.arguments.is_object() {
                        c.arguments.clone()
                    } else {
                        json!({})
                    };
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                }
                if !blocks.is_empty() {
                    push("assistant", blocks);
                }
            }
            Message::Tool { tool_call_id, content } => {
                let mut block = json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content});
                // The executor reports a failed call as "error: ...".
                if content.starts_with("error:") {
                    block["is_error"] = json!(true);
                }
                push("user", vec![block])
            }
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Parse a Messages reply leniently. A call of the structured-reply tool
/// `answer_tool` becomes the reply's text (its input as JSON).
pub fn parse_message(body: &Value, answer_tool: Option<&str>) -> Result<ChatResponse, LlmError> {
    let Some(blocks) = body.get("content").and_then(Value::as_array) else {
        return Err(LlmError::InvalidResponse(format!(
            "the reply has no content: {}",
            crate::text::truncate_chars(&body.to_string(), 200)
        )));
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut answer: Option<String> = None;
    for (i, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let name = block.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let input = block.get("input").cloned().unwrap_or(json!({}));
                if answer_tool == Some(name.as_str()) {
                    answer = Some(input.to_string());
                    continue;
                }
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("toolu_{i}"));
                tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: input,
                });
            }
            // Thinking and other block kinds carry nothing the roles use.
            _ => {}
        }
    }
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (read, written) = (count("cache_read_input_tokens"), count("cache_creation_input_tokens"));
    Ok(ChatResponse {
        content: answer.or((!text.is_empty()).then_some(text)),
        tool_calls,
        usage: TokenUsage {
            // Anthropic's input_tokens leaves out cached input; the port counts all of it.
            prompt_tokens: count("input_tokens") + read + written,
            completion_tokens: count("output_tokens"),
            cache_read_tokens: read,
            cache_write_tokens: written,
        },
        finish_reason: body.get("stop_reason").and_then(Value::as_str).map(str::to_string),
    })
}

#[async_trait]
impl ChatModel for Anthropic {
    fn describe(&self) -> String {
        format!("anthropic {}", self.config.base_url)
    }

    fn provider_name(&self) -> &str {
        "anthropic"
    }

    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let url = self.endpoint();
        let body = self.body(&req);
        let answer_tool = req
            .response_format
            .as_ref()
            .filter(|_| req.tools.is_empty())
            .map(|f| f.name.clone());
        let endpoint = Endpoint {
            url: &url,
            base_url: &self.config.base_url,
            base_url_env: "ANTHROPIC_BASE_URL",
            timeout: self.config.timeout,
            max_retries: self.config.max_retries,
            retry_base: self.config.retry_base,
            overloaded_529: true,
        };
        let (status, text) = http::send(&endpoint, &mut 0, || {
            let http = self
                .client
                .post(&url)
                .header("anthropic-version", API_VERSION)
                .header("x-planexec-role", req.role.as_str())
                .json(&body);
            match self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
                Some(key) => http.header("x-api-key", key),
                None => http,
            }
        })
        .await?;
        match status {
            200..=299 => parse_message(&http::json_body(&url, &text)?, answer_tool.as_deref()),
            401 | 403 => Err(LlmError::Auth(format!(
                "{} rejected the API key (HTTP {status}: {}); set ANTHROPIC_API_KEY or --api-key",
                self.config.base_url,
                error_message(&text)
            ))),
            404 => Err(LlmError::ModelNotFound(format!(
                "model `{}` not found at {} (HTTP 404: {}); check --model",
                req.model,
                self.config.base_url,
                error_message(&text)
            ))),
            _ => Err(LlmError::BadRequest(format!(
                "{} refused the request (HTTP {status}): {}",
                self.config.base_url,
                error_message(&text)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{JsonSchemaFormat, Role, ToolSpec};

    fn provider() -> Anthropic {
        Anthropic::new(AnthropicConfig::default()).unwrap()
    }

    #[test]
    fn tool_calls_and_results_become_alternating_block_turns() {
        let mut req = ChatRequest::new(
            Role::Executor,
            "claude-test",
            vec![
                Message::system("sys"),
                Message::user("do it"),
                Message::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "toolu_1".into(),
                        name: "read_file".into(),
                        arguments: json!({"path": "a"}),
                    }],
                },
                Message::Tool {
                    tool_call_id: "toolu_1".into(),
                    content: "error: missing".into(),
                },
                Message::user("again"),
            ],
        );
        req.tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "read".into(),
            parameters: json!({"type": "object"}),
        }];
        req.tool_choice = ToolChoice::Required;
        let body = provider().body(&req);
        assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(body["tools"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "read_file"}));
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["user", "assistant", "user"],
            "results and the next user text share a turn"
        );
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][2]["content"][1]["text"], "again");
        assert_eq!(body["max_tokens"], 4096);
    }

    #[test]
    fn a_json_schema_reply_is_a_forced_tool_call_read_back_as_text() {
        let mut req = ChatRequest::new(Role::Planner, "claude-test", vec![Message::user("plan")]);
        req.response_format = Some(JsonSchemaFormat {
            name: "plan".into(),
            schema: json!({"type": "object", "properties": {"goal": {"type": "string"}}}),
            strict: true,
        });
        let body = provider().body(&req);
        assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "plan"}));
        let reply = json!({"content": [{"type": "tool_use", "id": "t", "name": "plan", "input": {"goal": "g"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 3}});
        let parsed = parse_message(&reply, Some("plan")).unwrap();
        assert_eq!(parsed.content.as_deref(), Some(r#"{"goal":"g"}"#));
        assert!(parsed.tool_calls.is_empty());
    }
}
