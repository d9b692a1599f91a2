//! The `PlanexecRun` workflow: one run, keyed by its run id. `run` drives it
//! from task to report (once per id, as Restate runs a workflow); `decide`
//! resolves the plan review it waits for, `decide_step` one call it waits to
//! make; `status` says what it waits for.

use std::sync::Arc;

use planexec::{Agent, EngineRun, Plan, RunReport};
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::approver::PromiseApprover;
use crate::bridge::{self, Bridge};
use crate::decision::{PlanDecision, StepDecision, FINISHED, WAITING};

/// A run to make: its task, a plan made elsewhere (else the planner makes
/// one), and whether a person approves the plan before any step runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRequest {
    pub task: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// Wait for a decision (`decide`) on each plan before running it.
    #[serde(default)]
    pub approve: bool,
}

/// The workflow, served by every worker with the worker's agent.
pub struct Runs {
    agent: Arc<Agent>,
}

impl Runs {
    pub fn new(agent: Arc<Agent>) -> Runs {
        Runs { agent }
    }
}

#[restate_sdk::workflow(
    name = "PlanexecRun",
    // A planner call on a local model, or a long step, makes no journal
    // progress for a while; a run waiting for a person suspends after this.
    inactivity_timeout = "5m",
    abort_timeout = "1h",
    invocation_retry_policy(initial_interval = "200ms", factor = 2.0, max_interval = "2s"),
)]
impl Runs {
    /// Make the run: planexec's loop, with this workflow as its engine.
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, Json(request): Json<RunRequest>) -> HandlerResult<Json<RunReport>> {
        let (bridge, requests) = Bridge::new();
        let on = EngineRun {
            run_id: ctx.key().to_string(),
            task: request.task,
            plan: request.plan,
            approver: Some(PromiseApprover::new(bridge.clone(), request.approve)),
            engine: Arc::new(bridge),
        };
        let agent = self.agent.clone();
        // The loop and the server of its requests go on together; the
        // server ends when the loop, done, drops its engine.
        let (report, served) = futures::join!(
            async move { agent.run_on(on).await },
            bridge::serve(&ctx, &self.agent, requests)
        );
        served?;
        let report = report.map_err(TerminalError::new)?;
        Ok(Json(report))
    }

    /// Decide on the plan the run waits for. Refused when it waits for none.
    /// The first decision on a review is the one the run takes.
    #[handler]
    async fn decide(
        &self,
        ctx: SharedWorkflowContext<'_>,
        Json(decision): Json<PlanDecision>,
    ) -> HandlerResult<Json<Value>> {
        let waiting: Option<Json<Value>> = ctx.get(WAITING).await?;
        let Some(Json(waiting)) = waiting.filter(|Json(w)| w["for"] == "plan") else {
            return Err(TerminalError::new(format!(
                "run {} is not waiting for a decision on its plan (it is running, finished, waits for calls, or was decided already)",
                ctx.key()
            ))
            .into());
        };
        let promise = waiting["promise"].as_str().unwrap_or("approval").to_string();
        ctx.resolve_promise(&promise, Json(decision));
        Ok(Json(json!({"run_id": ctx.key(), "decided": promise})))
    }

    /// Decide on one call the run waits to make (its mode asks for each
    /// call with side effects). Refused when it does not wait for that step.
    #[handler]
    async fn decide_step(
        &self,
        ctx: SharedWorkflowContext<'_>,
        Json(decision): Json<StepDecision>,
    ) -> HandlerResult<Json<Value>> {
        let waiting: Option<Json<Value>> = ctx.get(WAITING).await?;
        let waiting = waiting.map(|Json(w)| w).unwrap_or_default();
        let awakeables = waiting["awakeables"].as_object().cloned().unwrap_or_default();
        let Some(awakeable) = awakeables
            .get(&decision.step)
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            let pending: Vec<&str> = awakeables.keys().map(String::as_str).collect();
            return Err(TerminalError::new(format!(
                "run {} does not wait for a decision on step {} (it waits for: {})",
                ctx.key(),
                decision.step,
                if pending.is_empty() {
                    "nothing".to_string()
                } else {
                    pending.join(", ")
                }
            ))
            .into());
        };
        let step = decision.step.clone();
        ctx.resolve_awakeable(&awakeable, Json(decision));
        Ok(Json(json!({"run_id": ctx.key(), "decided": step})))
    }

    /// Send the run a steering message: at its next decision point the
    /// replanner revises the steps not yet run to follow it.
    #[handler]
    async fn steer(&self, ctx: SharedWorkflowContext<'_>, Json(message): Json<String>) -> HandlerResult<Json<Value>> {
        for (n, promise) in bridge::STEERS.iter().enumerate() {
            if ctx.peek_promise::<Json<String>>(promise).await?.is_none() {
                ctx.resolve_promise(promise, Json(message));
                return Ok(Json(json!({"run_id": ctx.key(), "steer": n + 1})));
            }
        }
        Err(TerminalError::new(format!(
            "run {} has had {} steering messages, as many as it takes",
            ctx.key(),
            bridge::STEERS.len()
        ))
        .into())
    }

    /// What the run waits for now (`waiting`: null while it runs) and the
    /// steps finished so far (`finished`).
    #[handler]
    async fn status(&self, ctx: SharedWorkflowContext<'_>) -> HandlerResult<Json<Value>> {
        let waiting: Option<Json<Value>> = ctx.get(WAITING).await?;
        let finished: Option<Json<Value>> = ctx.get(FINISHED).await?;
        Ok(Json(json!({
            "run_id": ctx.key(),
            "waiting": waiting.map(|Json(w)| w),
            "finished": finished.map(|Json(f)| f).unwrap_or_else(|| json!([])),
        })))
    }
}
