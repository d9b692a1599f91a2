//! Picking a run up from the ledger: deciding the steps that were in flight
//! when it stopped, and why a resume may not start.

use super::{Run, Start};
use crate::plan::Step;
use crate::policy::{Approver, ResumeOptions};
use crate::report::RunStatus;
use crate::result::{now_ms, StepResult, StepStatus};
use crate::store::{StoreError, StoredRun, StoredStep};
use crate::tools::ToolRegistry;

/// A step with side effects that was running when a run stopped, and that the
/// resume could not decide about (its effect may or may not have happened).
#[derive(Debug, Clone, PartialEq)]
pub struct InflightStep {
    pub step_id: String,
    pub tool: Option<String>,
    /// The resolved arguments it was called with.
    pub args: Option<serde_json::Value>,
}

/// Why [`crate::Agent::resume`] did not continue a run. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(
        "this agent has no run ledger, so there is nothing to resume from (configure one with AgentBuilder::store)"
    )]
    NoStore,
    #[error("there is no run {run_id} in the ledger {store} (see `planexec runs list`)")]
    NotFound { run_id: String, store: String },
    #[error("run {run_id} already finished ({status}); resuming it changes nothing", status = status.as_str())]
    Finished { run_id: String, status: RunStatus },
    #[error("run {run_id} waits for {waits}: decide first with `planexec approve {run_id}`, `planexec reject {run_id} --reason …` or `planexec edit {run_id}`")]
    AwaitingApproval { run_id: String, waits: String },
    #[error("run {run_id} is being executed by {owner} (its lease is renewed every few seconds and expires in {expires_in_s} s if that process died); wait for it to finish, or cancel it with `planexec cancel {run_id}`")]
    Owned {
        run_id: String,
        owner: String,
        expires_in_s: u64,
    },
    #[error("step {step_id} is both to be run again and to be skipped; choose one")]
    Conflict { step_id: String },
    #[error("{}", inflight_message(run_id, steps))]
    InflightUndecided { run_id: String, steps: Vec<InflightStep> },
    #[error("{0}")]
    Store(StoreError),
}

fn inflight_message(run_id: &str, steps: &[InflightStep]) -> String {
    let one = steps.len() == 1;
    let mut out = format!(
        "run {run_id} stopped while {} with side effects {} running, so {} may or may not have happened:",
        if one { "a step" } else { "steps" },
        if one { "was" } else { "were" },
        if one { "its effect" } else { "their effects" },
    );
    for s in steps {
        let args = s.args.as_ref().map(|a| format!(" {a}")).unwrap_or_default();
        out.push_str(&format!(
            "\n  {} ({}{args})",
            s.step_id,
            s.tool.as_deref().unwrap_or("reasoning")
        ));
    }
    let ids: Vec<&str> = steps.iter().map(|s| s.step_id.as_str()).collect();
    out.push_str(&format!(
        "\nCheck, then resume with --rerun-inflight to run {them} again or --skip-inflight to take {them} as done (or name steps: --rerun-inflight={}).",
        ids.join(","),
        them = if one { "it" } else { "them" },
    ));
    out
}

/// What to do with each step that was in flight: run it again (`true`) or take
/// it as done. Read-only (idempotent) steps run again; the others as `options`
/// say, or as the approver decides. Decided before anything is changed.
pub(crate) async fn decide_inflight(
    stored: &StoredRun,
    tools: &ToolRegistry,
    approver: &dyn Approver,
    options: &ResumeOptions,
) -> Result<Vec<(StoredStep, bool)>, ResumeError> {
    let mut decided = Vec::new();
    let mut undecided = Vec::new();
    for s in stored.in_flight() {
        let id = &s.result.id;
        let step = stored
            .plans
            .iter()
            .rev()
            .find_map(|v| v.plan.step(id).cloned())
            .unwrap_or_else(|| Step {
                id: id.clone(),
                description: String::new(),
                tool: s.result.tool.clone(),
                agent: None,
                args: Default::default(),
                depends_on: Vec::new(),
                expected: None,
            });
        // Reads and other idempotent tools are simply run again, and so are
        // agent steps: their inner calls that finished are replayed from the ledger.
        let safe_again = step.tool.as_deref().is_none_or(|t| tools.is_idempotent(t));
        let (rerun, skip) = (options.rerun_inflight.contains(id), options.skip_inflight.contains(id));
        let choice = if safe_again {
            Some(true)
        } else if rerun && skip {
            return Err(ResumeError::Conflict { step_id: id.clone() });
        } else if rerun || skip {
            Some(rerun)
        } else {
            approver.rerun_inflight(&step, s.result.args.as_ref()).await
        };
        match choice {
            Some(rerun) => decided.push((s.clone(), rerun)),
            None => undecided.push(InflightStep {
                step_id: id.clone(),
                tool: step.tool.clone(),
                args: s.result.args.clone(),
            }),
        }
    }
    if !undecided.is_empty() {
        return Err(ResumeError::InflightUndecided {
            run_id: stored.run_id.clone(),
            steps: undecided,
        });
    }
    Ok(decided)
}

/// Record what was decided for each in-flight step: one run again is
/// interrupted, one taken as done is skipped (and counts as done).
pub(crate) async fn settle_inflight(run: &mut Run, decided: Vec<(StoredStep, bool)>) {
    for (s, rerun) in decided {
        let (status, note) = if rerun {
            (
                StepStatus::Interrupted,
                "in flight when the run stopped; run again on resume",
            )
        } else {
            (
                StepStatus::Skipped,
                "in flight when the run stopped; taken as done on resume (its output is unknown)",
            )
        };
        let result = StepResult {
            status,
            error: Some(note.to_string()),
            finished_at: Some(now_ms()),
            ..s.result.clone()
        };
        run.ctx
            .recording
            .ledger
            .step_finished(s.seq, s.plan_version, &result)
            .await;
        if result.is_inner_call() {
            // An agent step's call: replayed (as done) when the step runs again.
            run.ctx.recording.journal.load([&result]);
            continue;
        }
        if !rerun {
            run.done.insert(result.id.clone(), result.output_for_dependents());
        }
        run.records.push(result);
    }
}

/// Where a resumed run starts: its plan in force, or planning if it had none.
pub(crate) fn start_of(stored: &StoredRun) -> Start {
    match stored.plans.last() {
        None => Start::New(None),
        Some(v) => Start::Resume {
            plan: v.plan.clone(),
            version: v.version,
            approved: stored.approved_version == Some(v.version),
        },
    }
}
