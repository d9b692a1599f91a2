//! `planexec serve --engine restate`: the API and the viewer start Restate
//! runs and decide on them through Restate's ingress; the workers make the
//! runs and record them in the ledger this server reads (give both the same
//! `--db`). What a run waits for comes from its workflow.

use planexec::store::Waiting;
use planexec::RunStatus;
use planexec_restate::decision::{PlanDecision, StepDecision};
use planexec_restate::ingress::Ingress;
use planexec_restate::workflow::RunRequest;

use super::bodies::{Decide, RunShown, RunStarted};

/// Submit a run; its viewer page follows it by polling (its events are the workers').
pub async fn start(ingress: &Ingress, task: String, later: bool) -> Result<RunStarted, String> {
    let request = RunRequest {
        task,
        plan: None,
        approve: later,
    };
    let run_id = ingress.start(&request).await?;
    Ok(RunStarted {
        events: format!("/runs/{run_id}/events"),
        run_id,
    })
}

/// What the run's workflow waits for now, if anything.
async fn waiting(ingress: &Ingress, run_id: &str) -> Option<Waiting> {
    let status = ingress.status(run_id).await.ok()?;
    serde_json::from_value(status["waiting"].clone()).ok()
}

/// `shown` (from the ledger) with what its workflow waits for.
pub async fn with_waiting(ingress: &Ingress, mut shown: RunShown) -> RunShown {
    if shown.status == RunStatus::Running {
        if let Some(waiting) = waiting(ingress, &shown.run_id).await {
            shown.status = RunStatus::AwaitingApproval;
            shown.waiting = Some(waiting);
        }
    }
    shown
}

/// The steps a decision is about: the one named, else every call waiting.
fn steps_of(waiting: &Waiting, step: Option<&str>) -> Vec<String> {
    match step {
        Some(step) => vec![step.to_string()],
        None => waiting.calls().into_iter().map(|c| c.step_id).collect(),
    }
}

/// Approve (`approve`) or reject what run `run_id` waits for: its plan, or
/// its calls (the one `d.step` names, else all). What it waited for, in words.
pub async fn decide(ingress: &Ingress, run_id: &str, d: &Decide, by: String, approve: bool) -> Result<String, String> {
    let waiting = waiting(ingress, run_id)
        .await
        .ok_or_else(|| format!("run {run_id} does not wait for a decision"))?;
    let reason = d.reason.clone().unwrap_or_default();
    if let Waiting::Plan { .. } = waiting {
        let decision = match approve {
            true => PlanDecision::Approve { by },
            false => PlanDecision::Reject { by, reason },
        };
        ingress.decide(run_id, &decision).await?;
        return Ok(waiting.describe());
    }
    for step in steps_of(&waiting, d.step.as_deref()) {
        let decision = StepDecision {
            step,
            approve,
            by: by.clone(),
            reason: reason.clone(),
        };
        ingress.decide_step(run_id, &decision).await?;
    }
    Ok(waiting.describe())
}
