//! The replanner role: revise the rest of a plan after a failure, an unmet
//! expectation, or a person's feedback.
//!
//! It sees the task, the completed steps with their results, what went wrong,
//! and the steps not yet run, and returns the remaining work. Completed steps
//! are kept as they are (they never run again) and new steps may use their
//! results through `{{id}}` references.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

use serde_json::Value;

use crate::context::{ModelCalls, Recording, Setting};
use crate::llm::{Message, Role};
use crate::plan::{self, Plan, PlanError, PlanErrors, Step};
use crate::planner::{format_rules, invented_inputs_once, request_plan, Planned};
use crate::run::RunError;

/// Why the plan is being revised.
pub(crate) enum ReplanTrigger<'a> {
    StepFailed {
        step: &'a Step,
        error: &'a str,
    },
    Feedback(&'a str),
    /// A person steered the running run with this message.
    Steered(&'a str),
    /// replan-each-step: a step has just succeeded; keep, revise or finish.
    StepDone {
        step: &'a Step,
    },
    /// compiler: the joiner found the results do not answer the task yet.
    Unanswered(&'a str),
    /// A check found the file the run wrote wrong (`finding`); the steps
    /// that made it (`redo`, completed) are handed back to be written
    /// again, not kept ([`crate::strategy`]'s `redo`).
    FoundWrong {
        finding: &'a str,
        redo: &'a [Step],
    },
    /// compiler: the streamed plan ended in something that cannot run.
    Unreadable(&'a str),
}

/// A revised plan: the completed steps followed by the new remaining steps.
/// `earlier`: the run's plan versions so far (a program plan's revision
/// looks there for the programs that ran and the vote's others).
pub(crate) async fn replan(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    task: &str,
    (current, earlier): (&Plan, &[crate::report::PlanVersion]),
    completed: &[(Step, Value)],
    trigger: ReplanTrigger<'_>,
) -> Result<Planned, RunError> {
    if let Some(planned) = program_revision(calls, setting, recording, task, (current, earlier), &trigger).await? {
        return Ok(planned);
    }
    let redo_steps: &[Step] = match &trigger {
        ReplanTrigger::FoundWrong { redo, .. } => redo,
        _ => &[],
    };
    let redo: HashSet<String> = redo_steps.iter().map(|s| s.id.clone()).collect();
    let (redone, completed): (Vec<_>, Vec<_>) = completed.iter().cloned().partition(|(s, _)| redo.contains(&s.id));
    let done: HashSet<String> = completed.iter().map(|(s, _)| s.id.clone()).collect();
    let mut context = format!(
        "Task: {task}\n\nCurrent plan:\n{}\n\n",
        shown_plan(setting, current, &trigger)
    );
    context.push_str(&completed_text(setting, &completed));
    context.push_str(&trigger_text(setting, &trigger, &redone));
    let failed_tool_step = match &trigger {
        ReplanTrigger::StepFailed { step, .. } if step.tool.is_some() => Some(*step),
        _ => None,
    };
    let failed_agent_step = match &trigger {
        ReplanTrigger::StepFailed { step, .. } if step.agent.is_some() => Some(step.id.clone()),
        _ => None,
    };
    let agents_allowed = !setting.options.plannable_agents().is_empty();
    let avoid_repeat = match trigger {
        ReplanTrigger::StepFailed { step, .. } if agents_allowed && step.tool.is_some() => {
            " Do not repeat the failed step unchanged. When no tool call with known arguments can do it, hand it to an agent step whose description carries the error above, so the agent can look and try another way; otherwise fix its arguments or use another tool."
        }
        ReplanTrigger::StepFailed { .. } => {
            " Do not repeat the failed step unchanged: fix its arguments, use another tool, or take another route."
        }
        ReplanTrigger::FoundWrong { .. } => {
            " Write the steps to redo again, with the one that went wrong fixed: written unchanged, they give the same wrong result."
        }
        _ => "",
    };
    let remaining: Vec<&str> = current
        .steps
        .iter()
        .filter(|s| !done.contains(&s.id) && !redo.contains(&s.id))
        .map(|s| s.id.as_str())
        .collect();
    context.push_str(&format!(
        "Steps not yet run: {}\n\nReturn a plan with only the remaining work: the completed steps are kept automatically, so do not repeat them, and give new steps ids different from theirs ({}).{avoid_repeat}",
        if remaining.is_empty() { "none".to_string() } else { remaining.join(", ") },
        if completed.is_empty() {
            "none".to_string()
        } else {
            // In plan order: a set's order changes from run to run, and a
            // replayed cassette must see the prompt it recorded.
            completed.iter().map(|(s, _)| s.id.as_str()).collect::<Vec<_>>().join(", ")
        }
    ));

    let messages = vec![
        Message::system(setting.planning_system()),
        Message::user(format!(
            "You are the replanner: a plan is being revised, and you write the steps that remain to be done.\n\n{}{}\n\n{context}",
            format_rules(setting),
            calls.budget.remaining().map(|b| format!(" {b}")).unwrap_or_default()
        )),
    ];
    let limits = setting.options.plan_limits();
    // A revision after a failure still owes the files the task asks for (a
    // small replanner drops the write along with the step it replaces).
    let owes_outputs = (failed_tool_step.is_some() || failed_agent_step.is_some() || !redo.is_empty())
        && setting.tools.get("write_file").is_some();
    // A made-up input is sent back once, as the planner's are (a small
    // replanner turned "a crate holds 24 bottles" into another invented file).
    let invented_sent_back = AtomicBool::new(false);
    let unchanged_sent_back = AtomicBool::new(false);
    let accept = |revised: Plan| -> Result<(Plan, Vec<PlanError>), PlanErrors> {
        let unchanged = redo_unchanged_once(&revised, redo_steps, &unchanged_sent_back);
        // A revision that repeats the failed step is taken as written: the
        // run's loop protection sees the repeat and stops (or falls back)
        // at once, instead of asking for the same step again and again.
        // A step to redo that the revision names by reference, without
        // writing it again, runs again as it was (a read the new steps
        // count from); one it writes again runs as written.
        let used = still_used(current, &redo, &revised.steps);
        let kept: Vec<Step> = current
            .steps
            .iter()
            .filter(|s| done.contains(&s.id) || used.contains(&s.id))
            .cloned()
            .collect();
        let mut merged = merge(setting, current, &kept, revised, failed_agent_step.as_deref())?;
        let mut missing = plan::validate_leaving_args(&merged, &setting.tools, &limits, &done)?;
        // What the findings say, held against the new steps only: a
        // completed step has run and cannot change.
        missing.extend(
            plan::findings(&merged, &setting.tools)
                .into_iter()
                .filter(|e| e.step().is_none_or(|step| !done.contains(step))),
        );
        missing.extend(invented_inputs_once(&mut merged, task, setting, &invented_sent_back));
        missing.extend(plan::missing_inputs(&merged, task, &setting.tools));
        if owes_outputs {
            missing.extend(plan::unwritten_outputs(&merged, task, &setting.tools, &done));
            missing.extend(
                plan::outputs_read(&merged, task, &setting.tools)
                    .into_iter()
                    .filter(|e| e.step().is_none_or(|step| !done.contains(step))),
            );
        }
        missing.extend(unchanged);
        Ok((merged, missing))
    };
    request_plan(calls, setting, recording, Role::Replanner, messages, task, &accept).await
}

/// The temperature a program plan is written again at: greedy, the 1.5B
/// model wrote the program that had failed again (`import pandas` after
/// being told only the standard library is installed).
const PROGRAM_AGAIN_TEMPERATURE: f32 = 0.7;

/// A program plan written again: when the plan in force is one program
/// (the run's help's program tool, [`crate::help::PlanHelp::program_prompt`])
/// that failed, left the work undone or wrote a file a check found wrong,
/// the model is shown the task's files, the program and what went wrong,
/// and writes the program again as a new step, recorded as the
/// `program-plan` help. A plan of steps would be written without the files
/// in view. A program written again that ran already (the 1.5B model wrote
/// 7 of 9 revisions on held-out-20 as they were) is put aside for the
/// first of the vote's other programs not yet run ([`Mend::others`]), which
/// did other work on a copy. `None` when the plan is no program plan, or
/// the reply holds no program or one that does not pass the plan check:
/// the replanner then revises in steps.
///
/// [`Mend::others`]: crate::help::Mend::others
async fn program_revision(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    task: &str,
    (current, earlier): (&Plan, &[crate::report::PlanVersion]),
    trigger: &ReplanTrigger<'_>,
) -> Result<Option<Planned>, RunError> {
    let [only] = current.steps.as_slice() else {
        return Ok(None);
    };
    let what = match trigger {
        ReplanTrigger::StepFailed { step, error } if step.id == only.id => format!("failed:\n{error}"),
        ReplanTrigger::FoundWrong { finding, redo } if redo.iter().any(|s| s.id == only.id) => {
            format!("ran, but a check found the file it wrote wrong:\n{finding}")
        }
        ReplanTrigger::Unanswered(missing) => format!("ran, but the work is not done:\n{missing}"),
        _ => return Ok(None),
    };
    let Some(asked) = setting
        .help
        .as_ref()
        .and_then(|help| help.program_prompt(task, &setting.tools))
        .filter(|asked| only.tool.as_deref() == Some(asked.tool.as_str()))
    else {
        return Ok(None);
    };
    let code = crate::program_vote::code(only);
    // A new id: the revision's step is no copy of the one that ran.
    let id = format!("s{}", only.id.trim_start_matches('s').parse::<usize>().unwrap_or(1) + 1);
    let write_again = |messages: Vec<crate::llm::Message>, temperature: Option<f32>| {
        crate::program_vote::program_step(calls, Role::Replanner, messages, temperature, (&asked.tool, &id), task)
    };
    let again = asked.messages_again(code, &what);
    let mut written = write_again(again, Some(PROGRAM_AGAIN_TEMPERATURE)).await?;
    // A program written again is new when it is none that ran and still
    // works in every file of the task the one before did: on held-out-27 a
    // revision of a CSV-to-JSON program printed the JSON and wrote no file.
    let fresh = |step: &Step| !ran_already(step, current, earlier) && keeps_files(code, step, task);
    // None new, and no other of the vote to take instead: one more, asked
    // anew without the program in view (on held-out-27 the 1.5B model wrote
    // a difference into a sentence, was told two programs computed the
    // number alone, and wrote the same program again; on held-out-38 it
    // wrote a program that failed on a KeyError again at 0.7 and at 1.0).
    let other = other_program(current, earlier);
    if !written.as_ref().is_some_and(fresh) && other.is_none() {
        if let Some(anew) = write_again(asked.messages_anew(&what), None).await?.filter(fresh) {
            written = Some(anew);
        }
    }
    // With no other program, the same program again is taken as written:
    // the run's loop protection sees the repeat (or the file unchanged) and
    // stops, where a plan of steps written without the files in view rarely
    // did better (of 19 held-out-14 runs revised so, one passed) and once
    // made a file for another task.
    let (step, note) = match (written, other) {
        (Some(step), _) if fresh(&step) => (step, None),
        (_, Some(other)) => {
            let note = "the program written again was one that had run, or left out a file of the task the one before worked in: the first of the vote's other programs, which did other work on a copy of the folder, is taken";
            (Step { id, ..other.clone() }, Some(note))
        }
        (Some(step), None) => (step, None),
        (None, None) => return Ok(None),
    };
    let revised = Plan::new(current.goal.clone(), vec![step.clone()]);
    let limits = setting.options.plan_limits();
    let mut found = match plan::validate_leaving_args(&revised, &setting.tools, &limits, &HashSet::new()) {
        Ok(found) => found,
        Err(_) => return Ok(None),
    };
    found.extend(plan::findings(&revised, &setting.tools));
    found.extend(plan::unwritten_outputs(&revised, task, &setting.tools, &HashSet::new()));
    if !found.is_empty() {
        return Ok(None);
    }
    let mut mend = crate::help::Mend::program_plan(&step, None);
    if let Some(note) = note {
        mend.note = Some(note.to_string());
    }
    let planned = Planned {
        plan: revised,
        mends: vec![mend],
    };
    Ok(Some(crate::planner::taken(setting, recording, planned)))
}

/// The programs of the run's plans so far (`earlier`, and `current`).
fn programs_run<'p>(current: &'p Plan, earlier: &'p [crate::report::PlanVersion]) -> impl Iterator<Item = &'p str> {
    let steps = earlier.iter().flat_map(|v| v.plan.steps.iter()).chain(&current.steps);
    steps.filter_map(|s| s.args.get("code").and_then(Value::as_str))
}

/// Whether `step`'s program is one of the run's plans so far.
fn ran_already(step: &Step, current: &Plan, earlier: &[crate::report::PlanVersion]) -> bool {
    let code = crate::program_vote::code(step);
    programs_run(current, earlier).any(|ran| crate::verdict::same_program(ran, code))
}

/// Whether `step`'s program names every file the task names that the
/// program before it (`before`) named: one that leaves out the file it is
/// to write (printing it instead) or the file it reads has lost part of
/// the task.
fn keeps_files(before: &str, step: &Step, task: &str) -> bool {
    let code = crate::program_vote::code(step);
    crate::plan::paths_named_by(task)
        .iter()
        .filter(|path| before.contains(path.as_str()))
        .all(|path| code.contains(path.as_str()))
}

/// The first of the votes' other programs ([`crate::help::Mend::others`])
/// that is none of the run's plans so far.
fn other_program<'p>(current: &'p Plan, earlier: &'p [crate::report::PlanVersion]) -> Option<&'p Step> {
    let mut others = earlier
        .iter()
        .flat_map(|v| v.mends.iter())
        .flat_map(|m| m.others.iter());
    others.find(|other| !ran_already(other, current, earlier))
}

/// The steps to `redo` written back unchanged in `revised` (every step of
/// it the same call as one of them), as a finding the first time
/// (`sent_back` then holds): the 1.5B replanner, told a file was wrong,
/// wrote the glob and the write that made it again as they were. After
/// that the revision is taken as written, and the run's check says again
/// what is wrong.
fn redo_unchanged_once(revised: &Plan, redo: &[Step], sent_back: &AtomicBool) -> Option<PlanError> {
    // The same call as a step to redo, by the loop protection's measure
    // (the arguments as written: neither has run in this revision).
    let as_written = |args: &serde_json::Map<String, Value>| args.clone();
    let unchanged = !redo.is_empty()
        && !revised.steps.is_empty()
        && revised.steps.iter().all(|step| {
            redo.iter().any(|r| {
                crate::policy::repeats_failed_step(r, &r.args, std::slice::from_ref(step), &as_written).is_some()
            })
        });
    (unchanged && !sent_back.swap(true, std::sync::atomic::Ordering::Relaxed)).then(|| PlanError::RedoUnchanged {
        steps: redo.iter().map(|s| s.id.clone()).collect(),
    })
}

/// Whether the replanner is not shown the arguments of `step`, a tool step
/// that failed: a recovery loop has tried the call already (with its
/// arguments), and the 1.5B replanner wrote the failed program back as it
/// was shown on 12 of 31 held-out-7 runs, which ends a run with no
/// progress. Its description, tool and error say what to write anew.
fn call_hidden(setting: &Setting, step: &Step) -> bool {
    step.tool.is_some() && setting.options.recover == crate::policy::Recover::Agent
}

/// The current plan as the replanner is shown it: without a failed step
/// whose call is hidden ([`call_hidden`]).
fn shown_plan(setting: &Setting, current: &Plan, trigger: &ReplanTrigger<'_>) -> String {
    let mut shown = current.clone();
    if let ReplanTrigger::StepFailed { step, .. } = trigger {
        if call_hidden(setting, step) {
            shown.steps.retain(|s| s.id != step.id);
        }
    }
    shown.to_json_pretty()
}

/// What the completed steps gave, for the replanner's prompt.
fn completed_text(setting: &Setting, completed: &[(Step, Value)]) -> String {
    let mut text = String::new();
    if completed.is_empty() {
        text.push_str("Completed steps: none.\n\n");
    } else {
        text.push_str("Completed steps (kept; never re-run; use their results with {{id}}):\n");
        for (step, output) in completed {
            text.push_str(&format!(
                "[{}] {} -> {}\n",
                step.id,
                step.description,
                crate::text::cut_to_budget(&plan::value_as_text(output), setting.options.result_budget)
            ));
        }
        text.push('\n');
    }
    text
}

/// Why the plan is being revised, for the replanner's prompt; `redone`:
/// the completed steps handed back to be written again, with their results.
fn trigger_text(setting: &Setting, trigger: &ReplanTrigger<'_>, redone: &[(Step, Value)]) -> String {
    match trigger {
        ReplanTrigger::StepFailed { step, error } => format!(
            "Failed step: [{}] {} ({})\nError: {error}\n\n{}",
            step.id,
            step.description,
            match step.kind() {
                plan::StepKind::Tool(tool) => format!("tool: {tool}"),
                plan::StepKind::Agent(agent) => format!("agent: {agent}"),
                plan::StepKind::Reasoning => "tool: none, reasoning".to_string(),
            },
            if call_hidden(setting, step) {
                "Its arguments are not shown: they were tried, and corrected once, and failed. Write the step anew from its description and the error.\n\n"
            } else {
                ""
            }
        ),
        ReplanTrigger::Feedback(feedback) => format!(
            "The user reviewed the plan and asks for changes:\n{feedback}\n\n"
        ),
        ReplanTrigger::Steered(message) => format!(
            "While the run was going, the user sent this instruction. Revise the steps not yet run so the rest follows it (completed steps stay as they are):\n{message}\n\n"
        ),
        ReplanTrigger::StepDone { step } => format!(
            "Step [{}] has just completed. Decide what remains: if the steps not yet run still fit, return them unchanged (same ids and arguments); if its result changes what is needed, return revised steps; if the completed steps already give everything the task needs, return \"steps\": [].\n\n",
            step.id
        ),
        ReplanTrigger::Unanswered(missing) => format!(
            "All steps ran, but their results do not answer the task yet: {missing}\nAdd the steps that get what is missing.\n\n"
        ),
        ReplanTrigger::FoundWrong { finding, .. } => {
            let mut text = format!("All steps ran, but a check found the file they wrote wrong: {finding}\n\nThese steps made it; they are to redo, and their results are dropped:\n");
            for (step, output) in redone {
                let output = crate::text::cut_to_budget(&plan::value_as_text(output), setting.options.result_budget);
                text.push_str(&format!("[{}] {} -> {}\n", step.id, step.description, output));
            }
            text.push_str("Find the step whose result is wrong and write these steps again with it fixed (a program that reads the wrong input, a wrong formula or argument).\n\n");
            text
        }
        ReplanTrigger::Unreadable(problem) => format!(
            "The plan was cut short: the steps after the completed ones could not be used:\n{problem}\n\n"
        ),
    }
}

/// The steps to `redo` (of `current`) that the revision's `steps` name
/// without writing them again, and the ones those depend on.
fn still_used(current: &Plan, redo: &HashSet<String>, steps: &[Step]) -> HashSet<String> {
    let written: HashSet<&str> = steps.iter().map(|s| s.id.as_str()).collect();
    let mut used = HashSet::new();
    let named = |step: &Step| -> Vec<String> {
        let references = plan::step_references(step).into_iter().map(|(_, r)| r.step);
        step.depends_on.iter().cloned().chain(references).collect()
    };
    let mut to_visit: Vec<String> = steps.iter().flat_map(named).collect();
    while let Some(id) = to_visit.pop() {
        if redo.contains(&id) && !written.contains(id.as_str()) && used.insert(id.clone()) {
            to_visit.extend(current.step(&id).map(named).unwrap_or_default());
        }
    }
    used
}

/// The plan in force after a revision: the `kept` (completed) steps, then the
/// revision's new ones. A revision may echo a kept step but not change it;
/// after the agent step `failed_agent_step` failed, it must look again.
fn merge(
    setting: &Setting,
    current: &Plan,
    kept: &[Step],
    revised: Plan,
    failed_agent_step: Option<&str>,
) -> Result<Plan, PlanErrors> {
    let revised = clashing_ids_renamed(revised, kept);
    let mut steps = kept.to_vec();
    let mut errors = Vec::new();
    for step in revised.steps {
        match kept.iter().find(|k| k.id == step.id) {
            // The model echoed a completed step: it is kept already. A copy
            // under the same id and description is that step, whatever else
            // a small replanner changed in copying it (an agent step copied
            // as a reasoning step): it has run and will not run again.
            Some(k) if echoes(k, &step) => {}
            Some(_) => errors.push(PlanError::DuplicateId { id: step.id.clone() }),
            None => steps.push(step),
        }
    }
    if let Some(failed) = failed_agent_step {
        let new_steps = &steps[kept.len()..];
        if revised.infeasible.is_none() && !new_steps.iter().any(|s| looks(setting, s)) {
            errors.push(PlanError::GuessesInsteadOfLooking {
                failed: failed.to_string(),
            });
        }
    }
    if !errors.is_empty() {
        return Err(PlanErrors(errors));
    }
    Ok(Plan {
        goal: if revised.goal.trim().is_empty() {
            current.goal.clone()
        } else {
            revised.goal
        },
        steps,
        infeasible: revised.infeasible,
        questions: Vec::new(),
        assumptions: if revised.assumptions.is_empty() {
            current.assumptions.clone()
        } else {
            revised.assumptions
        },
    })
}

/// Whether `step` is the kept step `k` echoed: the same step, or a copy under
/// its id and description, whatever else a small replanner changed in copying.
fn echoes(k: &Step, step: &Step) -> bool {
    k == step || (k.id == step.id && k.description.trim() == step.description.trim())
}

/// `revised` with each new step that took a completed step's id given a
/// fresh one, and the revision's references to it following. A small
/// replanner numbers its steps from s1 again, though told the ids that are
/// taken; within its reply, `{{s1}}` means its own s1, so the step and its
/// references move together (asked again, the 1.5B replanner repeated the
/// clash three times).
fn clashing_ids_renamed(mut revised: Plan, kept: &[Step]) -> Plan {
    let clashing: Vec<String> = revised
        .steps
        .iter()
        .filter(|s| kept.iter().any(|k| k.id == s.id && !echoes(k, s)))
        .map(|s| s.id.clone())
        .collect();
    for id in clashing {
        let taken = |c: &String| kept.iter().chain(&revised.steps).any(|s| &s.id == c);
        let Some(fresh) = (1..).map(|n| format!("r{n}")).find(|c| !taken(c)) else {
            break;
        };
        // Only the revision's own steps: the kept step keeps its id.
        plan::rename_step(&mut revised.steps, &id, &fresh);
    }
    revised
}

/// Whether `step` finds something out: an agent step, or a call of a tool that
/// only reads, locally or over the network (with these arguments, and the
/// effect class the user's configuration gives it, as validation sees it).
fn looks(setting: &Setting, step: &Step) -> bool {
    use crate::tools::Effect;
    match step.kind() {
        plan::StepKind::Agent(_) => true,
        plan::StepKind::Tool(tool) => setting.tools.get(tool).is_some_and(|t| {
            matches!(
                t.effect(&Value::Object(step.args.clone())),
                Effect::ReadOnly | Effect::Network
            )
        }),
        plan::StepKind::Reasoning => false,
    }
}
