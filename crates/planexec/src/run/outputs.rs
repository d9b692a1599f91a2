//! Whether a run did the work its task named, before it may say `succeeded`.
//!
//! A model can write "The sum is 42." without any step having written
//! `sum.txt`; a plan can write an empty file, or leave the file as it was.
//! So before a run reports success, every file the task says to write
//! ([`crate::plan::outputs_named_by`]) must exist in the workspace, hold
//! something, and have been written by this run: a call of this run with
//! side effects named it, or the file changed after the run began (a shell
//! command or an MCP server wrote it). Every strategy ends through this
//! check, the ReAct ones included.

use std::path::Path;

use serde_json::Value;

use super::Run;
use crate::result::StepResult;

/// What is missing of the files the run's task says to write, one line per
/// file; empty when each is there, non-empty and written by the run (or the
/// run has no workspace to look in).
pub(crate) fn unwritten(run: &Run) -> Vec<String> {
    let Some(workspace) = run.ctx.tools.workspace() else {
        return Vec::new();
    };
    let mut missing = Vec::new();
    for path in crate::plan::outputs_named_by(&run.task) {
        let Ok(full) = workspace.resolve(&path) else { continue };
        if !full.is_file() {
            missing.push(format!("the task says to write {path}, and it does not exist"));
        } else if std::fs::read(&full).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).trim().is_empty()) {
            missing.push(format!("the task says to write {path}, and it is empty"));
        } else if !written_by(run, &path, &full) {
            missing.push(format!(
                "the task says to write {path}, and no step of this run wrote it (it is as it was)"
            ));
        }
    }
    missing
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
    changed_since_start
        || run
            .records
            .iter()
            .flat_map(|r| std::iter::once(r).chain(r.calls.iter()))
            .any(|r| writes(run, r, path))
}

/// Whether `record` is a succeeded call with side effects whose arguments name `path`.
fn writes(run: &Run, record: &StepResult, path: &str) -> bool {
    let bare = |p: &str| p.trim().trim_start_matches("./").to_string();
    let names = |v: &Value| match v {
        Value::String(s) => bare(s) == bare(path),
        _ => false,
    };
    record.succeeded()
        && record
            .tool
            .as_deref()
            .is_some_and(|t| run.ctx.tools.has_side_effects(t))
        && record
            .args
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(|args| args.values().any(names))
}
