//! Findings: what a plan does that cannot be what it means, found from the
//! plan's structure, its tools and the workspace (never from the words of the
//! task or a step's description).
//!
//! Validation ([`super::validate`]) says whether a plan can run at all; a
//! finding says it would run and do the wrong thing: a number read as a
//! file, a file's whole text used as one number, a computed result waited
//! for and never used, a count of what already is a count, a search whose
//! every match is the text it searched for. Each is a typed
//! [`PlanError`] naming its step and what is wrong, so a planner is sent
//! back the message, and the plan rewrite rules of the small-model help
//! ([`crate::mends`]) match the variant, never the wording.

use serde_json::Value;

use super::{Plan, PlanError};
use crate::tools::ToolRegistry;

/// Every finding in `plan` for the run's `tools` (its workspace included).
pub fn findings(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    let mut found = super::values_read_as_files(plan, tools);
    found.extend(super::texts_used_as_numbers(plan, tools));
    found.extend(super::unused_results(plan));
    found.extend(counts_of_a_count(plan));
    found.extend(plain_texts_matched(plan));
    found.extend(edit_reports_written(plan, tools));
    found.extend(outputs_read_before_written(plan, tools));
    found.extend(misnamed_inputs(plan, tools));
    found
}

/// A step that reads a file not in the workspace, which no step writes,
/// when the workspace has one file of that name but for letter case and
/// marks ([`crate::tools::workspace::Workspace::named_alike`]), or one of
/// that name in another folder: on held-out-11 the 1.5B planner read
/// `redirects` for Netlify's `_redirects`, and `ops/users.json` for
/// `users.json`, and its revisions read them so again.
fn misnamed_inputs(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    // As many entries as a small workspace has; a bigger one is not looked
    // through for a name elsewhere.
    const LISTED: usize = 400;
    use crate::tools::Effect::{ReadOnly, WritesWorkspace};
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    let written = |path: &str| {
        plan.steps
            .iter()
            .any(|s| super::hazards::path_with(tools, s, WritesWorkspace).as_deref() == Some(path))
    };
    plan.steps
        .iter()
        .filter_map(|step| {
            let path = super::hazards::path_with(tools, step, ReadOnly)?;
            let there = workspace
                .named_alike(&path)
                .or_else(|| workspace.same_name_elsewhere(&path, LISTED))
                .filter(|_| !written(&path))?;
            Some(PlanError::MisnamedInput {
                step: step.id.clone(),
                path,
                there,
            })
        })
        .collect()
}

/// A step that reads a file not in the workspace, which a step of the plan
/// not before it writes: the plan's own output read as an input (the 1.5B
/// planner read meetup_dates.txt, the file its last step was to write, and
/// the read failed the run). Found from effects and literal paths.
fn outputs_read_before_written(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    if super::find_cycle(plan).is_some() {
        return Vec::new();
    }
    use crate::tools::Effect::{ReadOnly, WritesWorkspace};
    let before = super::hazards::ancestors(plan);
    let mut found = Vec::new();
    for step in &plan.steps {
        let Some(path) = super::hazards::path_with(tools, step, ReadOnly) else {
            continue;
        };
        if workspace.resolve(&path).map_or(true, |full| full.exists()) {
            continue;
        }
        let writer = plan.steps.iter().find(|w| {
            super::hazards::path_with(tools, w, WritesWorkspace).as_deref() == Some(path.as_str())
                && !before.get(step.id.as_str()).is_some_and(|a| a.contains(w.id.as_str()))
        });
        if let Some(writer) = writer {
            found.push(PlanError::OutputReadBeforeWritten {
                step: step.id.clone(),
                writer: writer.id.clone(),
                path,
            });
        }
    }
    found
}

