//! The executor role: run one step.
//!
//! A tool step whose arguments resolve and validate runs its tool directly, with
//! no model call; retryable tool errors are retried with backoff. A tool call
//! that still fails is handed to a recovery loop ([`recover`]): an agent step
//! that sees the failed call and its error and does the step another way. A
//! reasoning step is one executor model call that sees only the task's goal,
//! this step and its dependencies' results. Where the step states an
//! `expected` result, the executor model checks the result against it. An
//! agent step runs a small tool-using loop ([`agent_step`]).

mod agent_step;
mod asking;
mod call;
mod carry;
mod expected;
mod program_fix;
mod recover;
mod shown;
mod tally;

use serde_json::Value;

use crate::context::{Control, ModelCalls, RunContext, Setting};
use crate::events::Event;
use crate::llm::{ChatRequest, Message, Role};
use crate::plan::{self, Plan, Step, StepKind};
use crate::result::{self, now_ms, StepResult, StepStatus};
use crate::schedule::DependencyOutputs;
use crate::store::StepStart;
use crate::tools::{ToolError, ToolErrorKind};

pub(crate) use call::dep_output;
use call::{call_checked, permit, resolve_for};
use shown::{context_with, without_line_numbers};
use tally::Tally;

/// Run one step, recording it in the ledger: a step with side effects is
/// recorded as started before its tool is called (so a crash leaves evidence
/// that its effect may have happened), and every step's result is committed
/// before the scheduler may start its dependents.
pub(crate) async fn run_step(
    ctx: &RunContext,
    plan: &Plan,
    version: u32,
    step: Step,
    deps: DependencyOutputs,
) -> StepResult {
    if let Err(reason) = ctx.calls.budget.check_step(&step.id) {
        return StepResult {
            error: Some(reason),
            ..StepResult::not_run(&step, StepStatus::Interrupted)
        };
    }
    let seq = ctx.recording.ledger.next_step_seq();
    // Only a step that must not silently run twice needs its start on record
    // (an agent step's, so a resume knows it was under way).
    if ctx.recording.ledger.is_enabled() && must_not_repeat(&ctx.setting.tools, &step) {
        let lookup = |id: &str| dep_output(&deps, id);
        let args = plan::resolve_args(&step.args, &lookup).ok().map(Value::Object);
        let start = StepStart {
            seq,
            plan_version: version,
            step_id: step.id.clone(),
            tool: step.tool.clone(),
            agent: step.agent.clone(),
            args,
            started_at: now_ms(),
        };
        if !ctx.recording.ledger.step_started(&start).await {
            return StepResult {
                error: Some("not started: the ledger could not record its start".to_string()),
                ..StepResult::not_run(&step, StepStatus::Interrupted)
            };
        }
    }
    let configs = carry::before(&ctx.setting, &step);
    let mut result = execute_step(ctx, plan, version, step, deps).await;
    let carried = carry::carry_back(&ctx.setting, &ctx.recording, configs, &mut result);
    ctx.recording.ledger.step_finished(seq, version, &result).await;
    for call in carried {
        let seq = ctx.recording.ledger.next_step_seq();
        ctx.recording.ledger.step_finished(seq, version, &call).await;
    }
    result
}

/// Whether running `step` twice could do twice what it does: a tool call
/// that is not idempotent, or an agent step (its calls are its own).
pub(crate) fn must_not_repeat(tools: &crate::tools::ToolRegistry, step: &Step) -> bool {
    match step.kind() {
        StepKind::Tool(t) => !tools.is_idempotent(t),
        StepKind::Agent(_) => true,
        StepKind::Reasoning => false,
    }
}

