//! # planexec — a Plan-and-Execute agent runtime
//!
//! A *planner* model turns a task into a [`Plan`]: a DAG of [`Step`]s, each a
//! tool call (or a reasoning step) with the ids it depends on. The runtime
//! validates the plan, lets an [`Approver`] accept, edit or reject it, then runs
//! the steps in dependency order, in parallel where the DAG allows, calling a
//! model only where a step needs reasoning or a failed call needs fixing. When a
//! tool step fails, an agent step recovers it from the error, or a
//! *replanner* revises the rest of the plan within a bound; a *synthesizer*
//! writes the answer, and a run says `succeeded` only if the files its task
//! names were written. Tokens, cost and time are counted per role.
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
//! ## Where things are
//!
//! Data flows one way: task → plan → step results → answer.
//!
//! | file | what it holds |
//! |---|---|
//! | `agent.rs` | [`Agent`] and its builder: what a program builds and calls (`run`, `run_plan`, `plan`, `resume`) |
//! | `run/` | one run's state (`Run`) and how it ends (`Exit`: early exits are values); whether the files its task names were written; resuming from the ledger |
//! | `strategy/` | one file per [`Strategy`] over one shared DAG loop (`strategy/dag.rs`); how a run begins (`strategy/start.rs`) |
//! | `planner.rs` | the planner role: task → validated plan (and the compiler's streamed plan) |
//! | `executor/` | the executor role: run one step (tool call, reasoning, an agent step, the recovery of a failed call, `expected` check), recorded in the ledger |
//! | `replanner.rs` | the replanner role: revise the rest of a plan after a failure, feedback or a step |
//! | `synthesizer.rs` | the synthesizer role: the answer (and the compiler's joiner) |
//! | [`plan`] | the plan format: types, `{{id}}` references, validation, findings, calls written twice merged, parsing (whole and streamed), schema, waves |
//! | [`help`] | the port for model-specific help with plans ([`PlanHelp`]) and the record of it ([`Mend`]) |
//! | [`mends`] | planexec's help for small local models: plan rewrite rules, one file per family, and worked plans; outside the core, switched by `mend` |
//! | [`schedule`] | DAG execution: parallelism, steps from a stream |
//! | [`engine`] | the port of the engine a run executes on (in process by default; durable engines journal its model calls and run its passes elsewhere) |
//! | [`policy`] | limits, modes and permissions, the no-progress rule, the [`Approver`] |
//! | [`budget`], [`accounting`], [`events`] | spend limits, tokens and cost per role, the event stream |
//! | `context.rs`, `prompt/`, [`json`] | what the roles share: the run context, the prompts (one shared prefix, or compact per role), reading a model's JSON |
//! | [`templates`] | plan reuse: a succeeded run's plan kept with its task's literals as parameters, filled for a task of the same shape |
//! | [`llm`] | the model port ([`llm::ChatModel`]); providers behind the `http` feature, cassettes, the scripted model |
//! | [`tools`] | the tool port ([`tools::Tool`]), the registry, built-in tools, the shell |
//! | [`store`] | the ledger port ([`RunStore`]) and the in-memory store |
//! | [`render`], [`report`], [`bench`] | plans drawn as text/Mermaid/DOT, the run report, strategy comparisons |
//!
//! The core knows nothing of terminals or HTTP servers; providers sit behind
//! [`llm::ChatModel`], tools behind [`tools::Tool`], ledgers behind
//! [`RunStore`]. `tests/architecture.rs` checks that no module imports in a
//! circle and that no function is longer than a screen.

pub mod accounting;
mod agent;
pub mod agents;
pub mod bench;
pub mod budget;
mod calls;
pub mod cancel;
mod carry_back;
mod config_edit;
mod content;
mod context;
mod date_order;
mod decimal_places;
pub mod decisions;
mod dedupe_key;
mod dotted_value;
pub mod engine;
pub mod events;
mod executor;
mod file_shape;
mod fixed_width;
mod form_probe;
pub mod help;
mod inbox;
mod join_keys;
mod journal;
pub mod json;
mod ledger;
mod line_ends;
mod list_marks;
mod list_test;
pub mod llm;
pub mod mends;
pub mod models;
mod named_columns;
mod named_date;
mod named_numbers;
mod named_value;
mod new_file;
mod other_record;
pub mod plan;
mod planner;
pub mod policy;
mod program_heads;
mod program_vote;
mod prompt;
mod python_repr;
mod recompute;
pub mod refs;
pub mod render;
mod replanner;
pub mod report;
pub mod result;
mod row_filter;
mod run;
mod sandbox;
pub mod schedule;
mod scratch;
mod section_value;
mod settings_shape;
pub mod store;
pub mod strategy;
mod synthesizer;
mod task_test;
pub mod templates;
pub mod text;
pub mod tools;
mod typed_value;
mod value_forms;
mod verdict;

pub use agent::{Agent, AgentBuilder, EngineRun};
pub use agents::AgentProfile;
pub use budget::Budget;
pub use cancel::CancelToken;
pub use decisions::DecisionError;
pub use engine::{EngineError, Pass, RunEngine};
pub use events::{Event, EventBus};
pub use help::{Agreement, Mend, MendMode, PlanHelp};
pub use list_test::{ListOrder, ListTest};
pub use llm::{ChatModel, LlmError, Prepared, Role};
pub use models::{ModelRef, Models};
pub use plan::{Plan, PlanError, PlanErrors, Step, StepKind};
pub use policy::{
    Approval, ApproveLater, Approver, AutoApprove, Fallback, Mode, Permission, PlanReuse, PromptStyle, Recover,
    ResumeOptions, RunOptions, StepSelection,
};
pub use report::{PlanVersion, RunReport, RunStatus};
pub use result::{StepResult, StepStatus};
pub use run::resume::{InflightStep, ResumeError};
pub use run::{new_run_id, RunError};
pub use store::{MemoryStore, RunStore, StoreError};
pub use strategy::{Profile, Strategy};
pub use tools::{Effect, Tool, ToolError, ToolRegistry};
