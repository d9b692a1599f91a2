//! One pass over a plan on Restate: each ready step is a call to the
//! `PlanexecSteps` service, which Restate sends to a worker and journals;
//! the calls of a wave are in flight together. A step the mode says a person
//! must confirm waits first for its own decision (an awakeable, listed in the
//! workflow's `waiting` state), while the other steps go on; an approved step
//! is then sent, a rejected one is refused. Which step starts next is decided
//! by planexec's own scheduler state ([`Frontier`]) from the order in which
//! calls and decisions came back, and that order comes from Restate
//! ([`DurableFuturesUnordered`]), so a replay makes the same calls in the
//! same order.

use std::collections::HashMap;
use std::pin::Pin;

use planexec::engine::Pass;
use planexec::schedule::{self, DagOutcome, DependencyOutputs, Frontier};
use planexec::store::{Waiting, WaitingCall};
use planexec::{Agent, Step, StepResult, StepStatus};
use restate_sdk::context::DurableFuture;
use restate_sdk::prelude::*;
use serde_json::{json, Value};

use crate::decision::{StepDecision, FINISHED, WAITING};
use crate::{StepRequest, StepResponse, StepsClient};

/// What came back: a step's call, or a person's decision on a step.
enum Came {
    Step(Box<Result<Json<StepResponse>, TerminalError>>),
    Decided(Result<Json<StepDecision>, TerminalError>),
}

type InFlight<'a> = Pin<Box<dyn DurableFuture<Output = Came> + Send + 'a>>;

/// A step that waits for a decision: its frontier index, the step and its
/// dependencies' outputs (to send it once approved), the call deciders see,
/// and the awakeable that takes the decision.
struct ParkedStep {
    i: usize,
    step: Step,
    deps: DependencyOutputs,
    call: WaitingCall,
    awakeable: String,
}

/// Say in the workflow's state what the run waits for: the core's
/// [`Waiting`] (what `runs show` and `serve` read) for the `parked` calls,
/// with their awakeables.
fn publish(ctx: &WorkflowContext<'_>, parked: &[ParkedStep], plan_version: u32) {
    let calls = parked.iter().map(|p| p.call.clone()).collect();
    let Some(waiting) = Waiting::for_calls(plan_version, calls) else {
        ctx.clear(WAITING);
        return;
    };
    let mut shown = serde_json::to_value(waiting).unwrap_or_default();
    let awakeables: serde_json::Map<String, Value> = parked
        .iter()
        .map(|p| (p.step.id.clone(), Value::String(p.awakeable.clone())))
        .collect();
    shown["awakeables"] = Value::Object(awakeables);
    ctx.set(WAITING, Json(shown));
}

/// Run `pass` as the core's scheduler would ([`planexec::schedule::run_steps`]).
/// Each step's end is added to `finished`, which the workflow's state shows.
pub(crate) async fn run(
    ctx: &WorkflowContext<'_>,
    agent: &Agent,
    pass: Pass,
    finished: &mut Vec<Value>,
) -> Result<DagOutcome, TerminalError> {
    let mut frontier = Frontier::new(&pass.done);
    for step in &pass.plan.steps {
        frontier.arrive(step.clone());
    }
    let parallelism = pass.parallelism.max(1);
    let mut in_flight: DurableFuturesUnordered<InFlight<'_>> = DurableFuturesUnordered::new();
    // The frontier's index of the step behind each future.
    let mut step_of: HashMap<usize, usize> = HashMap::new();
    let mut parked: Vec<ParkedStep> = Vec::new();
    let (mut started, mut outcome) = (0usize, DagOutcome::default());
    loop {
        while outcome.failed.is_empty() && in_flight.len() - parked.len() < parallelism && started < pass.max_steps {
            let Some((i, step, deps)) = frontier.next_ready() else {
                break;
            };
            started += 1;
            let future = match agent.confirmation_for(&step, &deps) {
                Some(call) => {
                    let (awakeable, decided) = ctx.awakeable::<Json<StepDecision>>();
                    parked.push(ParkedStep {
                        i,
                        step,
                        deps,
                        call,
                        awakeable,
                    });
                    publish(ctx, &parked, pass.version);
                    Box::pin(decided.map(Came::Decided)) as InFlight<'_>
                }
                None => send(ctx, &pass, step, deps),
            };
            step_of.insert(in_flight.push(future), i);
        }
        let Some((k, came)) = in_flight.next().await? else {
            break;
        };
        let i = step_of.remove(&k).expect("every future is a step's");
        let result = match came {
            Came::Step(response) => {
                if let Ok(Json(r)) = response.as_ref() {
                    outcome.usage.merge(&r.usage);
                }
                step_result(frontier.step(i), *response)
            }
            Came::Decided(decision) => {
                let (step, deps) = unpark(ctx, &mut parked, i, pass.version);
                match decision {
                    Ok(Json(d)) if d.approve => {
                        step_of.insert(in_flight.push(send(ctx, &pass, step, deps)), i);
                        continue;
                    }
                    Ok(Json(d)) => refused(&step, &format!("rejected by {}: {}", d.by, d.reason)),
                    Err(e) => refused(&step, &format!("the decision failed: {e}")),
                }
            }
        };
        frontier.finished(i, &result);
        finished.push(json!({"id": result.id, "status": result.status, "tool": result.tool,
            "worker": result.worker, "error": result.error}));
        ctx.set(FINISHED, Json(finished.clone()));
        schedule::keep(&mut outcome, result);
    }
    Ok(outcome)
}

/// The call of `step` to the steps service (journaled when made).
fn send<'a>(ctx: &'a WorkflowContext<'_>, pass: &Pass, step: Step, deps: DependencyOutputs) -> InFlight<'a> {
    let request = StepRequest {
        plan: pass.plan.clone(),
        plan_version: pass.version,
        step,
        deps,
    };
    let call = ctx.service_client::<StepsClient>().run(Json(request)).call();
    Box::pin(call.map(|response| Came::Step(Box::new(response))))
}

/// Take step `i` off the parked steps, and so off the calls deciders see.
fn unpark(
    ctx: &WorkflowContext<'_>,
    parked: &mut Vec<ParkedStep>,
    i: usize,
    plan_version: u32,
) -> (Step, DependencyOutputs) {
    let at = parked.iter().position(|p| p.i == i).expect("a decided step was parked");
    let ParkedStep { step, deps, .. } = parked.remove(at);
    publish(ctx, parked, plan_version);
    (step, deps)
}

/// What came of a step's call, with the worker that ran it.
fn step_result(step: &Step, response: Result<Json<StepResponse>, TerminalError>) -> StepResult {
    match response {
        Ok(Json(StepResponse { worker, result, .. })) => StepResult {
            worker: Some(worker),
            ..result
        },
        // The steps service gave up on the call (it is terminal): the step failed.
        Err(e) => StepResult {
            error: Some(format!("the worker's call failed: {e}")),
            ..StepResult::not_run(step, StepStatus::Failed)
        },
    }
}

/// A step a person did not let run: refused, a decision the run stops at.
fn refused(step: &Step, why: &str) -> StepResult {
    StepResult {
        error: Some(why.to_string()),
        refused: true,
        ..StepResult::not_run(step, StepStatus::Failed)
    }
}
