//! What the roles of one run share: models, tools, limits, the meter, the
//! event bus and the ledger. Every model call of a run goes through
//! [`RunContext::chat`], so accounting, events and the record cannot be
//! forgotten by a role.

use std::sync::Arc;
use std::time::Instant;

use crate::accounting::Meter;
use crate::events::{Event, EventBus};
use crate::llm::{ChatRequest, ChatResponse, LlmError, TextSink};
use crate::models::Models;
use crate::policy::{Approver, Mode, RunOptions};
use crate::tools::ToolRegistry;

/// The system prompt every role's call starts with: what the agent is and the
/// run's tools. Being identical on every call of a run, it is evaluated once by
/// a local model's KV cache and cached by providers that cache prompt prefixes.
pub(crate) fn system_prompt(tools: &ToolRegistry, mode: Mode) -> String {
    let rule = match mode {
        Mode::Plan => "This run is in plan mode: only read_only tools may be used; the runtime refuses any other.\n",
        Mode::Ask | Mode::Auto => "",
    };
    format!(
        "You are one part of a plan-and-execute agent. A planner breaks a task into steps that call tools; an executor carries out single steps; a replanner revises a plan after a failure; a synthesizer writes the final answer from the step results. The user message says which part you are now and what to do.\n\nTools available in this run:\n{}{rule}\nHow plans are written (for the planner and replanner):\n{}",
        tool_catalog(tools),
        crate::planner::PLAN_FORMAT
    )
}

/// The tools as a prompt sees them: name, description, effect, and an arguments
/// template (or the JSON Schema, for arguments a template cannot show).
pub(crate) fn tool_catalog(tools: &ToolRegistry) -> String {
    let mut out = String::new();
    for entry in tools.entries() {
        let t = &entry.tool;
        let schema = t.parameters();
        let args = args_template(&schema).unwrap_or_else(|| format!("matching the JSON Schema {schema}"));
        out.push_str(&format!(
            "- {}: {} ({})\n  args: {args}\n",
            t.name(),
            t.description(),
            entry.declared_effect().as_str(),
        ));
    }
    if out.is_empty() {
        out.push_str("(no tools: every step must be a reasoning step)\n");
    }
    out
}

/// `{"path": "<file path>", "n": <number>}` for a flat object schema; `None` otherwise.
fn args_template(schema: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let props = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut parts = Vec::new();
    for (name, prop) in props {
        let hint = prop.get("description").and_then(Value::as_str).unwrap_or(name);
        let value = match prop.get("type").and_then(Value::as_str)? {
            "string" => format!("\"<{hint}>\""),
            "number" | "integer" => format!("<{hint}: number>"),
            "boolean" => format!("<{hint}: true or false>"),
            _ => return None,
        };
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            " (optional)"
        };
        parts.push(format!("\"{name}\"{optional}: {value}"));
    }
    Some(format!("{{{}}}", parts.join(", ")))
}

pub(crate) struct RunContext {
    pub models: Models,
    pub meter: Meter,
    pub events: EventBus,
    pub tools: Arc<ToolRegistry>,
    pub options: RunOptions,
    pub approver: Arc<dyn Approver>,
    pub ledger: Arc<crate::ledger::Ledger>,
    pub budget: crate::budget::BudgetGuard,
}

impl RunContext {
    /// [`system_prompt`] for the run's tools as they are now (an MCP server may
    /// have changed its tools since the run started).
    pub fn system(&self) -> String {
        system_prompt(&self.tools, self.options.mode)
    }

    /// Send a request to the role's model (its `model` field is filled in here).
    pub async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.call(request, None).await
    }

    /// [`RunContext::chat`], handing the reply's text to `on_text` as it streams in.
    pub async fn chat_streaming(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        self.call(request, Some(on_text)).await
    }

    async fn call(&self, mut request: ChatRequest, on_text: Option<TextSink<'_>>) -> Result<ChatResponse, LlmError> {
        let model = self.models.get(request.role);
        request.model = model.model.clone();
        let role = request.role;
        let what = match &request.step_id {
            Some(step) => format!("the {role} call for step {step}"),
            None => format!("the {role} call"),
        };
        self.budget
            .check_call(&request, &model.model, &what)
            .map_err(LlmError::BudgetExhausted)?;
        let started = Instant::now();
        let step_id = request.step_id.clone();
        let prompt = self
            .events
            .wants_content()
            .then(|| serde_json::to_string(&request.messages).unwrap_or_default());
        // The request is kept for the ledger only when there is one.
        let sent = self.ledger.is_enabled().then(|| request.clone());
        let outcome = match on_text {
            Some(sink) => model.provider.chat_stream(request, sink).await,
            None => model.provider.chat(request).await,
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        let cost = match &outcome {
            Ok(r) => self.meter.record(role, &model.model, r.usage, latency_ms),
            Err(_) => None,
        };
        if let Some(sent) = &sent {
            self.ledger.exchange(sent, &outcome, cost, latency_ms).await;
        }
        let response = outcome?;
        let completion = prompt.as_ref().map(|_| {
            serde_json::to_string(&serde_json::json!({"content": response.content, "tool_calls": response.tool_calls}))
                .unwrap_or_default()
        });
        self.events.emit(Event::ModelCalled {
            role,
            provider: model.provider.provider_name().to_string(),
            model: model.model.clone(),
            step_id,
            prompt_tokens: response.usage.prompt_tokens,
            completion_tokens: response.usage.completion_tokens,
            cache_read_tokens: response.usage.cache_read_tokens,
            latency_ms,
            finish_reason: response.finish_reason.clone(),
            prompt,
            completion,
        });
        Ok(response)
    }
}
