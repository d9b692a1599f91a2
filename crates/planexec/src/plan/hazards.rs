//! Data hazards: steps that touch the same workspace path, one of them
//! writing it, must be ordered by their dependencies.
//!
//! Steps run in parallel unless one depends on the other, so a step that reads
//! `notes.txt` while another writes it may see the old content or the new.
//! The plan check finds such pairs from the `path` argument of tool calls and
//! each tool's effect, and says which dependency to add.

use std::collections::{HashMap, HashSet};

use super::Plan;
use crate::tools::{Effect, ToolRegistry};

/// A step's literal `path` argument, as the file tools resolve it
/// (`./a.txt` and `a.txt` are one file). `None` when the path is computed
/// from another step's output: it cannot be known before running.
pub(super) fn literal_path(args: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let path = args.get("path")?.as_str()?.trim();
    if path.contains("{{") {
        return None;
    }
    let path = path.trim_start_matches("./").trim_end_matches('/');
    (!path.is_empty()).then(|| path.to_string())
}

/// The literal `path` of tool step `step`, when its call has `effect`.
pub(super) fn path_with(tools: &ToolRegistry, step: &super::Step, effect: Effect) -> Option<String> {
    let entry = tools.get(step.tool.as_deref()?)?;
    let path = literal_path(&step.args)?;
    (entry.effect(&serde_json::Value::Object(step.args.clone())) == effect).then_some(path)
}

/// The ids every step depends on, directly or not. Needs an acyclic plan.
pub(super) fn ancestors(plan: &Plan) -> HashMap<&str, HashSet<&str>> {
    let by_id: HashMap<&str, &super::Step> = plan.steps.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut done: HashMap<&str, HashSet<&str>> = HashMap::new();
    fn visit<'p>(
        id: &'p str,
        by_id: &HashMap<&'p str, &'p super::Step>,
        done: &mut HashMap<&'p str, HashSet<&'p str>>,
    ) -> HashSet<&'p str> {
        if let Some(known) = done.get(id) {
            return known.clone();
        }
        let mut all = HashSet::new();
        for dep in by_id.get(id).map(|s| s.depends_on.as_slice()).unwrap_or_default() {
            if by_id.contains_key(dep.as_str()) && all.insert(dep.as_str()) {
                all.extend(visit(dep, by_id, done));
            }
        }
        done.insert(id, all.clone());
        all
    }
    for step in &plan.steps {
        visit(&step.id, &by_id, &mut done);
    }
    done
}

/// Two steps that use one path, the first writing it, and neither depending on the other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnorderedWrite {
    pub writer: String,
    pub other: String,
    pub path: String,
}

/// Every pair of unordered steps that use one path where at least one writes
/// it. The plan must be acyclic.
pub(crate) fn unordered_writes(plan: &Plan, tools: &ToolRegistry) -> Vec<UnorderedWrite> {
    let mut found = Vec::new();
    // (step id, path, writes) of every tool call with a literal path.
    let uses: Vec<(&str, String, bool)> = plan
        .steps
        .iter()
        .filter_map(|s| {
            let entry = tools.get(s.tool.as_deref()?)?;
            let path = literal_path(&s.args)?;
            let args = serde_json::Value::Object(s.args.clone());
            Some((s.id.as_str(), path, entry.effect(&args) != Effect::ReadOnly))
        })
        .collect();
    if uses.iter().all(|(_, _, writes)| !writes) {
        return found;
    }
    let before = ancestors(plan);
    let after = |a: &str, b: &str| before.get(a).is_some_and(|set| set.contains(b));
    let ordered = |a: &str, b: &str| after(a, b) || after(b, a);
    for (i, (a, path, a_writes)) in uses.iter().enumerate() {
        for (b, other, b_writes) in &uses[i + 1..] {
            if path != other || !(*a_writes || *b_writes) || ordered(a, b) {
                continue;
            }
            let (writer, other_step) = if *a_writes { (*a, *b) } else { (*b, *a) };
            found.push(UnorderedWrite {
                writer: writer.to_string(),
                other: other_step.to_string(),
                path: path.clone(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    fn hazards(steps: &str) -> Vec<UnorderedWrite> {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let plan: Plan = serde_json::from_str(&format!(r#"{{"goal": "g", "steps": {steps}}}"#)).unwrap();
        unordered_writes(&plan, &tools)
    }

    const WRITE: &str = r#"{"id": "w", "description": "write", "tool": "write_file", "args": {"path": "notes.txt", "content": "new"}, "depends_on": []}"#;

    #[test]
    fn a_read_beside_a_write_of_the_same_path_must_be_ordered() {
        let read = r#"{"id": "r", "description": "read", "tool": "read_file", "args": {"path": "./notes.txt"}, "depends_on": []}"#;
        let errors = hazards(&format!("[{WRITE}, {read}]"));
        assert_eq!(
            errors,
            vec![UnorderedWrite {
                writer: "w".into(),
                other: "r".into(),
                path: "notes.txt".into()
            }]
        );
    }

    #[test]
    fn ordered_steps_other_paths_and_computed_paths_are_no_hazard() {
        let after = r#"{"id": "r", "description": "read", "tool": "read_file", "args": {"path": "notes.txt"}, "depends_on": ["m"]}"#;
        let middle = r#"{"id": "m", "description": "think", "tool": null, "args": {}, "depends_on": ["w"]}"#;
        assert_eq!(hazards(&format!("[{WRITE}, {middle}, {after}]")), vec![]);
        let other = r#"{"id": "r", "description": "read", "tool": "read_file", "args": {"path": "other.txt"}, "depends_on": []}"#;
        assert_eq!(hazards(&format!("[{WRITE}, {other}]")), vec![]);
        let computed = r#"{"id": "r", "description": "read", "tool": "read_file", "args": {"path": "{{m}}"}, "depends_on": ["m"]}"#;
        let free = r#"{"id": "m", "description": "think", "tool": null, "args": {}, "depends_on": []}"#;
        assert_eq!(hazards(&format!("[{WRITE}, {free}, {computed}]")), vec![]);
        let two_reads = r#"[{"id": "a", "description": "read", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []}, {"id": "b", "description": "read", "tool": "read_file", "args": {"path": "n.txt"}, "depends_on": []}]"#;
        assert_eq!(hazards(two_reads), vec![]);
    }
}
