//! A person's decision on a Restate run's plan or on one of its calls: the
//! run's workflow waits on a durable promise (a plan) or an awakeable (a
//! call), which any process resolves through the workflow's `decide` and
//! `decide_step` handlers (the CLI, `serve`, another program), once.

use planexec::Plan;
use serde::{Deserialize, Serialize};

/// What a person decided about a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PlanDecision {
    /// Run the plan.
    Approve { by: String },
    /// Do not run it: the run ends `rejected`.
    Reject { by: String, reason: String },
    /// Run this plan instead (it is checked first).
    Edit { by: String, plan: Plan },
    /// Revise the plan with this feedback, then ask again.
    Feedback { by: String, feedback: String },
}

/// What a person decided about one call a run waits to make (ask mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepDecision {
    /// The step whose call is decided.
    pub step: String,
    pub approve: bool,
    pub by: String,
    /// Why, when it is rejected.
    #[serde(default)]
    pub reason: String,
}

/// The key of the workflow state that says what a run waits for (the
/// core's `Waiting`, with what takes the decision), read by `status`.
pub(crate) const WAITING: &str = "waiting";

/// The key of the workflow state that lists the steps finished so far (id,
/// status, tool, worker, error), for `status`: how a run is followed.
pub(crate) const FINISHED: &str = "finished";
