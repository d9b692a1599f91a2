//! Whether a run did the work its task named, before it may say `succeeded`.
//!
//! A model can write "The sum is 42." without any step having written
//! `sum.txt`; a plan can write an empty file, or leave the file as it was.
//! So before a run reports success, every new file the task says to write
//! must exist in the workspace, hold something, and have been written by
//! this run: a call of this run with side effects named it, or the file
//! changed after the run began (a shell command or an MCP server wrote it).
//! Every strategy ends through this check, the ReAct ones included.
//!
//! "The files the task says to write" are read from its words
//! ([`crate::plan::outputs_named_by`]: a path after "to", "into", "named", …
//! in a sentence with a verb of writing, copying or making). That reading
//! also takes inputs ("write the name in name.txt in upper case to
//! upper.txt"), so only the files that did not exist when the run began
//! are held to it ([`crate::plan::new_outputs`]), and not one the run tried to read (a
//! misnamed input it recovered from). A file that was there is held to it
//! only when the run wrote none of the files the task names as outputs: a
//! task that says to save something in a file that is there ("save the new
//! version in VERSION") and a run that wrote nothing did not do its work,
//! while a run that wrote `upper.txt` for "write the name in name.txt to
//! upper.txt" did. Whether an edit in place is right is the synthesizer's
//! check's to say ([`produced`]).

use std::path::Path;

use serde_json::Value;

use super::Run;
use crate::result::StepResult;

/// What is missing of the files the run's task says to write, one line per
/// file; empty when each is there, non-empty and written by the run (or the
/// run has no workspace to look in).
pub(crate) fn unwritten(run: &Run) -> Vec<String> {
    let Some(workspace) = run.ctx.setting.tools.workspace() else {
        return Vec::new();
    };
    let mut missing = Vec::new();
    // A file that was there and is gone was removed or moved by the run
    // ("Delete old.log", "Move a.txt into archive"): work done on it.
    let gone = |path: &String, full: &Path| run.old_outputs.contains(path) && !full.exists();
    let wrote_any = run.new_outputs.iter().chain(&run.old_outputs).any(|path| {
        workspace.resolve(path).is_ok_and(|full| {
            gone(path, &full) || (full.is_file() && written_by(run, path, &full) && !as_at_start(run, path, &full))
        })
    });
    if !wrote_any {
        // An edit written to a copy beside the file says more than that the
        // file is as it was.
        let copied = copy_instead_of_edit(run);
        missing.extend(run.old_outputs.iter().map(|path| match &copied {
            Some((edited, what)) if edited == path => what.clone(),
            _ => printed_edit(run, workspace, path).unwrap_or_else(|| as_it_was(path)),
        }));
    }
    for path in &run.new_outputs {
        let Ok(full) = workspace.resolve(path) else { continue };
        // A missing file the run tried to read was an input, not an output
        // (misnamed, and recovered from, or missing, and the run failed).
        if !full.is_file() && read_by(run, path) {
            continue;
        }
        if !full.is_file() {
            missing.push(format!("the task says to write {path}, and it does not exist"));
        } else if std::fs::read(&full).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).trim().is_empty()) {
            missing.push(format!("the task says to write {path}, and it is empty"));
        } else if !written_by(run, path, &full) {
            missing.push(as_it_was(path));
        }
    }
    missing.extend(untouched_last_path(run, workspace));
    missing.extend(made_up_inputs(run, workspace));
    missing
}

/// The files the task works in that were not there when the run began and
/// are now: the run made the input it was to change or read, where the
/// work was to say that it is missing.
fn made_up_inputs(run: &Run, workspace: &crate::tools::workspace::Workspace) -> Vec<String> {
    run.absent_inputs
        .iter()
        .filter(|path| workspace.resolve(path).is_ok_and(|full| full.exists()))
        .map(|path| {
            format!(
                "the task works in {path}, which was not in the workspace when the run began, and the run made it: a file the task is to change or read that is missing is to be reported missing, not made"
            )
        })
        .collect()
}

