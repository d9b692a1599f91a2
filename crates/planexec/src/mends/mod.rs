//! Small-model help: worked plans shown to the planner, and plan rewrite
//! rules ("mends") for plans a small planner could not fix itself.
//!
//! This is not part of the core. The core checks a plan and sends a planner
//! its findings ([`crate::plan::findings`], typed [`PlanError`]s); a capable
//! model reads the message and fixes its plan. A small local model asked
//! again often writes the same plan, so for it the runtime can make the
//! smallest edit the finding calls for itself. Each rule family is a file
//! here and matches the finding's variant (and the plan's structure), never
//! the wording of a message or of the task:
//!
//! | file | findings it mends |
//! |---|---|
//! | `outputs.rs` | a file the task says to write and no step writes; an edit's report written over the file it edited |
//! | `calculator.rs` | a calculator expression over file names, CSV columns, JSON paths or a query; a count of a count |
//! | `search.rs` | a search for a kind of file, for `column: value` in a CSV file, or matching a plain text |
//! | `inputs.rs` | a value read as a file; the plan's own output read before it is written; a made-up input that stands for a number of the task; a file the task names that is nowhere |
//! | `links.rs` | a `{{sN}}` a step uses and does not list in its `depends_on`; two steps on one file, one writing it, in no order |
//! | `worked_plans.rs` | (no finding) a worked plan of the nearest kind, shown beside the task |
//! | `program.rs` | (no finding) a first plan of one program, written with the task's files shown whole |
//!
//! Every rule that acts is a [`Mend`]: an [`crate::Event::PlanMended`], a
//! line beside its step in plan review, and part of the plan version in the
//! ledger and the report. Whether any of it runs is the run's [`MendMode`]:
//! `auto` (the default) helps the embedded model only
//! ([`crate::ChatModel::wants_plan_help`]); a hosted provider's plan is sent
//! back with the finding instead of rewritten.

mod calculator;
mod inputs;
mod links;
mod outputs;
mod program;
mod search;
mod steps;
mod worked_plans;

pub use crate::help::{Mend, MendMode, PlanHelp, ProgramPrompt, WorkedPlan};
use crate::plan::{Plan, PlanError};
use crate::tools::ToolRegistry;

/// planexec's help for small local models: the rule families of this module.
#[derive(Debug, Clone, Copy, Default)]
pub struct SmallModelHelp;

impl PlanHelp for SmallModelHelp {
    fn worked_plan(&self, task: &str, tools: &ToolRegistry) -> Option<WorkedPlan> {
        worked_plans::nearest(task, tools)
    }

    /// Every finding a rule here mends, in turn; the ones none mends are
    /// left to the planner (the plan is checked again after).
    fn mend(&self, plan: &Plan, findings: &[PlanError], task: &str, tools: &ToolRegistry) -> Option<(Plan, Vec<Mend>)> {
        let mut current = plan.clone();
        let mut mends = Vec::new();
        for finding in findings {
            if let Some((rule, step, next)) = mend_one(&current, finding, task, tools) {
                mends.push(Mend::between(rule, &step, &current, &next));
                current = next;
            }
        }
        (!mends.is_empty()).then_some((current, mends))
    }

    fn program_prompt(&self, task: &str, tools: &ToolRegistry) -> Option<ProgramPrompt> {
        program::prompt(task, tools)
    }
}