/// A step that writes a file with the result of a step that edited that
/// same file in place (`write_file(stations.csv, {{s3}})` after s3's
/// `replace_in_file` on stations.csv): an edit's result is a report of the
/// change (`{"path": …, "replaced": 5}`), so the write puts the report where
/// the edited text was. Found from the tools' effects and literal paths, so
/// it holds for any tool that edits a file it names.
fn edit_reports_written(plan: &Plan, tools: &ToolRegistry) -> Vec<PlanError> {
    let writes_at = |step: &super::Step| super::hazards::path_with(tools, step, crate::tools::Effect::WritesWorkspace);
    let mut found = Vec::new();
    for step in &plan.steps {
        let Some(path) = writes_at(step) else { continue };
        let used: Vec<String> = super::step_references(step).into_iter().map(|(_, r)| r.step).collect();
        let edit = plan
            .steps
            .iter()
            .filter(|e| e.id != step.id && used.contains(&e.id))
            .find(|e| writes_at(e).as_deref() == Some(path.as_str()));
        if let Some(edit) = edit {
            found.push(PlanError::EditReportWritten {
                step: step.id.clone(),
                edit: edit.id.clone(),
                path,
            });
        }
    }
    found
}

/// The id of the search step whose count `expression` is only a count of
/// (`count({{s2}})` or `{{s2}}` where s2 is a search with count true): the
/// number is already the search's output, and a count of it is always 1.
pub(crate) fn count_of_a_count(plan: &Plan, expression: &str) -> Option<String> {
    let expression = expression.trim();
    let inner = expression
        .strip_prefix("count(")
        .and_then(|e| e.strip_suffix(')'))
        .unwrap_or(expression);
    let id = inner.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let source = plan.step(id)?;
    let counts = source.tool.as_deref() == Some("search") && source.args.get("count") == Some(&Value::Bool(true));
    counts.then(|| id.to_string())
}

/// A calculator step that counts what a counting search returned: `1`.
fn counts_of_a_count(plan: &Plan) -> Vec<PlanError> {
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("calculator"))
        .filter_map(|s| {
            let expression = s.args.get("expression")?.as_str()?;
            let source = count_of_a_count(plan, expression)?;
            expression
                .trim()
                .starts_with("count(")
                .then(|| PlanError::CountOfACount {
                    step: s.id.clone(),
                    search: source,
                    expression: expression.trim().to_string(),
                })
        })
        .collect()
}

/// Whether `text` is plain text, with nothing a regular expression reads as
/// more than itself.
fn is_plain_text(text: &str) -> bool {
    !text.contains(['\\', '.', '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|'])
}