/// The last file the task names, when it is not in the workspace and no
/// step or call of the run named it. A task may name the file it wants
/// made with no verb of writing (`port number only -> api_port.txt`), and a
/// run that never touched such a file cannot have done the work (on
/// held-out-9 the 1.5B model's plan computed the port, wrote nothing, and
/// the run said `succeeded`); a missing input the run read, or a file it
/// wrote, is the other checks' to judge. Only the last path, and only when
/// it is the one path named that is not there: an earlier one may be a
/// pattern (`IMG_YYYYMMDD_HHMMSS.jpg`), and of several (`the numbers in
/// a.txt, b.txt or c.txt`) any may be inputs to choose from.
fn untouched_last_path(run: &Run, workspace: &crate::tools::workspace::Workspace) -> Option<String> {
    let absent = |path: &String| {
        let dotfile = path.rsplit('/').next().is_some_and(|name| name.starts_with('.'));
        !dotfile && workspace.resolve(path).is_ok_and(|full| !full.exists())
    };
    let named = crate::plan::paths_named_by(&run.task);
    let [last] = named.iter().filter(|p| absent(p)).collect::<Vec<_>>()[..] else {
        return None;
    };
    if named.last() != Some(last) || run.new_outputs.contains(last) {
        return None;
    }
    let last = last.clone();
    let mut steps = run.plans.iter().flat_map(|v| v.plan.steps.iter());
    let planned = steps.any(|s| s.args.values().any(|v| crate::plan::mentions(v, &last)));
    let called = calls_of(run).any(|r| r.args.as_ref().is_some_and(|a| crate::plan::mentions(a, &last)));
    (!planned && !called).then(|| {
        format!("the task names {last}, which is not in the workspace, and no step of this run read or wrote it")
    })
}

/// The edit of `path` a step of the run printed and no step wrote
/// ([`unwritten_edit`]), said as what is missing.
fn printed_edit(run: &Run, workspace: &crate::tools::workspace::Workspace, path: &str) -> Option<String> {
    let now = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
    Some(unwritten_edit(run, path, &now)?.trim_end().to_string())
}

/// What is missing of `path`, a file no step of the run wrote.
fn as_it_was(path: &str) -> String {
    format!("the task says to write or change {path}, and the run left it as it was")
}

/// Whether `path` (at `full`) was written by the run: a succeeded call of
/// it (a step or an agent's inner call) with side effects names it in its
/// arguments, or the file was modified after the run began.
fn written_by(run: &Run, path: &str, full: &Path) -> bool {
    let changed_since_start = std::fs::metadata(full)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .is_some_and(|t| t.as_millis() as u64 + 1 >= run.started_at_ms);
    changed_since_start || calls_of(run).any(|r| writes(run, r, path))
}

/// Whether the file at `path` (at `full`) holds what it held when the run
/// began ([`Run::originals`]): written over with the same text (a program
/// that wrote TODO.md back with no line taken out, or with `\r\n` line
/// ends, [`crate::content::same_text`]) is not changed.
fn as_at_start(run: &Run, path: &str, full: &Path) -> bool {
    run.original(path)
        .is_some_and(|held| std::fs::read(full).is_ok_and(|now| crate::content::same_text(&now, held.as_bytes())))
}

/// The run's steps and their inner calls (an agent step's), as recorded.
pub(crate) fn calls_of(run: &Run) -> impl Iterator<Item = &StepResult> {
    run.records
        .iter()
        .flat_map(|r| std::iter::once(r).chain(r.calls.iter()))
}

/// Whether a call of the run that only reads named `path`: a planned step
/// of any plan version (run or not), or a call made (done or not).
fn read_by(run: &Run, path: &str) -> bool {
    let reads = |tool: Option<&str>| tool.is_some_and(|t| !run.ctx.setting.tools.has_side_effects(t));
    let planned = run
        .plans
        .iter()
        .flat_map(|v| v.plan.steps.iter())
        .any(|s| reads(s.tool.as_deref()) && names_in(&s.args, path));
    planned
        || calls_of(run)
            .filter(|r| reads(r.tool.as_deref()))
            .any(|r| names(r, path))
}

/// Whether the arguments of `record` name `path`.
fn names(record: &StepResult, path: &str) -> bool {
    record
        .args
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|args| names_in(args, path))
}

