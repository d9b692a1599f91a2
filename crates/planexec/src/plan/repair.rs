//! Mending a plan the planner could not fix itself.
//!
//! Asked again with the exact errors, a small local planner often writes the
//! same plan: it keeps a missing `write_file`, or keeps sending a text
//! transformation through the calculator. When the error already says what
//! the plan should be, the runtime can make that change itself: the
//! planner's steps are kept and the smallest edit is made, the one the error
//! would ask any planner for. A re-ask is left for the errors it cannot mend.

use serde_json::{json, Map};

use super::{Plan, PlanError, PlanErrors, Step};
use crate::tools::ToolRegistry;

/// `plan` with the edits its `errors` call for, when each error is one this
/// knows how to mend; `None` when any is not (the planner must fix those).
pub fn repaired(mut plan: Plan, errors: &PlanErrors, tools: &ToolRegistry) -> Option<Plan> {
    for error in &errors.0 {
        match error {
            PlanError::OutputNotWritten { path } => write_last_result(&mut plan, path)?,
            PlanError::InvalidArgs { step, tool, .. } if tool == "calculator" => {
                calculation_to_reasoning(&mut plan, step, tools)?
            }
            _ => return None,
        }
    }
    Some(plan)
}

/// Add a last step writing the result of the plan's one final step to `path`
/// (what the error asks the planner to do). Only when exactly one step is
/// final (no step depends on it) and it changes nothing itself.
fn write_last_result(plan: &mut Plan, path: &str) -> Option<()> {
    let finals: Vec<&Step> = plan
        .steps
        .iter()
        .filter(|s| !plan.steps.iter().any(|o| o.depends_on.contains(&s.id)))
        .collect();
    let [last] = finals.as_slice() else { return None };
    if last.tool.as_deref() == Some("write_file") {
        return None;
    }
    let last_id = last.id.clone();
    let id = (1..)
        .map(|n| format!("s{n}"))
        .find(|id| !plan.steps.iter().any(|s| &s.id == id))?;
    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    args.insert("content".into(), json!(format!("{{{{{last_id}}}}}")));
    plan.steps.push(Step {
        id,
        description: format!("write the result to {path}"),
        tool: Some("write_file".into()),
        agent: None,
        args,
        depends_on: vec![last_id],
        expected: None,
    });
    Some(())
}

/// Make calculator step `id`, whose expression the calculator can never
/// evaluate (`upper('{{s1}}')`), the reasoning step its description already
/// describes, working from the same dependencies.
fn calculation_to_reasoning(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    let calculator = tools.get("calculator")?;
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    calculator
        .tool
        .plan_check(&serde_json::Value::Object(step.args.clone()))?;
    if step.depends_on.is_empty() {
        return None;
    }
    step.tool = None;
    step.args = Map::new();
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    fn plan(steps: serde_json::Value) -> Plan {
        serde_json::from_value(json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_missing_write_is_added_after_the_one_final_step() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let unwritten = plan(json!([
            {"id": "s1", "description": "list", "tool": "glob", "args": {"pattern": "photos/*.jpg"}, "depends_on": []},
            {"id": "s2", "description": "count", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]}
        ]));
        let errors = PlanErrors(vec![PlanError::OutputNotWritten { path: "jpg.txt".into() }]);
        let mended = repaired(unwritten.clone(), &errors, &tools).unwrap();
        let last = mended.steps.last().unwrap();
        assert_eq!((last.id.as_str(), last.tool.as_deref()), ("s3", Some("write_file")));
        assert_eq!(last.args["content"], json!("{{s2}}"));
        assert_eq!(last.depends_on, ["s2"]);
        assert!(super::super::validate(&mended, &tools, &Default::default()).is_ok());

        // Two final steps: which one is the answer is not known.
        let mut two = unwritten;
        two.steps[1].depends_on.clear();
        two.steps[1].args.insert("expression".into(), json!("2 + 2"));
        assert!(repaired(two, &errors, &tools).is_none());
    }

    #[test]
    fn a_calculation_of_text_becomes_a_reasoning_step_and_other_errors_are_not_mended() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let p = plan(json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "name.txt"}, "depends_on": []},
            {"id": "s2", "description": "upper-case the name", "tool": "calculator", "args": {"expression": "upper('{{s1}}')"}, "depends_on": ["s1"]}
        ]));
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["cannot evaluate".into()],
        }]);
        let mended = repaired(p.clone(), &invalid, &tools).unwrap();
        assert_eq!(mended.steps[1].tool, None);
        assert!(mended.steps[1].args.is_empty());
        assert_eq!(mended.steps[1].depends_on, ["s1"]);
        assert!(repaired(p, &PlanErrors(vec![PlanError::Empty]), &tools).is_none());
    }
}
