//! planexec on Restate: a worker process serves Restate handlers that run
//! planexec's work, so Restate spreads it over every worker and journals it.
//!
//! This is the first piece of the Restate engine: the `PlanexecSteps`
//! service. Its `run` handler executes one step of a plan with the worker's
//! own tools and models ([`planexec::Agent::run_step`]) inside a journaled
//! `ctx.run`, so a step that finished is never run again when Restate
//! retries or replays the invocation (a worker that dies before the journal
//! entry is written runs it again elsewhere). The response names the worker
//! that ran it. The run workflow that plans, calls this service for each
//! ready step and waits for decisions as durable promises comes next.
//!
//! | file | what it holds |
//! |---|---|
//! | `lib.rs` | the step request and response, the `PlanexecSteps` service |
//! | `worker.rs` | serving the endpoint and registering it with Restate's admin API |

pub mod worker;

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

/// What came of a step, and the worker that ran it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepResponse {
    pub worker: String,
    pub result: StepResult,
}

/// The `PlanexecSteps` service: runs the steps Restate hands this worker.
pub struct Steps {
    agent: Arc<Agent>,
    worker: String,
}

impl Steps {
    pub fn new(agent: Arc<Agent>, worker: impl Into<String>) -> Steps {
        Steps {
            agent,
            worker: worker.into(),
        }
    }
}

#[restate_sdk::service(name = "PlanexecSteps")]
impl Steps {
    /// Run one step. Journaled: the response of a step that finished is
    /// replayed from the journal, never computed again.
    #[handler]
    async fn run(&self, ctx: Context<'_>, Json(request): Json<StepRequest>) -> HandlerResult<Json<StepResponse>> {
        let agent = self.agent.clone();
        let worker = self.worker.clone();
        let response = ctx
            .run(|| async move {
                let result = agent
                    .run_step(
                        &request.plan,
                        request.plan_version,
                        &request.step,
                        request.deps,
                        &CancelToken::new(),
                    )
                    .await;
                Ok(Json(StepResponse { worker, result }))
            })
            .name("step")
            .await?;
        Ok(response)
    }
}