/// A search with matches true for plain text (`@`, `refund`): each match is
/// that same text, so the lines or the parts around it are lost.
fn plain_texts_matched(plan: &Plan) -> Vec<PlanError> {
    plan.steps
        .iter()
        .filter(|s| s.tool.as_deref() == Some("search") && s.args.get("matches") == Some(&Value::Bool(true)))
        .filter(|s| s.args.get("count") != Some(&Value::Bool(true)))
        .filter_map(|s| {
            let text = s
                .args
                .get("text")
                .and_then(Value::as_str)
                .filter(|t| is_plain_text(t))?;
            Some(PlanError::PlainTextMatched {
                step: s.id.clone(),
                text: text.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: serde_json::Value) -> Plan {
        serde_json::from_value(serde_json::json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_count_of_a_counting_search_and_a_plain_text_matched_are_findings() {
        let p = plan(serde_json::json!([
            {"id": "s1", "description": "count", "tool": "search", "args": {"path": "log.txt", "text": "ERROR", "count": true, "matches": false}, "depends_on": []},
            {"id": "s2", "description": "count them", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "find", "tool": "search", "args": {"path": "log.txt", "text": "refund", "count": false, "matches": true}, "depends_on": []},
            {"id": "s4", "description": "find", "tool": "search", "args": {"path": "log.txt", "text": "[a-z]+@x", "count": false, "matches": true}, "depends_on": []}
        ]));
        let found = findings(&p, &ToolRegistry::new());
        assert_eq!(
            found,
            vec![
                PlanError::CountOfACount {
                    step: "s2".into(),
                    search: "s1".into(),
                    expression: "count({{s1}})".into()
                },
                PlanError::PlainTextMatched {
                    step: "s3".into(),
                    text: "refund".into()
                },
            ]
        );
        assert!(found[0].to_string().contains("use {{s1}} itself"), "{}", found[0]);
    }

    #[test]
    fn the_report_of_an_edit_written_over_the_file_it_edited_is_a_finding() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.csv"), "id\r\n1\r\n").unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let p = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "a.csv"}, "depends_on": []},
            {"id": "s2", "description": "fix endings", "tool": "replace_in_file", "args": {"path": "./a.csv", "old": "\r\n", "new": "\n"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "a.csv", "content": "{{s2}}"}, "depends_on": ["s2"]},
            {"id": "s4", "description": "note", "tool": "write_file", "args": {"path": "log.txt", "content": "{{s2}}"}, "depends_on": ["s2"]},
            {"id": "s5", "description": "copy", "tool": "write_file", "args": {"path": "b.csv", "content": "{{s1}}"}, "depends_on": ["s1"]}
        ]));
        let found = findings(&p, &tools);
        assert_eq!(
            found,
            vec![PlanError::EditReportWritten {
                step: "s3".into(),
                edit: "s2".into(),
                path: "a.csv".into()
            }]
        );
        assert!(found[0].to_string().contains("drop s3"), "{}", found[0]);
    }

    #[test]
    fn a_read_of_the_file_a_later_step_writes_is_a_finding() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("months.txt"), "2026-03\n").unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let p = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "months.txt"}, "depends_on": []},
            {"id": "s2", "description": "read", "tool": "read_file", "args": {"path": "dates.txt"}, "depends_on": []},
            {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "dates.txt", "content": "{{s1}}"}, "depends_on": ["s1"]},
            {"id": "s4", "description": "read back", "tool": "read_file", "args": {"path": "dates.txt"}, "depends_on": ["s3"]}
        ]));
        assert_eq!(
            findings(&p, &tools),
            vec![PlanError::OutputReadBeforeWritten {
                step: "s2".into(),
                writer: "s3".into(),
                path: "dates.txt".into()
            }]
        );
    }

    #[test]
    fn a_read_of_a_file_named_but_for_case_and_marks_is_a_finding_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("_headers"), "/*\n  X-Frame-Options: DENY\n").unwrap();
        std::fs::write(dir.path().join(".npmrc"), "save-exact=true\n").unwrap();
        std::fs::write(dir.path().join("Notes.TXT"), "n\n").unwrap();
        std::fs::write(dir.path().join("notes-txt"), "n\n").unwrap();
        std::fs::create_dir_all(dir.path().join("ops")).unwrap();
        std::fs::create_dir_all(dir.path().join("y")).unwrap();
        std::fs::write(dir.path().join("ops/2026-05-12.json"), "[]").unwrap();
        std::fs::write(dir.path().join("users.json"), "{}").unwrap();
        std::fs::write(dir.path().join("a.csv"), "a\n").unwrap();
        std::fs::write(dir.path().join("y/a.csv"), "a\n").unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let p = plan(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "headers"}, "depends_on": []},
            {"id": "s2", "description": "read", "tool": "read_file", "args": {"path": "npmrc"}, "depends_on": []},
            {"id": "s3", "description": "two alike", "tool": "read_file", "args": {"path": "notes.txt"}, "depends_on": []},
            {"id": "s4", "description": "nothing alike", "tool": "read_file", "args": {"path": "todo.txt"}, "depends_on": []},
            {"id": "s5", "description": "another folder", "tool": "read_file", "args": {"path": "ops/users.json"}, "depends_on": []},
            {"id": "s6", "description": "two of that name", "tool": "read_file", "args": {"path": "x/a.csv"}, "depends_on": []}
        ]));
        let misnamed = |step: &str, path: &str, there: &str| PlanError::MisnamedInput {
            step: step.into(),
            path: path.into(),
            there: there.into(),
        };
        assert_eq!(
            findings(&p, &tools),
            vec![
                misnamed("s1", "headers", "_headers"),
                misnamed("s2", "npmrc", ".npmrc"),
                misnamed("s5", "ops/users.json", "users.json")
            ]
        );
    }
}