/// Whether one of `args` is `path` (`./` aside).
fn names_in(args: &serde_json::Map<String, Value>, path: &str) -> bool {
    let bare = |p: &str| p.trim().trim_start_matches("./").to_string();
    args.values().any(|v| v.as_str().is_some_and(|s| bare(s) == bare(path)))
}

/// Whether `record` is a succeeded call with side effects whose arguments name `path`.
fn writes(run: &Run, record: &StepResult, path: &str) -> bool {
    record.succeeded()
        && record
            .tool
            .as_deref()
            .is_some_and(|t| run.ctx.setting.tools.has_side_effects(t))
        && names(record, path)
}

/// The one file the task names that this run wrote, so that a second
/// derivation of it can be compared ([`crate::recompute`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Output {
    pub path: String,
    /// What it holds now.
    pub now: String,
    /// What it held when the run began: `None` for a file the run made.
    pub before: Option<String>,
}

/// The files the task names that this run wrote, with what each holds
/// now, for the answer to be written from: a program that wrote
/// fixed_percent.txt and printed nothing left the 1.5B synthesizer no
/// result to read, and it answered 75 % where the file held 56
/// (held-out-20).
pub(crate) fn written_files(run: &Run) -> Vec<(String, String)> {
    let Some(workspace) = run.ctx.setting.tools.workspace() else {
        return Vec::new();
    };
    run.new_outputs
        .iter()
        .chain(&run.old_outputs)
        .filter_map(|path| {
            let full = workspace.resolve(path).ok().filter(|full| full.is_file())?;
            let now = std::fs::read_to_string(&full).ok()?;
            written_by(run, path, &full).then(|| (path.clone(), now))
        })
        .collect()
}

/// The one file the task names that this run wrote, new or changed in
/// place (when what it held before is known, [`Run::originals`]); `None`
/// when the run wrote none or several.
pub(crate) fn one_output(run: &Run) -> Option<Output> {
    match <[_; 1]>::try_from(outputs_written(run)) {
        Ok([only]) => Some(only),
        _ => None,
    }
}

/// Each file the task names that this run wrote ([`one_output`]), whose
/// content before is known when it held one: a second derivation of each
/// can be compared.
pub(crate) fn outputs_written(run: &Run) -> Vec<Output> {
    let Some(workspace) = run.ctx.setting.tools.workspace() else {
        return Vec::new();
    };
    // A file the task names with no verb of writing, that the run changed
    // and whose content before is known, was edited in place: on held-out-10
    // `Remove the spaces and tabs at the end of its lines` in deploy.sh
    // removed every tab, and with no file to check, the checker passed it.
    let named = |path: &String| run.new_outputs.contains(path) || run.old_outputs.contains(path);
    let edited = run.originals.iter().map(|(path, _)| path).filter(|path| !named(path));
    let written: Vec<Output> = run
        .new_outputs
        .iter()
        .chain(&run.old_outputs)
        .chain(edited)
        .filter_map(|path| {
            let full = workspace.resolve(path).ok()?;
            let now = std::fs::read_to_string(&full).ok()?;
            let before = run.original(path).map(str::to_string);
            let unchanged_edit = !named(path) && before.as_ref() == Some(&now);
            (!unchanged_edit && written_by(run, path, &full)).then(|| Output {
                path: path.clone(),
                now,
                before,
            })
        })
        .collect();
    let derivable = |output: &Output| run.new_outputs.contains(&output.path) || output.before.is_some();
    if written.iter().all(derivable) {
        written
    } else {
        Vec::new()
    }
}

/// Most characters of one file the checker is shown.
const SHOWN_CHARS: usize = 1500;

/// Most input files the checker is shown.
const SHOWN_INPUTS: usize = 3;

/// The lines an edit of `path` took out and put in, for the check: shown
/// both whole files, the 1.5B checker passed `versionCode 41` edited into
/// `2 41` (held-out-10).
fn what_changed(path: &str, before: &str, now: &str) -> String {
    let changed = crate::text::changed_lines(before, now, SHOWN_CHANGED_LINES);
    match changed.is_empty() {
        true => format!("The run changed no line of {path}.\n\n"),
        false => format!(
            "The lines of {path} the run changed (- the line before, + the line now):\n{}\n\n",
            changed.join("\n")
        ),
    }
}

