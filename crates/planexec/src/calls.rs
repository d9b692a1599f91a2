//! Tool calls as a model sees and makes them: the function specs it is
//! offered (with names OpenAI accepts), and the calls it makes, natively or
//! written as text (a JSON object, or Qwen's `<tool_call>` tags), which small
//! local models often do. A call written as text is a call, never an answer;
//! one that cannot be read is said to be garbled so the loop can ask again.

use serde_json::{Map, Value};

use crate::llm::{ChatResponse, Message, ToolCall, ToolSpec};
use crate::tools::{function_name, ToolEntry};

/// The specs of `entries` as function tools.
pub(crate) fn specs(entries: &[std::sync::Arc<ToolEntry>]) -> Vec<ToolSpec> {
    entries
        .iter()
        .map(|e| ToolSpec {
            name: function_name(e.tool.name()),
            description: e.tool.description().to_string(),
            parameters: e.tool.parameters(),
        })
        .collect()
}

/// The tool among `names` that a model called `called` (its name, or the
/// function-name alias of an MCP tool).
pub(crate) fn real_name(names: &[String], called: &str) -> Option<String> {
    names
        .iter()
        .find(|n| *n == called || function_name(n) == called)
        .cloned()
}

/// Add one call and its result to a loop's history.
pub(crate) fn remember(history: &mut Vec<Message>, call: ToolCall, result: &str) {
    let id = call.id.clone();
    history.push(Message::Assistant {
        content: None,
        tool_calls: vec![call],
    });
    history.push(Message::Tool {
        tool_call_id: id,
        content: result.to_string(),
    });
}

/// The result a loop gives a call that repeats one that succeeded, instead of
/// running it again: the same result (or a side effect twice) would only keep
/// a small model decoding greedily in its loop. `finish` says how to end.
pub(crate) fn already_made(tool: &str, finish: &str) -> String {
    format!(
        "error: you already called `{tool}` with these arguments; its result is above. Use that result: call another tool or other arguments, or {finish}."
    )
}

/// What a model's reply does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// It calls a tool (native, or written as text).
    Call(ToolCall),
    /// It looks like a tool call written as text, but cannot be read.
    Garbled(String),
    /// Plain text: an answer.
    Text(String),
}

/// What `response` does: its first native call, else a call written in its text.
pub(crate) fn reply_of(response: &ChatResponse) -> Reply {
    if let Some(call) = response.tool_calls.first() {
        return Reply::Call(call.clone());
    }
    let text = response.content.clone().unwrap_or_default();
    match written_call(&text) {
        Some(Ok(call)) => Reply::Call(call),
        Some(Err(why)) => Reply::Garbled(why),
        None => Reply::Text(text),
    }
}

/// A call written in `text`: `None` when the text is not one; `Err` when it
/// looks like one but cannot be read.
pub(crate) fn written_call(text: &str) -> Option<Result<ToolCall, String>> {
    let trimmed = text.trim();
    if let Some(start) = trimmed.find("<tool_call>") {
        let inner = &trimmed[start + "<tool_call>".len()..];
        let inner = inner.split("</tool_call>").next().unwrap_or(inner);
        return Some(call_in_json(inner).ok_or_else(|| {
            format!(
                "the <tool_call> holds no readable call: {}",
                crate::text::truncate_chars(inner.trim(), 120)
            )
        }));
    }
    let looks_like_call = (trimmed.starts_with('{') || trimmed.starts_with("```"))
        && trimmed.contains("\"name\"")
        && (trimmed.contains("\"arguments\"") || trimmed.contains("\"parameters\""));
    match call_in_json(trimmed) {
        Some(call) => Some(Ok(call)),
        None if looks_like_call => Some(Err(format!(
            "the reply looks like a tool call but is not readable JSON: {}",
            crate::text::truncate_chars(trimmed, 120)
        ))),
        None => None,
    }
}

/// `{"name": "...", "arguments": {...}}` (or `"parameters"`), in text.
fn call_in_json(text: &str) -> Option<ToolCall> {
    let value: Value = crate::json::parse_in_text(text)?;
    let name = value.get("name")?.as_str()?.to_string();
    let arguments = value.get("arguments").or_else(|| value.get("parameters"))?.clone();
    // Some models send the arguments as a JSON string.
    let arguments = match arguments {
        Value::String(s) => crate::json::parse_repaired(&s).unwrap_or(Value::Object(Map::new())),
        other => other,
    };
    Some(ToolCall {
        id: "call_text".to_string(),
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(t: &str) -> ChatResponse {
        ChatResponse {
            content: Some(t.to_string()),
            ..ChatResponse::default()
        }
    }

    #[test]
    fn calls_written_as_text_are_calls_and_answers_are_answers() {
        let qwen = r#"<tool_call>
{"name": "read_file", "arguments": {"path": "a.txt"}}
</tool_call>"#;
        match reply_of(&text(qwen)) {
            Reply::Call(c) => assert_eq!(
                (c.name.as_str(), c.arguments.clone()),
                ("read_file", json!({"path": "a.txt"}))
            ),
            other => panic!("{other:?}"),
        }
        match reply_of(&text(r#"{"name": "shell", "arguments": "{\"command\": \"ls\"}"}"#)) {
            Reply::Call(c) => assert_eq!(c.arguments, json!({"command": "ls"})),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            reply_of(&text("<tool_call>{oops</tool_call>")),
            Reply::Garbled(_)
        ));
        assert!(matches!(
            reply_of(&text(r#"{"name": "x", "arguments": {"a": "#)),
            Reply::Garbled(_)
        ));
        // JSON that is an answer, not a call.
        assert_eq!(
            reply_of(&text(r#"{"name": "Alice", "age": 3}"#)),
            Reply::Text(r#"{"name": "Alice", "age": 3}"#.to_string())
        );
        assert_eq!(
            reply_of(&text("The total is 42.")),
            Reply::Text("The total is 42.".into())
        );
        let names = vec!["fs.read".to_string(), "list_dir".to_string()];
        assert_eq!(real_name(&names, "fs__read").as_deref(), Some("fs.read"));
        assert_eq!(real_name(&names, "nope"), None);
    }
}
