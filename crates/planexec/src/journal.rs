//! The inner calls of agent steps, recorded by an earlier session of a run,
//! replayed when the step runs again on resume: a call the loop makes again
//! (same tool, same arguments) gets its recorded result instead of running a
//! second time, so a side effect inside an agent step happens exactly once.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::result::{step_of_inner_call, StepResult, StepStatus};

/// Recorded inner calls by step, in the order they were made.
#[derive(Default)]
pub(crate) struct Journal {
    calls: Mutex<HashMap<String, Vec<StepResult>>>,
}

impl Journal {
    /// Keep the finished calls of `records` (succeeded, or taken as done on
    /// resume) for replay. Failed calls are not replayed: they run again.
    pub fn load<'a>(&self, records: impl IntoIterator<Item = &'a StepResult>) {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        for r in records.into_iter().filter(|r| r.status.is_done()) {
            calls
                .entry(step_of_inner_call(&r.id).to_string())
                .or_default()
                .push(r.clone());
        }
    }

    /// The recorded result of step `step`'s first not yet replayed call of
    /// `tool` with `args`, taken out of the journal.
    pub fn replay(&self, step: &str, tool: &str, args: &Value) -> Option<StepResult> {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        let recorded = calls.get_mut(step)?;
        let i = recorded
            .iter()
            .position(|r| r.tool.as_deref() == Some(tool) && r.args.as_ref() == Some(args))?;
        Some(recorded.remove(i))
    }
}

/// What a replayed call hands back to the loop.
pub(crate) fn replayed_output(record: &StepResult) -> Value {
    match (record.status, &record.output) {
        (StepStatus::Skipped, _) | (_, None) => {
            Value::String("(done in an earlier session of this run; its output was not recorded)".to_string())
        }
        (_, Some(output)) => output.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, tool: &str, args: Value, status: StepStatus) -> StepResult {
        StepResult {
            id: id.to_string(),
            tool: Some(tool.to_string()),
            agent: None,
            status,
            attempts: 1,
            args: Some(args),
            output: Some(json!("ok")),
            error: None,
            started_at: None,
            finished_at: None,
            model_calls: 0,
            calls: Vec::new(),
            refused: false,
            worker: None,
        }
    }

    #[test]
    fn a_recorded_call_is_replayed_once_and_failures_are_not() {
        let journal = Journal::default();
        journal.load(&[
            call("s2.1", "append", json!({"line": "a"}), StepStatus::Succeeded),
            call("s2.2", "append", json!({"line": "b"}), StepStatus::Failed),
            call("s3.1", "append", json!({"line": "a"}), StepStatus::Skipped),
        ]);
        assert_eq!(
            journal.replay("s2", "append", &json!({"line": "a"})).unwrap().id,
            "s2.1"
        );
        assert!(journal.replay("s2", "append", &json!({"line": "a"})).is_none(), "once");
        assert!(
            journal.replay("s2", "append", &json!({"line": "b"})).is_none(),
            "failed: run again"
        );
        let skipped = journal.replay("s3", "append", &json!({"line": "a"})).unwrap();
        assert!(replayed_output(&skipped).as_str().unwrap().contains("earlier session"));
    }
}