/// What the check is told of a file the run wrote (at `path`, holding
/// `now`) beyond its lines: facts of its form that the task may or may not
/// allow, for the check to weigh against the task's words (numbers written
/// as text in JSON rows, lines an edit in place kept moved elsewhere).
/// Each ends in a blank line; none
/// when there are none.
pub(crate) fn facts(run: &Run, path: &str, now: &str) -> Vec<String> {
    let typed = super::data_format::numbers_as_text(path, now);
    let moved = run.original(path).and_then(|before| moved_lines(path, before, now));
    typed.into_iter().chain(moved).collect()
}

/// Facts of the file at `path` that the task is asked about as a choice
/// of two ways ([`crate::synthesizer::which_asked`]), and by its own words
/// ([`crate::synthesizer::against`]), beside its [`facts`], and that the
/// checker is not shown: an input's lines put in sorted order, or cut to
/// parts of them ([`super::line_parts`]), and, in a
/// list the run made, an item written more than once, an input's line
/// written otherwise than the input first writes it, or values of a kind
/// (email or web addresses) that an input holds more of, or list items
/// copied with their marks; and a count of a column's values that counts
/// one value in other capitals or spaces as another
/// ([`super::counted_apart`]). Shown that a sorted
/// list was not in the input's order, the 1.5B checker failed a run asked
/// to sort it, twice (a spent tune part).
pub(crate) fn choice_facts(run: &Run, path: &str, now: &str) -> Vec<super::two_ways::TwoWays> {
    let sorted = super::line_order::sorted_from(path, now, &run.originals);
    let cut = super::line_parts::cut_from(path, now, &run.originals);
    let made = run.new_outputs.iter().any(|new| new == path);
    let repeated = made.then(|| super::repeats::repeated_in(path, now)).flatten();
    let respelled = made
        .then(|| super::respelled::respelled_from(path, now, &run.originals))
        .flatten();
    let left_out = made
        .then(|| super::left_out::left_out_from(path, now, &run.originals))
        .flatten();
    let marked = made
        .then(|| super::line_parts::marked_from(path, now, &run.originals))
        .flatten();
    let counted_apart = made
        .then(|| super::counted_apart::counted_apart_from(path, now, &run.task, &run.originals))
        .flatten();
    sorted
        .into_iter()
        .chain(cut)
        .chain(repeated)
        .chain(respelled)
        .chain(left_out)
        .chain(marked)
        .chain(counted_apart)
        .collect()
}

/// Lines of `path` that an edit kept as they were and moved elsewhere,
/// said as a fact ([`moved`]).
fn moved_lines(path: &str, before: &str, now: &str) -> Option<String> {
    let moved: Vec<String> = crate::config_edit::moved(before, now)
        .iter()
        .take(3)
        .map(|line| format!("`{line}`"))
        .collect();
    (!moved.is_empty()).then(|| {
        format!(
            "In {path}, lines the run kept as they were are in another place than before: {}.\n\n",
            moved.join(", ")
        )
    })
}

/// When the run edited a configuration file in place and rewrote it
/// instead of changing what the task names ([`crate::config_edit`]): its
/// path and a line saying so.
pub(crate) fn config_lines_moved(run: &Run) -> Option<(String, String)> {
    let ran = crate::result::programs_ran(&run.records);
    let programs: Vec<&str> = ran.iter().map(String::as_str).collect();
    first_edit_flaw(run, |path, was, now| {
        crate::config_edit::rewritten(path, was, now, &run.task, &programs)
    })
}

/// The first file the run had at its start (path, what it held) whose
/// text now `flaw` finds a flaw in (path, was, now): its path and the flaw.
fn first_edit_flaw(run: &Run, flaw: impl Fn(&str, &str, &str) -> Option<String>) -> Option<(String, String)> {
    let workspace = run.ctx.setting.tools.workspace()?;
    run.originals.iter().find_map(|(path, was)| {
        let now = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
        Some((path.clone(), flaw(path, was, &now)?))
    })
}