/// The rule that mends `finding` in `plan`: its name, the step it acted on
/// and the plan it makes; `None` when no rule applies.
fn mend_one(
    plan: &Plan,
    finding: &PlanError,
    task: &str,
    tools: &ToolRegistry,
) -> Option<(&'static str, String, Plan)> {
    let mut next = plan.clone();
    let (rule, step) = match finding {
        PlanError::OutputNotWritten { path } => (outputs::write_last_result(&mut next, path)?, path.clone()),
        PlanError::UndeclaredReference { step, reference, .. } => {
            (links::reference_declared(&mut next, step, reference)?, step.clone())
        }
        PlanError::EditReportWritten { step, edit, .. } => {
            (outputs::edit_report_dropped(&mut next, step, edit)?, step.clone())
        }
        PlanError::UnorderedWrite { writer, other, .. } => {
            (links::write_ordered(&mut next, writer, other)?, writer.clone())
        }
        PlanError::CountOfACount { step, .. } => (calculator::count_dropped(&mut next, step)?, step.clone()),
        PlanError::PlainTextMatched { step, .. } => (search::plain_text_unmatched(&mut next, step)?, step.clone()),
        PlanError::ValueReadAsFile { step, .. } => (inputs::value_read_dropped(&mut next, step)?, step.clone()),
        PlanError::OutputReadBeforeWritten { step, .. } | PlanError::OutputRead { step, .. } => {
            (inputs::output_read_dropped(&mut next, step)?, step.clone())
        }
        PlanError::InventedInput { step, path } => (
            inputs::invented_read_to_reasoning(&mut next, step, path, task, tools)?,
            step.clone(),
        ),
        PlanError::MisnamedInput { step, path, there } => {
            (inputs::input_renamed(&mut next, step, path, there)?, step.clone())
        }
        PlanError::NamedInputMissing { path } => (inputs::missing_input_infeasible(&mut next, path)?, path.clone()),
        PlanError::InvalidArgs { step, tool, .. } if tool == "calculator" => {
            (calculator::mended(&mut next, step, tools)?, step.clone())
        }
        PlanError::InvalidArgs { step, tool, .. } if tool == "search" => {
            (search::mended(&mut next, step, tools)?, step.clone())
        }
        _ => return None,
    };
    Some((rule, step, next))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn plan(steps: Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_misnamed_read_is_given_the_name_the_workspace_has() {
        let old = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "headers"}, "depends_on": []}
        ]));
        let finding = PlanError::MisnamedInput {
            step: "s1".into(),
            path: "headers".into(),
            there: "_headers".into(),
        };
        let (new, mends) = SmallModelHelp
            .mend(&old, &[finding], "t", &ToolRegistry::new())
            .unwrap();
        assert_eq!(new.steps[0].args["path"], "_headers");
        assert_eq!(mends[0].describe(), "input-renamed at s1: changed s1");
    }

    #[test]
    fn a_mend_records_the_steps_it_changed_added_and_removed() {
        let old = plan(serde_json::json!([
            {"id": "s1", "description": "count", "tool": "search", "args": {"path": "a.txt", "text": "x", "count": true, "matches": false}, "depends_on": []},
            {"id": "s2", "description": "count it", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
        ]));
        let finding = PlanError::CountOfACount {
            step: "s2".into(),
            search: "s1".into(),
            expression: "count({{s1}})".into(),
        };
        let (new, mends) = SmallModelHelp
            .mend(&old, &[finding], "t", &ToolRegistry::new())
            .unwrap();
        assert_eq!(new.steps.len(), 2);
        let [mend] = mends.as_slice() else { panic!("{mends:?}") };
        assert_eq!((mend.rule.as_str(), mend.step.as_str()), ("count-of-a-count", "s2"));
        let before: Vec<&str> = mend.before.iter().map(|s| s.id.as_str()).collect();
        let after: Vec<&str> = mend.after.iter().map(|s| s.id.as_str()).collect();
        assert_eq!((before, after), (vec!["s2", "s3"], vec!["s3"]));
        assert_eq!(mend.describe(), "count-of-a-count at s2: removed s2; changed s3");
        // A finding no rule knows leaves the plan to the planner.
        let unknown = PlanError::UnusedResult {
            step: "s3".into(),
            dependency: "s2".into(),
        };
        assert!(SmallModelHelp
            .mend(&old, std::slice::from_ref(&unknown), "t", &ToolRegistry::new())
            .is_none());
        // Beside one it mends, the mend is made and the other is left.
        let undeclared = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s1}}"}, "depends_on": []}
        ]));
        let finding = PlanError::UndeclaredReference {
            step: "s2".into(),
            reference: "s1".into(),
            location: "args.content".into(),
        };
        let (new, mends) = SmallModelHelp
            .mend(&undeclared, &[unknown, finding], "t", &ToolRegistry::new())
            .unwrap();
        assert_eq!(new.steps[1].depends_on, ["s1"]);
        assert_eq!(mends.len(), 1);
        assert_eq!(mends[0].describe(), "reference-declared at s2: changed s2");
    }
}
