//! Caps on what a tool hands back, so one command printing a gigabyte cannot
//! fill the ledger or a prompt. Cut text says so with a visible marker, and
//! bytes that are not text are described, never dumped.

use serde_json::Value;

/// Most bytes and lines of tool output kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCaps {
    pub max_bytes: usize,
    pub max_lines: usize,
}

impl Default for OutputCaps {
    fn default() -> Self {
        OutputCaps {
            max_bytes: 128 * 1024,
            max_lines: 2000,
        }
    }
}

/// The start of `text` within the caps, with a marker saying what was cut.
pub fn cap_text(text: &str, caps: OutputCaps) -> String {
    let lines = text.lines().count();
    if text.len() <= caps.max_bytes && lines <= caps.max_lines {
        return text.to_string();
    }
    // The end of the kept part: after `max_lines` lines, and no further than `max_bytes`.
    let mut end = text.len();
    if let Some((i, _)) = text.match_indices('\n').nth(caps.max_lines.saturating_sub(1)) {
        end = i;
    }
    if end > caps.max_bytes {
        end = caps.max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    let kept = &text[..end];
    format!(
        "{kept}\n[... output truncated: showing {} of {lines} lines, {} of {} bytes]",
        kept.lines().count(),
        kept.len(),
        text.len()
    )
}

/// Cap every string in `value`, then the whole: a value whose JSON is still
/// larger than the cap becomes its capped JSON text.
pub fn cap_value(value: Value, caps: OutputCaps) -> Value {
    let capped = cap_strings(value, caps);
    let size = serde_json::to_string(&capped).map(|s| s.len()).unwrap_or(0);
    if size > caps.max_bytes.saturating_mul(2) {
        let text = serde_json::to_string_pretty(&capped).unwrap_or_default();
        return Value::String(cap_text(&text, caps));
    }
    capped
}

fn cap_strings(value: Value, caps: OutputCaps) -> Value {
    match value {
        Value::String(s) => Value::String(cap_text(&s, caps)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| cap_strings(v, caps)).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, cap_strings(v, caps))).collect()),
        other => other,
    }
}

/// Whether `bytes` look like text: UTF-8 with no NUL bytes. A character cut
/// off at the very end (by a size cap) still counts as text.
pub fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0)
        && match std::str::from_utf8(bytes) {
            Ok(_) => true,
            Err(e) => e.error_len().is_none(),
        }
}

/// `bytes` as text when they are text, otherwise a one-line description of them.
pub fn text_or_description(bytes: &[u8]) -> String {
    if is_text(bytes) {
        let end = std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), |s| s.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    } else {
        describe_binary(bytes.len(), sniff(bytes))
    }
}

/// "[binary output: 1,234 bytes, a PNG image; not shown]".
pub fn describe_binary(len: usize, kind: Option<&str>) -> String {
    match kind {
        Some(kind) => format!(
            "[binary output: {} bytes, {kind}; not shown]",
            crate::text::thousands(len as u64)
        ),
        None => format!(
            "[binary output: {} bytes; not shown]",
            crate::text::thousands(len as u64)
        ),
    }
}

/// What `bytes` are when they are no text to show a model: a kind their
/// signature names (a PDF is mostly text, and no document to read as
/// such), or binary data. `None` for text.
pub fn binary_kind(bytes: &[u8]) -> Option<&'static str> {
    match (sniff(bytes), is_text(bytes)) {
        (Some(kind), _) => Some(kind),
        (None, false) => Some("binary data"),
        (None, true) => None,
    }
}

/// What common file signatures say the bytes are.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a ZIP archive"),
        (b"\x1f\x8b", "gzip data"),
        (b"\x7fELF", "an ELF executable"),
    ];
    SIGNATURES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: OutputCaps = OutputCaps {
        max_bytes: 100,
        max_lines: 3,
    };

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(cap_text("a\nb\nc", SMALL), "a\nb\nc");
    }

    #[test]
    fn too_many_lines_are_cut_with_a_marker() {
        let out = cap_text("1\n2\n3\n4\n5\n", SMALL);
        assert!(
            out.starts_with("1\n2\n3\n[... output truncated: showing 3 of 5 lines"),
            "{out}"
        );
    }

    #[test]
    fn too_many_bytes_are_cut_on_a_char_boundary() {
        let text = "é".repeat(80); // 160 bytes, one line
        let out = cap_text(&text, SMALL);
        let kept = out.split('\n').next().unwrap();
        assert_eq!(kept.len(), 100);
        assert!(out.contains("100 of 160 bytes"), "{out}");
    }

    #[test]
    fn values_are_capped_inside() {
        let v = serde_json::json!({"stdout": "x\n".repeat(10), "code": 0});
        let out = cap_value(v, SMALL);
        assert!(out["stdout"].as_str().unwrap().contains("showing 3 of 10 lines"));
        assert_eq!(out["code"], 0);
    }

    #[test]
    fn binary_is_described() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".repeat(100);
        assert_eq!(
            text_or_description(&png),
            "[binary output: 1,600 bytes, a PNG image; not shown]"
        );
        assert_eq!(text_or_description(b"plain"), "plain");
        assert!(text_or_description(b"a\0b").starts_with("[binary output: 3 bytes;"));
        assert_eq!(binary_kind(b"%PDF-1.4\n0000"), Some("a PDF document"));
        assert_eq!(binary_kind(b"\xff\xd8\xff\xe0\0\x10JFIF"), Some("a JPEG image"));
        assert_eq!(binary_kind(b"fake photo\0"), Some("binary data"));
        assert_eq!(binary_kind("date,kg\n2024-07-02,1.2\n".as_bytes()), None);
        // A cap that cut "é" in half leaves text, not binary.
        assert_eq!(text_or_description(&"aé".as_bytes()[..2]), "a");
    }
}