/// Run one step of `plan` (the plan gives the goal and the dependencies' descriptions).
async fn execute_step(ctx: &RunContext, plan: &Plan, version: u32, step: Step, deps: DependencyOutputs) -> StepResult {
    let started_at = now_ms();
    ctx.recording.events.emit(Event::StepStarted {
        step_id: step.id.clone(),
        tool: step.tool.clone(),
        agent: step.agent.clone(),
    });
    let mut tally = Tally {
        version,
        ..Tally::default()
    };
    // Confirmation waits for a person, so it happens before the step's clock starts.
    let outcome = match confirm(&ctx.setting, &ctx.control, &step, &deps, &mut tally).await {
        Err(e) => Err(e),
        Ok(()) => {
            let limit = step_limit(&ctx.setting.options, &step);
            match tokio::time::timeout(limit, run(ctx, plan, &step, &deps, &mut tally)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(timed_out(limit, &tally)),
            }
        }
    };
    let finished_at = now_ms();
    let elapsed_ms = finished_at.saturating_sub(started_at);
    let (status, error) = match &outcome {
        Ok(output) => {
            ctx.recording.events.emit(Event::StepFinished {
                step_id: step.id.clone(),
                elapsed_ms,
                summary: crate::text::one_line(&plan::value_as_text(output), 100),
                attempts: tally.attempts,
            });
            (StepStatus::Succeeded, None)
        }
        Err(e) => {
            ctx.recording.events.emit(Event::StepFailed {
                step_id: step.id.clone(),
                elapsed_ms,
                error: e.clone(),
                attempts: tally.attempts,
            });
            // A call that waits for approval has not failed: it runs on resume.
            let paused = ctx.control.inbox.is_paused_at(&step.id);
            (
                if paused {
                    StepStatus::Pending
                } else {
                    StepStatus::Failed
                },
                Some(e.clone()),
            )
        }
    };
    StepResult {
        id: step.id.clone(),
        tool: step.tool.clone(),
        agent: step.agent.clone(),
        status,
        attempts: tally.attempts,
        args: tally.args,
        output: outcome.ok().or(tally.output),
        error,
        started_at: Some(started_at),
        finished_at: Some(finished_at),
        model_calls: tally.model_calls,
        calls: tally.calls,
        refused: tally.refused,
        worker: None,
    }
}

/// How long `step` may take in all: the step time limit for each thing it
/// may do in turn. A tool step: its call (held to one limit of its own, in
/// [`call_tool`]), then the fix of a failed program and each turn of the
/// recovery loop; an agent step: each turn of its loop; a reasoning step:
/// its one call. On the embedded model one turn takes 20–70 s, and 9 of
/// the 12 recoveries the held-out-34 to -39 runs began were cut off by one
/// limit of 120 s for the whole step before their second turn.
fn step_limit(options: &crate::policy::RunOptions, step: &Step) -> std::time::Duration {
    let turns_of = |name: &str| options.agent(name).map_or(1, |profile| profile.max_turns);
    let turns = match step.kind() {
        StepKind::Reasoning => 1,
        StepKind::Agent(name) => turns_of(name),
        StepKind::Tool(_) if options.recover == crate::policy::Recover::Replan => 1,
        StepKind::Tool(_) => 2 + turns_of(crate::agents::RECOVER),
    };
    options.step_timeout.saturating_mul(turns.max(1))
}

/// Why a step that ran out of `time` failed. One cut off while recovering
/// from a failed call failed with that call's error: the replanner is to
/// see it (the 1.5B replanner, told only "timed out after 120s", wrote the
/// program that raised a ValueError again unchanged, twice).
fn timed_out(time: std::time::Duration, tally: &Tally) -> String {
    match &tally.recovering_from {
        Some(error) => format!("{error} (recovery: it did not finish within the step's time limit of {time:?})"),
        None => format!("timed out after {time:?}"),
    }
}

/// Settle the mode's question for the planned call before the step's clock
/// starts, since a confirmation waits for a person. Calls whose arguments are
/// only known later (a model repaired them) are settled in [`call_checked`].
async fn confirm(
    setting: &Setting,
    control: &Control,
    step: &Step,
    deps: &DependencyOutputs,
    tally: &mut Tally,
) -> Result<(), String> {
    let Some(entry) = step.tool.as_deref().and_then(|t| setting.tools.get(t)) else {
        return Ok(());
    };
    if unknown_input(step, deps).is_some() {
        return Ok(()); // nothing to confirm: the call fails in `run`
    }
    match resolve_for(&entry, &step.args, &|id| dep_output(deps, id)) {
        Ok(args) => permit(setting, control, step, &entry, &Value::Object(args), tally)
            .await
            .map_err(|e| {
                tally.refused = true;
                e.message
            }),
        // Unresolvable arguments fail in `run`, with the model's chance to fix them.
        Err(_) => Ok(()),
    }
}

