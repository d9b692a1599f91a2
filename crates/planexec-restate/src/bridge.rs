//! The bridge between planexec's run loop and the Restate workflow that
//! runs it. The loop (in [`planexec::Agent::run_on`]) asks its engine for
//! what must be kept or run elsewhere; the [`Bridge`] sends each request to
//! the workflow handler, whose [`serve`] loop turns it into a journaled
//! Restate operation: a `ctx.run`, a pass of step calls ([`crate::pass`]), or
//! a durable promise a person resolves. Requests come one at a time and are
//! served in order, so a replay of the workflow makes the same operations in
//! the same order, as Restate requires.

use async_trait::async_trait;
use futures::future::BoxFuture;
use planexec::engine::{EngineError, Pass, RunEngine};
use planexec::schedule::DagOutcome;
use planexec::Plan;
use restate_sdk::prelude::*;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::decision::{PlanDecision, WAITING};

/// What the run loop asks of the workflow.
pub(crate) enum Request {
    /// Keep `work`'s value under `name` (`ctx.run`).
    Journal {
        name: String,
        work: BoxFuture<'static, Value>,
        reply: oneshot::Sender<Value>,
    },
    /// Run a pass of the plan's steps as calls to the steps service.
    Pass {
        pass: Pass,
        reply: oneshot::Sender<DagOutcome>,
    },
    /// Wait for a person's decision on `plan`.
    Review {
        plan: Plan,
        reply: oneshot::Sender<PlanDecision>,
    },
    /// The steering messages sent since the last time.
    Steering { reply: oneshot::Sender<Vec<String>> },
}

/// The run loop's engine: a sender of [`Request`]s to the workflow.
#[derive(Clone)]
pub(crate) struct Bridge {
    requests: mpsc::UnboundedSender<Request>,
}

impl Bridge {
    pub fn new() -> (Bridge, mpsc::UnboundedReceiver<Request>) {
        let (requests, receiver) = mpsc::unbounded_channel();
        (Bridge { requests }, receiver)
    }

    /// Send a request and wait for its answer.
    async fn ask<T>(&self, request: impl FnOnce(oneshot::Sender<T>) -> Request) -> Result<T, EngineError> {
        let gone = || EngineError("the Restate workflow stopped serving this run (it was cancelled or failed)".into());
        let (reply, answer) = oneshot::channel();
        self.requests.send(request(reply)).map_err(|_| gone())?;
        answer.await.map_err(|_| gone())
    }

    /// A person's decision on `plan`.
    pub async fn review(&self, plan: Plan) -> Result<PlanDecision, EngineError> {
        self.ask(|reply| Request::Review { plan, reply }).await
    }
}

#[async_trait]
impl RunEngine for Bridge {
    async fn journaled(&self, name: &str, work: BoxFuture<'static, Value>) -> Result<Value, EngineError> {
        let name = name.to_string();
        self.ask(|reply| Request::Journal { name, work, reply }).await
    }

    async fn run_pass(&self, pass: Pass) -> Result<DagOutcome, EngineError> {
        self.ask(|reply| Request::Pass { pass, reply }).await
    }

    async fn steering(&self) -> Result<Vec<String>, EngineError> {
        self.ask(|reply| Request::Steering { reply }).await
    }
}

/// Names of the durable promises that carry a run's steering messages, in
/// the order they are sent (the `steer` handler resolves the first free one).
pub(crate) const STEERS: [&str; 16] = [
    "steer", "steer/2", "steer/3", "steer/4", "steer/5", "steer/6", "steer/7", "steer/8", "steer/9", "steer/10",
    "steer/11", "steer/12", "steer/13", "steer/14", "steer/15", "steer/16",
];

/// Names of the durable promises of successive plan reviews of one run
/// (a review after feedback is a new promise). Static because Restate's
/// promise keys must live as long as the handler's context.
const REVIEWS: [&str; 8] = [
    "approval",
    "approval/2",
    "approval/3",
    "approval/4",
    "approval/5",
    "approval/6",
    "approval/7",
    "approval/8",
];

/// Serve the run loop's requests, in order, until it drops its bridge. An
/// error is Restate's (the invocation was cancelled): the loop's next
/// request fails and the run stops.
pub(crate) async fn serve(
    ctx: &WorkflowContext<'_>,
    agent: &planexec::Agent,
    mut requests: mpsc::UnboundedReceiver<Request>,
) -> Result<(), TerminalError> {
    let (mut reviews, mut steered) = (0, 0);
    let mut finished = Vec::new();
    while let Some(request) = requests.recv().await {
        match request {
            Request::Steering { reply } => {
                let mut messages = Vec::new();
                while let Some(promise) = STEERS.get(steered) {
                    match ctx.peek_promise::<Json<String>>(promise).await? {
                        Some(Json(message)) => messages.push(message),
                        None => break,
                    }
                    steered += 1;
                }
                let _ = reply.send(messages);
            }
            Request::Journal { name, work, reply } => {
                let Json(value) = ctx.run(|| async move { Ok(Json(work.await)) }).name(name).await?;
                let _ = reply.send(value);
            }
            Request::Pass { pass, reply } => {
                let outcome = crate::pass::run(ctx, agent, pass, &mut finished).await?;
                let _ = reply.send(outcome);
            }
            Request::Review { plan, reply } => {
                let Some(promise) = REVIEWS.get(reviews) else {
                    let _ = reply.send(PlanDecision::Reject {
                        by: "planexec".into(),
                        reason: format!("the plan was reviewed {} times without a decision", REVIEWS.len()),
                    });
                    continue;
                };
                reviews += 1;
                // The core's `Waiting` for a plan (its review's number as the
                // version), with the plan and the promise that takes the decision.
                let waiting = json!({"for": "plan", "version": reviews, "promise": promise, "plan": plan});
                ctx.set(WAITING, Json(waiting));
                let Json(decision) = ctx.promise::<Json<PlanDecision>>(promise).await?;
                ctx.clear(WAITING);
                let _ = reply.send(decision);
            }
        }
    }
    Ok(())
}
