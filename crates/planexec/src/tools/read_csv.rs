//! `read_csv`: one column of a CSV file, one value per line.
//!
//! "Add up the amount column" is the commonest question asked of a CSV
//! file, and the calculator's `sum({{s1}})` over the whole file adds every
//! number on every row (dates, taxes, quantities). Small planners then
//! write `sum(amount)` or `sum(expenses.csv.amount)`, naming the column the
//! workspace listing shows. One direct call gives exactly the column, which
//! `sum`, `mean`, `max` or `count` then work on.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::args::{io_error, str_arg, string_args};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

pub(crate) struct ReadCsv(pub Arc<Workspace>);

#[async_trait]
impl Tool for ReadCsv {
    fn name(&self) -> &str {
        "read_csv"
    }
    fn description(&self) -> &str {
        "Read one column of a CSV file whose first line names the columns: the column's values, one per line, without the header. sum, mean, min, max or count({{s1}}) in the calculator then work on them."
    }
    fn summary(&self) -> &str {
        "One column of a CSV file, a value per line."
    }
    fn parameters(&self) -> Value {
        string_args(&[
            ("path", "CSV file path relative to the workspace root"),
            ("column", "the column's name, as the header writes it"),
        ])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let column = str_arg(&args, "column")?;
        let full = self.0.resolve(path)?;
        let text = tokio::fs::read_to_string(&full).await.map_err(|e| io_error(path, e))?;
        column_values(&text, column)
            .map(Value::String)
            .map_err(|why| ToolError::invalid_args(format!("`{path}`: {why}")))
    }
}

/// The values of `column` in the CSV `text`, one per line, without the header.
pub(crate) fn column_values(text: &str, column: &str) -> Result<String, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or("the file is empty")?;
    let separator = separator_of(header);
    let names = fields(header, separator);
    let at = position_of(&names, column)
        .ok_or_else(|| format!("no column `{column}`: its columns are {}", names.join(", ")))?;
    let values: Vec<String> = lines
        .map(|line| fields(line, separator).into_iter().nth(at).unwrap_or_default())
        .collect();
    Ok(values.join("\n"))
}

/// Where `column` stands among a header's `names`: as the header writes it,
/// case and surrounding quotes aside.
fn position_of(names: &[String], column: &str) -> Option<usize> {
    let wanted = column.trim().trim_matches('"').to_lowercase();
    names.iter().position(|n| n.to_lowercase() == wanted)
}

/// Whether the CSV file at `file` (up to 1 MB) has a column named `column`,
/// as [`column_values`] finds it (the first non-empty line is the header).
pub(crate) fn csv_has_column(file: &std::path::Path, column: &str) -> bool {
    let small = std::fs::metadata(file).is_ok_and(|m| m.len() <= 1 << 20);
    small
        && std::fs::read_to_string(file).is_ok_and(|text| {
            let header = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
            position_of(&fields(header, separator_of(header)), column).is_some()
        })
}

/// The separator a header uses: a tab or `;` when it has more of those than commas.
fn separator_of(header: &str) -> char {
    [',', ';', '\t']
        .into_iter()
        .max_by_key(|c| (header.matches(*c).count(), *c == ','))
        .unwrap_or(',')
}

/// A CSV line's fields, trimmed; a field in double quotes may hold the
/// separator (and `""` for a quote).
fn fields(line: &str, separator: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => out.push(std::mem::take(&mut field).trim().to_string()),
            c => field.push(c),
        }
    }
    out.push(field.trim().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_its_values_by_the_headers_name() {
        let csv = "date,category,amount,tax\n2024-05-01,food,12.50,1.00\n2024-05-02,\"books, used\",7.25,0.58\n\n";
        assert_eq!(column_values(csv, "amount").unwrap(), "12.50\n7.25");
        assert_eq!(column_values(csv, " Category ").unwrap(), "food\nbooks, used");
        let why = column_values(csv, "price").unwrap_err();
        assert_eq!(why, "no column `price`: its columns are date, category, amount, tax");
        assert_eq!(column_values("a;b\n1;2\n3;4", "b").unwrap(), "2\n4");
        assert_eq!(column_values("name\tage\nBo\t31", "age").unwrap(), "31");
        assert!(column_values("", "a").is_err());
    }

    #[tokio::test]
    async fn the_tool_reads_a_workspace_file_and_says_which_columns_there_are() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.csv"), "name,score\nAmy,82\nBo,91\n").unwrap();
        let tool = ReadCsv(Arc::new(Workspace::new(dir.path()).unwrap()));
        let read = |column: &str| tool.call(serde_json::json!({"path": "s.csv", "column": column}));
        assert_eq!(read("score").await.unwrap(), Value::String("82\n91".into()));
        let err = read("grade").await.unwrap_err().to_string();
        assert!(err.contains("its columns are name, score"), "{err}");
    }
}
