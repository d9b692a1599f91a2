//! `reverse_text`: a text spelled backwards, or its words or lines in the
//! opposite order. A small model cannot spell a word backwards (it sees
//! tokens, not letters: the 1.5B model wrote "patlen" for "planet"); as a
//! tool it is exact and costs no model call. The name says what it does: a
//! first version, `transform_text`, also changed case, and its general name
//! drew the 1.5B planner's "find the highest temperature" into it.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::str_arg;
use super::{Effect, Tool, ToolError};

pub(crate) struct ReverseText;

/// What `reverse_text` reverses, as its schema lists them.
const UNITS: [&str; 3] = ["letters", "words", "lines"];

#[async_trait]
impl Tool for ReverseText {
    fn name(&self) -> &str {
        "reverse_text"
    }
    fn description(&self) -> &str {
        "Reverse a text (such as a word given in the task, or {{s1}}): its letters (spelled backwards), its words or its lines in the opposite order. Returns the reversed text."
    }
    fn summary(&self) -> &str {
        "A text reversed by letters, words or lines."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "the text to reverse"},
                "reverse": {"type": "string", "enum": UNITS, "description": "letters, words or lines"}
            },
            "required": ["text", "reverse"],
            "additionalProperties": false
        })
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let text = str_arg(&args, "text")?;
        let unit = str_arg(&args, "reverse")?;
        reversed(text, unit).map(Value::String).map_err(ToolError::invalid_args)
    }
}

/// `text` with its `unit`s in the opposite order. Surrounding whitespace is
/// dropped first: a file's trailing newline would otherwise lead a reversed
/// word.
fn reversed(text: &str, unit: &str) -> Result<String, String> {
    let text = text.trim();
    match unit.trim().to_ascii_lowercase().as_str() {
        "letters" => Ok(text.chars().rev().collect()),
        // Each line's words; the lines stay where they are.
        "words" => Ok(text
            .lines()
            .map(|line| line.split_whitespace().rev().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")),
        "lines" => Ok(text.lines().map(str::trim_end).rev().collect::<Vec<_>>().join("\n")),
        other => Err(format!("cannot reverse `{other}`: use one of {}", UNITS.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_spelled_backwards_or_its_words_or_lines_reversed_exactly() {
        // A file's trailing newline does not lead the reversed word.
        assert_eq!(reversed("planet\n", "letters").unwrap(), "tenalp");
        assert_eq!(reversed("héllo", " Letters ").unwrap(), "olléh");
        assert_eq!(
            reversed("one two  three\nfour five", "words").unwrap(),
            "three two one\nfive four"
        );
        assert_eq!(reversed("a\nb\nc\n", "lines").unwrap(), "c\nb\na");
    }

    #[test]
    fn an_unknown_unit_names_the_ones_there_are() {
        let why = reversed("abc", "sentences").unwrap_err();
        assert!(
            why.contains("`sentences`") && why.contains("letters, words, lines"),
            "{why}"
        );
    }
}
