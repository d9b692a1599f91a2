//! What the roles of one run share, in four parts, so that each role takes
//! only the parts it uses:
//!
//! - [`ModelCalls`]: the models, the budget and the meter. Every model call of
//!   a run goes through [`ModelCalls::chat`], so accounting, events and the
//!   record cannot be forgotten by a role.
//! - [`Setting`]: what the run works with: its tools, options and plan help.
//! - [`Recording`]: where the run is written down: events, the ledger, and the
//!   journal of agent steps' inner calls.
//! - [`Control`]: how the run is steered from outside: stop, inbox, approver.
//!
//! The run loop ([`RunContext`]) holds all four; the synthesizer takes the
//! calls and the setting, the planner adds the recording and the approver, the
//! executor all four.

use std::sync::Arc;
use std::time::Instant;

use crate::accounting::Meter;
use crate::engine::RunEngine;
use crate::events::{Event, EventBus};
use crate::llm::{ChatRequest, ChatResponse, LlmError, TextSink};
use crate::models::{ModelRef, Models};
use crate::policy::{Approver, RunOptions};
use crate::tools::ToolRegistry;

/// Everything one run holds, for the run loop and the strategies.
pub(crate) struct RunContext {
    pub calls: ModelCalls,
    pub setting: Setting,
    pub recording: Recording,
    pub control: Control,
}

/// What the run works with.
pub(crate) struct Setting {
    pub tools: Arc<ToolRegistry>,
    pub options: RunOptions,
    /// The model-specific help its planner and replanner get (worked plans,
    /// plan rewrite rules), when the run's `mend` setting gives it any.
    pub help: Option<Arc<dyn crate::help::PlanHelp>>,
    /// Whether its prompts are compact, per role, rather than one shared
    /// prefix ([`crate::PromptStyle`], decided for the planner's model).
    pub compact: bool,
    /// The durable engine the run executes on; `None`: in this process.
    pub engine: Option<Arc<dyn RunEngine>>,
    /// The run's task as it was given (empty for a step run on its own):
    /// what a step's edit is held to ([`crate::carry_back`]).
    pub task: String,
}

impl Setting {
    /// The system prompt of a call that plans (the planner, the replanner),
    /// for the run's tools as they are now (an MCP server may have changed
    /// its tools since the run started).
    pub fn planning_system(&self) -> String {
        if self.compact {
            crate::prompt::compact::planning_system(&self.tools, &self.options)
        } else {
            crate::prompt::system_prompt(&self.tools, &self.options)
        }
    }

    /// The system prompt of a call that does not plan (a reasoning step, a
    /// check, a recovery): the shared prefix, or with compact prompts a
    /// line, its instructions then saying the rest.
    pub fn system(&self) -> String {
        if self.compact {
            crate::prompt::compact::INTRO.to_string()
        } else {
            crate::prompt::system_prompt(&self.tools, &self.options)
        }
    }

    /// [`Setting::system`] closed by a role's own instructions, for a role
    /// whose instructions are the same on every call: they are then part of
    /// the prefix that a local model keeps evaluated on disk and providers cache.
    pub fn system_for(&self, instructions: &str) -> String {
        if self.compact {
            instructions.to_string()
        } else {
            format!("{}\n\n{instructions}", self.system())
        }
    }
}

/// Where the run is written down.
pub(crate) struct Recording {
    pub events: EventBus,
    pub ledger: Arc<crate::ledger::Ledger>,
    /// Agent steps' inner calls from an earlier session, replayed on resume.
    pub journal: crate::journal::Journal,
}

/// How the run is steered from outside.
pub(crate) struct Control {
    /// Cancelled when the run must stop: from outside (Ctrl-C), by the budget,
    /// or by a ledger write that failed.
    pub stop: crate::cancel::CancelToken,
    /// What people send the run while it goes (steering, cancel, approvals), and its pause.
    pub inbox: Arc<crate::inbox::Inbox>,
    pub approver: Arc<dyn Approver>,
}