/// When the run edited a file in place and wrote a dotted number (a
/// version) of it as a value of another form ([`crate::dotted_value`]),
/// or its lines with other line ends ([`crate::line_ends`]), or a table's
/// number with other decimal places than its column's
/// ([`crate::decimal_places`]), or changed a record the task does not name
/// ([`crate::other_record`]): its path and a line saying so.
pub(crate) fn dotted_form_changed(run: &Run) -> Option<(String, String)> {
    first_edit_flaw(run, |path, was, now| {
        crate::dotted_value::changed_form(path, was, now, &run.task)
            .or_else(|| crate::line_ends::changed_ends(path, was, now, &run.task))
            .or_else(|| crate::decimal_places::changed_places(path, was, now, &run.task))
            .or_else(|| crate::other_record::changed_unnamed(path, was, now, &run.task))
    })
}

/// When a step of the run printed a changed copy of the file at `path`
/// (most of its lines, some out or in) and the run wrote none of the files
/// its task names: the edit was computed and never made, which the check is
/// told, with the lines it changes. A run that printed rsvp.txt without
/// Oskar's line, wrote nothing and answered "his line has been removed" was
/// passed by a check shown only the file and the answer.
fn unwritten_edit(run: &Run, path: &str, now: &str) -> Option<String> {
    let printed = calls_of(run)
        .filter(|r| r.succeeded())
        .filter_map(|r| r.output.as_ref())
        .map(crate::refs::value_as_text)
        .find(|text| is_changed_copy(now, text))?;
    let changed = crate::text::changed_lines(now, &printed, SHOWN_CHANGED_LINES);
    Some(format!(
        "A step printed {path} changed (- its line, + the step's line):\n{}\nand no step wrote it: {path} is as it was before the run.\n\n",
        changed.join("\n")
    ))
}

/// When the run's task names no new file to write, left every file it
/// names as it was, and wrote a changed copy of one of them beside it under
/// a name the task does not give (`prices_modified.csv` for "change the
/// price of oat milk in prices.csv"): the edit went to the wrong file. Its
/// path and a line saying so. On held-out-14 the 1.5B model's program made
/// that copy, and the checker, shown prices.csv as it was, passed the run.
pub(crate) fn copy_instead_of_edit(run: &Run) -> Option<(String, String)> {
    if !run.new_outputs.is_empty() || run.originals.is_empty() {
        return None;
    }
    let workspace = run.ctx.setting.tools.workspace()?;
    let now = |path: &str| std::fs::read_to_string(workspace.resolve(path).ok()?).ok();
    if run
        .originals
        .iter()
        .any(|(path, was)| now(path).as_deref() != Some(was.as_str()))
    {
        return None;
    }
    let (entries, _) = workspace.listing(COPIES_LOOKED_AT);
    for (path, was) in &run.originals {
        let copy = entries.iter().find(|(other, size)| {
            size.is_some()
                && run.originals.iter().all(|(named, _)| named != other)
                && copy_named(path, other)
                && workspace.resolve(other).is_ok_and(|full| written_by(run, other, &full))
                && now(other).is_some_and(|text| is_edited_copy(was, &text))
        });
        if let Some((other, _)) = copy {
            let what = format!(
                "the run wrote {other}, a changed copy of {path}, and {path} is as it was: change {path} itself"
            );
            return Some((path.clone(), what));
        }
    }
    None
}

/// The first flaw found in a new file the task names, read once from the
/// workspace beside the files the task names as they were when the run
/// began, by the checks every new file is held to
/// ([`crate::new_file::checks`]): its path and a line saying so. Programs
/// in the vote are held to these on their copies ([`crate::sandbox`]); a
/// program written after it (a revision, a fix) is held to them here.
pub(crate) fn new_output_flaw(run: &Run) -> Option<(String, String)> {
    let workspace = run.ctx.setting.tools.workspace()?;
    let inputs: Vec<(&str, &str)> = run.originals.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let written: Vec<(&str, String)> = run
        .new_outputs
        .iter()
        .filter_map(|path| {
            Some((
                path.as_str(),
                std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?,
            ))
        })
        .collect();
    let files: Vec<(&str, &str)> = written.iter().map(|(path, now)| (*path, now.as_str())).collect();
    let checks = crate::new_file::checks(&run.task);
    crate::new_file::first_flaw(&checks, &files, &inputs).map(|(path, flaw)| (path.to_string(), flaw))
}

