//! Reading JSON that a model wrote: find the object in a reply (fenced or
//! wrapped in prose) and repair light damage (single quotes, trailing commas,
//! comments, Python literals). Every place that reads a model's JSON (plans,
//! tool calls written as text, verdicts, providers' tool arguments) goes
//! through here.

use serde::de::DeserializeOwned;

/// Parse `text` as JSON, or failing that its repaired form; the error is the
/// one for the text as written (its position is where the model went wrong).
pub fn parse_repaired<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(text).or_else(|first| serde_json::from_str(&repair_json(text)).map_err(|_| first))
}

/// The first JSON object in a reply, parsed leniently ([`parse_repaired`]).
pub fn parse_in_text<T: DeserializeOwned>(text: &str) -> Option<T> {
    parse_repaired(extract_json_object(text)?).ok()
}

/// The first balanced `{...}` in `text`, preferring the content of a ```json fence.
pub fn extract_json_object(text: &str) -> Option<&str> {
    let search_in = fenced_block(text).unwrap_or(text);
    let start = search_in.find('{')?;
    let bytes = search_in.as_bytes();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'"' | b'\'' => quote = Some(b),
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&search_in[start..=i]);
                }
            }
            _ => {}
        }
    }
    // Unbalanced (cut off): hand back the rest and let the parser report where.
    Some(&search_in[start..])
}

/// A closed fenced block with an object in it.
fn fenced_block(text: &str) -> Option<&str> {
    let (inner, closed) = crate::text::first_fenced_block(text)?;
    (closed && inner.contains('{')).then_some(inner)
}

/// Repair light damage in almost-JSON: single-quoted strings, trailing commas,
/// `//` and `/* */` comments, and Python's `True`/`False`/`None`.
pub fn repair_json(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' => {
                // Copy a string, re-quoting single-quoted ones.
                out.push('"');
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        if c == '\'' && chars[i + 1] == '\'' {
                            out.push('\'');
                        } else {
                            out.push('\\');
                            out.push(chars[i + 1]);
                        }
                        i += 2;
                        continue;
                    }
                    if c == '\'' && chars[i] == '"' {
                        out.push_str("\\\"");
                    } else if chars[i] == '\n' {
                        out.push_str("\\n");
                    } else {
                        out.push(chars[i]);
                    }
                    i += 1;
                }
                out.push('"');
                i += 1;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            ',' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                if !matches!(chars.get(j), Some('}') | Some(']')) {
                    out.push(',');
                }
                i += 1;
            }
            c if c.is_alphabetic() => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push_str(match word.as_str() {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    _ => &word,
                });
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}
