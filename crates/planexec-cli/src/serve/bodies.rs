//! The API's request and response bodies as types. The OpenAPI document
//! (`GET /openapi.json`) is generated from them and from the handlers'
//! `#[utoipa::path]` annotations, so it cannot drift from what is served.
//!
//! The library's own types a body carries (a plan, a report, a run summary)
//! are described as objects with a pointer to their documentation: they are
//! the library's public contract, documented there, and the core does not
//! depend on an OpenAPI crate.

use planexec::store::{Decision, Lease, RunSummary, Waiting};
use planexec::{Plan, RunReport, RunStatus};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /runs`: a run to start.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRun {
    /// What the run should do, in words.
    pub task: String,
    /// `later` (the default): the run waits in `awaiting_approval` until
    /// `POST /runs/{id}/approve`; `auto`: its plan is approved at once.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "later")]
    pub approve: Option<String>,
}

/// `GET /runs`: which runs to list.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only runs with this status (`succeeded`, `failed`, `awaiting_approval`, …).
    pub status: Option<String>,
    /// At most this many, newest first (100 when not given).
    pub limit: Option<u32>,
}

/// A decision about a run: `approve`, `reject`, `edit`, `steer` or `cancel`.
/// Each takes the fields it needs; `by` names who decided (`api` when not given).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Decide {
    #[serde(default)]
    pub by: Option<String>,
    /// `approve`: the step whose confirmation is given, for a run that waits on a step.
    #[serde(default)]
    pub step: Option<String>,
    /// `approve`: the answer, for a run that waits for one (a tool's question,
    /// such as an MCP server's elicitation): an object following its form.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub answer: Option<serde_json::Value>,
    /// `reject`: why (required).
    #[serde(default)]
    pub reason: Option<String>,
    /// `steer`: a message for the replanner (required).
    #[serde(default)]
    pub message: Option<String>,
    /// `edit`: the edited plan, in planexec's plan format (docs/plans.md).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub plan: Option<Plan>,
}

/// What was wrong, in words that say what to do.
#[derive(Serialize, ToSchema)]
pub struct ApiError {
    pub error: String,
}

/// `POST /runs`: the run started.
#[derive(Serialize, ToSchema)]
pub struct RunStarted {
    pub run_id: String,
    /// Where its server-sent events are: `/runs/{id}/events`.
    pub events: String,
}

/// `GET /runs`: runs of the ledger, newest first.
#[derive(Serialize, ToSchema)]
pub struct RunList {
    /// Each run's id, task, status, times, replans, steps done and tokens.
    #[schema(value_type = Vec<Object>)]
    pub runs: Vec<RunSummary>,
}

/// `GET /runs/{id}`: one run.
#[derive(Serialize, ToSchema)]
pub struct RunShown {
    pub run_id: String,
    pub task: String,
    #[schema(value_type = String, example = "awaiting_approval")]
    pub status: RunStatus,
    /// What the run waits for, if it waits: its plan (`for: plan`), an
    /// answer (`for: answer`), or the confirmation of calls (`for: step`: the
    /// first call's `step_id`, `tool` and `args`, and in `also` the other
    /// calls of the same wave, each approved on its own with `step`).
    #[schema(value_type = Option<Object>)]
    pub waiting: Option<Waiting>,
    /// Every decision made about the run, in order.
    #[schema(value_type = Vec<Object>)]
    pub decisions: Vec<Decision>,
    /// The process that holds the run, while one does.
    #[schema(value_type = Option<Object>)]
    pub lease: Option<Lease>,
    pub resumes: u32,
    /// The run's report, as `planexec run --json` prints it: plan versions,
    /// steps, usage per role, answer.
    #[schema(value_type = Object)]
    pub report: RunReport,
}

/// `POST /runs/{id}/approve`: what was approved; the run goes on in this server.
#[derive(Serialize, ToSchema)]
pub struct Approved {
    /// What the run waited for, in words.
    pub approved: String,
    pub run_id: String,
    pub resumed: bool,
}

/// `POST /runs/{id}/reject`.
#[derive(Serialize, ToSchema)]
pub struct Rejected {
    /// The run's id.
    pub rejected: String,
    pub reason: String,
}

/// `POST /runs/{id}/edit`: the edited plan is the run's new, approved version.
#[derive(Serialize, ToSchema)]
pub struct Edited {
    pub version: u32,
    pub approved: bool,
}

/// `POST /runs/{id}/steer`: the message's number in the run's inbox.
#[derive(Serialize, ToSchema)]
pub struct Steered {
    pub steer: u64,
}

/// `POST /runs/{id}/cancel`.
#[derive(Serialize, ToSchema)]
pub struct Cancelled {
    /// The run's id.
    pub cancelled: String,
}
