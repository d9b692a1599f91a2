//! `transform_text`: a text spelled backwards, its words or lines in reverse
//! order, or its case changed. A small model cannot spell a word backwards
//! (it sees tokens, not letters: the 1.5B model wrote "tnalp" for "planet")
//! and drops or adds characters when it retypes a text in capitals; as a
//! tool each of these is exact and costs no model call.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::str_arg;
use super::{Effect, Tool, ToolError};

pub(crate) struct TransformText;

/// The operations `transform_text` knows, as its schema lists them.
const OPERATIONS: [&str; 6] = [
    "reverse",
    "reverse words",
    "reverse lines",
    "uppercase",
    "lowercase",
    "title case",
];

#[async_trait]
impl Tool for TransformText {
    fn name(&self) -> &str {
        "transform_text"
    }
    fn description(&self) -> &str {
        "Change a text (such as a word given in the task, or {{s1}}): reverse spells it backwards, reverse words or reverse lines puts its words or lines in the opposite order, uppercase, lowercase or title case changes its case. Returns the changed text."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "the text to change"},
                "operation": {"type": "string", "enum": OPERATIONS, "description": "reverse, reverse words, reverse lines, uppercase, lowercase or title case"}
            },
            "required": ["text", "operation"],
            "additionalProperties": false
        })
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let text = str_arg(&args, "text")?;
        let operation = str_arg(&args, "operation")?;
        transformed(text, operation)
            .map(Value::String)
            .map_err(ToolError::invalid_args)
    }
}

/// `text` changed by `operation`. Surrounding whitespace is dropped first: a
/// file's trailing newline would otherwise lead a reversed word.
fn transformed(text: &str, operation: &str) -> Result<String, String> {
    let text = text.trim();
    let out = match operation.trim().to_ascii_lowercase().as_str() {
        "reverse" => text.chars().rev().collect(),
        "reverse words" => reversed_words(text),
        "reverse lines" => {
            let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
            lines.into_iter().rev().collect::<Vec<_>>().join("\n")
        }
        "uppercase" => text.to_uppercase(),
        "lowercase" => text.to_lowercase(),
        "title case" => title_case(text),
        other => {
            return Err(format!(
                "unknown operation `{other}`: use one of {}",
                OPERATIONS.join(", ")
            ))
        }
    };
    Ok(out)
}

/// Each line's words in the opposite order; lines stay where they are.
fn reversed_words(text: &str) -> String {
    text.lines()
        .map(|line| line.split_whitespace().rev().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every word's first letter in capitals and the rest in small letters; the
/// spaces and line breaks between words are kept as they were.
fn title_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at_word_start = true;
    for c in text.chars() {
        if c.is_whitespace() {
            at_word_start = true;
            out.push(c);
        } else if at_word_start {
            at_word_start = false;
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_spelled_backwards_reordered_or_recased_exactly() {
        // A file's trailing newline does not lead the reversed word.
        assert_eq!(transformed("planet\n", "reverse").unwrap(), "tenalp");
        assert_eq!(transformed("héllo", "reverse").unwrap(), "olléh");
        assert_eq!(
            transformed("one two  three\nfour five", "reverse words").unwrap(),
            "three two one\nfive four"
        );
        assert_eq!(transformed("a\nb\nc\n", "reverse lines").unwrap(), "c\nb\na");
        assert_eq!(transformed("Straße 5", "uppercase").unwrap(), "STRASSE 5");
        assert_eq!(transformed("MiXed", " Lowercase ").unwrap(), "mixed");
        assert_eq!(
            transformed("the QUICK fox\nis here", "title case").unwrap(),
            "The Quick Fox\nIs Here"
        );
    }

    #[test]
    fn an_unknown_operation_names_the_ones_there_are() {
        let why = transformed("abc", "shuffle").unwrap_err();
        assert!(why.contains("`shuffle`") && why.contains("reverse words"), "{why}");
    }
}
