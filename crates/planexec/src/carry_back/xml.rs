//! An edit of an XML file made through a parser's writer, carried back to
//! the file's own text: each attribute value and each element's text that
//! changed is written in the place of the old one, and the rest (the XML
//! declaration, comments, quotes, spacing, `<a/>` against `<a />`) stays
//! as it was.
//!
//! `ElementTree.write` drops the declaration unless told to keep it, drops
//! every comment and writes `<a />` for `<a/>`: both of the 1.5B model's
//! programs for a fuel berth's summer closing time set the right attribute
//! and wrote the file so, and agreed (held-out-53, spent). As with a
//! configuration file ([`super`]), the work is the values, the layout is
//! the person's, and both can be read from the two texts alone.

use std::ops::Range;

/// One piece of an XML text that holds a value: an element's start (its
/// name and its attributes, each name with its value's span), its end,
/// or its text (the span of what it holds, spaces around it left out).
#[derive(Debug)]
enum Piece {
    Start(String, Vec<(String, Range<usize>)>),
    End,
    Text(Range<usize>),
}

/// Whether the file at `path` is XML, by its extension.
pub(super) fn is_xml(path: &str) -> bool {
    crate::config_edit::has_extension(path, &["xml"])
}

/// The XML text `was` with the values `now` changed written in place, and
/// what was wrong with `now`, when the two hold the same elements and
/// attributes in the same order and `now` changed some values. `None` when
/// no value changed, or an element or attribute was added or taken out
/// (an edit of the file's shape is the program's own).
pub(super) fn carried_back(path: &str, was: &str, now: &str) -> Option<(String, String)> {
    let (old, new) = (pieces(was)?, pieces(now)?);
    if old.len() != new.len() {
        return None;
    }
    let mut changes: Vec<(Range<usize>, String)> = Vec::new();
    for (a, b) in old.iter().zip(&new) {
        match (a, b) {
            (Piece::Start(name, attributes), Piece::Start(other, others)) => {
                if name != other || attributes.len() != others.len() {
                    return None;
                }
                for ((key, at), (other_key, other_at)) in attributes.iter().zip(others) {
                    if key != other_key {
                        return None;
                    }
                    let (value, new_value) = (&was[at.clone()], &now[other_at.clone()]);
                    if unescaped(value) != unescaped(new_value) {
                        let quote = was[..at.start].chars().next_back().unwrap_or('"');
                        changes.push((at.clone(), quoted_as(new_value, quote)));
                    }
                }
            }
            (Piece::End, Piece::End) => {}
            (Piece::Text(at), Piece::Text(other_at)) => {
                if unescaped(&was[at.clone()]) != unescaped(&now[other_at.clone()]) {
                    changes.push((at.clone(), now[other_at.clone()].to_string()));
                }
            }
            _ => return None,
        }
    }
    if changes.is_empty() {
        return None;
    }
    let mut merged = was.to_string();
    for (at, value) in changes.into_iter().rev() {
        merged.replace_range(at, &value);
    }
    (merged != now).then(|| {
        let found = format!("{path} was edited in place and written by an XML writer, which drops the declaration and comments and changes the layout");
        (merged, found)
    })
}

/// The pieces of the XML `text` that hold values, in order; comments, the
/// declaration, other `<?...?>` and `<!...>` and spaces between elements
/// left out. `None` for text that is no XML this reads (CDATA among them).
fn pieces(text: &str) -> Option<Vec<Piece>> {
    static ASIDE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?s)\A(?:<!--.*?-->|<\?.*?\?>|<!DOCTYPE[^>]*>)").expect("a valid pattern")
    });
    static TAG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"\A<(/?)([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(/?)>"#)
            .expect("a valid pattern")
    });
    static ATTRIBUTE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')"#).expect("a valid pattern")
    });
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        if let Some(aside) = ASIDE.find(rest) {
            at += aside.end();
            continue;
        }
        if rest.starts_with("<![CDATA[") {
            return None;
        }
        if let Some(tag) = TAG.captures(rest) {
            let name = tag[2].to_string();
            if &tag[1] == "/" {
                found.push(Piece::End);
            } else {
                let offset = at + tag.get(3).map_or(0, |a| a.start());
                let attributes = ATTRIBUTE
                    .captures_iter(tag.get(3).map_or("", |a| a.as_str()))
                    .filter_map(|a| {
                        let value = a.get(2).or_else(|| a.get(3))?;
                        Some((a[1].to_string(), offset + value.start()..offset + value.end()))
                    })
                    .collect();
                found.push(Piece::Start(name, attributes));
                if &tag[4] == "/" {
                    found.push(Piece::End);
                }
            }
            at += tag.get(0).map_or(1, |t| t.end());
            continue;
        }
        if rest.starts_with('<') {
            return None;
        }
        let end = rest.find('<').unwrap_or(rest.len());
        let held = &rest[..end];
        if !held.trim().is_empty() {
            let start = at + (held.len() - held.trim_start().len());
            found.push(Piece::Text(start..start + held.trim().len()));
        }
        at += end;
    }
    Some(found)
}

/// An XML value with its five predefined entities read.
fn unescaped(value: &str) -> String {
    value
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The attribute value `value`, as a writer escaped it, written to stand
/// between `quote`s.
fn quoted_as(value: &str, quote: char) -> String {
    match quote {
        '\'' => unescaped(value)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('\'', "&apos;"),
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOURS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- shown on the quay display -->\n<harbour name=\"Porthmellin\">\n  <season name=\"summer\">\n    <facility id=\"fuel-berth\" open=\"08:00\" close=\"18:00\"/>\n    <facility id=\"showers\" open=\"07:00\" close=\"22:00\"/>\n  </season>\n  <season name=\"winter\">\n    <facility id=\"fuel-berth\" open=\"09:00\" close=\"16:00\"/>\n  </season>\n  <note>Fuel by card only</note>\n</harbour>\n";

    #[test]
    fn an_element_tree_dump_is_carried_back_to_the_files_own_text() {
        let dumped = "<harbour name=\"Porthmellin\">\n  <season name=\"summer\">\n    <facility id=\"fuel-berth\" open=\"08:00\" close=\"19:30\" />\n    <facility id=\"showers\" open=\"07:00\" close=\"22:00\" />\n  </season>\n  <season name=\"winter\">\n    <facility id=\"fuel-berth\" open=\"09:00\" close=\"16:00\" />\n  </season>\n  <note>Fuel by card or cash</note>\n</harbour>";
        let (merged, found) = carried_back("facilities.xml", HOURS, dumped).expect("carried back");
        assert_eq!(
            merged,
            HOURS
                .replace("close=\"18:00\"", "close=\"19:30\"")
                .replace("card only", "card or cash")
        );
        assert!(found.starts_with("facilities.xml was edited in place"), "{found}");
    }

    #[test]
    fn a_dump_that_adds_an_element_or_changes_nothing_is_not_carried_back() {
        let added = HOURS.replace(
            "  </season>\n  <season",
            "    <facility id=\"bins\"/>\n  </season>\n  <season",
        );
        assert_eq!(carried_back("facilities.xml", HOURS, &added), None);
        let same = HOURS
            .replace("/>", " />")
            .replace("<!-- shown on the quay display -->\n", "");
        assert_eq!(carried_back("facilities.xml", HOURS, &same), None);
    }
}
