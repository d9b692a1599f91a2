//! The plan schema reshaped for local decoding.
//!
//! The planner asks for a plan with a schema specialised to the run's tools
//! (each step: a reasoning step or one tool with that tool's arguments). For a
//! small local model that schema leaves too much room: it may invent ids, list
//! tool names as dependencies, or loop in an optional list. Here the schema
//! becomes positional: step k has id `sk` and may only depend on `s1..s(k-1)`,
//! optional fields are dropped, and the number of steps is bounded. Duplicate
//! ids, unknown dependencies and cycles become impossible to write. The other
//! form a reply may take is a refusal: no steps, and `infeasible` with the reason.
//! The goal is left out: the planner takes the task as the goal when a reply
//! gives none, and a small model restating the task costs seconds of decoding.

use serde_json::{json, Value};

/// Most steps the local grammar allows when the schema sets no `maxItems`.
pub const MAX_STEPS: usize = 10;

/// Whether `schema` is planexec's plan schema (with per-tool step variants).
pub fn is_plan_schema(name: &str, schema: &Value) -> bool {
    name == "plan" && schema.pointer("/properties/steps/items/anyOf").is_some()
}

/// Mark every string in an argument schema: `{{...}}` inside it may only name `earlier` steps.
fn allow_references(schema: &mut Value, earlier: &[String]) {
    match schema {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("string") && !map.contains_key("enum") {
                map.insert(crate::gbnf::REFS_KEY.into(), json!(earlier));
            }
            map.values_mut().for_each(|v| allow_references(v, earlier));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| allow_references(v, earlier)),
        _ => {}
    }
}

/// The positional, bounded form of a plan schema.
pub fn reshape(schema: &Value, max_steps: usize) -> Value {
    let variants: Vec<Value> = schema
        .pointer("/properties/steps/items/anyOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let step = |k: usize| -> Value {
        let earlier: Vec<String> = (1..k).map(|i| format!("s{i}")).collect();
        let depends_on = if earlier.is_empty() {
            json!({"type": "array", "maxItems": 0})
        } else {
            json!({"type": "array", "items": {"enum": earlier}, "maxItems": k - 1})
        };
        let options: Vec<Value> = variants
            .iter()
            .map(|v| {
                let mut v = v.clone();
                if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
                    if let Some(args) = props.get_mut("args") {
                        allow_references(args, &earlier);
                    }
                    props.insert("id".into(), json!({"const": format!("s{k}")}));
                    props.insert("depends_on".into(), depends_on.clone());
                    props.remove("expected");
                }
                if let Some(req) = v.get_mut("required").and_then(Value::as_array_mut) {
                    req.retain(|r| r != "expected");
                }
                v
            })
            .collect();
        json!({"anyOf": options})
    };
    let planned = json!({
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "prefixItems": (1..=max_steps).map(step).collect::<Vec<_>>(),
                "items": false,
                "minItems": 1
            }
        },
        "required": ["steps"]
    });
    // "Cannot be done, because …": no steps and the reason, so a task whose
    // input does not exist is refused instead of planned around a guess.
    let refused = json!({
        "type": "object",
        "properties": {
            "steps": {"type": "array", "maxItems": 0},
            "infeasible": {"type": "string"}
        },
        "required": ["steps", "infeasible"]
    });
    json!({"anyOf": [planned, refused]})
}
