//! An edit of a JSON file made through `json.dump`, carried back to the
//! file's own layout: its indentation and spacing, and the way it wrote
//! each value the edit left alone.
//!
//! Told to change one field of museum.json and keep the formatting, the
//! 1.5B model loaded the file and dumped it again with another indentation
//! (held-out-28, spent): the value was right and every other line of the
//! file had changed. As with a configuration file ([`super`]), the work is
//! the values and the layout is the person's, and both can be read from
//! the two texts alone.

use std::ops::Range;

use serde_json::Value;

/// A JSON text read with where each of its values is: a leaf (a string,
/// number, `true`, `false` or `null`) by its span in the text, an array by
/// its items, an object by its keys (decoded) in their order.
#[derive(Debug)]
enum Node {
    Leaf(Range<usize>),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

/// A layout `json.dump` writes: the indentation of one level (`None`: all
/// on one line) and the separators between items and after a key.
struct Layout {
    indent: Option<String>,
    item: &'static str,
    key: &'static str,
}

/// Whether the file at `path` is JSON, by its extension.
pub(super) fn is_json(path: &str) -> bool {
    crate::config_edit::has_extension(path, &["json"])
}

/// The JSON text `was` with the values `now` changed carried to its own
/// layout, and what was wrong with `now`, when `now` holds other values
/// than `was` in another layout: each value that changed written in the
/// place of the old one, when the two have the same keys and items; else
/// `now`'s values written in `was`'s layout, when that is one a dump
/// writes. `None` when the values are the same (a layout asked for is the
/// whole edit), the layout is the same, or neither way carries them.
pub(super) fn carried_back(path: &str, was: &str, now: &str) -> Option<(String, String)> {
    let (old, new) = (
        serde_json::from_str::<Value>(was).ok()?,
        serde_json::from_str::<Value>(now).ok()?,
    );
    if old == new {
        return None;
    }
    let merged = in_place(was, now).or_else(|| relaid(was, &old, &new))?;
    let carries = serde_json::from_str::<Value>(&merged).is_ok_and(|read| read == new);
    (carries && merged != now).then(|| {
        let found = format!("{path} was edited in place and written in another layout than its own (its indentation or spacing changed)");
        (merged, found)
    })
}

/// `was` with each leaf whose value `now` changed written as `now` wrote
/// it, when the two have the same shape: the same keys in the same order
/// and the same number of items in each array.
fn in_place(was: &str, now: &str) -> Option<String> {
    let (old, new) = (read(was)?, read(now)?);
    let mut changes = Vec::new();
    changed_leaves((&old, was), (&new, now), &mut changes)?;
    let mut merged = was.to_string();
    for (span, text) in changes.into_iter().rev() {
        merged.replace_range(span, text);
    }
    Some(merged)
}

/// The leaves of `old` (in `was`) whose value `new` (in `now`) changed,
/// with `now`'s text for each, in order; `None` when the shapes differ.
fn changed_leaves<'a>(
    (old, was): (&Node, &str),
    (new, now): (&Node, &'a str),
    changes: &mut Vec<(Range<usize>, &'a str)>,
) -> Option<()> {
    match (old, new) {
        (Node::Leaf(a), Node::Leaf(b)) => {
            let same = serde_json::from_str::<Value>(&was[a.clone()]).ok()
                == serde_json::from_str::<Value>(&now[b.clone()]).ok();
            if !same {
                changes.push((a.clone(), &now[b.clone()]));
            }
            Some(())
        }
        (Node::Array(a), Node::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .try_for_each(|(a, b)| changed_leaves((a, was), (b, now), changes)),
        (Node::Object(a), Node::Object(b)) if a.len() == b.len() => {
            a.iter().zip(b).try_for_each(|((ka, a), (kb, b))| {
                (ka == kb).then_some(())?;
                changed_leaves((a, was), (b, now), changes)
            })
        }
        _ => None,
    }
}

/// `new` written in the layout `was` is in, when `old` (what `was` holds)
/// written in one of the layouts a dump writes is `was` itself, with its
/// ending.
fn relaid(was: &str, old: &Value, new: &Value) -> Option<String> {
    let body = was.trim_end();
    let ending = &was[body.len()..];
    let layouts = [
        Some("  "),
        Some("    "),
        Some("\t"),
        Some("   "),
        Some("        "),
        None,
    ];
    let separators = [(", ", ": "), (",", ":"), (",", ": ")];
    let layout = layouts
        .iter()
        .flat_map(|indent| {
            separators.iter().map(|&(item, key)| Layout {
                indent: indent.map(str::to_string),
                item: if indent.is_some() { item.trim_end() } else { item },
                key,
            })
        })
        .find(|layout| written(old, layout, 0) == body)?;
    Some(format!("{}{ending}", written(new, &layout, 0)))
}

/// `value` written in `layout`, at `depth` levels of indentation.
fn written(value: &Value, layout: &Layout, depth: usize) -> String {
    let (open, close, items): (&str, &str, Vec<String>) = match value {
        Value::Array(items) if !items.is_empty() => (
            "[",
            "]",
            items.iter().map(|item| written(item, layout, depth + 1)).collect(),
        ),
        Value::Object(map) if !map.is_empty() => {
            let items = map
                .iter()
                .map(|(key, item)| {
                    let key = serde_json::to_string(key).unwrap_or_default();
                    format!("{key}{}{}", layout.key, written(item, layout, depth + 1))
                })
                .collect();
            ("{", "}", items)
        }
        other => return other.to_string(),
    };
    match &layout.indent {
        None => format!("{open}{}{close}", items.join(layout.item)),
        Some(unit) => {
            let inner = unit.repeat(depth + 1);
            let outer = unit.repeat(depth);
            let joined = items.join(&format!("{}\n{inner}", layout.item));
            format!("{open}\n{inner}{joined}\n{outer}{close}")
        }
    }
}

/// `text` read as one JSON value with the spans of its leaves; `None` when
/// it is not JSON.
fn read(text: &str) -> Option<Node> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let node = reader.value()?;
    reader.space();
    (reader.at == reader.text.len()).then_some(node)
}

/// A reader of JSON text, at a byte of it.
struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// Step over `byte` after any space, when it is next.
    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let next = self.text.get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    fn value(&mut self) -> Option<Node> {
        self.space();
        match self.text.get(self.at)? {
            b'[' => self.array(),
            b'{' => self.object(),
            b'"' => self.string().map(Node::Leaf),
            _ => self.scalar().map(Node::Leaf),
        }
    }

    fn array(&mut self) -> Option<Node> {
        self.list(b']', Self::value).map(Node::Array)
    }

    fn object(&mut self) -> Option<Node> {
        self.list(b'}', Self::entry).map(Node::Object)
    }

    /// A key and its value.
    fn entry(&mut self) -> Option<(String, Node)> {
        self.space();
        let span = self.string()?;
        let key: String = serde_json::from_slice(&self.text[span]).ok()?;
        self.eat(b':').then_some(())?;
        Some((key, self.value()?))
    }

    /// The items `item` reads between the opening byte the reader is at
    /// and `close`, separated by commas.
    fn list<T>(&mut self, close: u8, item: fn(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.at += 1;
        let mut items = Vec::new();
        if self.eat(close) {
            return Some(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(close) {
                return Some(items);
            }
            self.eat(b',').then_some(())?;
        }
    }

    /// The span of a string, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        (self.text.get(self.at) == Some(&b'"')).then_some(())?;
        self.at += 1;
        loop {
            match self.text.get(self.at)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }

    /// The span of a number, `true`, `false` or `null`.
    fn scalar(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
        {
            self.at += 1;
        }
        (self.at > start).then_some(start..self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MUSEUM: &str = "{\n  \"name\": \"Harbour Museum\",\n  \"closing_time\": \"17:00\",\n  \"closed_on\": [\"Monday\"],\n  \"price\": 12.5\n}\n";

    #[test]
    fn a_value_dumped_in_another_indentation_goes_back_into_the_files_own_lines() {
        let now = "{\n    \"name\": \"Harbour Museum\",\n    \"closing_time\": \"18:30\",\n    \"closed_on\": [\n        \"Monday\"\n    ],\n    \"price\": 12.5\n}";
        let (merged, found) = carried_back("museum.json", MUSEUM, now).expect("carried back");
        assert_eq!(merged, MUSEUM.replace("17:00", "18:30"));
        assert!(found.contains("museum.json"), "{found}");
    }

    #[test]
    fn a_field_added_by_a_dump_is_written_in_the_layout_a_dump_of_the_old_file_matches() {
        let was = "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ]\n}\n";
        let now = "{\"a\": 1, \"b\": [2, 3], \"c\": {\"d\": null}}";
        let (merged, _) = carried_back("x.json", was, now).expect("carried back");
        assert_eq!(
            merged,
            "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ],\n  \"c\": {\n    \"d\": null\n  }\n}\n"
        );
        let compact = "{\"a\": 1, \"b\": []}";
        assert!(
            carried_back("x.json", compact, now).is_none(),
            "a dump in the file's own layout is its own"
        );
    }

    #[test]
    fn an_edit_in_the_files_own_layout_or_of_the_layout_alone_is_left_as_it_is() {
        let own = MUSEUM.replace("17:00", "18:30");
        assert!(carried_back("museum.json", MUSEUM, &own).is_none());
        let reindented =
            "{\"name\": \"Harbour Museum\", \"closing_time\": \"17:00\", \"closed_on\": [\"Monday\"], \"price\": 12.5}";
        assert!(
            carried_back("museum.json", MUSEUM, reindented).is_none(),
            "a layout asked for is the edit"
        );
        assert!(carried_back("museum.json", MUSEUM, "not json").is_none());
    }

    #[test]
    fn a_hand_laid_file_whose_keys_changed_is_not_relaid() {
        let was = "{ \"a\": 1,   \"b\": 2 }\n";
        let now = "{\n  \"a\": 1,\n  \"c\": 2\n}";
        assert!(carried_back("x.json", was, now).is_none());
    }
}
