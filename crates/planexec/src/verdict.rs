//! A yes/no question to a model with its reason, asked as JSON and
//! constrained by a schema: the check of a run's work (`synthesizer::check`)
//! and of a step's result against its `expected` both ask one. Also a
//! question whose answer is one text field (the program of
//! [`crate::recompute`]).

use serde_json::{json, Map, Value};

use crate::llm::{ChatRequest, JsonSchemaFormat, Message, Role};

/// The two fields of a verdict: the yes/no one and its reason, e.g.
/// `("done", "wrong")` or `("meets", "reason")`.
pub(crate) type Fields = (&'static str, &'static str);

/// A request for `{<yes>: bool, <why>: string}` from `role`'s model: the run's
/// shared `system` text, then `question`.
pub(crate) fn request(role: Role, system: String, question: String, name: &str, (yes, why): Fields) -> ChatRequest {
    let properties = json!({yes: {"type": "boolean"}, why: {"type": "string"}});
    structured(role, system, question, name, properties, json!([yes, why]))
}

/// A request for `{<field>: string}` from `role`'s model.
pub(crate) fn request_one(role: Role, system: String, question: String, name: &str, field: &str) -> ChatRequest {
    let properties = json!({field: {"type": "string"}});
    structured(role, system, question, name, properties, json!([field]))
}

fn structured(
    role: Role,
    system: String,
    question: String,
    name: &str,
    properties: Value,
    required: Value,
) -> ChatRequest {
    let mut request = ChatRequest::new(role, "", vec![Message::system(system), Message::user(question)]);
    request.response_format = Some(JsonSchemaFormat {
        name: name.to_string(),
        schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }),
        strict: true,
    });
    request
}

/// The verdict a reply holds, `(yes, why)`, or `None` when it holds none.
pub(crate) fn read(reply: &str, (yes, why): Fields) -> Option<(bool, String)> {
    let verdict: Map<String, Value> = crate::json::parse_in_text(reply)?;
    let answer = verdict.get(yes).and_then(Value::as_bool)?;
    let reason = verdict.get(why).and_then(Value::as_str).unwrap_or_default().trim();
    Some((answer, reason.to_string()))
}

/// The text of `field` in a reply, or `None` when it holds none.
pub(crate) fn read_one(reply: &str, field: &str) -> Option<String> {
    let answer: Map<String, Value> = crate::json::parse_in_text(reply)?;
    answer.get(field).and_then(Value::as_str).map(str::to_string)
}
