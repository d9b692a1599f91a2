//! Model calls a tool asks for while it runs: an MCP server's
//! `sampling/createMessage`, which the protocol lets a server send to its
//! client. The executor hands each tool call a [`Sampler`] bound to the run,
//! so such a call is answered by the run's executor model and counted in
//! its budget and ledger (role `sampling`) like any other call.

use async_trait::async_trait;

/// Who said a message of a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    User,
    Assistant,
}

/// What a tool asks a model.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    pub system: Option<String>,
    pub messages: Vec<(Speaker, String)>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
}

/// The model's reply, and which model gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub text: String,
    pub model: String,
}

/// Answers a tool's model calls for the run the tool is called in.
#[async_trait]
pub trait Sampler: Send + Sync {
    /// The reply, or why there is none (refused, over budget, the model failed).
    async fn sample(&self, request: SamplingRequest) -> Result<Sampled, String>;
}

/// A sampler that answers nothing, saying why.
pub struct Refuse(pub &'static str);

#[async_trait]
impl Sampler for Refuse {
    async fn sample(&self, _request: SamplingRequest) -> Result<Sampled, String> {
        Err(self.0.to_string())
    }
}
