//! References between steps: `{{s1}}`, `{{s1.field}}`, `{{s1.items.0.name}}`.
//!
//! A step's string arguments may name an earlier step's output; the executor
//! resolves them once that step has run. This file knows only strings and JSON
//! values, so that the tools below the plan can check arguments that still
//! hold references; what a plan's steps do with them is in `plan::links`.

use std::fmt;

use serde_json::{Map, Value};

/// One `{{id.path}}` reference found in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub step: String,
    pub path: Vec<String>,
    /// Byte range of the whole `{{...}}` in the string.
    pub span: (usize, usize),
}

/// Find the `{{...}}` references in `text`. Text that is not a well-formed
/// reference (`{{ }}`, `{{a b}}`) is left alone as literal text.
pub fn find_references(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{") {
        let start = from + open;
        let Some(close) = text[start + 2..].find("}}") else {
            break;
        };
        let end = start + 2 + close + 2;
        let inner = text[start + 2..end - 2].trim();
        let mut parts = inner.split('.');
        let head = parts.next().unwrap_or("");
        let valid_part = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        let path: Vec<String> = parts.map(str::to_string).collect();
        if valid_part(head) && path.iter().all(|p| valid_part(p)) {
            out.push(Reference {
                step: head.to_string(),
                path,
                span: (start, end),
            });
            from = end;
        } else {
            from = start + 2;
        }
    }
    out
}

/// `text` with each reference for which `replace` gives a text put in its
/// place; the others, and all text around them, stay as they are.
pub(crate) fn rewrite_references(text: &str, mut replace: impl FnMut(&Reference) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in find_references(text) {
        if let Some(new) = replace(&r) {
            out.push_str(&text[at..r.span.0]);
            out.push_str(&new);
            at = r.span.1;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Why a reference could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveError(pub String);

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Looks up a finished step's output by id.
pub type OutputLookup<'a> = &'a dyn Fn(&str) -> Option<Value>;

/// Replace references in `args` with the outputs of earlier steps.
///
/// A string that is exactly one reference becomes that output's JSON value (so
/// `"{{s1.count}}"` can feed a number argument); a reference inside longer text
/// is spliced in as text. See [`resolve_args_as_text`] for the all-text form.
pub fn resolve_args(args: &Map<String, Value>, outputs: OutputLookup<'_>) -> Result<Map<String, Value>, ResolveError> {
    resolve_map(args, outputs, true)
}

/// Like [`resolve_args`], but every reference becomes text, even a whole-string
/// one: for a tool whose schema wants a string where the output is a number.
pub fn resolve_args_as_text(
    args: &Map<String, Value>,
    outputs: OutputLookup<'_>,
) -> Result<Map<String, Value>, ResolveError> {
    resolve_map(args, outputs, false)
}

fn resolve_map(
    args: &Map<String, Value>,
    outputs: OutputLookup<'_>,
    keep_types: bool,
) -> Result<Map<String, Value>, ResolveError> {
    let mut out = Map::new();
    for (k, v) in args {
        out.insert(k.clone(), resolve_value(v, outputs, keep_types)?);
    }
    Ok(out)
}

fn resolve_value(value: &Value, outputs: OutputLookup<'_>, keep_types: bool) -> Result<Value, ResolveError> {
    match value {
        Value::String(s) => {
            let refs = find_references(s);
            if refs.is_empty() {
                return Ok(value.clone());
            }
            if keep_types && refs.len() == 1 && refs[0].span == (0, s.len()) {
                return lookup(&refs[0], outputs);
            }
            let mut text = String::with_capacity(s.len());
            let mut last = 0;
            for r in &refs {
                text.push_str(&s[last..r.span.0]);
                let spliced = value_as_text(&lookup(r, outputs)?);
                // A file's closing newline ends the file, not the text it is
                // spliced into: `{{s1}}\ndone` appends a line to what s1
                // read, with no blank line between (as the shell's `$(cat f)`).
                let more_follows = r.span.1 < s.len();
                text.push_str(if more_follows {
                    spliced.trim_end_matches(['\n', '\r'])
                } else {
                    &spliced
                });
                last = r.span.1;
            }
            text.push_str(&s[last..]);
            Ok(Value::String(text))
        }
        Value::Array(items) => items
            .iter()
            .map(|v| resolve_value(v, outputs, keep_types))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), resolve_value(v, outputs, keep_types)?);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn lookup(r: &Reference, outputs: OutputLookup<'_>) -> Result<Value, ResolveError> {
    let output = outputs(&r.step)
        .ok_or_else(|| ResolveError(format!("step {} has no result to use for {{{{{}}}}}", r.step, r.step)))?;
    if r.path.is_empty() {
        return Ok(printed(&output).unwrap_or(output));
    }
    // A text output that holds JSON can still be indexed into.
    let mut current = match &output {
        Value::String(s) => serde_json::from_str::<Value>(s.trim()).unwrap_or(output.clone()),
        _ => output.clone(),
    };
    for (i, field) in r.path.iter().enumerate() {
        let next = match &current {
            Value::Object(map) => map.get(field).cloned(),
            Value::Array(items) => field.parse::<usize>().ok().and_then(|n| items.get(n).cloned()),
            _ => None,
        };
        current = next.ok_or_else(|| {
            let so_far = std::iter::once(r.step.as_str())
                .chain(r.path[..i].iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(".");
            ResolveError(format!(
                "{{{{{}.{}}}}}: the output of {so_far} has no field `{field}` (it is: {})",
                r.step,
                r.path.join("."),
                crate::text::truncate_chars(&current.to_string(), 200)
            ))
        })?;
    }
    Ok(current)
}

/// What a command that succeeded printed, when `output` is a command's
/// result (`exit_code` 0 and `stdout`): used whole, `{{s2}}` of a shell step
/// is its output as a user means it, not the JSON around it (whose fields
/// stay reachable as `{{s2.exit_code}}`, `{{s2.stderr}}`).
fn printed(output: &Value) -> Option<Value> {
    let succeeded = output.get("exit_code").and_then(Value::as_i64) == Some(0);
    let stdout = output.get("stdout").and_then(Value::as_str)?;
    succeeded.then(|| Value::String(stdout.to_string()))
}

/// A JSON value as the text a tool or a prompt should see: strings bare, the rest as JSON.
pub fn value_as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_texts_closing_newline_is_dropped_only_where_more_text_follows_it() {
        let outputs = |id: &str| match id {
            "s1" => Some(Value::String("step one\nstep two\n".into())),
            "s2" => Some(Value::String("gamma\n".into())),
            _ => None,
        };
        let args: Map<String, Value> = serde_json::from_value(
            serde_json::json!({"appended": "{{s1}}\ndone", "joined": "{{s1}}\n{{s2}}", "whole": "{{s2}}"}),
        )
        .unwrap();
        let resolved = resolve_args_as_text(&args, &outputs).unwrap();
        assert_eq!(resolved["appended"], "step one\nstep two\ndone");
        assert_eq!(resolved["joined"], "step one\nstep two\ngamma\n");
        assert_eq!(resolved["whole"], "gamma\n");
    }
}
