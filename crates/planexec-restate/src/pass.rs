//! One pass over a plan on Restate: each ready step is a call to the
//! `PlanexecSteps` service, which Restate sends to a worker and journals;
//! the calls of a wave are in flight together. Which step starts next is
//! decided by planexec's own scheduler state ([`Frontier`]) from the order in
//! which calls finished, and that order comes from Restate
//! ([`DurableFuturesUnordered`]), so a replay starts the same steps in the
//! same order.

use std::collections::HashMap;

use planexec::engine::Pass;
use planexec::schedule::{self, DagOutcome, Frontier};
use planexec::{StepResult, StepStatus};
use restate_sdk::prelude::*;

use crate::{StepRequest, StepResponse, StepsClient};

/// Run `pass` as the core's scheduler would ([`planexec::schedule::run_steps`]).
pub(crate) async fn run(ctx: &WorkflowContext<'_>, pass: Pass) -> Result<DagOutcome, TerminalError> {
    let mut frontier = Frontier::new(&pass.done);
    for step in &pass.plan.steps {
        frontier.arrive(step.clone());
    }
    let parallelism = pass.parallelism.max(1);
    let mut running = DurableFuturesUnordered::new();
    // The frontier's index of the step behind each call.
    let mut step_of: HashMap<usize, usize> = HashMap::new();
    let mut started = 0usize;
    let mut outcome = DagOutcome::default();
    loop {
        while outcome.failed.is_empty() && running.len() < parallelism && started < pass.max_steps {
            let Some((i, step, deps)) = frontier.next_ready() else {
                break;
            };
            let request = StepRequest {
                plan: pass.plan.clone(),
                plan_version: pass.version,
                step,
                deps,
            };
            let call = ctx.service_client::<StepsClient>().run(Json(request)).call();
            step_of.insert(running.push(call), i);
            started += 1;
        }
        let Some((call, response)) = running.next().await? else {
            break;
        };
        let i = step_of[&call];
        let result = match response {
            Ok(Json(StepResponse { worker, result })) => StepResult {
                worker: Some(worker),
                ..result
            },
            // The steps service gave up on the call (it is terminal): the step failed.
            Err(e) => StepResult {
                error: Some(format!("the worker's call failed: {e}")),
                ..StepResult::not_run(frontier.step(i), StepStatus::Failed)
            },
        };
        frontier.finished(i, &result);
        schedule::keep(&mut outcome, result);
    }
    Ok(outcome)
}
