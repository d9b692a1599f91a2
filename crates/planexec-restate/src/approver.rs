//! The approver of a run on Restate: a plan review waits for a person's
//! decision, which the workflow takes from a durable promise.

use std::sync::Arc;

use async_trait::async_trait;
use planexec::policy::{Approval, Approver, PlanCheck};
use planexec::Plan;

use crate::bridge::Bridge;
use crate::decision::PlanDecision;

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
