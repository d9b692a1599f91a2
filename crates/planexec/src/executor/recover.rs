//! Recovering a failed tool step with an agent step.
//!
//! A tool step whose call failed (after its retries) is handed once to an
//! agent loop of the built-in `recover` profile (or a configured profile of
//! that name). It sees what an agent step sees (the goal, the step and its
//! `expected`, its dependencies' results) and the failed call with its
//! arguments and error, and it may call the tools of the step's kind: the
//! tools that only read, and those with the same effect class as the step's
//! own (a failed write may be done by another tool that writes; a failed
//! read never turns into a write). It is done when a call of the step's own
//! tool succeeds: that call's output, as the tool gave it, is the step's
//! output. Its calls are recorded as the step's inner calls (`s2.1`, `s2.2`,
//! …) and shown live, as an agent step's are. A step whose output later
//! steps use may also be done by the loop answering with that output, when
//! every part of it is written in a result the loop was shown (the port read
//! off the config it was shown, where its program failed). Only when it
//! fails (it gives up in words, or its turns run out) is the replanner asked.
//!
//! A failed program plan is first written again by the model that wrote it,
//! shown its error ([`super::program_fix`]).
//!
//! The errors a model can act on are the point: `sales.csv: no column
//! "region, amount": its columns are region, amount` says what the call
//! should have been. A refusal (the mode, a person's no, a path outside the
//! workspace) is final and never recovered, nor is a transient failure that
//! outlived its retries.

use std::sync::Arc;

use serde_json::Value;

use super::agent_step::{self, AgentLoop, Finish};
use super::shown::step_context;
use super::tally::Tally;
use crate::context::{RunContext, Setting};
use crate::events::Event;
use crate::llm::Message;
use crate::plan::{Plan, Step};
use crate::policy::Recover;
use crate::schedule::DependencyOutputs;
use crate::tools::{Effect, ToolEntry, ToolError, ToolErrorKind};

/// Whether a failed call (with `args`) of a tool step goes to a recovery loop.
pub(super) fn recoverable(setting: &Setting, plan: &Plan, args: &Value, error: &ToolError) -> bool {
    setting.options.recover == Recover::Agent
        && setting.options.strategy.profile().runs_models_between_tools
        && matches!(
            error.kind,
            ToolErrorKind::InvalidArgs | ToolErrorKind::NotFound | ToolErrorKind::Failed
        )
        && !(error.kind == ToolErrorKind::NotFound && names_a_missing_input(plan, args))
}

/// Whether the call's `path` is a file the run's goal names as an input: one
/// that is not there is an input the task was promised and lacks, which the
/// run must report. A recovery would read another file in its place (the
/// 0.5B model, for a missing budget.txt, read costs.txt twice and wrote
/// their sum). A file the goal says to write is no such input: a plan that
/// reads it before it exists misread the task, and recovery may fix that
/// (the 1.5B planner read the output cities.txt in place of the input).
fn names_a_missing_input(plan: &Plan, args: &Value) -> bool {
    args.get("path")
        .and_then(Value::as_str)
        .is_some_and(|path| crate::plan::names_input(&plan.goal, path))
}

/// Do `step`, whose call of `entry` with `args` failed with `error`, with a
/// recovery loop; the output of its successful call of the step's tool.
pub(super) async fn recover(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    entry: &ToolEntry,
    deps: &DependencyOutputs,
    (args, error): (&Value, &ToolError),
    tally: &mut Tally,
) -> Result<Value, String> {
    let failed = format!("{} (step {} failed)", error.message, step.id);
    if let Some(output) = super::program_fix::program_again(ctx, plan, step, entry, (args, &error.message), tally).await
    {
        return Ok(output);
    }
    let Some(profile) = ctx.setting.options.agent(crate::agents::RECOVER) else {
        return Err(failed);
    };
    let tool = entry.tool.name();
    ctx.recording.events.emit(Event::StepRecovering {
        step_id: step.id.clone(),
        tool: tool.to_string(),
        error: error.message.clone(),
    });
    let tools = tools_of_kind(&ctx.setting, &profile, entry);
    let shown = (&ctx.setting, plan, step, deps);
    let first = opening(shown, &profile.instructions, (tool, Some(args), &error.message), &tools);
    let anew = opening(shown, &profile.instructions, (tool, None, &error.message), &tools);
    let written = Value::Object(step.args.clone());
    let agent = AgentLoop {
        profile,
        tools,
        opening: first,
        finish: Finish::CallOf(tool),
        deps,
        failed: Some((tool, [args, &written])),
        anew: Some(anew),
    };
    tally.recovering_from = Some(error.message.clone());
    let recovered = agent_step::run_loop(ctx, plan, step, agent, tally).await;
    tally.recovering_from = None;
    match recovered {
        Ok(output) => {
            tally.args = tally.calls.last().and_then(|c| c.args.clone());
            Ok(output)
        }
        Err(why) => Err(format!("{} (recovery: {why})", error.message)),
    }
}

