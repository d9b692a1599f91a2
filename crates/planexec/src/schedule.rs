//! DAG execution: run every step whose dependencies are done, up to a
//! parallelism limit, in plan order among the ready ones.
//!
//! The scheduler knows nothing of tools or models: it is handed a function that
//! runs one step and returns its [`StepResult`]. A step's result is recorded
//! before any dependent is dispatched. When a step fails, no new step starts; the
//! ones already running finish, and the caller decides (replan or stop).
//!
//! Steps may also arrive while earlier ones run ([`run_steps`] takes a stream):
//! the compiler strategy feeds it steps as the planner's reply is parsed, and a
//! whole plan is the case where every step is there from the start ([`run_dag`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;

use futures::stream::{self, FuturesUnordered, Stream, StreamExt};
use serde_json::Value;

use crate::cancel::CancelToken;
use crate::plan::{Plan, Step};
use crate::result::{StepResult, StepStatus};

/// The outputs of the steps a step depends on, in `depends_on` order.
pub type DependencyOutputs = Vec<(String, Value)>;

/// What one pass over a plan produced.
#[derive(Debug, Default)]
pub struct DagOutcome {
    /// Results of the steps that ran, in the order they finished.
    pub results: Vec<StepResult>,
    /// Ids of the steps that failed, in the order they failed.
    pub failed: Vec<String>,
    /// Ids of the steps that were running when the run was cancelled (their work is dropped).
    pub interrupted: Vec<String>,
    /// Model calls the steps made elsewhere (on a durable engine's workers),
    /// for the run to count; empty when they ran in the run's process.
    pub usage: crate::accounting::Usage,
}

/// How much one pass may start.
#[derive(Clone)]
pub struct Dispatch {
    /// Most steps running at once.
    pub parallelism: usize,
    /// Most steps started in this pass (replan-each-step starts one at a time).
    pub max_steps: usize,
    /// Once fired, no new step starts; running ones finish (a person steered
    /// the run, or a step waits for approval).
    pub hold: Option<CancelToken>,
}

impl Dispatch {
    pub fn parallel(parallelism: usize) -> Dispatch {
        Dispatch {
            parallelism,
            max_steps: usize::MAX,
            hold: None,
        }
    }

    /// This dispatch, held by `hold`.
    pub fn held_by(self, hold: CancelToken) -> Dispatch {
        Dispatch {
            hold: Some(hold),
            ..self
        }
    }

    fn held(&self) -> bool {
        self.hold.as_ref().is_some_and(CancelToken::is_cancelled)
    }
}

/// Run the steps of `plan` that are not in `done` (outputs of steps completed
/// earlier, e.g. before a replan). `run_step` runs one step given its
/// dependencies' outputs. On `cancel`, running steps are dropped and reported as interrupted.
pub async fn run_dag<F, Fut>(
    plan: &Plan,
    done: &HashMap<String, Value>,
    parallelism: usize,
    cancel: &CancelToken,
    run_step: F,
) -> DagOutcome
where
    F: FnMut(Step, DependencyOutputs) -> Fut,
    Fut: Future<Output = StepResult>,
{
    let steps = stream::iter(plan.steps.iter().cloned());
    run_steps(steps, done, Dispatch::parallel(parallelism), cancel, run_step).await
}

/// Which steps of a pass may start: the ones that have arrived whose
/// dependencies have succeeded, in plan order among the ready ones. The
/// bookkeeping of [`run_steps`], kept apart so that an engine that must
/// replay a pass in the same order ([`crate::engine`]) schedules the same way.
#[derive(Debug, Default)]
pub struct Frontier {
    arrived: Vec<Step>,
    outputs: HashMap<String, Value>,
    /// Per arrived step, how many of its dependencies have not succeeded yet.
    waiting_on: Vec<usize>,
    /// Dependents by the id they wait for (which may not have arrived yet).
    dependents: HashMap<String, Vec<usize>>,
    ready: BinaryHeap<Reverse<usize>>,
}

impl Frontier {
    /// A pass whose steps in `done` succeeded before it (their outputs given).
    pub fn new(done: &HashMap<String, Value>) -> Frontier {
        Frontier {
            outputs: done.clone(),
            ..Frontier::default()
        }
    }

