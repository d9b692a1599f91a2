//! Typed events of a run, for library users and the CLI.
//!
//! The runtime emits an [`Event`] at each point a watcher cares about (plan
//! proposed, step started, replanned, ...). Subscribe with a callback
//! ([`EventBus::on_event`]) or a channel ([`EventBus::subscribe`]). Emitting never
//! blocks the run: callbacks should be quick, channels are unbounded.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::mpsc;

use crate::llm::Role;
use crate::plan::Plan;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        run_id: String,
        task: String,
    },
    /// A run recorded in the ledger continues (`steps_done` finished steps are kept).
    RunResumed {
        run_id: String,
        task: String,
        steps_done: u32,
    },
    PlanProposed {
        version: u32,
        plan: Plan,
        /// What the runtime changed in the plan the model wrote (calls written
        /// twice merged, the small-model help's mends), as [`Event::PlanMended`] told.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        mends: Vec<crate::help::Mend>,
    },
    /// The runtime changed the plan a model wrote: `rule` acted at `step`;
    /// `before` holds the steps it changed or removed as they were, `after`
    /// the steps it changed or added. Rule `same-call` merges a call written
    /// twice (every provider); the others are the small-model help's
    /// ([`crate::mends`]).
    PlanMended {
        rule: String,
        step: String,
        before: Vec<crate::plan::Step>,
        after: Vec<crate::plan::Step>,
    },
    /// The run starts from the stored plan of an earlier run of the same
    /// shape ([`crate::templates`]), filled with this task's literals: no
    /// planner call. The plan is still reviewed as any other.
    PlanReused {
        template: String,
        from_run: String,
    },
    /// The small-model help showed the planner the worked plan of this task.
    WorkedPlanShown {
        task: String,
    },
    /// The planner gave an unusable reply; it is asked again with these errors.
    PlanRejectedByValidation {
        attempt: u32,
        errors: String,
    },
    /// The planner asked for clarification instead of planning.
    QuestionsAsked {
        questions: Vec<String>,
    },
    PlanApproved {
        version: u32,
    },
    PlanRejected {
        version: u32,
    },
    StepStarted {
        step_id: String,
        tool: Option<String>,
        /// The agent profile carrying out an agent step.
        agent: Option<String>,
    },
    StepRetried {
        step_id: String,
        attempt: u32,
        error: String,
        delay_ms: u64,
    },
    StepFinished {
        step_id: String,
        elapsed_ms: u64,
        summary: String,
        attempts: u32,
    },
    /// After step `step_id` the runtime changed what it wrote: `rule`
    /// acted on the file at `path`, as `note` says. Rule `carry-back`: a
    /// configuration file rewritten through a parser's dump got its own
    /// lines back, with the settings the step changed ([`crate::carry_back`]).
    /// The step's record holds it as an inner call of `write_file`.
    OutputMended {
        step_id: String,
        rule: String,
        path: String,
        note: String,
    },
    StepFailed {
        step_id: String,
        elapsed_ms: u64,
        error: String,
        attempts: u32,
    },
    /// A tool step's call failed with `error`, and a recovery loop (an agent
    /// step of the `recover` profile) now tries to do the step another way;
    /// its calls follow as [`Event::AgentCallStarted`] under this step.
    StepRecovering {
        step_id: String,
        tool: String,
        error: String,
    },
    /// An agent step's loop calls a tool (`call_id` is `<step>.<n>`).
    AgentCallStarted {
        step_id: String,
        call_id: String,
        tool: String,
        args: serde_json::Value,
    },
    /// An agent step's tool call ended; `replayed` when its result came from
    /// the ledger (it had run in an earlier session of a resumed run).
    AgentCallFinished {
        step_id: String,
        call_id: String,
        tool: String,
        elapsed_ms: u64,
        /// Why it failed, or was refused.
        error: Option<String>,
        summary: String,
        replayed: bool,
    },
    Replanned {
        version: u32,
        reason: String,
        replans: u32,
    },
    /// A person's steering message was read and the plan revised to `version`.
    Steered {
        message: String,
        version: u32,
    },
    /// The run stopped making progress and hands the rest of the goal to one
    /// ReAct loop (`fallback = "react"`).
    FellBack {
        reason: String,
    },
    ModelCalled {
        role: Role,
        /// The API spoken: `openai`, `anthropic`, `llama.cpp`, ...
        provider: String,
        model: String,
        /// The step an executor call worked on.
        step_id: Option<String>,
        prompt_tokens: u64,
        completion_tokens: u64,
        cache_read_tokens: u64,
        latency_ms: u64,
        finish_reason: Option<String>,
        /// The request's messages and the reply, as JSON: only when a watcher
        /// asked for content ([`EventBus::include_content`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        completion: Option<String>,
    },
    /// A model call that got no usable reply (after the provider's own retries).
    ModelFailed {
        role: Role,
        provider: String,
        model: String,
        step_id: Option<String>,
        latency_ms: u64,
        /// [`crate::LlmError::kind`]: `auth`, `rate_limited`, `timeout`, ...
        error_type: String,
        error: String,
    },
    RunFinished {
        status: String,
        elapsed_ms: u64,
    },
}

type Callback = Arc<dyn Fn(&Event) + Send + Sync>;

/// Fan-out of events to callbacks and channels.
#[derive(Clone, Default)]
pub struct EventBus {
    callbacks: Arc<Mutex<Vec<Callback>>>,
    channels: Arc<Mutex<Vec<mpsc::UnboundedSender<Event>>>>,
    content: Arc<std::sync::atomic::AtomicBool>,
}

impl EventBus {
    pub fn new() -> EventBus {
        EventBus::default()
    }

    /// Call `f` for every event, on the task that emits it.
    pub fn on_event(&self, f: impl Fn(&Event) + Send + Sync + 'static) {
        self.callbacks.lock().unwrap().push(Arc::new(f));
    }

    /// A channel that receives every event from now on.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.channels.lock().unwrap().push(tx);
        rx
    }

    /// Put prompts and replies in [`Event::ModelCalled`] (off by default: they
    /// can hold anything the user's files hold).
    pub fn include_content(&self, on: bool) {
        self.content.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn wants_content(&self) -> bool {
        self.content.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn emit(&self, event: Event) {
        let callbacks = self.callbacks.lock().unwrap().clone();
        for cb in callbacks {
            cb(&event);
        }
        self.channels
            .lock()
            .unwrap()
            .retain(|tx| tx.send(event.clone()).is_ok());
    }
}