/// When the file the run wrote holds a value twice or two lines out of the
/// order the task states ([`crate::task_test`]), as the vote's test of
/// the task read it: its path and a line saying so. The vote holds each of
/// its programs to the test; a program written after it (a revision, a
/// fix) is held to it here. On held-out-34 (spent) each of six programs
/// wrote an email twice where the task said each once, the replanner's
/// program did so too, and the run said `succeeded`. The order the values
/// first appear in is read from the files the task names as they were
/// when the run began ([`Run::originals`]): where those are not kept (no
/// check asked for, or on an engine), that order is no evidence here.
pub(crate) fn list_test_broken(run: &Run) -> Option<(String, String)> {
    let test = run
        .plans
        .iter()
        .rev()
        .flat_map(|version| &version.mends)
        .find_map(|mend| mend.list_test.as_ref())?;
    let written = outputs_written(run)
        .into_iter()
        .find(|output| output.path == test.file)?;
    let inputs: Vec<(&str, &str)> = run
        .originals
        .iter()
        .filter(|(path, _)| *path != test.file)
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let broken = test.broken_by(&written.now, &inputs)?;
    Some((
        written.path,
        format!("{broken} (read from the task before any program ran)"),
    ))
}

/// When the run wrote a file the task names back as it was (written since
/// the run began, holding what it held then), and changed no file the task
/// names nor made one: the change it set out to make matched nothing. Its
/// path and a line saying so. On held-out-27 a program to tick off a TODO
/// item searched for it already ticked, wrote TODO.md back unchanged, and
/// the run said `succeeded`; the task's verb ("tick off") is none a check
/// of its words knows, and needs none.
pub(crate) fn written_back(run: &Run) -> Option<(String, String)> {
    let workspace = run.ctx.setting.tools.workspace()?;
    let made = run
        .new_outputs
        .iter()
        .any(|path| workspace.resolve(path).is_ok_and(|full| full.is_file()));
    let changed = run
        .originals
        .iter()
        .any(|(path, _)| !workspace.resolve(path).is_ok_and(|full| as_at_start(run, path, &full)));
    if made || changed {
        return None;
    }
    let path = run.originals.iter().map(|(path, _)| path).find(|path| {
        workspace
            .resolve(path)
            .is_ok_and(|full| full.is_file() && written_by(run, path, &full))
    })?;
    let what = format!(
        "the run wrote {path} back as it was: the change it was to make matched nothing in the file (look at what {path} holds, and change that)"
    );
    Some((path.clone(), what))
}

/// When the run edited a file of several lines in place into one line that
/// is some of its lines run together (`Ann BellCarl Diaz`): the line breaks
/// were lost, as by `writelines` of stripped lines, which the 1.5B model's
/// program did removing a guest from guests.txt on held-out-17, and two
/// programs and the checker passed it. Its path and a line saying so.
pub(crate) fn lines_joined(run: &Run) -> Option<(String, String)> {
    first_edit_flaw(run, |path, was, now| {
        joined_lines(was, now).then(|| {
            format!(
                "{path} had its lines on lines of their own and now holds them run together on one line: write each line with its line break"
            )
        })
    })
}

/// Whether `now` is one line that is two or more of the lines of `was`,
/// in order, with nothing between them.
fn joined_lines(was: &str, now: &str) -> bool {
    let now = now.trim();
    if now.contains('\n') {
        return false;
    }
    let mut rest = now;
    let mut joined = 0;
    for line in was.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if let Some(after) = rest.strip_prefix(line) {
            rest = after;
            joined += 1;
        }
    }
    rest.is_empty() && joined >= 2
}

/// Most workspace entries looked through for a copy.
const COPIES_LOOKED_AT: usize = 200;

