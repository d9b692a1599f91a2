//! OpenAI-compatible Chat Completions provider (OpenAI, Ollama, vLLM, llama.cpp, LM Studio…).
//!
//! Plain reqwest + serde_json. Responses are parsed leniently because local
//! servers omit or vary fields. Retries 429 (honouring `Retry-After`) and 5xx
//! with exponential backoff; turns 401, 404 and refused connections into one-line
//! errors that say what to fix. If a server rejects `response_format`, the
//! provider stops sending it and the roles fall back to JSON in the reply.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::http::{self, error_message, Endpoint};
use super::{ChatModel, ChatRequest, ChatResponse, LlmError, Message, TextSink, TokenUsage, ToolCall, ToolChoice};

/// Settings for an OpenAI-compatible server.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries for 429, 5xx and timeouts.
    pub max_retries: u32,
    /// First backoff delay; doubles each retry.
    pub retry_base: Duration,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: "https://api.openai.com/v1".to_string(),
            api_key: None,
            timeout: Duration::from_secs(120),
            max_retries: 3,
            retry_base: Duration::from_millis(500),
        }
    }
}

/// The OpenAI-compatible provider.
pub struct OpenAiCompatible {
    config: OpenAiConfig,
    client: reqwest::Client,
    /// Cleared when the server refuses `response_format`; later calls then ask for JSON in text.
    structured_output: AtomicBool,
}

impl OpenAiCompatible {
    pub fn new(mut config: OpenAiConfig) -> Result<OpenAiCompatible, LlmError> {
        let (base_url, client) = http::client(&config.base_url, config.timeout, "http://localhost:11434/v1")?;
        config.base_url = base_url;
        Ok(OpenAiCompatible {
            config,
            client,
            structured_output: AtomicBool::new(true),
        })
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.config.base_url)
    }

    /// A POST of `body` with the role header and the key, if any.
    fn post(&self, url: &str, req: &ChatRequest, body: &Value) -> reqwest::RequestBuilder {
        let http = self
            .client
            .post(url)
            .header("x-planexec-role", req.role.as_str())
            .json(body);
        match self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            Some(key) => http.bearer_auth(key),
            None => http,
        }
    }

    fn body(&self, req: &ChatRequest, with_format: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(req.model));
        body.insert(
            "messages".into(),
            Value::Array(req.messages.iter().map(message_json).collect()),
        );
        if !req.tools.is_empty() {
            let tools: Vec<Value> = req
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            let choice = match req.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::Required => "required",
                ToolChoice::None => "none",
            };
            body.insert("tool_choice".into(), json!(choice));
        }
        if let (Some(format), true) = (&req.response_format, with_format) {
            let mut schema = format.schema.clone();
            if format.strict {
                strip_keys(&mut schema, &["maxItems", "minItems"]);
            }
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {
                    "name": format.name, "schema": schema, "strict": format.strict}}),
            );
        }
        // `max_tokens`, not `max_completion_tokens`: local servers ignore the latter.
        if let Some(max) = req.max_tokens {
            body.insert("max_tokens".into(), json!(max));
        }
        if let Some(t) = req.temperature {
            body.insert("temperature".into(), json!(t));
        }
        Value::Object(body)
    }
}

fn message_json(m: &Message) -> Value {
    match m {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant { content, tool_calls } => {
            // Some servers refuse `content: null` next to tool calls: send "".
            let mut msg = json!({"role": "assistant", "content": content.clone().unwrap_or_default()});
            if !tool_calls.is_empty() {
                msg["tool_calls"] = Value::Array(
                    tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function", "function": {
                                "name": c.name, "arguments": c.arguments.to_string()}})
                        })
                        .collect(),
                );
            }
            msg
        }
        Message::Tool { tool_call_id, content } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
}

/// Remove keywords OpenAI's strict mode refuses (validation still enforces them afterwards).
fn strip_keys(schema: &mut Value, keys: &[&str]) {
    match schema {
        Value::Object(map) => {
            for k in keys {
                map.remove(*k);
            }
            map.values_mut().for_each(|v| strip_keys(v, keys));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip_keys(v, keys)),
        _ => {}
    }
}

