//! A data file written in another format than its name says.
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
        "json" => parsed.err().map(|e| {
            format!("{path} is named .json, and what it holds is not JSON ({e}): write the value as JSON (json.dump)")
        }),
        "csv" | "tsv" if parsed.as_ref().is_ok_and(|v| v.is_array() || v.is_object()) => {
            let separator = if extension == "csv" { "commas" } else { "tabs" };
            Some(format!(
                "{path} is named .{extension}, and it holds JSON: write a line per row, its fields separated by {separator} (csv.writer)"
            ))
        }
        _ => None,
    }
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
}
