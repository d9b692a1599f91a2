//! The report of a run: what `--json` prints and what library callers get back.

use serde::{Deserialize, Serialize};

use crate::accounting::Usage;
use std::collections::HashSet;

use crate::plan::{Plan, Step};
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
    /// In progress, or the process died while it was (only seen in a ledger).
    Running,
    /// Stopped by its token, cost or time budget; resumable with a larger one.
    BudgetExhausted,
    /// Paused until a person approves the plan or a step (see [`crate::decisions`]).
    AwaitingApproval,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Rejected => "rejected",
            RunStatus::Infeasible => "infeasible",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Running => "running",
            RunStatus::BudgetExhausted => "budget_exhausted",
            RunStatus::AwaitingApproval => "awaiting_approval",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        [
            RunStatus::Succeeded,
            RunStatus::Failed,
            RunStatus::Rejected,
            RunStatus::Infeasible,
            RunStatus::Interrupted,
            RunStatus::Running,
            RunStatus::BudgetExhausted,
            RunStatus::AwaitingApproval,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }

    /// Whether `planexec resume` can continue a run in this state.
    pub fn resumable(self) -> bool {
        matches!(
            self,
            RunStatus::Failed
                | RunStatus::Interrupted
                | RunStatus::Running
                | RunStatus::BudgetExhausted
                | RunStatus::AwaitingApproval
        )
    }
}

/// What a run in [`RunStatus::AwaitingApproval`] waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "for", rename_all = "snake_case")]
pub enum Waiting {
    /// Approval of this plan version.
    Plan { version: u32 },
    /// Confirmation of a call with side effects, with its resolved arguments;
    /// with `also`, the other calls of the same pass that wait for theirs.
    /// Each is decided on its own, in any order; the run goes on when it is
    /// resumed, running the approved calls while the others still wait.
    Step {
        plan_version: u32,
        step_id: String,
        tool: String,
        args: serde_json::Value,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<WaitingCall>,
    },
    /// A person's answer to the question a tool asked while step `step_id`
    /// ran (an MCP server's elicitation): an object following `schema`.
    Answer {
        plan_version: u32,
        step_id: String,
        question: String,
        schema: serde_json::Value,
    },
}

/// A call with side effects that waits for its confirmation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitingCall {
    pub step_id: String,
    pub tool: String,
    pub args: serde_json::Value,
}

impl Waiting {
    /// One line for people: what a decision would be about.
    pub fn describe(&self) -> String {
        match self {
            Waiting::Plan { version } => format!("approval of plan v{version}"),
            Waiting::Step { .. } => {
                let calls: Vec<String> = self
                    .calls()
                    .iter()
                    .map(|c| format!("step {}: {} {}", c.step_id, c.tool, c.args))
                    .collect();
                format!("confirmation of {}", calls.join("; "))
            }
            Waiting::Answer { step_id, question, .. } => {
                format!("an answer to the question of step {step_id}: {question}")
            }
        }
    }

    /// The calls waiting for confirmation (none unless [`Waiting::Step`]), first to last.
    pub fn calls(&self) -> Vec<WaitingCall> {
        match self {
            Waiting::Step {
                step_id,
                tool,
                args,
                also,
                ..
            } => std::iter::once(WaitingCall {
                step_id: step_id.clone(),
                tool: tool.clone(),
                args: args.clone(),
            })
            .chain(also.iter().cloned())
            .collect(),
            _ => Vec::new(),
        }
    }

    /// The confirmations of `plan_version` still waited for: `None` when there is none.
    pub fn for_calls(plan_version: u32, calls: Vec<WaitingCall>) -> Option<Waiting> {
        let mut calls = calls.into_iter();
        let first = calls.next()?;
        Some(Waiting::Step {
            plan_version,
            step_id: first.step_id,
            tool: first.tool,
            args: first.args,
            also: calls.collect(),
        })
    }

    /// The step a pause is about (none for a plan's approval).
    pub fn step_id(&self) -> Option<&str> {
        match self {
            Waiting::Plan { .. } => None,
            Waiting::Step { step_id, .. } | Waiting::Answer { step_id, .. } => Some(step_id),
        }
    }

    /// Add the confirmation of another call of the same pass (the same call
    /// is not added twice; an agent step's two calls are two).
    pub fn with_call(self, call: WaitingCall) -> Waiting {
        match self {
            Waiting::Step { plan_version, .. } => {
                let mut calls = self.calls();
                if !calls.iter().any(|c| c.step_id == call.step_id && c.args == call.args) {
                    calls.push(call);
                }
                Waiting::for_calls(plan_version, calls).unwrap_or(self)
            }
            other => other,
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
    /// What the runtime changed in the plan the model wrote, in order: calls
    /// written twice merged, and the small-model help's mends and worked plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mends: Vec<crate::help::Mend>,
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
    /// Why the run handed the rest of its goal to a ReAct loop (`fallback = "react"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_back: Option<String>,
    pub answer: Option<String>,
    /// Why the run did not succeed.
    pub error: Option<String>,
    pub usage: Usage,
    pub elapsed_ms: u64,
    /// The limits the run had (spend is in `usage` and `elapsed_ms`).
    #[serde(default, skip_serializing_if = "crate::budget::Budget::is_unlimited")]
    pub budget: crate::budget::Budget,
    /// What the run waits for, when it is [`RunStatus::AwaitingApproval`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
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

/// How a plan version made by falling back to a ReAct loop gives its reason.
pub(crate) const FALLBACK_REASON_PREFIX: &str = "fell back to a ReAct loop: ";

/// Why the run fell back to a ReAct loop, if one of its plan versions did.
pub fn fallback_reason(plans: &[PlanVersion]) -> Option<String> {
    let prefix = FALLBACK_REASON_PREFIX;
    plans
        .iter()
        .find_map(|v| v.reason.strip_prefix(prefix).map(str::to_string))
}

/// Add a record for every step that never ran: pending in the final plan,
/// superseded in earlier versions. `steps` holds the executions so far.
pub(crate) fn add_unrun_steps(steps: &mut Vec<StepResult>, plan: Option<&Plan>, versions: &[PlanVersion]) {
    let mut listed: HashSet<String> = steps.iter().map(|s| s.id.clone()).collect();
    let final_ids: HashSet<&str> = plan
        .iter()
        .flat_map(|p| p.steps.iter().map(|s| s.id.as_str()))
        .collect();
    let mut not_run = |s: &Step, status: StepStatus| {
        if listed.insert(s.id.clone()) {
            steps.push(StepResult::not_run(s, status));
        }
    };
    if let Some(p) = plan {
        p.steps.iter().for_each(|s| not_run(s, StepStatus::Pending));
    }
    for version in versions {
        for s in &version.plan.steps {
            if !final_ids.contains(s.id.as_str()) {
                not_run(s, StepStatus::Superseded);
            }
        }
    }
}
