//! # planexec — a Plan-and-Execute agent runtime
//!
//! A *planner* model turns a task into a [`Plan`]: a DAG of [`Step`]s, each a
//! tool call (or a reasoning step) with the ids it depends on. The runtime
//! validates the plan, lets an [`Approver`] accept, edit or reject it, then runs
//! the steps in dependency order, in parallel where the DAG allows, calling a
//! model only where a step needs reasoning or a failed call needs fixing. When a
//! step fails, a *replanner* revises the rest of the plan within a bound; a
//! *synthesizer* writes the answer. Tokens, cost and time are counted per role.
//!
//! ```no_run
//! use std::sync::Arc;
//! use planexec::{Agent, llm::openai::{OpenAiCompatible, OpenAiConfig}, tools::{builtin, workspace::Workspace}};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = OpenAiCompatible::new(OpenAiConfig {
//!     base_url: "http://localhost:11434/v1".into(),
//!     ..OpenAiConfig::default()
//! })?;
//! let agent = Agent::builder(Arc::new(provider), "qwen2.5-coder:1.5b")
//!     .tools(builtin::registry(Workspace::new(".")?))
//!     .build();
//! agent.events().on_event(|e| eprintln!("{e:?}"));
//! let report = agent.run("Add up the numbers in data/prices.txt").await;
//! println!("{}", report.answer.unwrap_or_default());
//! # Ok(()) }
//! ```
//!
//! Layout: the core ([`plan`], [`schedule`], [`policy`], the roles, [`events`])
//! knows nothing of terminals or HTTP; providers sit behind [`llm::ChatModel`]
//! and tools behind [`tools::Tool`].

pub mod accounting;
mod agent;
pub mod bench;
pub mod budget;
pub mod cancel;
mod context;
pub mod events;
mod executor;
mod ledger;
pub mod llm;
pub mod models;
pub mod plan;
mod planner;
pub mod policy;
mod react;
pub mod render;
mod replanner;
pub mod report;
pub mod result;
pub mod schedule;
pub mod store;
pub mod strategy;
mod synthesizer;
pub mod text;
pub mod tools;

pub use agent::{Agent, AgentBuilder};
pub use budget::Budget;
pub use cancel::CancelToken;
pub use events::{Event, EventBus};
pub use llm::{ChatModel, LlmError, Role};
pub use models::{ModelRef, Models};
pub use plan::{Plan, PlanError, PlanErrors, Step};
pub use policy::{Approval, Approver, AutoApprove, Mode, Permission, ResumeOptions, RunOptions, StepSelection};
pub use report::{PlanVersion, RunReport, RunStatus};
pub use result::{StepResult, StepStatus};
pub use store::{MemoryStore, RunStore, StoreError};
pub use strategy::Strategy;
pub use tools::{Effect, Tool, ToolError, ToolRegistry};

/// Why a run (or a planning call) could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Model(#[from] LlmError),
    #[error("the {role} gave no usable plan after {attempts} attempts:\n{errors}\nits last reply was:\n{last_reply}")]
    Planning {
        role: Role,
        attempts: u32,
        errors: String,
        last_reply: String,
    },
    #[error("the plan is invalid:\n{0}")]
    InvalidPlan(PlanErrors),
}

/// A step with side effects that was running when a run stopped, and that the
/// resume could not decide about (its effect may or may not have happened).
#[derive(Debug, Clone, PartialEq)]
pub struct InflightStep {
    pub step_id: String,
    pub tool: Option<String>,
    /// The resolved arguments it was called with.
    pub args: Option<serde_json::Value>,
}

/// Why [`Agent::resume`] did not continue a run. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "this agent has no run ledger, so there is nothing to resume from (configure one with AgentBuilder::store)"
    )]
    NoStore,
    #[error("there is no run {run_id} in the ledger {store} (see `planexec runs list`)")]
    NotFound { run_id: String, store: String },
    #[error("run {run_id} already finished ({status}); resuming it changes nothing", status = status.as_str())]
    Finished { run_id: String, status: RunStatus },
    #[error("step {step_id} is both to be run again and to be skipped; choose one")]
    Conflict { step_id: String },
    #[error("{}", inflight_message(run_id, steps))]
    InflightUndecided { run_id: String, steps: Vec<InflightStep> },
    #[error("{0}")]
    Store(StoreError),
}

fn inflight_message(run_id: &str, steps: &[InflightStep]) -> String {
    let mut out = format!(
        "run {run_id} stopped while {} with side effects {} running, so {} may or may not have happened:",
        if steps.len() == 1 { "a step" } else { "steps" },
        if steps.len() == 1 { "was" } else { "were" },
        if steps.len() == 1 {
            "its effect"
        } else {
            "their effects"
        },
    );
    for s in steps {
        let args = s.args.as_ref().map(|a| format!(" {a}")).unwrap_or_default();
        out.push_str(&format!(
            "\n  {} ({}{args})",
            s.step_id,
            s.tool.as_deref().unwrap_or("reasoning")
        ));
    }
    let ids: Vec<&str> = steps.iter().map(|s| s.step_id.as_str()).collect();
    out.push_str(&format!(
        "\nCheck, then resume with --rerun-inflight to run {them} again or --skip-inflight to take {them} as done (or name steps: --rerun-inflight={}).",
        ids.join(","),
        them = if steps.len() == 1 { "it" } else { "them" },
    ));
    out
}