/// Whether an error body is about the `response_format` we sent (and not, say, context length).
fn mentions_structured_output(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    ["response_format", "json_schema", "schema", "structured"]
        .iter()
        .any(|k| lower.contains(k))
}

/// Parse a completion body leniently: missing fields default, arguments may be a
/// string or an object, content may be a string or a list of text parts.
pub fn parse_completion(body: &Value) -> Result<ChatResponse, LlmError> {
    let choice = body.pointer("/choices/0").ok_or_else(|| {
        LlmError::InvalidResponse(format!(
            "the reply has no choices: {}",
            crate::text::truncate_chars(&body.to_string(), 200)
        ))
    })?;
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let content = match message.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(call);
            let Some(name) = function.get("name").and_then(Value::as_str) else {
                continue;
            };
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => crate::json::parse_repaired(s).unwrap_or(Value::String(s.clone())),
                Some(other) => other.clone(),
                None => json!({}),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}"));
            tool_calls.push(ToolCall {
                id,
                name: name.to_string(),
                arguments,
            });
        }
    }
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    let count = |a: &str, b: &str| {
        usage
            .get(a)
            .or_else(|| usage.get(b))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ChatResponse {
        content,
        tool_calls,
        usage: TokenUsage {
            prompt_tokens: count("prompt_tokens", "input_tokens"),
            completion_tokens: count("completion_tokens", "output_tokens"),
            // OpenAI reports cached input inside prompt_tokens, in the details.
            cache_read_tokens: usage
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            cache_write_tokens: 0,
        },
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    })
}

#[async_trait]
impl ChatModel for OpenAiCompatible {
    fn describe(&self) -> String {
        format!("openai-compatible {}", self.config.base_url)
    }

    fn provider_name(&self) -> &str {
        "openai"
    }

    async fn chat(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let url = self.endpoint();
        let endpoint = Endpoint {
            url: &url,
            base_url: &self.config.base_url,
            base_url_env: "OPENAI_BASE_URL",
            timeout: self.config.timeout,
            max_retries: self.config.max_retries,
            retry_base: self.config.retry_base,
            overloaded_529: false,
        };
        let mut attempt = 0u32;
        let mut with_format = req.response_format.is_some() && self.structured_output.load(Ordering::Relaxed);
        loop {
            let body = self.body(&req, with_format);
            let (status, text) = http::send(&endpoint, &mut attempt, || self.post(&url, &req, &body)).await?;
            match status {
                200..=299 => return parse_completion(&http::json_body(&url, &text)?),
                401 | 403 => {
                    return Err(LlmError::Auth(format!(
                        "{} rejected the API key (HTTP {status}: {}); set OPENAI_API_KEY or --api-key",
                        self.config.base_url,
                        error_message(&text)
                    )))
                }
                404 => {
                    return Err(LlmError::ModelNotFound(format!(
                        "model `{}` not found at {} (HTTP 404: {}); check --model, and that the base URL ends in /v1",
                        req.model,
                        self.config.base_url,
                        error_message(&text)
                    )))
                }
                400 | 422 if with_format && mentions_structured_output(&text) => {
                    // Many local servers refuse json_schema output: ask for JSON in text instead.
                    tracing::debug!("server refused response_format; falling back to JSON in text");
                    self.structured_output.store(false, Ordering::Relaxed);
                    with_format = false;
                }
                _ => {
                    return Err(LlmError::BadRequest(format!(
                        "{} refused the request (HTTP {status}): {}",
                        self.config.base_url,
                        error_message(&text)
                    )))
                }
            }
        }
    }

