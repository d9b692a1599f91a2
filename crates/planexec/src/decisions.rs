//! Runs that wait for people: what a paused run waits for ([`Waiting`]), the
//! decisions people record about a run ([`Decision`]), and which process owns
//! a run while it executes ([`crate::store::Lease`]). The records are the
//! ledger's ([`crate::store`]); this module makes and reads decisions.
//!
//! A decision is written to the ledger by whoever makes it (the CLI in another
//! process, the HTTP API, a program); the process executing the run reads new
//! ones at its heartbeat, and a resumed run reads them when it starts. The
//! functions here only record: nothing in this module runs a run, so they need
//! a store and no models or tools (an edit is checked by the caller's
//! [`crate::policy::PlanCheck`]).

use serde_json::Value;

use crate::plan::Plan;
use crate::policy::PlanCheck;
use crate::report::{PlanVersion, RunStatus};
use crate::result::now_ms;
use crate::store::{Action, Decision, RunEnd, RunStore, StoreError, StoredRun, Waiting, WaitingCall};

/// Steering messages of `decisions` that no plan revision has read yet: `(seq, message)`.
pub fn pending_steers(decisions: &[Decision]) -> Vec<(u64, String)> {
    let applied: Vec<u64> = decisions
        .iter()
        .filter_map(|d| match d.action {
            Action::SteerApplied { steer, .. } => Some(steer),
            _ => None,
        })
        .collect();
    decisions
        .iter()
        .filter_map(|d| match &d.action {
            Action::Steer { message } if !applied.contains(&d.seq) => Some((d.seq, message.clone())),
            _ => None,
        })
        .collect()
}

/// A step call a person confirmed while the run waited: `(step id, arguments)`.
pub fn approved_calls(decisions: &[Decision]) -> Vec<(String, Value)> {
    call_approvals(decisions)
        .map(|(_, _, step, args)| (step.to_string(), args.clone()))
        .collect()
}

/// Every approval of a step's call: the decision, its plan version, the step and the arguments.
fn call_approvals(decisions: &[Decision]) -> impl Iterator<Item = (&Decision, u32, &str, &Value)> {
    decisions.iter().filter_map(|d| match &d.action {
        Action::Approve {
            version,
            step: Some(step),
            args: Some(args),
        } => Some((d, *version, step.as_str(), args)),
        _ => None,
    })
}

/// The calls approved while the run waited on calls (`(step id,
/// arguments)`) that it has not acted on since: of the plan version in
/// force, for steps still in it, with no result of the step recorded after
/// the decision. What a resumed run goes on with while other calls still
/// wait; empty when it waits for anything else.
pub fn approved_calls_to_run(run: &StoredRun) -> Vec<(String, Value)> {
    let Some(Waiting::Step { plan_version, .. }) = &run.waiting else {
        return Vec::new();
    };
    let Some(current) = run.plans.last().filter(|v| v.version == *plan_version) else {
        return Vec::new();
    };
    let settled_after = |step: &str, at: u64| {
        run.steps
            .iter()
            .any(|s| s.result.id == step && s.result.finished_at.is_some_and(|f| f >= at))
    };
    call_approvals(&run.decisions)
        .filter(|(d, version, step, _)| {
            version == plan_version && current.plan.steps.iter().any(|s| s.id == *step) && !settled_after(step, d.at)
        })
        .map(|(_, _, step, args)| (step.to_string(), args.clone()))
        .collect()
}

/// What a run that cannot be resumed yet waits for: a decision nobody has
/// made (it waits, and no approved call is left for a resume to run).
/// `None` when a resume can go on.
pub fn undecided(run: &StoredRun) -> Option<&Waiting> {
    let waits = run
        .waiting
        .as_ref()
        .filter(|_| run.status == RunStatus::AwaitingApproval)?;
    approved_calls_to_run(run).is_empty().then_some(waits)
}

/// Answers people gave to tools' questions while the run waited: `(step id, question, answer)`.
pub fn given_answers(decisions: &[Decision]) -> Vec<(String, String, Value)> {
    decisions
        .iter()
        .filter_map(|d| match &d.action {
            Action::Answer {
                step,
                question,
                answer: Some(answer),
            } => Some((step.clone(), question.clone(), answer.clone())),
            _ => None,
        })
        .collect()
}