/// Whether `other` is named as a copy of `path`: in the same folder, with
/// the same extension, its stem beginning with `path`'s stem.
fn copy_named(path: &str, other: &str) -> bool {
    fn split(p: &str) -> (&str, &str, &str) {
        let (folder, name) = p.rsplit_once('/').unwrap_or(("", p));
        let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
        (folder, stem, ext)
    }
    let (folder, stem, ext) = split(path);
    let (other_folder, other_stem, other_ext) = split(other);
    folder == other_folder && ext == other_ext && other_stem.len() > stem.len() && other_stem.starts_with(stem)
}

/// Whether `text` is `file` (of two lines or more) with some lines out or
/// in, but at most half as many as the longer of the two has.
fn is_changed_copy(file: &str, text: &str) -> bool {
    let file_lines = file.lines().count();
    if file_lines < 2 {
        return false;
    }
    let longer = file_lines.max(text.lines().count());
    let changed = crate::text::changed_lines(file, text, usize::MAX)
        .iter()
        .filter(|l| l.starts_with("- ") || l.starts_with("+ "))
        .count();
    changed > 0 && changed <= longer / 2
}

/// Whether the file `other`, holding `text`, is a copy of `file` edited:
/// some lines changed ([`is_changed_copy`]), or every line a little, most
/// of the words of the one (case aside) being words of the other (on
/// held-out-19 a copy of bookings.csv had each room code in upper case).
fn is_edited_copy(file: &str, text: &str) -> bool {
    is_changed_copy(file, text) || (file.lines().count() >= 2 && file != text && same_words(file, text))
}

/// Whether at least [`SAME_WORDS`] of the words of the longer of `a` and
/// `b` (split at what is not a letter or digit, case aside) are words of
/// the other, each counted as often as it stands.
fn same_words(a: &str, b: &str) -> bool {
    let words = |text: &str| -> std::collections::HashMap<String, usize> {
        let mut counts = std::collections::HashMap::new();
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            *counts.entry(word.to_lowercase()).or_insert(0) += 1;
        }
        counts
    };
    let (a, b) = (words(a), words(b));
    let total = a.values().sum::<usize>().max(b.values().sum());
    let shared: usize = a
        .iter()
        .map(|(word, n)| (*n).min(b.get(word).copied().unwrap_or(0)))
        .sum();
    total > 0 && shared as f64 >= SAME_WORDS * total as f64
}

/// The share of words two texts must have in common to be one changed.
const SAME_WORDS: f64 = 0.7;

/// Most changed lines shown to the check of an edit.
const SHOWN_CHANGED_LINES: usize = 20;