    /// A step has arrived; one done before the pass is skipped.
    pub fn arrive(&mut self, step: Step) {
        if self.outputs.contains_key(&step.id) {
            return;
        }
        let i = self.arrived.len();
        let mut unmet = 0;
        for dep in &step.depends_on {
            if !self.outputs.contains_key(dep) {
                unmet += 1;
                self.dependents.entry(dep.clone()).or_default().push(i);
            }
        }
        self.waiting_on.push(unmet);
        self.arrived.push(step);
        if unmet == 0 {
            self.ready.push(Reverse(i));
        }
    }

    /// The first ready step in plan order, taken off the ready list: its
    /// index, the step, and its dependencies' outputs.
    pub fn next_ready(&mut self) -> Option<(usize, Step, DependencyOutputs)> {
        let Reverse(i) = self.ready.pop()?;
        let step = self.arrived[i].clone();
        let deps = step
            .depends_on
            .iter()
            .filter_map(|d| self.outputs.get(d).map(|v| (d.clone(), v.clone())))
            .collect();
        Some((i, step, deps))
    }

    /// The step at index `i` (as [`Frontier::next_ready`] gave it).
    pub fn step(&self, i: usize) -> &Step {
        &self.arrived[i]
    }

    /// Step `i` finished with `result`: if it succeeded, the steps that
    /// waited only for it become ready.
    pub fn finished(&mut self, i: usize, result: &StepResult) {
        if !result.succeeded() {
            return;
        }
        let id = self.arrived[i].id.clone();
        self.outputs
            .insert(id.clone(), result.output.clone().unwrap_or(Value::Null));
        for d in self.dependents.remove(&id).unwrap_or_default() {
            self.waiting_on[d] -= 1;
            if self.waiting_on[d] == 0 {
                self.ready.push(Reverse(d));
            }
        }
    }
}

/// Add a finished step's `result` to `outcome`: a failure is noted; a step
/// that waits for a person's decision (`Pending`) has not failed: its
/// dependents wait with it, the other steps go on.
pub fn keep(outcome: &mut DagOutcome, result: StepResult) {
    if !result.succeeded() && result.status != StepStatus::Pending {
        outcome.failed.push(result.id.clone());
    }
    outcome.results.push(result);
}

/// Run steps as they arrive on `steps`: each starts once it has arrived and
/// the steps it depends on have succeeded (a dependency may arrive after its
/// dependent). Ends when nothing runs and nothing more can start: the stream
/// has ended, a step failed, `dispatch.max_steps` were started, or `cancel` fired.
pub async fn run_steps<S, F, Fut>(
    steps: S,
    done: &HashMap<String, Value>,
    dispatch: Dispatch,
    cancel: &CancelToken,
    mut run_step: F,
) -> DagOutcome
where
    S: Stream<Item = Step>,
    F: FnMut(Step, DependencyOutputs) -> Fut,
    Fut: Future<Output = StepResult>,
{
    let parallelism = dispatch.parallelism.max(1);
    let mut steps = std::pin::pin!(steps.fuse());
    let mut open = true;
    let mut frontier = Frontier::new(done);
    let mut started = 0usize;

    let mut outcome = DagOutcome::default();
    let mut running = FuturesUnordered::new();
    let mut in_flight: Vec<usize> = Vec::new();
    loop {
        while outcome.failed.is_empty()
            && running.len() < parallelism
            && started < dispatch.max_steps
            && !cancel.is_cancelled()
            && !dispatch.held()
        {
            let Some((i, step, deps)) = frontier.next_ready() else {
                break;
            };
            let fut = run_step(step, deps);
            started += 1;
            in_flight.push(i);
            running.push(async move { (i, fut.await) });
        }
        let more_can_start = outcome.failed.is_empty() && started < dispatch.max_steps && !dispatch.held();
        if running.is_empty() && !(open && more_can_start) {
            break;
        }
        // Wait for a step to finish or, while more may start, a step to arrive.
        let event = cancel
            .guard(async {
                tokio::select! {
                    // Arrivals first: every step already there is taken (and
                    // started, if it can) before a finished one is looked at.
                    biased;
                    next = steps.next(), if open && more_can_start => Err(next),
                    Some(done) = running.next(), if !running.is_empty() => Ok(done),
                }
            })
            .await;
        let (i, result) = match event {
            None => {
                outcome.interrupted = in_flight.iter().map(|&i| frontier.step(i).id.clone()).collect();
                break;
            }
            Some(Err(None)) => {
                open = false;
                continue;
            }
            Some(Err(Some(step))) => {
                frontier.arrive(step);
                continue;
            }
            Some(Ok(finished)) => finished,
        };
        in_flight.retain(|&r| r != i);
        frontier.finished(i, &result);
        keep(&mut outcome, result);
    }
    outcome
}
