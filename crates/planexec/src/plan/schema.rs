//! The plan's JSON Schema: as derived from the types, and specialised to one
//! run's tools for structured output.

use std::collections::HashSet;

use serde_json::Value;

use super::Plan;
use crate::tools::ToolRegistry;

/// The plan's JSON Schema as derived from the Rust types (free-form `args`).
pub fn plan_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Plan)).unwrap_or(Value::Null)
}

/// The plan schema specialised to one run's tools, for structured output.
///
/// Each step is one of: a reasoning step (`tool: null`, empty `args`) or a call
/// of one named tool with that tool's own argument schema. Every object closes
/// its properties and lists them all as required, so the schema is usable in
/// OpenAI's strict mode when every tool's schema is too; `strict` says whether
/// that holds (else the caller should send it non-strict, still validating after).
pub fn plan_schema_for_tools(tools: &ToolRegistry, max_steps: usize) -> (Value, bool) {
    plan_schema_for(tools, &[], max_steps)
}

/// [`plan_schema_for_tools`], with one more step variant when `agents` is
/// not empty: an agent step (`agent`: one of their names, no `tool`, no `args`).
pub fn plan_schema_for(tools: &ToolRegistry, agents: &[String], max_steps: usize) -> (Value, bool) {
    let base = plan_schema();
    let described = |name: &str, fallback: &str| -> Value {
        let desc = base
            .pointer(&format!("/$defs/Step/properties/{name}/description"))
            .and_then(Value::as_str)
            .unwrap_or(fallback);
        Value::String(desc.to_string())
    };
    let mut strict = true;
    let step_variant = |tool: Value, args: Value| -> Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": described("id", "unique step id")},
                "description": {"type": "string", "description": described("description", "what the step does")},
                "tool": tool,
                "args": args,
                "depends_on": {"type": "array", "items": {"type": "string"}, "description": described("depends_on", "ids this step needs")},
                "expected": {"type": ["string", "null"], "description": described("expected", "what a good result looks like")}
            },
            "required": ["id", "description", "tool", "args", "depends_on", "expected"],
            "additionalProperties": false
        })
    };
    let mut variants = vec![step_variant(
        serde_json::json!({"type": "null"}),
        serde_json::json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
    )];
    for entry in tools.entries() {
        let schema = entry.tool.parameters();
        if !is_strict_compatible(&schema) {
            strict = false;
        }
        variants.push(step_variant(
            serde_json::json!({"type": "string", "enum": [entry.tool.name()]}),
            schema,
        ));
    }
    if !agents.is_empty() {
        variants.push(serde_json::json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": described("id", "unique step id")},
                "description": {"type": "string", "description": "the subtask for the agent, and what to return"},
                "agent": {"type": "string", "enum": agents},
                "depends_on": {"type": "array", "items": {"type": "string"}, "description": described("depends_on", "ids this step needs")},
                "expected": {"type": ["string", "null"], "description": described("expected", "what a good result looks like")}
            },
            "required": ["id", "description", "agent", "depends_on", "expected"],
            "additionalProperties": false
        }));
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "the task's goal in one sentence"},
            "steps": {"type": "array", "items": {"anyOf": variants}, "maxItems": max_steps},
            "infeasible": {"type": ["string", "null"], "description": "only when no plan can do the task: why (steps then empty)"},
            "questions": {"type": "array", "items": {"type": "string"}, "description": "only when the task is too ambiguous to plan: at most 3 questions (steps then empty)"},
            "assumptions": {"type": "array", "items": {"type": "string"}, "description": "what you assumed where the task left something open"}
        },
        "required": ["goal", "steps", "infeasible", "questions", "assumptions"],
        "additionalProperties": false
    });
    (schema, strict)
}

/// Whether a schema meets OpenAI strict mode's rules: every object closes its
/// properties and requires them all.
pub fn is_strict_compatible(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            let is_object = map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties");
            if is_object {
                if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return false;
                }
                let props: Vec<&String> = map
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().collect())
                    .unwrap_or_default();
                let required: HashSet<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if props.iter().any(|p| !required.contains(p.as_str())) {
                    return false;
                }
            }
            map.values().all(is_strict_compatible)
        }
        Value::Array(items) => items.iter().all(is_strict_compatible),
        _ => true,
    }
}