async fn run(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    deps: &DependencyOutputs,
    tally: &mut Tally,
) -> Result<Value, String> {
    let models = ctx.setting.options.strategy.profile().runs_models_between_tools;
    let no_model = |kind: &str| {
        format!(
            "step {} is {kind} step, and the {} strategy runs no model between tools",
            step.id, ctx.setting.options.strategy
        )
    };
    let output = match step.kind() {
        StepKind::Reasoning if !models => return Err(no_model("a reasoning")),
        StepKind::Reasoning => reason(&ctx.calls, &ctx.setting, plan, step, deps, tally).await?,
        StepKind::Agent(_) if !models => return Err(no_model("an agent")),
        StepKind::Agent(agent) => agent_step::run(ctx, plan, step, agent, deps, tally).await?,
        StepKind::Tool(name) => call_tool(ctx, plan, step, name, deps, tally).await?,
    };
    if let (Some(expected), true) = (&step.expected, models) {
        tally.output = Some(output.clone());
        expected::check_expected(&ctx.calls, &ctx.setting, plan, step, expected, &output, tally).await?;
    }
    Ok(output)
}

/// A tool step: resolve its arguments and call the tool directly; a call that
/// fails goes to a recovery loop, and an empty result that a step would
/// write counts as a failure (see [`empty_and_written`]).
async fn call_tool(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    name: &str,
    deps: &DependencyOutputs,
    tally: &mut Tally,
) -> Result<Value, String> {
    let entry = ctx
        .setting
        .tools
        .get(name)
        .ok_or_else(|| format!("tool `{name}` is not available"))?;
    if let Some(why) = unknown_input(step, deps) {
        return Err(why);
    }
    // A plan may be taken with arguments the tool's plan check refused (the
    // planner kept them after being told): they fail here, to be recovered,
    // rather than run and give a number that looks like an answer
    // (`count(tickets.csv, status='open')` counts one line of words).
    let refused = entry.tool.plan_check(&Value::Object(step.args.clone()));
    let resolved = match refused {
        Some(why) => Err(why),
        None => resolve_for(&entry, &step.args, &|id| dep_output(deps, id)).map_err(|e| e.to_string()),
    };
    let direct = match resolved {
        Ok(args) => {
            tally.args = Some(Value::Object(args.clone()));
            let asker = asking::RunAsker::new(ctx, step, tally.version);
            let parts = (&ctx.setting, &ctx.recording, &ctx.control);
            // Only a tool given its inputs as variables gets the file names
            // (and a copy of the dependencies' results to carry them).
            let named;
            let inputs = match entry.tool.inputs_argument() {
                Some(_) => {
                    named = with_file_names(plan, step, deps);
                    &named
                }
                None => deps,
            };
            // The call has one step time limit of its own, so that one that
            // hangs leaves the rest of the step's time to its recovery.
            let limit = ctx.setting.options.step_timeout;
            let call = call_checked(parts, step, &entry, Value::Object(args), (&asker, inputs), tally);
            let called = tokio::time::timeout(limit, call)
                .await
                .unwrap_or_else(|_| Err(ToolError::retryable(timed_out(limit, tally))));
            called.and_then(|output| match empty_and_written(&ctx.setting, plan, step, &output) {
                Some(why) => Err(ToolError::new(ToolErrorKind::NotFound, why)),
                None => Ok(output),
            })
        }
        Err(e) => Err(ToolError::invalid_args(e)),
    };
    let error = match direct {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let args = called(step, tally);
    if recover::recoverable(&ctx.setting, plan, &args, &error) {
        return recover::recover(ctx, plan, step, &entry, deps, (&args, &error), tally).await;
    }
    tally.refused = error.kind == ToolErrorKind::Denied;
    Err(error.to_string())
}

/// `deps` with, under the key [`FILE_NAMES`](crate::tools::FILE_NAMES), the name of the file each
/// dependency read (`name` for a read of `name.txt`) mapped to its id and
/// the file's extension (`["s1", "txt"]`), for a tool given its
/// dependencies' results as variables (`python`): models write
/// `name.upper()`, or `float(name.txt)`, for the text of name.txt as
/// readily as `s1.upper()`. The tool decides which names it can bind.
/// Under [`PROGRAMS`](crate::tools::PROGRAMS), the programs of the
/// dependencies that are `python` steps, by id, as the plan wrote them.
fn with_file_names(plan: &Plan, step: &Step, deps: &DependencyOutputs) -> DependencyOutputs {
    let names: serde_json::Map<String, Value> = step
        .depends_on
        .iter()
        .filter_map(|id| {
            let path = plan.step(id)?.args.get("path")?.as_str()?;
            let path = std::path::Path::new(path);
            let stem = path.file_stem()?.to_str()?;
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
            Some((stem.to_string(), serde_json::json!([id, ext])))
        })
        .collect();
    let programs: serde_json::Map<String, Value> = step
        .depends_on
        .iter()
        .filter_map(|id| {
            let dependency = plan.step(id).filter(|d| d.tool.as_deref() == Some("python"))?;
            Some((id.clone(), dependency.args.get("code")?.clone()))
        })
        .collect();
    let mut inputs = deps.clone();
    if !names.is_empty() {
        inputs.push((crate::tools::FILE_NAMES.to_string(), Value::Object(names)));
    }
    if !programs.is_empty() {
        inputs.push((crate::tools::PROGRAMS.to_string(), Value::Object(programs)));
    }
    inputs
}

/// Why `output`, the result of tool step `step`, is a failure: it is empty
/// (a glob or a search that matched nothing) and a step of `plan` with side
/// effects would write it on. Written, it would make an empty file that
/// looks like the work was done.
fn empty_and_written(setting: &Setting, plan: &Plan, step: &Step, output: &Value) -> Option<String> {
    if !result::is_empty_output(output) {
        return None;
    }
    let writer = plan.steps.iter().find(|s| {
        s.tool.as_deref().is_some_and(|t| setting.tools.has_side_effects(t))
            && plan::step_references(s).iter().any(|(_, r)| r.step == step.id)
    })?;
    let how = match output.as_str().map(str::trim) {
        Some(printed) if !printed.is_empty() => format!("it gave {printed}, an empty collection"),
        _ => "it matched nothing".to_string(),
    };
    Some(format!(
        "{} gave nothing ({how}), and step {} would write that: an empty result is not written as if it were the work",
        step.id, writer.id
    ))
}

/// Why a tool step cannot run, when an argument uses the output of a step
/// taken as done on resume without it: a guess (or `null`) would be passed on
/// as if it were what that step returned.
fn unknown_input(step: &Step, deps: &DependencyOutputs) -> Option<String> {
    plan::step_references(step).into_iter().find_map(|(arg, r)| {
        let why = dep_output(deps, &r.step)?;
        let why = result::why_unknown(&why)?;
        Some(format!(
            "{arg} uses the output of {}, which is unknown: {why}. Run {} again (or replace this step) to get it",
            r.step, r.step
        ))
    })
}

/// The arguments a tool step's call was made with (its own, when they did not resolve).
fn called(step: &Step, tally: &Tally) -> Value {
    tally.args.clone().unwrap_or_else(|| Value::Object(step.args.clone()))
}

const EXECUTOR_ROLE: &str = "You are the executor: carry out exactly one step of the plan, using only what you are shown. Do not do other steps.";

/// A reasoning step: the model's reply is the step's output.
async fn reason(
    calls: &ModelCalls,
    setting: &Setting,
    plan: &Plan,
    step: &Step,
    deps: &DependencyOutputs,
    tally: &mut Tally,
) -> Result<Value, String> {
    let prompt = format!(
        "{}\nReply with only the result of this step: just the value or text it asks for, with no explanation and no JSON wrapper (JSON only if the step asks for structured data).",
        context_with(setting, plan, step, deps, true)
    );
    for _ in 0..setting.options.executor_max_turns.max(1) {
        let mut request = ChatRequest::new(
            Role::Executor,
            "",
            vec![
                Message::system(setting.system()),
                Message::user(format!("{EXECUTOR_ROLE}\n\n{prompt}")),
            ],
        );
        request.step_id = Some(step.id.clone());
        tally.model_calls += 1;
        tally.attempts += 1;
        let response = calls.chat(request).await.map_err(|e| e.to_string())?;
        let text = response.content.unwrap_or_default();
        let text = without_line_numbers(&text);
        if !text.trim().is_empty() {
            return Ok(Value::String(text.trim().to_string()));
        }
    }
    Err("the executor model gave an empty reply".to_string())
}
