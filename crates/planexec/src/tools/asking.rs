//! What a tool may ask of the run it is called in while it runs: a model's
//! answer (an MCP server's `sampling/createMessage`) or a person's (its
//! `elicitation/create`). The executor hands each tool call an [`Asker`]
//! bound to the run, so a model call is answered by the run's executor
//! model and counted in its budget and ledger (role `sampling`), and a
//! question goes to the run's approver (the terminal, for the CLI) and is
//! recorded as a decision.

use async_trait::async_trait;
use serde_json::Value;

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

/// What a tool asks a person: a message and the form of the answer (a flat
/// JSON Schema object of strings, numbers, booleans and enums).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub message: String,
    pub schema: Value,
}

/// Answers a tool's questions for the run the tool is called in.
#[async_trait]
pub trait Asker: Send + Sync {
    /// The model's reply, or why there is none (refused, over budget, the model failed).
    async fn sample(&self, request: SamplingRequest) -> Result<Sampled, String>;

    /// The person's answer (an object following the question's schema), a
    /// decline, or that the run waits for it (the call is then stopped and
    /// its step runs again once someone has answered).
    async fn elicit(&self, question: Question) -> Elicited {
        let _ = question;
        Elicited::Declined
    }
}

/// What came of a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    Answer(Value),
    Declined,
    /// Nobody can answer now: the run waits in the ledger; this says for what.
    Waits(String),
}

/// An asker that answers nothing, saying why.
pub struct Refuse(pub &'static str);

#[async_trait]
impl Asker for Refuse {
    async fn sample(&self, _request: SamplingRequest) -> Result<Sampled, String> {
        Err(self.0.to_string())
    }
}
