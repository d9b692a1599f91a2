//! Which steps to redo when the file a run made was found wrong.
//!
//! A revision keeps the completed steps as they are and adds new ones, so
//! after a check finds the file wrong, a small replanner handed "all steps
//! ran, add what is missing" wrote the same four steps back (the 1.5B model
//! picked `lines[1]` of the unsorted scores, and its revision kept that
//! step): kept, they never ran again, and the file stayed wrong. The steps
//! that made the file are instead dropped from what the revision keeps and
//! handed to it to write again: the step that wrote it and the steps it
//! depends on, all the way back, that computed a value: reads, programs and
//! commands (their effect class is at most `external`), reasoning and agent
//! steps. A step that wrote another file or did what cannot be undone is
//! kept. Nothing is redone when the file was there before the run: redoing
//! an edit in place would read its own result. A step redone runs again
//! only if the revision writes it again or names it (then as it was): a
//! program that appended to a file would append again, as any revised step
//! would.

use std::collections::HashSet;

use crate::plan::Step;
use crate::result::StepResult;
use crate::run::Run;
use crate::tools::Effect;

/// The steps of the plan in force that made `path`, a new file the run
/// wrote, in plan order: each completed step whose record (or an inner
/// call of it) wrote it, and the completed steps those depend on that have
/// no side effects. Empty when `path` is not a new file or no step is
/// known to have written it (a shell command that wrote it, say).
pub(crate) fn steps_that_made(run: &Run, path: &str) -> Vec<Step> {
    if !run.new_outputs.iter().any(|p| p == path) {
        return Vec::new();
    }
    let plan = as_it_ran(run);
    let done: Vec<&Step> = plan.steps.iter().filter(|s| run.done.contains_key(&s.id)).collect();
    let mut chain: HashSet<&str> = done
        .iter()
        .filter(|s| record_of(run, &s.id).is_some_and(|r| wrote(run, r, path)))
        .map(|s| s.id.as_str())
        .collect();
    let mut to_visit: Vec<&str> = chain.iter().copied().collect();
    while let Some(id) = to_visit.pop() {
        let Some(step) = done.iter().find(|s| s.id == id) else {
            continue;
        };
        for dep in &step.depends_on {
            let computed = record_of(run, dep).is_some_and(|r| computes(run, r));
            if computed && done.iter().any(|s| &s.id == dep) && chain.insert(dep.as_str()) {
                to_visit.push(dep.as_str());
            }
        }
    }
    done.into_iter()
        .filter(|s| chain.contains(s.id.as_str()))
        .cloned()
        .collect()
}

/// The plan in force with each completed step as it ran: a step whose
/// record ran other arguments than the plan's, its references aside (a
/// failed program the executor fixed, [`crate::executor`]), has those. A
/// revision starts from what ran: on held-out-29 (spent) a program fixed
/// to read its amounts as numbers wrote the wrong columns, and the
/// replanner, shown the plan's program, wrote it again with the first bug.
pub(crate) fn as_it_ran(run: &Run) -> crate::plan::Plan {
    let mut plan = run.plan().clone();
    for step in plan.steps.iter_mut().filter(|s| run.done.contains_key(&s.id)) {
        let ran = record_of(run, &step.id).and_then(|r| r.args.as_ref()?.as_object().cloned());
        if let Some(ran) = ran.filter(|ran| *ran != run.resolved(&step.args)) {
            step.args = ran;
        }
    }
    plan
}

/// The record of the run of step `id` that succeeded last.
fn record_of<'r>(run: &'r Run, id: &str) -> Option<&'r StepResult> {
    run.records.iter().rev().find(|r| r.id == id && r.succeeded())
}

/// Whether `record`, or one of its inner calls, is a call with side effects
/// whose arguments name `path` (a `write_file` of it, or a program that
/// opens it).
fn wrote(run: &Run, record: &StepResult, path: &str) -> bool {
    let names = |r: &StepResult| {
        r.args
            .as_ref()
            .and_then(|a| a.as_object())
            .is_some_and(|args| args.values().any(|v| v.as_str().is_some_and(|s| s.contains(path))))
    };
    std::iter::once(record)
        .chain(&record.calls)
        .any(|r| r.succeeded() && effects(run, r) && names(r))
}

/// Whether `record` and its inner calls only computed a value: no call
/// wrote the workspace or did what cannot be undone.
fn computes(run: &Run, record: &StepResult) -> bool {
    std::iter::once(record).chain(&record.calls).all(|r| {
        let effect = r
            .tool
            .as_deref()
            .and_then(|t| run.ctx.setting.tools.get(t))
            .map(|entry| {
                let args = r.args.clone().unwrap_or_default();
                entry.effect(&args)
            });
        !matches!(effect, Some(Effect::WritesWorkspace | Effect::Irreversible))
    })
}

/// Whether the call `record` made has side effects (a step with no tool has none itself).
fn effects(run: &Run, record: &StepResult) -> bool {
    record
        .tool
        .as_deref()
        .is_some_and(|t| run.ctx.setting.tools.has_side_effects(t))
}
