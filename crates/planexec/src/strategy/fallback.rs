//! What a plan-based run does when it stops making progress: the seeds' loop
//! protections. A revision that repeats the failed step, or the calls of an
//! earlier plan, or `stall_replans` replans in a row with no step succeeding
//! in between, all mean replanning again would go round in a circle. Then
//! the run stops (`fallback = "stop"`, the default) or hands what is left of
//! the goal to one ReAct loop (`fallback = "react"`): a new plan version
//! whose only new step is an agent step of the built-in `react` profile
//! (every tool), depending on every step done so far. It runs through the
//! same executor, ledger, journal and events as any agent step, so it is
//! shown, resumed and counted like one.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::agents;
use crate::events::Event;
use crate::plan::{Plan, Step};
use crate::policy::Fallback;
use crate::run::{Exit, Run};

/// The run made no progress, for `reason`: stop, or fall back if allowed.
pub(crate) async fn no_progress(run: &mut Run, reason: String) -> Result<(), Exit> {
    if run.ctx.setting.options.fallback == Fallback::Stop || run.fell_back() {
        return Err(Exit::failed(format!("no progress: {reason}")));
    }
    fall_back(run, reason).await;
    Ok(())
}

/// Adopt a plan whose rest is one `react` agent step over the remaining goal.
async fn fall_back(run: &mut Run, reason: String) {
    let current = run.plan().clone();
    let done: Vec<Step> = current
        .steps
        .iter()
        .filter(|s| run.done.contains_key(&s.id))
        .cloned()
        .collect();
    let used: HashSet<&str> = run
        .plans
        .iter()
        .flat_map(|v| v.plan.steps.iter().map(|s| s.id.as_str()))
        .collect();
    let id = (1..)
        .map(|n| format!("react{n}"))
        .find(|id| !used.contains(id.as_str()))
        .expect("some id is free");
    let step = Step {
        id,
        description: format!("Finish the task: {}. The plan stopped because {reason}.", current.goal),
        tool: None,
        agent: Some(agents::REACT.to_string()),
        args: Map::new(),
        depends_on: done.iter().map(|s| s.id.clone()).collect(),
        expected: None,
    };
    let mut steps = done;
    steps.push(step);
    let plan = Plan {
        steps,
        infeasible: None,
        questions: Vec::new(),
        ..current
    };
    run.ctx
        .recording
        .events
        .emit(Event::FellBack { reason: reason.clone() });
    run.adopt(plan, format!("{}{reason}", crate::report::FALLBACK_REASON_PREFIX))
        .await;
}

/// What the steps of `plan` not done yet would do, in a form two plans can be
/// compared by: each step's tool (or agent, or reasoning) with its resolved
/// arguments (or description), sorted.
pub(crate) fn remaining_calls(run: &Run, plan: &Plan) -> Vec<String> {
    let done = &run.done;
    let resolve = |args: &Map<String, Value>| run.resolved(args);
    let mut calls: Vec<String> = plan
        .steps
        .iter()
        .filter(|s| !done.contains_key(&s.id))
        .map(|s| match (&s.tool, &s.agent) {
            (Some(tool), _) => format!("tool {tool} {}", Value::Object(resolve(&s.args))),
            (None, Some(agent)) => format!("agent {agent} {}", s.description.trim()),
            (None, None) => format!("reasoning {}", s.description.trim()),
        })
        .collect();
    calls.sort();
    calls
}