/// The model port of a run: every call is checked against the budget,
/// metered, announced as an event and written to the ledger.
pub(crate) struct ModelCalls {
    pub models: Models,
    pub meter: Meter,
    pub budget: crate::budget::BudgetGuard,
    /// The run's event bus and ledger, shared with its [`Recording`].
    pub events: EventBus,
    pub ledger: Arc<crate::ledger::Ledger>,
    /// The durable engine that keeps each call's outcome, if the run is on one.
    pub engine: Option<Arc<dyn RunEngine>>,
}

impl ModelCalls {
    /// Send a request to the role's model (its `model` field is filled in here).
    pub async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.call(request, None, None).await
    }

    /// [`ModelCalls::chat`] on `model` instead of the role's (an agent profile's own model).
    pub async fn chat_on(&self, model: Option<&ModelRef>, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.call(request, None, model).await
    }

    /// [`ModelCalls::chat`], handing the reply's text to `on_text` as it streams in.
    pub async fn chat_streaming(&self, request: ChatRequest, on_text: TextSink<'_>) -> Result<ChatResponse, LlmError> {
        self.call(request, Some(on_text), None).await
    }

    async fn call(
        &self,
        mut request: ChatRequest,
        on_text: Option<TextSink<'_>>,
        model: Option<&ModelRef>,
    ) -> Result<ChatResponse, LlmError> {
        let model = model.unwrap_or_else(|| self.models.get(request.role));
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
        let outcome = match (&self.engine, on_text) {
            (Some(engine), _) => journaled_chat(engine.as_ref(), model.provider.clone(), request).await,
            (None, Some(sink)) => model.provider.chat_stream(request, sink).await,
            (None, None) => model.provider.chat(request).await,
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        let cost = match &outcome {
            Ok(r) => self.meter.record(role, &model.model, r.usage, latency_ms),
            Err(_) => None,
        };
        if let Some(sent) = &sent {
            self.ledger.exchange(sent, &outcome, cost, latency_ms).await;
        }
        let provider = model.provider.provider_name().to_string();
        let response = match outcome {
            Ok(response) => response,
            Err(error) => {
                self.events.emit(Event::ModelFailed {
                    role,
                    provider,
                    model: model.model.clone(),
                    step_id,
                    latency_ms,
                    error_type: error.kind().to_string(),
                    error: error.to_string(),
                });
                return Err(error);
            }
        };
        let completion = prompt.as_ref().map(|_| {
            serde_json::to_string(&serde_json::json!({"content": response.content, "tool_calls": response.tool_calls}))
                .unwrap_or_default()
        });
        self.events.emit(Event::ModelCalled {
            role,
            provider,
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

/// A model call kept by `engine`: made once; on a replay its reply (or its
/// error) comes from what the engine kept. Nothing streams on an engine.
async fn journaled_chat(
    engine: &dyn RunEngine,
    provider: Arc<dyn crate::llm::ChatModel>,
    request: ChatRequest,
) -> Result<ChatResponse, LlmError> {
    let what = format!("{} call", request.role);
    let work = Box::pin(async move {
        match provider.chat(request).await {
            Ok(response) => serde_json::json!({ "ok": response }),
            Err(e) => serde_json::json!({ "error": e.kind(), "message": e.to_string() }),
        }
    });
    let kept = engine
        .journaled(&what, work)
        .await
        .map_err(|e| LlmError::Connection(format!("the engine could not make the {what}: {e}")))?;
    if let Some(response) = kept.get("ok") {
        return serde_json::from_value(response.clone())
            .map_err(|e| LlmError::InvalidResponse(format!("the engine kept a reply that cannot be read: {e}")));
    }
    let message = kept["message"].as_str().unwrap_or("the model call failed").to_string();
    Err(LlmError::from_kind(kept["error"].as_str().unwrap_or(""), message))
}