    /// Server-sent events (`"stream": true`). Anything but a 2xx answer is sent
    /// again through [`ChatModel::chat`], so retries, the structured-output
    /// fallback and error messages are the same as without streaming.
    async fn chat_stream(&self, req: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        let url = self.endpoint();
        let with_format = req.response_format.is_some() && self.structured_output.load(Ordering::Relaxed);
        let mut body = self.body(&req, with_format);
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
        let response = match self.post(&url, &req, &body).send().await {
            Ok(r) if r.status().is_success() => r,
            // Errors, retries and fallbacks are the non-streaming path's business.
            _ => return super::chat_whole(self, req, on_text).await,
        };
        let mut reader = SseReply::default();
        let whole = match http::read_text_events(response, &url, &mut |data| reader.event(data), on_text).await? {
            // Cut before any text was handed on: nothing acted on it, so ask again, once, whole.
            http::Streamed::CutEarly => return super::chat_whole(self, req, on_text).await,
            http::Streamed::Events => None,
            http::Streamed::Whole(body) => Some(body),
        };
        match whole {
            None => parse_completion(&reader.into_completion()),
            // The server ignored `stream`: it sent one ordinary completion.
            Some(text) => {
                let response = parse_completion(&http::json_body(&url, &text)?)?;
                if let Some(text) = &response.content {
                    on_text(text);
                }
                Ok(response)
            }
        }
    }
}

/// A streamed completion being put back together from its `data:` lines.
#[derive(Default)]
struct SseReply {
    content: Option<String>,
    /// Tool calls by index: id, name, arguments text.
    tool_calls: Vec<(String, String, String)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
}

impl SseReply {
    /// Take one event's data; returns new text of the reply, if any.
    fn event(&mut self, data: &str) -> Result<Option<String>, LlmError> {
        let event = http::event_json(data)?;
        if let Some(message) = event.pointer("/error/message").and_then(Value::as_str) {
            return Err(LlmError::Server(format!("the server failed mid-reply: {message}")));
        }
        if let Some(usage) = event.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        let Some(choice) = event.pointer("/choices/0") else {
            return Ok(None);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            while self.tool_calls.len() <= index {
                self.tool_calls.push(Default::default());
            }
            let slot = &mut self.tool_calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                slot.0 = id.to_string();
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                slot.1.push_str(name);
            }
            if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                slot.2.push_str(args);
            }
        }
        match delta.get("content").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => {
                self.content.get_or_insert_with(String::new).push_str(text);
                Ok(Some(text.to_string()))
            }
            _ => Ok(None),
        }
    }

    /// The reply in the shape of an ordinary completion.
    fn into_completion(self) -> Value {
        let calls: Vec<Value> = self
            .tool_calls
            .into_iter()
            .map(
                |(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}),
            )
            .collect();
        let mut message = json!({"role": "assistant", "content": self.content});
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage.unwrap_or(Value::Null),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_a_streamed_reply_back_together() {
        let mut reader = SseReply::default();
        let lines = [
            r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"{\"go"}}]}"#,
            "",
            ": keep-alive",
            r#"data: {"choices":[{"index":0,"delta":{"content":"al\": 1}"}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a\"}"}}]},"finish_reason":"stop"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}"#,
            "data: [DONE]",
        ];
        let mut texts = Vec::new();
        for line in lines {
            let Some(data) = line.strip_prefix("data: ").filter(|d| *d != "[DONE]") else {
                continue;
            };
            if let Some(t) = reader.event(data).unwrap() {
                texts.push(t);
            }
        }
        assert_eq!(texts, ["{\"go", "al\": 1}"]);
        let r = parse_completion(&reader.into_completion()).unwrap();
        assert_eq!(r.content.as_deref(), Some("{\"goal\": 1}"));
        assert_eq!(r.tool_calls[0].arguments, json!({"path": "a"}));
        assert_eq!(r.tool_calls[0].id, "c1");
        assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (7, 3));
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
        assert!(SseReply::default().event("{not json").is_err());
    }

    #[test]
    fn parses_lenient_local_server_replies() {
        let body = json!({
            "choices": [{"message": {"content": null, "tool_calls": [
                {"function": {"name": "read_file", "arguments": "{'path': 'a.txt',}"}}
            ]}, "finish_reason": ""}]
        });
        let r = parse_completion(&body).unwrap();
        assert_eq!(r.tool_calls[0].arguments, json!({"path": "a.txt"}));
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.finish_reason, None);
        assert_eq!(r.usage, TokenUsage::default());
    }
}
