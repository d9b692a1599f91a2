//! A person's decision on a Restate run's plan or on one of its calls, and
//! the approver that waits for a plan's: the run's workflow waits on a durable promise, which any process
//! resolves through the workflow's `approve` / `reject` handlers (the CLI,
//! `serve`, another program), once.

use std::sync::Arc;

use async_trait::async_trait;
use planexec::policy::{Approval, Approver, PlanCheck};
use planexec::Plan;
use serde::{Deserialize, Serialize};

use crate::bridge::Bridge;

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

/// The approver of a run on Restate: with `wait`, each review of the plan
/// waits for a [`PlanDecision`]; without, plans are approved at once.
pub(crate) struct PromiseApprover {
    bridge: Bridge,
    wait: bool,
}

impl PromiseApprover {
    pub fn new(bridge: Bridge, wait: bool) -> Arc<PromiseApprover> {
        Arc::new(PromiseApprover { bridge, wait })
    }
}

#[async_trait]
impl Approver for PromiseApprover {
    async fn review(&self, plan: &Plan, check: PlanCheck<'_>) -> Approval {
        if !self.wait {
            return Approval::Approve;
        }
        match self.bridge.review(plan.clone()).await {
            Ok(PlanDecision::Approve { .. }) => Approval::Approve,
            Ok(PlanDecision::Reject { .. }) | Err(_) => Approval::Reject,
            Ok(PlanDecision::Feedback { feedback, .. }) => Approval::Feedback(feedback),
            Ok(PlanDecision::Edit { plan, .. }) => match check(&plan) {
                Ok(()) => Approval::Edit(plan),
                // The edit cannot run: the planner revises with what was wrong.
                Err(errors) => Approval::Feedback(format!("the edited plan cannot run: {errors}")),
            },
        }
    }
}
