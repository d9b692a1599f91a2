//! After a step: each configuration (or JSON) file its task names that the
//! step rewrote through a parser's dump gets its own lines back, with the
//! settings the step changed ([`crate::carry_back`]), and the step's record
//! and an [`Event::OutputMended`] say so.

use serde_json::{json, Value};

use crate::context::{Recording, Setting};
use crate::events::Event;
use crate::plan::{Step, StepKind};
use crate::result::{now_ms, StepResult, StepStatus};
use crate::tools::Effect;

/// Most bytes of a configuration or JSON file read before a step.
const MOST_BYTES: u64 = 256 * 1024;

/// The configuration and JSON files the run's task names, as they were before a
/// step: each one's path, where it is, and its text.
pub(super) struct Before(Vec<(String, std::path::PathBuf, String)>);

/// Read the configuration and JSON files `setting`'s task names that are there,
/// before `step`, when it may write (a tool step whose tool may, or an
/// agent step): a step that only reads leaves an edit its neighbour made
/// while it ran to that one's record.
pub(super) fn before(setting: &Setting, step: &Step) -> Before {
    let may_write = match step.kind() {
        StepKind::Tool(tool) => setting.tools.get(tool).is_some_and(|entry| {
            matches!(
                entry.declared_effect(),
                Effect::WritesWorkspace | Effect::External | Effect::Irreversible
            )
        }),
        StepKind::Agent(_) => true,
        StepKind::Reasoning => false,
    };
    let Some(workspace) = setting.tools.workspace().filter(|_| may_write) else {
        return Before(Vec::new());
    };
    let files = crate::plan::paths_named_by(&setting.task)
        .into_iter()
        .filter(|path| crate::carry_back::is_carried(path))
        .filter_map(|path| {
            let full = workspace.resolve(&path).ok()?;
            let small = std::fs::metadata(&full).ok()?.len() <= MOST_BYTES;
            let text = small.then(|| std::fs::read_to_string(&full).ok()).flatten()?;
            Some((path, full, text))
        })
        .collect();
    Before(files)
}

/// Carry back each file of `before` that the step of `result` rewrote
/// ([`crate::carry_back::carried_back`]),
/// when it succeeded: written back, told as an event, and kept in its
/// record as an inner call of `write_file`; the records of those calls,
/// for the ledger (which keeps an inner call as a row of its own).
pub(super) fn carry_back(
    setting: &Setting,
    recording: &Recording,
    before: Before,
    result: &mut StepResult,
) -> Vec<StepResult> {
    let mut written_now = Vec::new();
    if !result.succeeded() {
        return written_now;
    }
    // The step's program and its inner calls' (a recovery's) that ran: a
    // failed one was undone, and made no edit.
    let ran = crate::result::programs_ran(std::slice::from_ref(result));
    let programs: Vec<&str> = ran.iter().map(String::as_str).collect();
    for (path, full, was) in before.0 {
        let Ok(now) = std::fs::read_to_string(&full) else {
            continue;
        };
        let Some((merged, found)) = crate::carry_back::carried_back(&path, &was, &now, &setting.task, &programs) else {
            continue;
        };
        if std::fs::write(&full, &merged).is_err() {
            continue;
        }
        let note = crate::carry_back::said(&path, &found);
        tracing::info!(step = %result.id, %path, "{note}");
        recording.events.emit(Event::OutputMended {
            step_id: result.id.clone(),
            rule: "carry-back".to_string(),
            path: path.clone(),
            note: note.clone(),
        });
        let record = written(result, &path, note);
        result.calls.push(record.clone());
        written_now.push(record);
    }
    written_now
}

/// The record of the runtime's write of `path` after the step of `result`.
fn written(result: &StepResult, path: &str, note: String) -> StepResult {
    let at = now_ms();
    StepResult {
        id: format!("{}.{}", result.id, result.calls.len() + 1),
        tool: Some("write_file".to_string()),
        agent: None,
        status: StepStatus::Succeeded,
        attempts: 1,
        args: Some(json!({ "path": path })),
        output: Some(Value::String(note)),
        error: None,
        started_at: Some(at),
        finished_at: Some(at),
        model_calls: 0,
        calls: Vec::new(),
        refused: false,
        worker: None,
    }
}
