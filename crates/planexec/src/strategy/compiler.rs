//! `compiler` (LLMCompiler): the planner's reply is streamed and each step
//! starts as soon as its JSON is complete and its dependencies are done; the
//! plan is not reviewed (its steps start while it is being written; each side
//! effect is still confirmed as the mode says). A streamed plan cut short
//! after some steps ran has the rest planned by the replanner. At the end a
//! joiner answers, or replies `REPLAN: <what is missing>` to revise the plan.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::Value;

use super::{dag, Drive, FirstPlan, Next};
use crate::context::RunContext;
use crate::executor;
use crate::llm::LlmError;
use crate::plan::{Plan, Step};
use crate::planner::{self, StreamedPlan};
use crate::replanner::ReplanTrigger;
use crate::run::{Exit, Run, RunError, Start};
use crate::schedule::{self, DagOutcome};
use crate::synthesizer::{self, Joined};

pub(crate) struct Compiler;

#[async_trait]
impl Drive for Compiler {
    async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit> {
        dag::drive(self, run, start).await
    }

    /// One streamed planner call; its steps run as they arrive.
    async fn first_plan(&self, run: &mut Run) -> Result<FirstPlan, Exit> {
        let (streamed, outcome) = plan_and_dispatch(&run.ctx, &run.task, &run.done).await;
        let streamed = match streamed {
            Ok(streamed) => streamed,
            Err(e) => {
                run.records.extend(outcome.results);
                return Err(match run.ctx.control.stop.is_cancelled() {
                    true => Exit::Stopped,
                    false => Exit::failed(e),
                });
            }
        };
        let nothing_ran = outcome.results.is_empty() && outcome.interrupted.is_empty();
        match streamed.plan {
            Ok(plan) => Ok(FirstPlan {
                plan: plan.into(),
                origin: "initial plan (streamed)",
                ran: Some(outcome),
            }),
            // Nothing started: plan again the ordinary way, with the errors shown.
            Err(_) if nothing_ran => super::drive::ask_planner(run).await,
            Err(problem) => {
                run.incomplete = Some(problem);
                let goal = streamed.goal.unwrap_or_else(|| run.task.clone());
                Ok(FirstPlan {
                    plan: Plan::new(goal, streamed.dispatched).into(),
                    origin: "initial plan (streamed, cut short)",
                    ran: Some(outcome),
                })
            }
        }
    }

    /// Plan what a cut-short stream left out; else the joiner answers or asks for more.
    async fn after_pass(&self, run: &mut Run, _ran: &[String]) -> Result<Next, Exit> {
        if let Some(problem) = run.incomplete.take() {
            if !run.may_replan() {
                return Err(Exit::failed(format!(
                    "the streamed plan was cut short:\n{problem}\nand the replan limit ({}) is reached",
                    run.ctx.setting.options.max_replans
                )));
            }
            let reason = format!("the streamed plan was cut short: {problem}");
            dag::revise(run, ReplanTrigger::Unreadable(&problem), reason).await?;
            return Ok(Next::Continue);
        }
        let results = run.completed(run.plan());
        // The joiner answers from what the run wrote too, as the synthesizer does.
        let files = crate::run::outputs::written_files(run);
        let may_replan = run.may_replan();
        let joined = Run::guard(
            &run.ctx.control,
            synthesizer::join(
                &run.ctx.calls,
                &run.ctx.setting,
                &run.task,
                (&results, &files),
                may_replan,
            ),
        )
        .await?;
        match joined {
            Ok(Joined::Answer(answer)) => Ok(Next::Answer(answer)),
            Ok(Joined::Replan(missing)) => {
                let reason = format!("the joiner found the results incomplete: {missing}");
                dag::revise(run, ReplanTrigger::Unanswered(&missing), reason).await?;
                Ok(Next::Continue)
            }
            Err(e) => Err(Exit::failed(format!("writing the answer failed: {e}"))),
        }
    }
}

/// One streamed planner call, each step dispatched as soon as it is parsed and
/// its dependencies are done.
async fn plan_and_dispatch(
    ctx: &RunContext,
    task: &str,
    done: &HashMap<String, Value>,
) -> (Result<StreamedPlan, RunError>, DagOutcome) {
    // The plan as streamed so far: what a dispatched step's executor sees.
    let partial = std::sync::Mutex::new(Plan::new(task, Vec::new()));
    let (tx, rx) = futures::channel::mpsc::unbounded::<Step>();
    let partial = &partial;
    let planning = async move {
        let on_step = |step: Step| {
            partial
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .steps
                .push(step.clone());
            let _ = tx.unbounded_send(step);
        };
        let planned = ctx
            .control
            .stop
            .guard(planner::plan_streaming(
                &ctx.calls,
                &ctx.setting,
                &ctx.recording,
                task,
                &on_step,
            ))
            .await;
        drop(tx); // the scheduler ends once the dispatched steps are done
        planned.unwrap_or_else(|| Err(RunError::Model(LlmError::Connection("interrupted".into()))))
    };
    let dispatch = schedule::Dispatch::parallel(ctx.setting.options.parallelism);
    let execution = schedule::run_steps(rx, done, dispatch, &ctx.control.stop, |step, deps| {
        let snapshot = partial.lock().unwrap_or_else(|e| e.into_inner()).clone();
        async move { executor::run_step(ctx, &snapshot, 1, step, deps).await }
    });
    tokio::join!(planning, execution)
}
