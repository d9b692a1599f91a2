//! How steps name each other: every `{{sN…}}` reference in a step's
//! arguments, and renaming a step everywhere it is named.

use serde_json::Value;

use super::types::Step;
use crate::refs::{find_references, rewrite_references, Reference};

/// `steps` with step `from` called `to`: its id, and every `depends_on` and
/// `{{from…}}` reference naming it.
pub fn rename_step(steps: &mut [Step], from: &str, to: &str) {
    for step in steps {
        if step.id == from {
            step.id = to.to_string();
        }
        for dependency in &mut step.depends_on {
            if dependency == from {
                *dependency = to.to_string();
            }
        }
        for value in step.args.values_mut() {
            rename_in(value, from, to);
        }
    }
}

fn rename_in(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(text) => {
            *text = rewrite_references(text, |r| {
                let path: String = r.path.iter().map(|p| format!(".{p}")).collect();
                (r.step == from).then(|| format!("{{{{{to}{path}}}}}"))
            });
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_in(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| rename_in(v, from, to)),
        _ => {}
    }
}

/// Every reference in a step's arguments, with the JSON path of the argument holding it.
pub fn step_references(step: &Step) -> Vec<(String, Reference)> {
    let mut out = Vec::new();
    for (key, value) in &step.args {
        collect_refs(value, &format!("args.{key}"), &mut out);
    }
    out
}

fn collect_refs(value: &Value, at: &str, out: &mut Vec<(String, Reference)>) {
    match value {
        Value::String(s) => out.extend(find_references(s).into_iter().map(|r| (at.to_string(), r))),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_refs(v, &format!("{at}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                collect_refs(v, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_step_takes_its_references_and_dependencies_with_it() {
        let mut steps: Vec<Step> = serde_json::from_value(serde_json::json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s2", "description": "use", "tool": "echo", "args": {"input": "{{s1}} and {{ s1.stdout }} but not {{s10}}", "list": ["{{s1}}"]}, "depends_on": ["s1", "s10"]}
        ]))
        .unwrap();
        rename_step(&mut steps, "s1", "r1");
        assert_eq!(steps[0].id, "r1");
        assert_eq!(steps[1].depends_on, ["r1", "s10"]);
        assert_eq!(steps[1].args["input"], "{{r1}} and {{r1.stdout}} but not {{s10}}");
        assert_eq!(steps[1].args["list"][0], "{{r1}}");
    }
}
