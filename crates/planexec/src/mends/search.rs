//! Searches a small planner points at the wrong thing: a kind of file
//! searched inside files (`.jpg` in `photos/`), `column: value` searched in a
//! CSV file whose rows hold only values, and a plain text matched (each
//! match is the text itself,
//! [`PlanError::PlainTextMatched`](crate::plan::PlanError::PlainTextMatched)).
//! The search tool's own check finds the first two; each rule tests the
//! step's arguments itself.

use serde_json::{json, Map};

use super::steps::{fresh_id, tool_step};
use crate::plan::Plan;
use crate::tools::ToolRegistry;

/// Search step `id`, which the search tool's check refused, rewritten by
/// the first rule its arguments fit; the rule's name.
pub(super) fn mended(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<&'static str> {
    if csv_value_searched(plan, id, tools).is_some() {
        return Some("csv-value-searched");
    }
    search_to_glob(plan, id, tools).map(|()| "file-kind-to-glob")
}

/// Search step `id`, which looks for a file extension inside files (`.jpg`
/// in `photos/`), becomes the glob for those files' names; one that counted
/// becomes a count of the glob's lines, so the steps that use its result
/// still get a number.
fn search_to_glob(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    tools.get("glob")?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let step = &plan.steps[at];
    let pattern = crate::tools::file_kind_pattern(&serde_json::Value::Object(step.args.clone()))?;
    let counts = step.args.get("count").and_then(serde_json::Value::as_bool) == Some(true);
    let mut glob_args = Map::new();
    glob_args.insert("pattern".into(), json!(pattern));
    if !counts {
        let step = &mut plan.steps[at];
        step.tool = Some("glob".into());
        step.args = glob_args;
        return Some(());
    }
    tools.get("calculator")?;
    let glob_id = fresh_id(plan, "glob", 0)?;
    let description = format!("list the files matching {pattern}");
    let glob = tool_step(glob_id.clone(), description, "glob", glob_args, step.depends_on.clone());
    let step = &mut plan.steps[at];
    step.tool = Some("calculator".into());
    step.args = Map::new();
    step.args
        .insert("expression".into(), json!(format!("count({{{{{glob_id}}}}})")));
    step.depends_on = vec![glob_id];
    plan.steps.insert(at, glob);
    Some(())
}

/// Search step `id`, matching a plain text (each match is the text
/// itself), returns the lines that contain the text instead.
pub(super) fn plain_text_unmatched(plan: &mut Plan, id: &str) -> Option<&'static str> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    step.args.insert("matches".into(), json!(false));
    Some("plain-text-unmatched")
}

/// Search step `id` for `city: Paris` in a CSV file searches for `Paris`.
fn csv_value_searched(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    let workspace = tools.workspace()?;
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let value = crate::tools::keyed_value_in_csv(workspace, &serde_json::Value::Object(step.args.clone()))?;
    step.args.insert("text".into(), json!(value));
    Some(())
}