/// Answer the question the run waits for (a tool's, asked while a step
/// ran) with `answer`, an object following its schema. The run stays
/// paused until it is resumed; its step then runs again and gets it.
pub async fn answer(store: &dyn RunStore, run_id: &str, answer: Value, by: &str) -> Result<Waiting, DecisionError> {
    let (_, waits) = waiting(store, run_id, "answer").await?;
    let Waiting::Answer { step_id, question, .. } = &waits else {
        return Err(DecisionError::NotAQuestion {
            run_id: run_id.to_string(),
            waits: waits.describe(),
        });
    };
    let action = Action::Answer {
        step: step_id.clone(),
        question: question.clone(),
        answer: Some(answer),
    };
    store.add_decision(run_id, &Decision::new(by, action)).await?;
    store.set_waiting(run_id, None).await?;
    Ok(waits)
}

/// Why a decision was not recorded. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    #[error("this agent has no run ledger, so there are no paused runs to decide about (configure one with AgentBuilder::store)")]
    NoStore,
    #[error("there is no run {run_id} in the ledger {store} (see `planexec runs list`)")]
    NotFound { run_id: String, store: String },
    #[error("run {run_id} is {status}, not waiting for approval: there is nothing to {verb}", status = status.as_str())]
    NotWaiting {
        run_id: String,
        status: RunStatus,
        verb: &'static str,
    },
    #[error("run {run_id} waits for {waits}, not for step {step}")]
    OtherStep {
        run_id: String,
        waits: String,
        step: String,
    },
    #[error("run {run_id} already finished ({status}); {what}", status = status.as_str())]
    Finished {
        run_id: String,
        status: RunStatus,
        what: &'static str,
    },
    #[error("run {run_id} waits for {waits}, not for an answer: approve or reject it instead")]
    NotAQuestion { run_id: String, waits: String },
    #[error("run {run_id} waits for {waits}: give the answer (planexec approve RUN --answer JSON, or `answer` in the API's approve)")]
    NeedsAnswer { run_id: String, waits: String },
    #[error("the edited plan is not valid:\n{0}")]
    InvalidPlan(crate::plan::PlanErrors),
    #[error("{0}")]
    Store(#[from] StoreError),
}

async fn load(store: &dyn RunStore, run_id: &str) -> Result<StoredRun, DecisionError> {
    store.load_run(run_id).await?.ok_or_else(|| DecisionError::NotFound {
        run_id: run_id.to_string(),
        store: store.describe(),
    })
}

/// The run and what it waits for; an error when it waits for nothing.
async fn waiting(
    store: &dyn RunStore,
    run_id: &str,
    verb: &'static str,
) -> Result<(StoredRun, Waiting), DecisionError> {
    let run = load(store, run_id).await?;
    match (&run.status, run.waiting.clone()) {
        (RunStatus::AwaitingApproval, Some(w)) => Ok((run, w)),
        _ => Err(DecisionError::NotWaiting {
            run_id: run_id.to_string(),
            status: run.status,
            verb,
        }),
    }
}

/// Approve what the run waits for: the plan, or the calls waiting for
/// confirmation (with `step`, that step's call only: the others go on
/// waiting, each decided on its own, in any order). The run stays paused
/// until it is resumed; a resumed run runs the approved calls and asks again
/// for the ones still waiting. Returns what was approved.
pub async fn approve(
    store: &dyn RunStore,
    run_id: &str,
    step: Option<&str>,
    by: &str,
) -> Result<Waiting, DecisionError> {
    let (_, waits) = waiting(store, run_id, "approve").await?;
    match &waits {
        Waiting::Plan { version } if step.is_none() => {
            store.approve_plan(run_id, *version).await?;
            let action = Action::Approve {
                version: *version,
                step: None,
                args: None,
            };
            store.add_decision(run_id, &Decision::new(by, action)).await?;
            store.set_waiting(run_id, None).await?;
            Ok(waits)
        }
        Waiting::Step { plan_version, .. } => approve_calls(store, run_id, &waits, *plan_version, step, by).await,
        Waiting::Answer { .. } => Err(DecisionError::NeedsAnswer {
            run_id: run_id.to_string(),
            waits: waits.describe(),
        }),
        Waiting::Plan { .. } => Err(DecisionError::OtherStep {
            run_id: run_id.to_string(),
            waits: waits.describe(),
            step: step.unwrap_or_default().to_string(),
        }),
    }
}

