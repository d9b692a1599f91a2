//! The report of a run: what `--json` prints and what library callers get back.

use serde::{Deserialize, Serialize};

use crate::accounting::Usage;
use crate::plan::Plan;
use crate::result::{StepResult, StepStatus};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Succeeded,
    Failed,
    /// A person rejected the plan.
    Rejected,
    /// The planner judged the task impossible with the tools at hand.
    Infeasible,
    /// Cancelled (Ctrl-C) before it finished.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Rejected => "rejected",
            RunStatus::Infeasible => "infeasible",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// A clarifying question and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clarification {
    pub question: String,
    pub answer: String,
}

/// One version of the plan and why it came to be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanVersion {
    pub version: u32,
    pub reason: String,
    pub plan: Plan,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub run_id: String,
    pub task: String,
    /// Questions the planner asked and the user's answers (added to the task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clarifications: Vec<Clarification>,
    pub status: RunStatus,
    /// The plan in force at the end.
    pub plan: Option<Plan>,
    /// Every plan version, first to last.
    pub plans: Vec<PlanVersion>,
    /// Every step that ran (in the order they finished), then those that did not.
    pub steps: Vec<StepResult>,
    pub replans: u32,
    pub answer: Option<String>,
    /// Why the run did not succeed.
    pub error: Option<String>,
    pub usage: Usage,
    pub elapsed_ms: u64,
}

impl RunReport {
    pub fn succeeded(&self) -> bool {
        self.status == RunStatus::Succeeded
    }

    /// The record of a step that succeeded, by id.
    pub fn step(&self, id: &str) -> Option<&StepResult> {
        self.steps
            .iter()
            .find(|s| s.id == id && s.status == StepStatus::Succeeded)
            .or_else(|| self.steps.iter().find(|s| s.id == id))
    }
}