/// The tools a recovery of a call of `entry` may use: those that only read,
/// and those with its effect class, as far as `profile` allows them.
fn tools_of_kind(setting: &Setting, profile: &crate::AgentProfile, entry: &ToolEntry) -> Vec<Arc<ToolEntry>> {
    let kind = entry.declared_effect();
    agent_step::tools_of(setting, profile)
        .into_iter()
        .filter(|e| matches!(e.declared_effect(), Effect::ReadOnly) || e.declared_effect() == kind)
        .collect()
}

/// What a recovery loop is shown first. Its system message is the one
/// every call of the run starts with (a local model has it evaluated
/// already); the profile's instructions, the step, the failed call and the
/// tools it may use follow. Without the call's `args`, it is the opening
/// of a recovery that starts anew: the error, and the call to write again
/// from the step.
fn opening(
    (setting, plan, step, deps): (&Setting, &Plan, &Step, &DependencyOutputs),
    instructions: &str,
    (tool, args, error): (&str, Option<&Value>, &str),
    tools: &[Arc<ToolEntry>],
) -> Vec<Message> {
    let names: Vec<&str> = tools.iter().map(|t| t.tool.name()).collect();
    // As the plan wrote it and as it was called: a small model shown only
    // the template copies `{{s1}}` back, and the same failure with it.
    let written = Value::Object(step.args.clone());
    let (failed, fix) = match args {
        Some(args) if &written == args => (
            format!("The plan called `{tool}` with {args}"),
            "with corrected arguments",
        ),
        Some(args) => (
            format!("The plan called `{tool}` with {written}, which with the results put in was {args},"),
            "with corrected arguments",
        ),
        None => (
            format!("A call of `{tool}` for this step (not shown: it was written again unchanged)"),
            "with arguments written anew from the step and the results above, not the failed ones",
        ),
    };
    vec![
        Message::system(setting.system()),
        Message::user(format!(
            "You are the executor, recovering one step. {}\n\n{}\n{failed} and it failed:\n{error}\n\nYour tools: {}. The step is done when a call of `{tool}` succeeds; its result is the step's result. Call `{tool}` now {fix}, writing the values themselves where the error is in them. If the results above already show the step's result, you may instead reply with only that result, exactly as it appears there. If the step cannot be done, say why in one sentence instead of calling a tool.",
            instructions,
            step_context(setting, plan, step, deps),
            names.join(", ")
        )),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn plan(goal: &str) -> Plan {
        serde_json::from_value(json!({"goal": goal, "steps": []})).unwrap()
    }

    #[test]
    fn a_missing_file_the_goal_names_is_an_input_unless_the_goal_says_to_write_it() {
        let sort = plan("Read the cities in places.txt and write them, sorted, to cities.txt.");
        assert!(names_a_missing_input(&sort, &json!({"path": "places.txt"})));
        assert!(!names_a_missing_input(&sort, &json!({"path": "./cities.txt"})));
        assert!(!names_a_missing_input(&sort, &json!({"path": "other.txt"})));
        let budget = plan("Add the numbers in budget.txt and costs.txt and write the total to total.txt.");
        assert!(names_a_missing_input(&budget, &json!({"path": "budget.txt"})));
        assert!(!names_a_missing_input(&budget, &json!({"path": "total.txt"})));
    }
}