/// What the run produced, for the synthesizer's check
/// ([`crate::synthesizer::check`]): the files the task names that the run
/// did not write (its inputs, a few, so that a value can be checked
/// against where it came from: the port under `[replica]`, the longest of
/// the words listed), then each file the task names that this run wrote, as
/// it is now, and the answer it would give.
pub(crate) fn produced(run: &Run, answer: &str) -> String {
    let mut inputs = String::new();
    let mut out = String::new();
    if let Some(workspace) = run.ctx.setting.tools.workspace() {
        let mut named = crate::plan::paths_named_by(&run.task);
        named.extend(
            run.old_outputs
                .iter()
                .filter(|p| !named.contains(p))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let files: Vec<(String, std::path::PathBuf, bool)> = named
            .into_iter()
            .filter_map(|path| {
                let full = workspace.resolve(&path).ok().filter(|f| f.is_file())?;
                let written = run.new_outputs.contains(&path) || written_by(run, &path, &full);
                Some((path, full, written))
            })
            .collect();
        let wrote_none = !files.iter().any(|(_, _, written)| *written);
        let mut shown_inputs = 0;
        for (path, full, written) in files {
            let held = std::fs::read_to_string(&full).unwrap_or_default();
            let text = crate::text::cut_to_budget(&held, SHOWN_CHARS);
            if let (true, Some(before)) = (written, run.original(&path)) {
                let before = crate::text::cut_to_budget(before, SHOWN_CHARS);
                out.push_str(&format!(
                    "The file {path} held before the run:\n{}\n\n",
                    before.trim_end()
                ));
            }
            if written {
                out.push_str(&format!("The file {path} now holds:\n{}\n\n", text.trim_end()));
                out.push_str(&facts(run, &path, &held).concat());
                if let Some(before) = run.original(&path) {
                    out.push_str(&what_changed(&path, before, &held));
                }
            } else {
                if let Some(edit) = wrote_none.then(|| unwritten_edit(run, &path, &held)).flatten() {
                    out.push_str(&edit);
                }
                if shown_inputs < SHOWN_INPUTS {
                    shown_inputs += 1;
                    inputs.push_str(&format!("The file {path} holds:\n{}\n\n", text.trim_end()));
                }
            }
        }
    }
    out.push_str(&format!("Its answer to the user: {}", answer.trim()));
    out.push_str(&cited_results(run, answer));
    match inputs.is_empty() {
        true => format!("What the run produced:\n{out}"),
        false => format!("What the run was given:\n{inputs}What the run produced:\n{out}"),
    }
}

/// What the results an answer cites say, after it: an answer that says
/// `The city with the largest population is [s1].` reads as done to a
/// check that cannot see that s1 printed the population, not the city
/// (held-out-23). Empty when it cites none.
fn cited_results(run: &Run, answer: &str) -> String {
    let (_, mut ids) = crate::text::citations(answer);
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    let said: Vec<String> = ids
        .iter()
        .filter_map(|id| {
            let output = run.done.get(id)?;
            let text = crate::text::cut_to_budget(&crate::refs::value_as_text(output), CITED_CHARS);
            Some(format!("[{id}]{}", crate::text::below_if_long(&text)))
        })
        .collect();
    match said.is_empty() {
        true => String::new(),
        false => format!("\nThe results it cites:\n{}", said.join("\n")),
    }
}

/// Most characters of a cited result shown to the check.
const CITED_CHARS: usize = 300;

#[cfg(test)]
mod tests {
    use super::{is_edited_copy, joined_lines, moved_lines};

    /// A copy with every line changed a little is an edited copy; a file of
    /// other words is not, nor is the file itself.
    #[test]
    fn a_copy_with_every_line_changed_is_an_edited_copy() {
        let bookings = "booking_id,guest,room\nBK-1,Amelia Hart,b12\nBK-2,Yusuf Demir,a03\nBK-3,Greta Nilsson,c21\n";
        let upper = "BK-1,Amelia Hart,B12\nBK-2,Yusuf Demir,A03\nBK-3,Greta Nilsson,C21\n";
        assert!(is_edited_copy(bookings, upper));
        assert!(!is_edited_copy(bookings, bookings));
        assert!(!is_edited_copy(bookings, "room,nights\nB12,3\nA03,1\n"));
    }

    #[test]
    fn lines_an_edit_kept_and_moved_are_told() {
        let was = "app:\n  name: sync\n  retry_limit: 5\nstorage:\n  path: /var\n  keep_days: 90\n";
        let sorted = "app:\n  max_retries: 5\n  name: sync\nstorage:\n  keep_days: 90\n  path: /var\n";
        let told = moved_lines("config.yaml", was, sorted).unwrap_or_default();
        assert!(told.contains("another place than before: `"), "{told}");
        assert!(told.contains("path: /var") || told.contains("keep_days: 90"), "{told}");
        assert!(!told.contains("name: sync") && !told.contains("max_retries"), "{told}");
        let renamed = "app:\n  name: sync\n  max_retries: 5\nstorage:\n  path: /var\n  keep_days: 90\n";
        assert_eq!(
            moved_lines("config.yaml", was, renamed),
            None,
            "a line changed in its place"
        );
    }

    #[test]
    fn lines_run_together_are_told_from_an_edit() {
        let was = "Ann Bell\nCarl Diaz\nEve Fox\n";
        assert!(joined_lines(was, "Ann BellEve Fox"), "a line removed, the breaks lost");
        assert!(joined_lines(was, "Ann BellCarl DiazEve Fox\n"));
        assert!(!joined_lines(was, "Ann Bell\nEve Fox\n"), "a line removed");
        assert!(
            !joined_lines(was, "Ann Bell, Carl Diaz, Eve Fox"),
            "joined with a separator"
        );
        assert!(!joined_lines(was, "Carl Diaz"), "one line kept is no joining");
        assert!(!joined_lines("a\nb\n", "ab\nc"));
    }
}
