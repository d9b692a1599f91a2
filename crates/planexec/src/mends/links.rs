//! A `{{sN}}` a step uses and does not list in its `depends_on`
//! ([`PlanError::UndeclaredReference`](crate::plan::PlanError::UndeclaredReference)).
//!
//! The reference already says what the step needs; a small planner that
//! names `{{s2}}` in an expression often forgets to list `s2` as well, and
//! asked again writes the same omission. Adding the dependency is the edit
//! the finding asks for, and nothing else about the step changes.

use crate::plan::Plan;

/// List `reference` among `step`'s dependencies. `None` when the step is not
/// in the plan or already lists it (nothing to mend).
pub(super) fn reference_declared(plan: &mut Plan, step: &str, reference: &str) -> Option<&'static str> {
    let target = plan.steps.iter_mut().find(|s| s.id == step)?;
    if target.depends_on.iter().any(|d| d == reference) {
        return None;
    }
    target.depends_on.push(reference.to_string());
    Some("reference-declared")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_becomes_a_dependency_once() {
        let mut p: Plan = serde_json::from_value(serde_json::json!({"goal": "g", "steps": [
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s2", "description": "double", "tool": "calculator", "args": {"expression": "{{s1}} * 2"}, "depends_on": []}
        ]}))
        .unwrap();
        assert_eq!(reference_declared(&mut p, "s2", "s1"), Some("reference-declared"));
        assert_eq!(p.steps[1].depends_on, ["s1"]);
        // Named twice in the step (two findings): the second has nothing left to do.
        assert_eq!(reference_declared(&mut p, "s2", "s1"), None);
        assert_eq!(reference_declared(&mut p, "s9", "s1"), None);
    }
}
