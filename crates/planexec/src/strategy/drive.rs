//! What a strategy is to the run loop: the [`Drive`] trait, what a pass leads
//! to ([`Next`]) and a run's first plan ([`FirstPlan`]), with plan-execute's
//! way of making both (the planner's plan, the synthesizer's answer), which
//! the hooks fall back to.

use async_trait::async_trait;

use serde_json::Value;

use crate::plan::{Plan, Step};
use crate::planner::{self, Planned};
use crate::replanner::{self, ReplanTrigger};
use crate::run::RunError;
use crate::run::{Exit, Run, Start};
use crate::schedule::DagOutcome;
use crate::synthesizer;

/// What a pass over the plan leads to.
pub(crate) enum Next {
    /// Another pass over the (possibly revised) plan.
    Continue,
    /// The run is answered.
    Answer(String),
}

/// A run's first plan, from [`Drive::first_plan`].
pub(crate) struct FirstPlan {
    pub plan: crate::planner::Planned,
    /// Why it is the plan (the version's reason).
    pub origin: &'static str,
    /// Steps that already ran while it was being made (a streamed plan).
    pub ran: Option<DagOutcome>,
}

/// One strategy: how a run goes from its start to its answer. The hooks are
/// the points where the plan-based strategies differ; their defaults are
/// plan-execute's.
#[async_trait]
pub(crate) trait Drive: Send + Sync {
    /// Take the run from its start to its answer or its exit.
    async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit>;

    /// The first plan of a new run that was given none.
    async fn first_plan(&self, run: &mut Run) -> Result<FirstPlan, Exit> {
        ask_planner(run).await
    }

    /// After a pass in which no step failed (`ran`: the steps that ran, in the
    /// order they finished): another pass, or the answer.
    async fn after_pass(&self, run: &mut Run, _ran: &[String]) -> Result<Next, Exit> {
        synthesize(run).await.map(Next::Answer)
    }
}

/// The default first plan: ask the planner, putting its clarifying questions
/// to the approver while it can answer them.
pub(crate) async fn ask_planner(run: &mut Run) -> Result<FirstPlan, Exit> {
    let planned = Run::guard(
        &run.ctx.control,
        planner::plan_with_questions(&run.ctx, &run.task, &mut run.clarifications),
    )
    .await?;
    match planned {
        Ok(plan) => Ok(FirstPlan {
            plan,
            origin: "initial plan",
            ran: None,
        }),
        Err(e) => Err(Exit::failed(e)),
    }
}

/// The answer, from the task, the completed steps' results and the files
/// the task names that the run wrote.
pub(crate) async fn synthesize(run: &mut Run) -> Result<String, Exit> {
    let results = run.completed(run.plan());
    let files = crate::run::outputs::written_files(run);
    Run::guard(
        &run.ctx.control,
        synthesizer::synthesize(&run.ctx.calls, &run.ctx.setting, &run.task, (&results, &files)),
    )
    .await?
    .map_err(|e| Exit::failed(format!("writing the answer failed: {e}")))
}

/// Ask the replanner to revise `plan` (whose `completed` steps ran) for
/// `trigger`, unless the run is stopped first.
pub(crate) async fn ask_replanner(
    run: &Run,
    plan: &Plan,
    completed: &[(Step, Value)],
    trigger: ReplanTrigger<'_>,
) -> Result<Result<Planned, RunError>, Exit> {
    let ctx = &run.ctx;
    let revision = replanner::replan(
        &ctx.calls,
        &ctx.setting,
        &ctx.recording,
        &run.task,
        (plan, &run.plans),
        completed,
        trigger,
    );
    Run::guard(&ctx.control, revision).await
}
