//! A `{{sN}}` a step uses and does not list in its `depends_on`
//! ([`PlanError::UndeclaredReference`](crate::plan::PlanError::UndeclaredReference)),
//! and two steps on one file that could run in either order.
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

/// Order two steps that use one path, one writing it, and that could run
/// in either order ([`PlanError::UnorderedWrite`](crate::plan::PlanError::UnorderedWrite)):
/// the one listed later waits for the one listed earlier, the order the
/// planner wrote them in (the 1.5B planner's sshd_config edit searched,
/// set a value, searched and set another, each from the first read, and
/// three plans in a row were refused for it). `None` when a step is not in
/// the plan, or the order would make a cycle.
pub(super) fn write_ordered(plan: &mut Plan, writer: &str, other: &str) -> Option<&'static str> {
    let at = |id: &str| plan.steps.iter().position(|s| s.id == id);
    let (w, o) = (at(writer)?, at(other)?);
    let (first, then) = if w < o { (w, o) } else { (o, w) };
    let first = plan.steps[first].id.clone();
    plan.steps[then].depends_on.push(first);
    if crate::plan::find_cycle(plan).is_some() {
        plan.steps[then].depends_on.pop();
        return None;
    }
    Some("write-ordered")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_steps_on_one_file_run_in_the_order_they_are_listed() {
        let mut p: Plan = serde_json::from_value(serde_json::json!({"goal": "g", "steps": [
            {"id": "s1", "description": "find", "tool": "search", "args": {"path": "a.conf", "text": "x"}, "depends_on": []},
            {"id": "s2", "description": "set", "tool": "set_value", "args": {"path": "a.conf", "key": "x", "value": "1"}, "depends_on": []}
        ]}))
        .unwrap();
        assert_eq!(write_ordered(&mut p, "s2", "s1"), Some("write-ordered"));
        assert_eq!(p.steps[1].depends_on, ["s1"]);
        assert_eq!(write_ordered(&mut p, "s2", "s9"), None);
    }

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
