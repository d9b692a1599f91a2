//! `replan-each-step`: one step at a time; after each, the replanner keeps
//! the rest (no new version), revises it (a new version, counted against the
//! bound) or finishes early (`"steps": []`). Once the bound is reached it is
//! no longer consulted and the rest runs as planned.

use async_trait::async_trait;

use super::{dag, Drive, Next};
use crate::plan::{Plan, Step};
use crate::replanner::ReplanTrigger;
use crate::run::{Exit, Run, Start};

pub(crate) struct ReplanEachStep;

#[async_trait]
impl Drive for ReplanEachStep {
    async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit> {
        dag::drive(self, run, start).await
    }

    async fn after_pass(&self, run: &mut Run, ran: &[String]) -> Result<Next, Exit> {
        let remaining = run.plan().steps.iter().any(|s| !run.done.contains_key(&s.id));
        let Some(just_done) = ran.first().filter(|_| remaining) else {
            return super::drive::synthesize(run).await.map(Next::Answer);
        };
        if run.may_replan() {
            consult(run, just_done).await?;
        }
        Ok(Next::Continue)
    }
}

/// Ask the replanner what remains after step `just_done`: the same steps
/// (nothing changes), revised ones, or none (the task is done).
async fn consult(run: &mut Run, just_done: &str) -> Result<(), Exit> {
    let plan = run.plan().clone();
    let step = plan.step(just_done).cloned().expect("a step that ran is in its plan");
    let completed = run.completed(&plan);
    let trigger = ReplanTrigger::StepDone { step: &step };
    let revised = super::drive::ask_replanner(run, &plan, &completed, trigger)
        .await?
        .map_err(|e| Exit::failed(format!("replanning after step {} failed: {e}", step.id)))?;
    let still_to_do = |p: &Plan| -> Vec<Step> {
        p.steps
            .iter()
            .filter(|s| !run.done.contains_key(&s.id))
            .cloned()
            .collect()
    };
    let left = still_to_do(&revised.plan);
    if left == still_to_do(&plan) {
        return Ok(());
    }
    let reason = match left.is_empty() {
        true => format!("after step {}, the replanner found the task done", step.id),
        false => format!("revised after step {}", step.id),
    };
    run.adopt_revision(revised, reason).await;
    match run.plan().infeasible.clone() {
        Some(reason) => Err(Exit::infeasible(format!(
            "the replanner found the task infeasible: {reason}"
        ))),
        None => Ok(()),
    }
}
