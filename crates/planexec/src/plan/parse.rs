//! Reading a plan from a model's reply (robustly: fences, prose, light JSON
//! damage) or from a file (strictly, with positions), and while a model is
//! still writing it ([`PlanStream`]).

use serde_json::Value;

use super::{Plan, Step};
use crate::json::{extract_json_object, parse_repaired};

/// Why a text could not be read as a plan.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ParseError {
    #[error("no JSON object found in the reply")]
    NoJson,
    #[error("the JSON is malformed at line {line}, column {column}: {message}")]
    Malformed {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the JSON is not a plan: {0}")]
    NotAPlan(String),
}

/// Read a plan from a model's reply: strips code fences and prose around the JSON,
/// repairs light damage (trailing commas, single quotes, comments), then parses.
pub fn parse_plan_reply(reply: &str) -> Result<Plan, ParseError> {
    let candidate = extract_json_object(reply).ok_or(ParseError::NoJson)?;
    let value = parse_repaired::<Value>(candidate).map_err(|first| ParseError::Malformed {
        line: first.line(),
        column: first.column(),
        message: strip_serde_position(&first.to_string()),
    })?;
    plan_from_value(value)
}

/// Read a plan from a file's text: strict JSON, with positions for malformed input.
pub fn parse_plan_file(text: &str) -> Result<Plan, ParseError> {
    let value = serde_json::from_str::<Value>(text).map_err(|e| ParseError::Malformed {
        line: e.line(),
        column: e.column(),
        message: strip_serde_position(&e.to_string()),
    })?;
    plan_from_value(value)
}

fn plan_from_value(mut value: Value) -> Result<Plan, ParseError> {
    // Some models wrap the plan: {"plan": {...}}.
    if value.get("steps").is_none() && value.get("goal").is_none() {
        if let Some(inner) = value.get("plan").cloned() {
            value = inner;
        }
    }
    let mut plan = serde_json::from_value::<Plan>(value).map_err(|e| ParseError::NotAPlan(e.to_string()))?;
    // Strict structured output makes models fill optional fields with "": that means unset.
    if plan.infeasible.as_deref().is_some_and(|r| r.trim().is_empty()) {
        plan.infeasible = None;
    }
    plan.questions.retain(|q| !q.trim().is_empty());
    plan.assumptions.retain(|a| !a.trim().is_empty());
    for step in &mut plan.steps {
        if step.expected.as_deref().is_some_and(|e| e.trim().is_empty()) {
            step.expected = None;
        }
    }
    Ok(plan)
}

fn strip_serde_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Reads a plan while a model is still writing it (LLMCompiler-style
/// dispatch): feed the reply's text as it arrives, and each step comes back as
/// soon as its JSON object inside `"steps": [...]` is complete. The finished
/// reply is still parsed and validated as a whole with [`parse_plan_reply`].
#[derive(Debug, Default)]
pub struct PlanStream {
    text: String,
    emitted: usize,
    goal: Option<String>,
}

impl PlanStream {
    pub fn new() -> PlanStream {
        PlanStream::default()
    }

    /// Add the next piece of the reply; returns the steps completed by it.
    pub fn push(&mut self, delta: &str) -> Vec<Step> {
        self.text.push_str(delta);
        let (goal, objects) = scan_plan_prefix(&self.text);
        if self.goal.is_none() {
            self.goal = goal;
        }
        let mut steps = Vec::new();
        for object in objects.into_iter().skip(self.emitted) {
            self.emitted += 1;
            let parsed = parse_repaired::<Step>(object);
            // An unreadable step is left to the whole-reply parse, which reports it.
            if let Ok(step) = parsed {
                steps.push(step);
            }
        }
        steps
    }

    /// The plan's goal, once its value has been written.
    pub fn goal(&self) -> Option<&str> {
        self.goal.as_deref()
    }

    /// Everything received so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The `goal` string and the complete step objects in a plan's JSON prefix.
fn scan_plan_prefix(text: &str) -> (Option<String>, Vec<&str>) {
    let Some(start) = text.find('{') else {
        return (None, Vec::new());
    };
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0;
    // The last string at depth 1 followed by `:` (a key of the plan object).
    let mut key: Option<&str> = None;
    let mut last_string: Option<&str> = None;
    let mut steps_depth: Option<usize> = None;
    let mut object_start = 0;
    let mut goal = None;
    let mut objects = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                let s = &text[string_start..=i];
                if depth == 1 && key == Some("goal") && goal.is_none() {
                    goal = serde_json::from_str::<String>(s).ok();
                }
                last_string = Some(s);
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i;
            }
            b':' if depth == 1 => key = last_string.map(|s| s.trim_matches('"')),
            b',' if depth == 1 => key = None,
            b'[' if depth == 1 && key == Some("steps") => {
                depth += 1;
                steps_depth = Some(depth);
            }
            b'{' | b'[' => {
                if b == b'{' && steps_depth == Some(depth) {
                    object_start = i;
                }
                depth += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if b == b'}' && steps_depth == Some(depth) {
                    objects.push(&text[object_start..=i]);
                }
                if b == b']' && steps_depth == Some(depth + 1) {
                    steps_depth = None;
                }
            }
            _ => {}
        }
    }
    (goal, objects)
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    #[test]
    fn steps_come_out_as_soon_as_their_object_is_complete() {
        let reply = r#"{"goal": "sum \"two\" files", "steps": [
 {"id": "s1", "description": "read {a}", "tool": "read_file", "args": {"path": "a.txt", "n": [1, {"x": 2}]}, "depends_on": []},
 {"id": "s2", "description": "]} tricky", "tool": null, "args": {}, "depends_on": ["s1"]}
], "infeasible": null}"#;
        let mut stream = PlanStream::new();
        let mut seen = Vec::new();
        // Byte by byte is the worst case of a streamed reply.
        for (i, c) in reply.char_indices() {
            for step in stream.push(&c.to_string()) {
                seen.push((step.id.clone(), i));
            }
        }
        let ids: Vec<&str> = seen.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["s1", "s2"]);
        // s1 was complete before s2 was even started.
        assert!(seen[0].1 < reply.find("\"id\": \"s2\"").unwrap());
        assert_eq!(stream.goal(), Some("sum \"two\" files"));
        assert_eq!(stream.text(), reply);
        let whole = parse_plan_reply(stream.text()).unwrap();
        assert_eq!(whole.steps.len(), 2);
    }

    #[test]
    fn nothing_is_emitted_outside_the_steps_array() {
        let mut stream = PlanStream::new();
        assert!(stream
            .push(r#"{"assumptions": [{"id": "x", "description": "not a step"}], "goal": "g", "steps": ["#)
            .is_empty());
        let steps = stream.push(r#"{"id": "a", "description": "d", "tool": "t", "args": {}, "depends_on": []}]}"#);
        assert_eq!(steps.len(), 1);
        assert!(stream.push("").is_empty());
    }
}