/// Approve `step`'s waiting call, or every waiting call; the rest stay waiting.
async fn approve_calls(
    store: &dyn RunStore,
    run_id: &str,
    waits: &Waiting,
    plan_version: u32,
    step: Option<&str>,
    by: &str,
) -> Result<Waiting, DecisionError> {
    let (chosen, rest): (Vec<WaitingCall>, Vec<WaitingCall>) = waits
        .calls()
        .into_iter()
        .partition(|c| step.is_none_or(|s| s == c.step_id));
    if chosen.is_empty() {
        return Err(DecisionError::OtherStep {
            run_id: run_id.to_string(),
            waits: waits.describe(),
            step: step.unwrap_or_default().to_string(),
        });
    }
    for call in &chosen {
        let action = Action::Approve {
            version: plan_version,
            step: Some(call.step_id.clone()),
            args: Some(call.args.clone()),
        };
        store.add_decision(run_id, &Decision::new(by, action)).await?;
    }
    store
        .set_waiting(run_id, Waiting::for_calls(plan_version, rest).as_ref())
        .await?;
    Ok(Waiting::for_calls(plan_version, chosen).unwrap_or_else(|| waits.clone()))
}

/// Reject what the run waits for: it ends `rejected`, with `reason` in its report.
pub async fn reject(store: &dyn RunStore, run_id: &str, reason: &str, by: &str) -> Result<(), DecisionError> {
    let (run, waits) = waiting(store, run_id, "reject").await?;
    let reason = reason.trim();
    let reason = if reason.is_empty() { "no reason given" } else { reason };
    let action = Action::Reject {
        reason: reason.to_string(),
    };
    store.add_decision(run_id, &Decision::new(by, action)).await?;
    store.set_waiting(run_id, None).await?;
    let end = RunEnd {
        status: RunStatus::Rejected,
        answer: None,
        error: Some(format!("{} was rejected by {by}: {reason}", waits.describe())),
        finished_at: now_ms(),
        elapsed_ms: run.elapsed_ms,
    };
    store.finish_run(run_id, &end).await?;
    // A plan reused from a template and rejected: that template is not reused again.
    if let Some(first) = run.plans.first() {
        let why = format!("run {run_id} was rejected by {by}: {reason}");
        crate::templates::mark_reused(store, &first.reason, &why).await;
    }
    Ok(())
}

/// Replace the pending plan with `plan` (checked by `check`), recorded as the
/// next version and approved: a person wrote it.
pub async fn edit(
    store: &dyn RunStore,
    run_id: &str,
    plan: Plan,
    check: PlanCheck<'_>,
    by: &str,
) -> Result<u32, DecisionError> {
    let (run, _) = waiting(store, run_id, "edit").await?;
    check(&plan).map_err(DecisionError::InvalidPlan)?;
    if !plan.questions.is_empty() {
        let errors = crate::plan::PlanErrors(vec![crate::plan::PlanError::QuestionsNotAllowed]);
        return Err(DecisionError::InvalidPlan(errors));
    }
    let version = run.plans.iter().map(|p| p.version).max().unwrap_or(0) + 1;
    let recorded = PlanVersion {
        version,
        reason: format!("edited by {by}"),
        plan,
        mends: Vec::new(),
    };
    store.add_plan(run_id, &recorded, run.replans).await?;
    store.approve_plan(run_id, version).await?;
    store
        .add_decision(run_id, &Decision::new(by, Action::Edit { version }))
        .await?;
    store.set_waiting(run_id, None).await?;
    Ok(version)
}

/// Leave a message for the run's replanner: a running run reads it at its next
/// heartbeat and revises its plan after the running wave; a paused one when it
/// is resumed.
pub async fn steer(store: &dyn RunStore, run_id: &str, message: &str, by: &str) -> Result<u64, DecisionError> {
    let run = load(store, run_id).await?;
    if !run.status.resumable() {
        return Err(DecisionError::Finished {
            run_id: run_id.to_string(),
            status: run.status,
            what: "there is nothing left to steer",
        });
    }
    let action = Action::Steer {
        message: message.trim().to_string(),
    };
    Ok(store.add_decision(run_id, &Decision::new(by, action)).await?)
}

/// Stop a run: one that is executing stops at its next heartbeat (and ends
/// `interrupted`); one that waits ends `interrupted` now. Either can be resumed.
pub async fn cancel(store: &dyn RunStore, run_id: &str, by: &str) -> Result<(), DecisionError> {
    let run = load(store, run_id).await?;
    if !run.status.resumable() || run.status == RunStatus::Interrupted {
        return Err(DecisionError::Finished {
            run_id: run_id.to_string(),
            status: run.status,
            what: "there is nothing to cancel",
        });
    }
    store.add_decision(run_id, &Decision::new(by, Action::Cancel)).await?;
    if run.status == RunStatus::AwaitingApproval {
        let end = RunEnd {
            status: RunStatus::Interrupted,
            answer: None,
            error: Some(format!("cancelled by {by} while it waited for approval")),
            finished_at: now_ms(),
            elapsed_ms: run.elapsed_ms,
        };
        store.finish_run(run_id, &end).await?;
    }
    Ok(())
}
