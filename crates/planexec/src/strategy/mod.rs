//! Strategies: how the same core (planner, scheduler, executor, replanner,
//! synthesizer, tools, limits, ledger) is driven. A strategy is a policy over
//! that core, chosen with [`crate::RunOptions::strategy`], one file each:
//!
//! | strategy | file | planner | between tools | after the steps |
//! |---|---|---|---|---|
//! | `plan-execute` | [`plan_execute`] | once | executor model only for reasoning steps, repairs and `expected` checks | replan on failure |
//! | `replan-each-step` | [`replan_each_step`] | once | the replanner after every step decides: keep, revise or finish | as plan-execute |
//! | `rewoo` | [`rewoo`] | once, tools only, every output bound to `{{id}}` | no model at all | one solver call |
//! | `compiler` | [`compiler`] | streamed: steps start as they are parsed | as plan-execute | a joiner answers or asks to replan |
//! | `react` | [`react`] | none | one model sees the whole history and calls one tool per turn | the same model answers |
//!
//! The plan-based strategies share one loop, [`dag::drive`]: begin (the first
//! plan and its review, [`start`]), then passes over the DAG; a failed step is
//! revised within the bound, and after a clean pass the strategy's
//! [`Drive::after_pass`] decides whether to go on or answer. The roles never
//! match on [`Strategy`]: they read its [`Profile`].
//!
//! Adding a strategy takes one file and one variant:
//! 1. `strategy/my_strategy.rs` with a unit struct implementing [`Drive`]
//!    (usually `drive` is `dag::drive(self, run, start)` and one hook differs);
//! 2. a variant of [`Strategy`] in `strategy/kind.rs`, with its name in
//!    `as_str`, its [`Profile`] and an entry in `ALL`;
//! 3. its arm in [`driver`] below.
//!
//! The test `a_toy_strategy_needs_only_a_drive` below is such a strategy.

pub(crate) mod compiler;
pub(crate) mod dag;
mod drive;
pub(crate) mod fallback;
mod kind;
pub(crate) mod on_engine;
pub(crate) mod plan_execute;
pub(crate) mod react;
mod redo;
pub(crate) mod replan_each_step;
pub(crate) mod rewoo;
pub(crate) mod start;
pub(crate) mod steer;

use crate::run::{Exit, Run, Start};

pub(crate) use drive::{Drive, FirstPlan, Next};
pub use kind::{Profile, Strategy};

/// The strategy's driver: the one place a [`Strategy`] is matched to its code.
pub(crate) fn driver(strategy: Strategy) -> &'static dyn Drive {
    match strategy {
        Strategy::PlanExecute => &plan_execute::PlanExecute,
        Strategy::ReplanEachStep => &replan_each_step::ReplanEachStep,
        Strategy::Rewoo => &rewoo::Rewoo,
        Strategy::Compiler => &compiler::Compiler,
        Strategy::React => &react::React,
    }
}

/// Drive `run` with `driver`, from `start` to its answer or exit.
pub(crate) async fn drive(driver: &dyn Drive, run: &mut Run, start: Start) -> Result<String, Exit> {
    if run.ctx.control.stop.is_cancelled() {
        return Err(Exit::Stopped);
    }
    // Nothing to plan from: refused before any model time is spent.
    if run.task.trim().is_empty() && matches!(start, Start::New(None)) {
        return Err(Exit::failed("the task is empty; say in words what the run should do"));
    }
    driver.drive(run, start).await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::llm::scripted::{ScriptedModel, ScriptedReply};
    use crate::{Agent, CancelToken, Role, RunStatus};
    use async_trait::async_trait;

    /// A sixth strategy, as a newcomer would write it: plan once, run the DAG,
    /// and answer with the last step's output instead of calling a synthesizer.
    struct LastOutput;

    #[async_trait]
    impl Drive for LastOutput {
        async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit> {
            dag::drive(self, run, start).await
        }

        async fn after_pass(&self, run: &mut Run, ran: &[String]) -> Result<Next, Exit> {
            let last = ran.last().and_then(|id| run.done.get(id)).cloned().unwrap_or_default();
            Ok(Next::Answer(crate::plan::value_as_text(&last)))
        }
    }

    #[tokio::test]
    async fn a_toy_strategy_needs_only_a_drive() {
        let model = Arc::new(ScriptedModel::new());
        model.reply(
            Role::Planner,
            ScriptedReply::json(&json!({"goal": "g", "steps": [
                {"id": "s1", "description": "add", "tool": "calculator", "args": {"expression": "40 + 2"}, "depends_on": []}
            ]})),
        );
        let mut tools = crate::ToolRegistry::new();
        tools.register(Arc::new(crate::tools::builtin::Calculator)).unwrap();
        let agent = Agent::builder(model.clone(), "scripted").tools(tools).build();
        let report = agent.run_driven(&LastOutput, "add", None, &CancelToken::new()).await;
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(report.answer.as_deref(), Some("42"));
        // The planner only: no synthesizer call.
        assert_eq!(model.requests().len(), 1);
    }
}
