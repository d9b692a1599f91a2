//! A file the task says to write, and no step writes
//! ([`PlanError::OutputNotWritten`](crate::plan::PlanError::OutputNotWritten));
//! an edit's report written over the file it edited.

use serde_json::{json, Map};

use super::steps::{fresh_id, tool_step};
use crate::plan::{Plan, Step};

/// Add a last step writing the result of the plan's one final step to `path`
/// (what the finding asks the planner to do). Only when exactly one step is
/// final (no step depends on it) and it changes nothing itself.
pub(super) fn write_last_result(plan: &mut Plan, path: &str) -> Option<&'static str> {
    let mut finals: Vec<&Step> = plan
        .steps
        .iter()
        .filter(|s| !plan.steps.iter().any(|o| o.depends_on.contains(&s.id)))
        .collect();
    // A look no step builds on (a listing left beside the real work) is
    // not the result, when one final step builds on others.
    if finals.len() > 1 && finals.iter().filter(|s| !s.depends_on.is_empty()).count() == 1 {
        finals.retain(|s| !s.depends_on.is_empty());
    }
    let [last] = finals.as_slice() else { return None };
    if last.tool.as_deref() == Some("write_file") {
        return None;
    }
    let last_id = last.id.clone();
    let id = fresh_id(plan, "s", 0)?;
    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    args.insert("content".into(), json!(format!("{{{{{last_id}}}}}")));
    let description = format!("write the result to {path}");
    plan.steps
        .push(tool_step(id, description, "write_file", args, vec![last_id]));
    Some("output-written")
}

/// Drop `step`, which writes the report of the in-place edit `edit` over
/// the file `edit` changed
/// ([`PlanError::EditReportWritten`](crate::plan::PlanError::EditReportWritten)):
/// the file is already what the step was for. Steps after it wait for, and
/// use, the edit instead.
pub(super) fn edit_report_dropped(plan: &mut Plan, step: &str, edit: &str) -> Option<&'static str> {
    plan.step(step)?;
    plan.step(edit)?;
    super::steps::replaced_by(plan, step, edit);
    Some("edit-report-dropped")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: serde_json::Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_missing_write_is_added_after_the_one_final_step() {
        let mut p = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s2", "description": "double", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": ["s1"]}
        ]));
        assert_eq!(write_last_result(&mut p, "out.txt"), Some("output-written"));
        let added = p.steps.last().unwrap();
        assert_eq!(added.tool.as_deref(), Some("write_file"));
        assert_eq!(added.args["content"], "{{s2}}");
        assert_eq!(added.depends_on, ["s2"]);
        // Two results with nothing joining them: which one to write is the planner's call.
        let mut two = plan(serde_json::json!([
            {"id": "s1", "description": "a", "tool": "calculator", "args": {"expression": "1 + 1"}, "depends_on": []},
            {"id": "s2", "description": "b", "tool": "calculator", "args": {"expression": "2 + 2"}, "depends_on": []}
        ]));
        assert_eq!(write_last_result(&mut two, "out.txt"), None);
    }

    #[test]
    fn a_write_of_an_edits_report_over_its_file_is_dropped() {
        let mut p = plan(serde_json::json!([
            {"id": "s1", "description": "fix", "tool": "replace_in_file", "args": {"path": "a.csv", "old": "\r\n", "new": "\n"}, "depends_on": []},
            {"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "a.csv", "content": "{{s1}}"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "tell", "tool": null, "args": {}, "depends_on": ["s1", "s2"]}
        ]));
        assert_eq!(edit_report_dropped(&mut p, "s2", "s1"), Some("edit-report-dropped"));
        let ids: Vec<&str> = p.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s1", "s3"]);
        assert_eq!(p.steps[1].depends_on, ["s1"]);
    }
}
