//! `sort_lines`: a text's lines in order, alphabetically or by the number
//! on each line. Sorting is the transformation small models get wrong most
//! when a reasoning step is asked for it (they return the lines as they came,
//! or drop one); as a tool it is exact and costs no model call.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::str_arg;
use super::{Effect, Tool, ToolError};

pub(crate) struct SortLines;

/// The orders `sort_lines` knows, as its schema lists them.
const ORDERS: [&str; 4] = [
    "alphabetical",
    "reverse alphabetical",
    "smallest first",
    "largest first",
];

#[async_trait]
impl Tool for SortLines {
    fn name(&self) -> &str {
        "sort_lines"
    }
    fn description(&self) -> &str {
        "Sort the lines of a text (such as {{s1}}): alphabetical or reverse alphabetical, or by the first number on each line, smallest first or largest first (a header line with no number stays first). Empty lines are dropped; returns the sorted lines."
    }
    fn summary(&self) -> &str {
        "A text's lines sorted."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "the text whose lines to sort"},
                "order": {"type": "string", "enum": ORDERS, "description": "alphabetical, reverse alphabetical, smallest first or largest first"}
            },
            "required": ["text", "order"],
            "additionalProperties": false
        })
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let text = str_arg(&args, "text")?;
        let order = str_arg(&args, "order")?;
        sorted(text, order).map(Value::String).map_err(ToolError::invalid_args)
    }
}

/// `text`'s non-empty lines in `order`.
fn sorted(text: &str, order: &str) -> Result<String, String> {
    let mut lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    match order.trim().to_ascii_lowercase().as_str() {
        "alphabetical" => lines.sort_by_key(|l| (l.to_lowercase(), l.to_string())),
        "reverse alphabetical" => {
            lines.sort_by_key(|l| (l.to_lowercase(), l.to_string()));
            lines.reverse();
        }
        by_number @ ("smallest first" | "largest first") => {
            // A first line with no number over lines that all have one is a
            // header (a CSV file's column names): it stays first.
            let header = match lines.split_first() {
                Some((first, rest))
                    if first_number(first).is_none()
                        && !rest.is_empty()
                        && rest.iter().all(|l| first_number(l).is_some()) =>
                {
                    Some(*first)
                }
                _ => None,
            };
            let mut keyed = Vec::with_capacity(lines.len());
            for line in &lines[usize::from(header.is_some())..] {
                let number = first_number(line)
                    .ok_or_else(|| format!("the line `{line}` has no number to sort by; sort it alphabetically"))?;
                keyed.push((number, *line));
            }
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            if by_number == "largest first" {
                keyed.reverse();
            }
            lines = header
                .into_iter()
                .chain(keyed.into_iter().map(|(_, line)| line))
                .collect();
        }
        other => {
            return Err(format!("unknown order `{other}`: use one of {}", ORDERS.join(", ")));
        }
    }
    Ok(lines.join("\n"))
}

/// A number as written on a line, compiled once (it is matched per line).
static NUMBER: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"-?\d+(?:\.\d+)?").expect("a valid pattern"));

/// The first number written on `line` (`-3`, `12.5`), as a number.
fn first_number(line: &str) -> Option<f64> {
    NUMBER.find(line)?.as_str().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_sort_alphabetically_ignoring_case_or_by_their_number() {
        assert_eq!(
            sorted("Maya\nleo\n\nAmara\n", "alphabetical").unwrap(),
            "Amara\nleo\nMaya"
        );
        assert_eq!(sorted("b\na\nc", "reverse alphabetical").unwrap(), "c\nb\na");
        // 10 after 9: numbers, not text.
        assert_eq!(sorted("10\n9\n-2.5\n", "smallest first").unwrap(), "-2.5\n9\n10");
        assert_eq!(
            sorted("pen 3\npad 4.5\nclip 2", "largest first").unwrap(),
            "pad 4.5\npen 3\nclip 2"
        );
        // A CSV file's header stays first; its rows sort by their first number.
        assert_eq!(
            sorted("name,price\nlamp,24.99\ndesk,149.00\nmug,6.75", "largest first").unwrap(),
            "name,price\ndesk,149.00\nlamp,24.99\nmug,6.75"
        );
        let why = sorted("3\nmaybe", "smallest first").unwrap_err();
        assert!(why.contains("`maybe` has no number"), "{why}");
        assert!(sorted("a", "random").unwrap_err().contains("alphabetical"));
    }
}
