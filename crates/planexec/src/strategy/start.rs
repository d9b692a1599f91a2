//! How a plan-based run begins: the plan in force (resumed, given, or the
//! strategy's first plan), an infeasible plan ends the run, then a person (or
//! the approver standing in for one) reviews it: approve, reject, give
//! feedback for a revision, or edit it.

use super::Drive;
use crate::context::Setting;
use crate::events::Event;
use crate::plan::{self, Plan};
use crate::policy::Approval;
use crate::replanner::ReplanTrigger;
use crate::report::RunStatus;
use crate::run::{Exit, Run, RunError, Start};
use crate::schedule::DagOutcome;

/// Put the run's first plan in force and have it approved. Returns what ran
/// while the plan was being made (a streamed plan's steps), if anything.
pub(crate) async fn begin(strategy: &dyn Drive, run: &mut Run, start: Start) -> Result<Option<DagOutcome>, Exit> {
    let (ran, approved) = match start {
        Start::Resume {
            plan,
            version,
            approved,
        } => {
            run.plan = Some(plan);
            run.version = version;
            (None, approved)
        }
        Start::New(Some(given)) => {
            if let Err(e) = check_runnable(&run.ctx.setting, &given) {
                run.plan = Some(given);
                return Err(Exit::failed(e));
            }
            run.adopt(given, "given plan".to_string()).await;
            (None, false)
        }
        Start::New(None) => match reused_plan(run).await {
            Some(reused) => {
                let from = &reused.template;
                let reason = crate::templates::reason(from);
                run.ctx.recording.events.emit(Event::PlanReused {
                    template: from.id.clone(),
                    from_run: from.run_id.clone(),
                });
                run.reused = Some(reused.template);
                run.adopt(reused.plan, reason).await;
                (None, false)
            }
            None => {
                let first = strategy.first_plan(run).await?;
                run.adopt(first.plan, first.origin.to_string()).await;
                (first.ran, false)
            }
        },
    };
    if let Some(reason) = run.plan().infeasible.clone() {
        return Err(Exit::infeasible(format!(
            "the planner found the task infeasible: {reason}"
        )));
    }
    match (approved, &ran) {
        (true, _) => {}
        // Its steps started while it streamed in: nothing left to review.
        // Each call's side effects are still confirmed as the mode says.
        (false, Some(_)) => {
            run.ctx.recording.ledger.approved(run.version).await;
            run.ctx
                .recording
                .events
                .emit(Event::PlanApproved { version: run.version });
        }
        (false, None) => review(run).await?,
    }
    Ok(ran)
}

/// The stored plan of an earlier run that fits this run's task, if the run
/// has a ledger and its `plan_reuse` allows one ([`crate::templates`]).
async fn reused_plan(run: &Run) -> Option<crate::templates::Reused> {
    let store = run.ctx.recording.ledger.store()?;
    let setting = &run.ctx.setting;
    crate::templates::find(store.as_ref(), &run.task, &setting.tools, &setting.options).await
}

/// A plan from outside the planner (a file, an edit) must be valid and must not ask questions.
pub(crate) fn check_runnable(setting: &Setting, plan: &Plan) -> Result<(), RunError> {
    plan::validate(plan, &setting.tools, &setting.options.plan_limits()).map_err(RunError::InvalidPlan)?;
    if !plan.questions.is_empty() {
        return Err(RunError::InvalidPlan(plan::PlanErrors(vec![
            plan::PlanError::QuestionsNotAllowed,
        ])));
    }
    Ok(())
}

/// Review the plan in force until it is approved (or the run ends).
async fn review(run: &mut Run) -> Result<(), Exit> {
    let limits = run.ctx.setting.options.plan_limits();
    let tools = run.ctx.setting.tools.clone();
    let check = move |p: &Plan| plan::validate(p, &tools, &limits);
    loop {
        if run.ctx.control.approver.decides_later() {
            let version = run.version;
            return Err(Exit::AwaitingApproval(Box::new(crate::store::Waiting::Plan {
                version,
            })));
        }
        let approval = Run::guard(&run.ctx.control, run.ctx.control.approver.review(run.plan(), &check)).await?;
        match approval {
            Approval::Approve => {
                run.ctx.recording.ledger.approved(run.version).await;
                run.ctx
                    .recording
                    .events
                    .emit(Event::PlanApproved { version: run.version });
                return Ok(());
            }
            Approval::Reject => {
                run.ctx
                    .recording
                    .events
                    .emit(Event::PlanRejected { version: run.version });
                return Err(Exit::Ended(RunStatus::Rejected, "the plan was rejected".to_string()));
            }
            Approval::Feedback(feedback) => {
                let trigger = ReplanTrigger::Feedback(&feedback);
                let revised = super::drive::ask_replanner(run, run.plan(), &[], trigger)
                    .await?
                    .map_err(Exit::failed)?;
                run.adopt(revised, format!("user feedback: {feedback}")).await;
            }
            Approval::Edit(edited) => {
                if let Err(e) = check_runnable(&run.ctx.setting, &edited) {
                    run.plan = Some(edited);
                    return Err(Exit::failed(e));
                }
                run.adopt(edited, "edited by the user".to_string()).await;
            }
        }
        if let Some(reason) = run.plan().infeasible.clone() {
            return Err(Exit::infeasible(format!("the task is infeasible: {reason}")));
        }
    }
}
