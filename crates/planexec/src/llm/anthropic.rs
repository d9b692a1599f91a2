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
use super::{ChatModel, ChatRequest, ChatResponse, LlmError, Message, TextSink, TokenUsage, ToolCall, ToolChoice};

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
        let (base_url, client) = http::client(&config.base_url, config.timeout, "https://api.anthropic.com")?;
        config.base_url = base_url;
        Ok(Anthropic { config, client })
    }

    /// A POST of `body` with the API version, the role header and the key, if any.
    fn post(&self, url: &str, req: &ChatRequest, body: &Value) -> reqwest::RequestBuilder {
        let http = self
            .client
            .post(url)
            .header("anthropic-version", API_VERSION)
            .header("x-planexec-role", req.role.as_str())
            .json(body);
        match self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            Some(key) => http.header("x-api-key", key),
            None => http,
        }
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

/// The structured-reply tool a request's reply comes through, if it asks for
/// structured output and offers no tools of its own.
fn answer_tool(req: &ChatRequest) -> Option<String> {
    req.response_format
        .as_ref()
        .filter(|_| req.tools.is_empty())
        .map(|f| f.name.clone())
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
        let answer_tool = answer_tool(&req);
        let endpoint = Endpoint {
            url: &url,
            base_url: &self.config.base_url,
            base_url_env: "ANTHROPIC_BASE_URL",
            timeout: self.config.timeout,
            max_retries: self.config.max_retries,
            retry_base: self.config.retry_base,
            overloaded_529: true,
        };
        let (status, text) = http::send(&endpoint, &mut 0, || self.post(&url, &req, &body)).await?;
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

    /// Server-sent events (`"stream": true`). The reply's text, and the input
    /// of the structured-reply tool as it is written, go to `on_text`. Anything
    /// but a 2xx answer is sent again through [`ChatModel::chat`], so retries
    /// and error messages are the same as without streaming.
    async fn chat_stream(&self, req: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        let url = self.endpoint();
        let mut body = self.body(&req);
        body["stream"] = json!(true);
        let answer_tool = answer_tool(&req);
        let response = match self.post(&url, &req, &body).send().await {
            Ok(r) if r.status().is_success() => r,
            _ => return super::chat_whole(self, req, on_text).await,
        };
        let mut reader = StreamedMessage::new(answer_tool.clone());
        let whole = match http::read_text_events(response, &url, &mut |data| reader.event(data), on_text).await? {
            // Cut before any text was handed on: nothing acted on it, so ask again, once, whole.
            http::Streamed::CutEarly => return super::chat_whole(self, req, on_text).await,
            http::Streamed::Events => None,
            http::Streamed::Whole(body) => Some(body),
        };
        let streamed = whole.is_none();
        let message = match whole {
            None => reader.into_message(),
            // The server ignored `stream`: it sent one ordinary message.
            Some(text) => http::json_body(&url, &text)?,
        };
        let response = parse_message(&message, answer_tool.as_deref())?;
        if !streamed {
            if let Some(text) = &response.content {
                on_text(text);
            }
        }
        Ok(response)
    }
}

/// A streamed Messages reply being put back together from its events into the
/// shape of a whole reply, for [`parse_message`].
struct StreamedMessage {
    /// The structured-reply tool, whose input is the reply's text.
    answer_tool: Option<String>,
    blocks: Vec<Value>,
    /// Each block's tool input as written so far.
    inputs: Vec<String>,
    usage: Map<String, Value>,
    stop_reason: Option<String>,
}

impl StreamedMessage {
    fn new(answer_tool: Option<String>) -> StreamedMessage {
        StreamedMessage {
            answer_tool,
            blocks: Vec::new(),
            inputs: Vec::new(),
            usage: Map::new(),
            stop_reason: None,
        }
    }

    fn block(&mut self, event: &Value) -> usize {
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .map_or(self.blocks.len(), |i| i as usize);
        while self.blocks.len() <= index {
            self.blocks.push(Value::Null);
            self.inputs.push(String::new());
        }
        index
    }

    /// Take one event's data; returns new text of the reply, if any.
    fn event(&mut self, data: &str) -> Result<Option<String>, LlmError> {
        let event = http::event_json(data)?;
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                if let Some(usage) = event.pointer("/message/usage").and_then(Value::as_object) {
                    self.usage.extend(usage.clone());
                }
            }
            Some("content_block_start") => {
                let i = self.block(&event);
                self.blocks[i] = event.get("content_block").cloned().unwrap_or(Value::Null);
            }
            Some("content_block_delta") => {
                let i = self.block(&event);
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        if self.blocks[i].is_null() {
                            self.blocks[i] = json!({"type": "text", "text": ""});
                        }
                        let whole = format!("{}{text}", self.blocks[i]["text"].as_str().unwrap_or(""));
                        self.blocks[i]["text"] = json!(whole);
                        return Ok((!text.is_empty()).then(|| text.to_string()));
                    }
                    Some("input_json_delta") => {
                        let part = delta.get("partial_json").and_then(Value::as_str).unwrap_or("");
                        self.inputs[i].push_str(part);
                        let is_answer = self.answer_tool.is_some()
                            && self.blocks[i].get("name").and_then(Value::as_str) == self.answer_tool.as_deref();
                        return Ok((is_answer && !part.is_empty()).then(|| part.to_string()));
                    }
                    // Thinking and signature deltas carry nothing the roles use.
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = event.get("usage").and_then(Value::as_object) {
                    self.usage.extend(usage.clone());
                }
            }
            Some("error") => {
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("an error event without a message");
                return Err(LlmError::Server(format!("the server failed mid-reply: {message}")));
            }
            // content_block_stop, message_stop, ping.
            _ => {}
        }
        Ok(None)
    }

    /// The reply in the shape of a whole Messages reply.
    fn into_message(self) -> Value {
        let mut content = Vec::new();
        for (mut block, input) in self.blocks.into_iter().zip(self.inputs) {
            if block.is_null() {
                continue;
            }
            if block.get("type").and_then(Value::as_str) == Some("tool_use") && !input.trim().is_empty() {
                block["input"] = crate::json::parse_repaired(&input).unwrap_or(Value::String(input));
            }
            content.push(block);
        }
        json!({"content": content, "usage": self.usage, "stop_reason": self.stop_reason})
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
    fn a_streamed_message_is_put_back_together_and_the_answer_tool_streams_as_text() {
        let events = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": 100}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Plan: "}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "plan", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"goal\": \"g\", "}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"steps\": []}"}}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a\"}"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
            json!({"type": "message_stop"}),
        ];
        let mut reader = StreamedMessage::new(Some("plan".into()));
        let mut texts = Vec::new();
        for e in events {
            if let Some(t) = reader.event(&e.to_string()).unwrap() {
                texts.push(t);
            }
        }
        // Text, and the answer tool's input as written; not other tools' input.
        assert_eq!(texts, ["Plan: ", "{\"goal\": \"g\", ", "\"steps\": []}"]);
        let r = parse_message(&reader.into_message(), Some("plan")).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(r.content.as_deref().unwrap()).unwrap(),
            json!({"goal": "g", "steps": []})
        );
        assert_eq!(r.tool_calls[0].arguments, json!({"path": "a"}));
        assert_eq!(
            (
                r.usage.prompt_tokens,
                r.usage.completion_tokens,
                r.usage.cache_read_tokens
            ),
            (120, 30, 100)
        );
        assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
        let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let err = StreamedMessage::new(None).event(&overloaded.to_string()).unwrap_err();
        assert!(err.to_string().contains("failed mid-reply: Overloaded"), "{err}");
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
