//! The model port: one small trait, [`ChatModel`], that every provider implements.
//!
//! The roles build a [`ChatRequest`] (messages, offered tools, an optional JSON
//! Schema for structured output) and get a [`ChatResponse`] (text and/or tool
//! calls, token usage). Providers live in their own modules and degrade
//! across what their servers support; the core never names one. With the
//! `http` feature (on by default): `openai` (any OpenAI-compatible server) and
//! `anthropic` (the Messages API). Always: [`cassette`] (record and replay)
//! and [`scripted`] (a scripted model for tests).

#[cfg(feature = "http")]
pub mod anthropic;
pub mod cassette;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub mod openai;
pub mod scripted;

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The role a model call is made for. Sent as the `x-planexec-role` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Planner,
    Executor,
    Replanner,
    Synthesizer,
    /// The turns of an agent step's tool-using loop.
    Agent,
    /// A model call a tool asked for while it ran (an MCP server's sampling
    /// request), answered by the executor's model.
    Sampling,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Planner,
        Role::Executor,
        Role::Replanner,
        Role::Synthesizer,
        Role::Agent,
        Role::Sampling,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Executor => "executor",
            Role::Replanner => "replanner",
            Role::Synthesizer => "synthesizer",
            Role::Agent => "agent",
            Role::Sampling => "sampling",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message::System {
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message::User {
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::Assistant {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        }
    }
}

/// A tool the model may call, as the provider sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// Whether and how the model must call a tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    Required,
    None,
}

/// Ask for a reply that is JSON matching `schema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchemaFormat {
    pub name: String,
    pub schema: Value,
    /// OpenAI strict mode: only valid when every object is closed and fully required.
    pub strict: bool,
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub role: Role,
    pub model: String,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<JsonSchemaFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The step an executor call works on (for the ledger; never sent to a provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
}

impl ChatRequest {
    pub fn new(role: Role, model: impl Into<String>, messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            role,
            model: model.into(),
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            response_format: None,
            max_tokens: None,
            temperature: Some(0.0),
            step_id: None,
        }
    }
}

/// Tokens a call used, as the provider reported them (zero where it did not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Every input token, cached or not.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of `prompt_tokens`, those read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Of `prompt_tokens`, those written to the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A model's reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub usage: TokenUsage,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// What went wrong talking to a model. Messages are one line and say what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    Auth(String),
    #[error("{0}")]
    ModelNotFound(String),
    #[error("{0}")]
    Connection(String),
    #[error("{0}")]
    RateLimited(String),
    #[error("{0}")]
    Server(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    InvalidResponse(String),
    /// Not sent: the call would cross the run's budget.
    #[error("{0}")]
    BudgetExhausted(String),
}

impl LlmError {
    /// A low-cardinality name of what went wrong, for metrics and traces
    /// (OpenTelemetry's `error.type`).
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Auth(_) => "auth",
            LlmError::ModelNotFound(_) => "model_not_found",
            LlmError::Connection(_) => "connection",
            LlmError::RateLimited(_) => "rate_limited",
            LlmError::Server(_) => "server",
            LlmError::BadRequest(_) => "bad_request",
            LlmError::Timeout(_) => "timeout",
            LlmError::InvalidResponse(_) => "invalid_response",
            LlmError::BudgetExhausted(_) => "budget_exhausted",
        }
    }

    /// The error of kind `kind` ([`LlmError::kind`]) with `message`: one
    /// kept as text (by a durable engine) read back. An unknown kind is a
    /// server error.
    pub fn from_kind(kind: &str, message: String) -> LlmError {
        match kind {
            "auth" => LlmError::Auth(message),
            "model_not_found" => LlmError::ModelNotFound(message),
            "connection" => LlmError::Connection(message),
            "rate_limited" => LlmError::RateLimited(message),
            "bad_request" => LlmError::BadRequest(message),
            "timeout" => LlmError::Timeout(message),
            "invalid_response" => LlmError::InvalidResponse(message),
            "budget_exhausted" => LlmError::BudgetExhausted(message),
            _ => LlmError::Server(message),
        }
    }
}

/// A chat model provider.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// A short name for reports and errors, e.g. `openai-compatible http://localhost:8080/v1`.
    fn describe(&self) -> String;
    /// The API it speaks, as OpenTelemetry's `gen_ai.provider.name` has it.
    fn provider_name(&self) -> &str {
        "unknown"
    }
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError>;

    /// [`ChatModel::chat`], handing the reply's text to `on_text` piece by piece
    /// as it is generated (the compiler strategy dispatches steps from it). The
    /// default, for providers that cannot stream, hands over the whole text at once.
    async fn chat_stream(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        chat_whole(self, request, on_text).await
    }

    /// Evaluate `system`, the system prompt every call of a run starts with,
    /// and keep its state, so that no call has to: for models that keep
    /// prompt state between calls and processes (the embedded model, whose
    /// first call would otherwise evaluate thousands of tokens inside a
    /// step's time limit). The default, for providers that keep nothing of
    /// their own, does nothing.
    async fn prepare(&self, system: &str) -> Result<Prepared, LlmError> {
        let _ = system;
        Ok(Prepared::default())
    }

    /// Whether plans from this model get the small-model help (worked plans
    /// and plan rewrite rules, [`crate::mends`]) when a run's `mend` setting
    /// is `auto`: a small local model says yes; a hosted model, which fixes
    /// its plan when told what is wrong, keeps the default no.
    fn wants_plan_help(&self) -> bool {
        false
    }

    /// Whether this model keeps a prompt's evaluated state between calls, so
    /// that a long prefix shared by every call of a run is paid once (the
    /// embedded model's KV cache, kept on disk). With `prompt_style = auto`
    /// a run then sends the shared prompt; otherwise compact prompts per
    /// role, since a provider that keeps nothing is paid for every token.
    fn keeps_prompt_state(&self) -> bool {
        false
    }
}

/// What [`ChatModel::prepare`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prepared {
    /// Tokens of the prompt whose state is now kept.
    pub kept_tokens: u64,
    /// Of those, how many were evaluated now (0 when they were kept already).
    pub evaluated_tokens: u64,
}

/// [`ChatModel::chat`], then the whole reply's text to `on_text` at once: the
/// default streaming, and the streaming providers' path for replies they
/// cannot stream (errors and retries go through `chat`).
pub(crate) async fn chat_whole<M: ChatModel + ?Sized>(
    model: &M,
    request: ChatRequest,
    on_text: TextSink<'_>,
) -> Result<ChatResponse, LlmError> {
    let response = model.chat(request).await?;
    if let Some(text) = &response.content {
        on_text(text);
    }
    Ok(response)
}

/// Receives a reply's text as it is generated.
pub type TextSink<'a> = &'a (dyn Fn(&str) + Send + Sync);
