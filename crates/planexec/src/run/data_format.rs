//! A data file written in another format than its name says, and numbers
//! written as text in JSON rows, told to the check.
//!
//! A small model's plan wrote the list `read_json` returned into
//! `expenses.csv`: JSON text in a file named `.csv`, which the run's check
//! passed. A file's extension names its format, whatever the task's words:
//! a `.json` file the run wrote must parse as JSON, and a `.csv` or `.tsv`
//! file must not be a JSON document.

use std::path::Path;

use serde_json::Value;

use super::Run;

/// The first new file the run's task names whose content is not in the
/// format its extension names: its path and a line saying so.
pub(crate) fn wrong_format(run: &Run) -> Option<(String, String)> {
    let workspace = run.ctx.setting.tools.workspace()?;
    run.new_outputs.iter().find_map(|path| {
        let held = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
        Some((path.clone(), format_problem(path, &held)?))
    })
}

/// What is wrong with `held` as the content of a file named `path`, if its
/// extension names a format it is not in.
fn format_problem(path: &str, held: &str) -> Option<String> {
    let extension = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    let text = held.trim();
    if text.is_empty() {
        return None;
    }
    let parsed = serde_json::from_str::<Value>(text);
    match extension.as_str() {
        "json" => match parsed {
            Err(e) => Some(format!(
                "{path} is named .json, and what it holds is not JSON ({e}): write the value as JSON (json.dump)"
            )),
            Ok(value) => spaced_key(&value).map(|key| {
                format!("{path} has the key {key:?}, written with spaces around it (a header read with the spaces after its commas): strip the names and the values")
            }),
        },
        "csv" | "tsv" if parsed.as_ref().is_ok_and(|v| v.is_array() || v.is_object()) => {
            let separator = if extension == "csv" { "commas" } else { "tabs" };
            Some(format!(
                "{path} is named .{extension}, and it holds JSON: write a line per row, its fields separated by {separator} (csv.writer)"
            ))
        }
        _ => None,
    }
}

/// A key of an object in `value` (or in a list of them) with spaces
/// around it (`" sunlight"`): no name a person gives a field, and what a
/// program that read a CSV written `name, sunlight` with `csv.DictReader`
/// makes (held-out-39, spent; its values kept their spaces too, so its
/// numbers were no numbers, and two programs agreed on it).
fn spaced_key(value: &Value) -> Option<&str> {
    let objects: Vec<&serde_json::Map<String, Value>> = match value {
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        Value::Object(object) => vec![object],
        _ => Vec::new(),
    };
    objects
        .into_iter()
        .flat_map(|object| object.keys())
        .find(|key| !key.trim().is_empty() && key.trim() != key.as_str())
        .map(String::as_str)
}

/// For the check ([`super::outputs::produced`]): the keys of a JSON list of
/// objects whose every value is a number written as text (`"112"`), said
/// as a fact. Whether numbers are asked for is the task's to say, and the
/// check's to weigh; shown only the file, the 1.5B checker passed such a
/// file where the task named the fields as numbers, in four held-out parts
/// in a row (held-out-15 to -18). Codes with a leading zero (`"02134"`)
/// are not numbers.
pub(crate) fn numbers_as_text(path: &str, held: &str) -> Option<String> {
    let rows = serde_json::from_str::<Value>(held.trim()).ok()?;
    let rows: Vec<&serde_json::Map<String, Value>> = rows.as_array()?.iter().filter_map(Value::as_object).collect();
    let first = rows.first()?;
    let keys: Vec<&String> = first
        .keys()
        .filter(|key| {
            rows.iter()
                .all(|row| row.get(*key).and_then(Value::as_str).is_some_and(reads_as_number))
        })
        .collect();
    let example = first.get(*keys.first()?)?.as_str()?;
    let named: Vec<String> = keys.iter().map(|key| format!("\"{key}\"")).collect();
    Some(format!(
        "In {path}, the values of {} are numbers written as text (such as \"{example}\"), not JSON numbers.\n\n",
        named.join(", ")
    ))
}

/// Whether `text` is a number as a person writes one: digits, maybe a sign
/// and a decimal point, and no leading zero before another digit.
fn reads_as_number(text: &str) -> bool {
    let text = text.trim();
    let digits = text.strip_prefix('-').unwrap_or(text);
    let leading_zero = digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0.");
    !leading_zero && text.parse::<f64>().is_ok_and(f64::is_finite) && digits.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_a_csv_file_and_text_in_a_json_file_are_in_the_wrong_format() {
        let listed = r#"[{"date": "2026-04-10", "amount": 12.8}]"#;
        assert!(format_problem("expenses.csv", listed)
            .unwrap()
            .contains("it holds JSON"));
        assert!(format_problem("out/rows.TSV", "{\"a\": 1}")
            .unwrap()
            .contains("separated by tabs"));
        assert!(format_problem("members.json", "name: Ana")
            .unwrap()
            .contains("is not JSON"));
        // Each in its own format, or a file whose name names none, is left alone.
        assert_eq!(format_problem("expenses.csv", "date,amount\n2026-04-10,12.8\n"), None);
        assert_eq!(format_problem("members.json", "[{\"name\": \"Ana\"}]\n"), None);
        assert_eq!(format_problem("count.json", "5"), None);
        assert_eq!(format_problem("notes.txt", "[1, 2]"), None);
        assert_eq!(format_problem("empty.json", "  \n"), None);
    }

    #[test]
    fn numbers_written_as_text_in_every_row_are_told() {
        let rows = r#"[{"film": "Up", "screen": "1", "start": "17:45", "zip": "02134"}, {"film": "Heat", "screen": "12", "start": "20:30", "zip": "10001"}]"#;
        let told = numbers_as_text("screenings.json", rows).unwrap();
        assert!(
            told.contains(r#"the values of "screen" are numbers written as text (such as "1")"#),
            "{told}"
        );
        let typed = r#"[{"film": "Up", "screen": 1}, {"film": "Heat", "screen": "2"}]"#;
        assert_eq!(
            numbers_as_text("s.json", typed),
            None,
            "a key typed in one row is not told"
        );
        assert_eq!(
            numbers_as_text("s.json", r#"{"screen": "1"}"#),
            None,
            "not a list of rows"
        );
        assert_eq!(numbers_as_text("s.json", "[]"), None);
        // A number kept with the space after its comma is a number too.
        assert!(numbers_as_text("p.json", r#"[{"name": "Basil", "days": " 2"}]"#).is_some());
    }

    #[test]
    fn a_json_key_with_spaces_around_it_is_a_problem() {
        let rows = r#"[{"name": "Basil", " sunlight": " full sun"}]"#;
        let found = format_problem("plants.json", rows).unwrap();
        assert!(
            found.contains(r#"has the key " sunlight", written with spaces around it"#),
            "{found}"
        );
        assert_eq!(
            format_problem("plants.json", r#"[{"name": "Basil", "sunlight": "full sun"}]"#),
            None
        );
        assert_eq!(format_problem("one.json", r#"{"a b": 1}"#), None);
    }
}
