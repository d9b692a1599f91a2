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
pub mod json;
mod ledger;
pub mod llm;
pub mod models;
pub mod plan;
mod planner;
pub mod policy;
mod prompt;
pub mod render;
mod replanner;
pub mod report;
pub mod result;
mod run;
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
pub use run::resume::{InflightStep, ResumeError};
pub use run::RunError;
pub use store::{MemoryStore, RunStore, StoreError};
pub use strategy::{Profile, Strategy};
pub use tools::{Effect, Tool, ToolError, ToolRegistry};
