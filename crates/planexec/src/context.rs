//! What the roles of one run share: models, tools, limits, the meter and the
//! event bus. Every model call of a run goes through [`RunContext::chat`], so
//! accounting and events cannot be forgotten by a role.

use std::sync::Arc;
use std::time::Instant;

use crate::accounting::Meter;
use crate::events::{Event, EventBus};
use crate::llm::{ChatRequest, ChatResponse, LlmError};
use crate::models::Models;
use crate::policy::{Approver, RunOptions};
use crate::tools::ToolRegistry;

pub(crate) struct RunContext {
    pub models: Models,
    pub meter: Meter,
    pub events: EventBus,
    pub tools: Arc<ToolRegistry>,
    pub options: RunOptions,
    pub approver: Arc<dyn Approver>,
}

impl RunContext {
    /// Send a request to the role's model (its `model` field is filled in here).
    pub async fn chat(&self, mut request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let model = self.models.get(request.role);
        request.model = model.model.clone();
        let role = request.role;
        let started = Instant::now();
        let response = model.provider.chat(request).await?;
        let latency_ms = started.elapsed().as_millis() as u64;
        self.meter.record(role, &model.model, response.usage, latency_ms);
        self.events.emit(Event::ModelCalled {
            role,
            model: model.model.clone(),
            prompt_tokens: response.usage.prompt_tokens,
            completion_tokens: response.usage.completion_tokens,
            latency_ms,
        });
        Ok(response)
    }

    /// The tools as a prompt sees them: name, effect, description, argument schema.
    pub fn tool_catalog(&self) -> String {
        let mut out = String::new();
        for entry in self.tools.entries() {
            let t = &entry.tool;
            out.push_str(&format!(
                "- {} ({}): {}\n  args schema: {}\n",
                t.name(),
                serde_json::to_value(t.effect())
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                t.description(),
                t.parameters()
            ));
        }
        if out.is_empty() {
            out.push_str("(no tools: every step must be a reasoning step)\n");
        }
        out
    }
}
