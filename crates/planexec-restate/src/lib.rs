//! planexec on Restate: a run is a Restate workflow, its steps are calls
//! to a Restate service, and a worker process serves both, so Restate
//! spreads the work over every worker and journals it.
//!
//! - The `PlanexecRun` workflow, keyed by the run id, drives the run with
//!   planexec's own loop ([`planexec::Agent::run_on`]): its planner,
//!   replanner and synthesizer calls are journaled (`ctx.run`), each pass of
//!   ready steps is a set of concurrent calls to `PlanexecSteps`, and a plan
//!   review waits on a durable promise (`approval`) that the `approve` and
//!   `reject` handlers resolve from any machine.
//! - The `PlanexecSteps` service's `run` handler executes one step with the
//!   worker's own tools and models ([`planexec::Agent::run_step`]) inside a
//!   journaled `ctx.run`, so a step that finished is never run again when
//!   Restate retries or replays (a worker that dies before the journal entry
//!   is written runs it again). The response names the worker.
//!
//! | file | what it holds |
//! |---|---|
//! | `lib.rs` | the step request and response, the `PlanexecSteps` service |
//! | `workflow.rs` | the `PlanexecRun` workflow: `run`, `approve`, `reject`, `status` |
//! | `bridge.rs` | the engine the run loop sees, and the workflow's loop that serves it |
//! | `pass.rs` | one pass of ready steps as journaled service calls, in a replayable order |
//! | `decision.rs` | a person's decision on a plan or a call, and the state that says what a run waits for |
//! | `approver.rs` | the approver of a Restate run: a plan review waits for a decision |
//! | `bench.rs` | `planexec bench --engine restate`: overhead per step, throughput on one worker and two |
//! | `ingress.rs` | a client of Restate's ingress: submit a run, wait for it, decide on it |
//! | `pool.rs` | the worker pool: one address in front of every worker, for Restate |
//! | `worker.rs` | serving the endpoint, registering it with Restate's admin API, staying in a pool |

mod approver;
pub mod bench;
mod bridge;
pub mod decision;
pub mod ingress;
mod pass;
pub mod pool;
pub mod worker;
pub mod workflow;

use std::sync::Arc;

use planexec::{Agent, CancelToken, Plan, Step, StepResult};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};

/// One step to run: the plan it belongs to (the goal and the other steps
/// give the executor its context), which version, the step, and the outputs
/// of the steps it depends on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRequest {
    pub plan: Plan,
    pub plan_version: u32,
    pub step: Step,
    #[serde(default)]
    pub deps: Vec<(String, serde_json::Value)>,
}

/// What came of a step, the worker that ran it, and the model calls it made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepResponse {
    pub worker: String,
    pub result: StepResult,
    #[serde(default)]
    pub usage: planexec::accounting::Usage,
}

/// The `PlanexecSteps` service: runs the steps Restate hands this worker,
/// at most `capacity` at once (more wait for a slot: a worker is a machine
/// of a given size, and the pool sends the next step to the next worker).
pub struct Steps {
    agent: Arc<Agent>,
    worker: String,
    slots: Arc<tokio::sync::Semaphore>,
}

impl Steps {
    pub fn new(agent: Arc<Agent>, worker: impl Into<String>, capacity: usize) -> Steps {
        Steps {
            agent,
            worker: worker.into(),
            slots: Arc::new(tokio::sync::Semaphore::new(capacity.max(1))),
        }
    }
}

#[restate_sdk::service(
    name = "PlanexecSteps",
    // Steps come from the run workflow, which has had them confirmed as
    // the mode says; nothing outside Restate sends one past that.
    ingress_private = true,
    // An agent step or a slow tool makes no journal progress while it runs.
    inactivity_timeout = "5m",
    abort_timeout = "1h",
    // A step whose worker died is sent again soon to a worker that is up.
    invocation_retry_policy(initial_interval = "200ms", factor = 2.0, max_interval = "2s"),
)]
impl Steps {
    /// Run one step. Journaled: the response of a step that finished is
    /// replayed from the journal, never computed again. A step that must not
    /// silently run twice (a call with side effects, an agent step) first
    /// journals its start; found started by an earlier attempt and not
    /// finished, it was in flight when its worker stopped, and it is not run
    /// again blindly: it ends refused, saying so, and the run stops there,
    /// as a local run's resume would ask first.
    #[handler]
    async fn run(&self, ctx: Context<'_>, Json(request): Json<StepRequest>) -> HandlerResult<Json<StepResponse>> {
        let agent = self.agent.clone();
        let worker = self.worker.clone();
        let slots = self.slots.clone();
        let attempt = attempt_id(&worker);
        let started_by = match agent.must_not_repeat(&request.step) {
            true => {
                let this = attempt.clone();
                let Json(first) = ctx.run(|| async move { Ok(Json(this)) }).name("started").await?;
                Some(first)
            }
            false => None,
        };
        let response = ctx
            .run(|| async move {
                if let Some(first) = started_by.filter(|first| *first != attempt) {
                    let result = in_flight_at_a_stop(&request.step, &first);
                    let usage = Default::default();
                    return Ok(Json(StepResponse { worker, result, usage }));
                }
                // Inside the journaled block: a replayed step takes no slot.
                let _slot = slots
                    .acquire_owned()
                    .await
                    .map_err(|e| TerminalError::new(e.to_string()))?;
                let (result, usage) = agent
                    .run_step(
                        &request.plan,
                        request.plan_version,
                        &request.step,
                        request.deps,
                        &CancelToken::new(),
                    )
                    .await;
                Ok(Json(StepResponse { worker, result, usage }))
            })
            .name("step")
            .await?;
        Ok(response)
    }
}

/// An id for this attempt at an invocation, different from every other
/// attempt's (a new one after a worker stopped): the worker's name, the
/// time, and a count.
fn attempt_id(worker: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{worker}/{nanos}/{}", COUNT.fetch_add(1, Ordering::Relaxed))
}

/// The result of a step found started by the earlier attempt `first` and
/// never finished.
fn in_flight_at_a_stop(step: &Step, first: &str) -> StepResult {
    let worker = first.split('/').next().unwrap_or("?");
    let what = step
        .tool
        .as_deref()
        .map(|t| format!("its {t} call"))
        .unwrap_or("the step".into());
    StepResult {
        error: Some(format!(
            "it was running on worker {worker} when that worker stopped; {what} has side effects that may or may not have happened, so it is not run again blindly: check what it did, then run what is left"
        )),
        refused: true,
        ..StepResult::not_run(step, planexec::StepStatus::Interrupted)
    }
}
