//! The built-in tools: `read_file`, `list_dir`, `glob`, `search`,
//! `read_json`, `write_file`, `set_value`, `replace_in_file`, `sort_lines`,
//! `reverse_text`, `calculator`, `http_get`.
//!
//! File tools are confined to a [`Workspace`]. Every tool declares a strict
//! argument schema (closed objects, all properties required), so plans using
//! only built-ins can be requested in OpenAI's strict structured-output mode.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::workspace::Workspace;
use super::{Effect, Tool, ToolError, ToolRegistry};

pub use super::args::MAX_READ_BYTES;
use super::args::{io_error, str_arg, string_args};

/// A registry with every built-in tool, file tools confined to `workspace`.
pub fn registry(workspace: Workspace) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    let ws = Arc::new(workspace);
    reg.set_workspace(ws.clone());
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(ReadFile(ws.clone())),
        Arc::new(ListDir(ws.clone())),
        Arc::new(super::glob::Glob(ws.clone())),
        Arc::new(super::search::Search(ws.clone())),
        Arc::new(super::search::ReadJson(ws.clone())),
        Arc::new(super::read_csv::ReadCsv(ws.clone())),
        Arc::new(WriteFile(ws.clone())),
        Arc::new(super::set_value::SetValue(ws.clone())),
        Arc::new(super::replace_in_file::ReplaceInFile(ws)),
        Arc::new(super::sort_lines::SortLines),
        Arc::new(super::reverse_text::ReverseText),
        Arc::new(Calculator),
        #[cfg(feature = "http")]
        http_get(Vec::new()),
    ];
    for t in tools {
        reg.register(t).expect("built-in tool schemas are valid");
    }
    reg
}

/// `http_get`, read-only for requests to `allowed_hosts` (and their
/// subdomains); to any other host it is a [`Effect::Network`] call.
#[cfg(feature = "http")]
pub fn http_get(allowed_hosts: Vec<String>) -> Arc<dyn Tool> {
    Arc::new(super::http_get::HttpGet::new(allowed_hosts))
}

struct ReadFile(Arc<Workspace>);

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Read a UTF-8 text file inside the workspace and return its contents. The path may be a pattern such as inbox/* that matches one file."
    }
    fn summary(&self) -> &str {
        "A text file's contents."
    }
    fn parameters(&self) -> Value {
        string_args(&[("path", "file path relative to the workspace root")])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let mut full = self.0.resolve(path)?;
        if super::glob::is_pattern(path) && !full.exists() {
            full = only_match(&self.0, path)?;
        }
        let meta = tokio::fs::metadata(&full).await.map_err(|e| io_error(path, e))?;
        if meta.is_dir() {
            return Err(ToolError::invalid_args(format!("`{path}` is a folder; use list_dir")));
        }
        if meta.len() as usize > MAX_READ_BYTES {
            return Err(ToolError::failed(format!(
                "`{path}` is {} bytes, more than read_file's limit of {MAX_READ_BYTES}",
                meta.len()
            )));
        }
        let bytes = tokio::fs::read(&full).await.map_err(|e| io_error(path, e))?;
        match String::from_utf8(bytes) {
            Ok(text) => Ok(Value::String(text)),
            Err(e) => Err(ToolError::failed(format!(
                "`{path}` is a binary file ({} bytes), not text",
                e.as_bytes().len()
            ))),
        }
    }
}

/// The one file `pattern` matches ("there is one file in inbox/" is read as
/// `inbox/*`); an error naming the matches when there are several.
fn only_match(workspace: &Workspace, pattern: &str) -> Result<std::path::PathBuf, ToolError> {
    let mut found = super::glob::matching_files(workspace, pattern);
    match found.len() {
        0 => Err(ToolError::not_found(format!("no file matches `{pattern}`"))),
        1 => Ok(found.remove(0)),
        n => {
            let names: Vec<String> = found.iter().take(10).map(|f| workspace.display(f)).collect();
            Err(ToolError::invalid_args(format!(
                "`{pattern}` matches {n} files ({}): read one at a time",
                names.join(", ")
            )))
        }
    }
}

struct ListDir(Arc<Workspace>);

#[async_trait]
impl Tool for ListDir {
    fn name(&self) -> &str {
        "list_dir"
    }
    fn description(&self) -> &str {
        "List a folder inside the workspace: the paths of its entries, relative to the workspace root as read_file takes them, sorted; folders end with `/`. Use \".\" for the root."
    }
    fn summary(&self) -> &str {
        "A folder's entries, one per line (\".\" is the root)."
    }
    fn parameters(&self) -> Value {
        string_args(&[("path", "folder path relative to the workspace root")])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let full = self.0.resolve(path)?;
        if full.is_file() {
            return Err(ToolError::invalid_args(format!(
                "`{path}` is a file, not a folder; read it with read_file"
            )));
        }
        let mut dir = tokio::fs::read_dir(&full).await.map_err(|e| io_error(path, e))?;
        let mut names = Vec::new();
        while let Some(entry) = dir.next_entry().await.map_err(|e| io_error(path, e))? {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().await.map(|t| t.is_dir()).unwrap_or(false) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        // Paths as the other file tools take them, so a listing's entry is
        // the next call's argument as it stands (small models copy, not join).
        let folder = path.trim().trim_start_matches("./").trim_end_matches('/');
        if !folder.is_empty() && folder != "." {
            names = names.into_iter().map(|n| format!("{folder}/{n}")).collect();
        }
        Ok(json!(names))
    }
}

struct WriteFile(Arc<Workspace>);

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }
    fn description(&self) -> &str {
        "Write text to a file inside the workspace, creating folders as needed and replacing any existing file. A list (such as a listing's output) is written one item per line, except to a .json file."
    }
    fn summary(&self) -> &str {
        "Write content to a file, replacing it."
    }
    fn parameters(&self) -> Value {
        string_args(&[
            ("path", "file path relative to the workspace root"),
            ("content", "the full text to write"),
        ])
    }
    fn effect(&self) -> Effect {
        Effect::WritesWorkspace
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let content = as_lines(path, str_arg(&args, "content")?);
        let full = self.0.resolve(path)?;
        if let Some(parent) = full.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| io_error(path, e))?;
        }
        tokio::fs::write(&full, content.as_bytes())
            .await
            .map_err(|e| io_error(path, e))?;
        Ok(json!({"path": self.0.display(&full), "bytes": content.len()}))
    }
}

/// `content` as a text file holds it: a JSON list of texts or numbers (what
/// `{{s1}}` of a listing or a glob gives) becomes one item per line, as "write
/// their names to csv.txt" means; a `.json` file, or any other content, is
/// written as it is.
fn as_lines<'a>(path: &str, content: &'a str) -> std::borrow::Cow<'a, str> {
    if path.to_ascii_lowercase().ends_with(".json") {
        return content.into();
    }
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(content.trim()) else {
        return content.into();
    };
    let lines: Option<Vec<String>> = items
        .iter()
        .map(|item| match item {
            Value::String(s) if !s.contains('\n') => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect();
    match lines {
        Some(lines) if !lines.is_empty() => format!("{}\n", lines.join("\n")).into(),
        _ => content.into(),
    }
}

pub(crate) struct Calculator;

/// `value` at 15 significant digits, which every f64 holds exactly: binary
/// fractions' last-digit noise goes (`1157.6250000000002` is `1157.625`,
/// `0.1 + 0.2` is `0.3`), so results are written as a person would.
fn without_float_noise(value: f64) -> f64 {
    if !value.is_finite() || value == 0.0 {
        return value;
    }
    format!("{value:.14e}").parse().unwrap_or(value)
}

#[async_trait]
impl Tool for Calculator {
    fn name(&self) -> &str {
        "calculator"
    }
    fn description(&self) -> &str {
        "Evaluate an arithmetic expression: + - * / % ^, parentheses, comparisons < > <= >= == != (1 if true, 0 if false), sqrt abs round(x, digits) floor ceil ln log10 exp min max pow, pi, e. Of a text such as {{s1}}: count(text) counts its non-empty lines (or a JSON list's items), words(text) its words, chars(text) its characters; sum, mean, min, max(text) of the numbers in it. A date 2024-04-15 is its day number: subtract two for the days between."
    }
    fn summary(&self) -> &str {
        "Arithmetic: + - * / % ^ ( ), round(x, n), sqrt, min, max; of a text: sum, mean, min, max of its numbers, count (lines), words, chars; a date 2024-04-15 is a day number."
    }
    fn parameters(&self) -> Value {
        string_args(&[("expression", "an arithmetic expression")])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    /// An expression that is one step's whole output has no arithmetic in it:
    /// planners (small ones most) write it to make the calculator count,
    /// sort or pick from a text, which it cannot.
    fn plan_check(&self, args: &Value) -> Option<String> {
        let expression = args.get("expression")?.as_str()?.trim();
        match expression.strip_prefix("{{").and_then(|e| e.strip_suffix("}}")) {
            Some(inner) if !inner.contains("{{") && !inner.contains("}}") => Some(format!(
                "the expression `{expression}` is only another step's output, with no arithmetic: to count a text's lines or add up its numbers write count({expression}) or sum({expression}); to sort, filter, change or pick something from a text, use a tool that does that (a python program, where the run has one) or a reasoning step (\"tool\": null) that depends on the step with the text"
            )),
            _ => never_evaluates(expression),
        }
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let expression = str_arg(&args, "expression")?;
        let value = super::evaluate_expression(expression)
            .map_err(|e| ToolError::invalid_args(format!("cannot evaluate `{}`: {e}", expression.trim())))?;
        let value = without_float_noise(value);
        // Whole numbers come back as integers so `{{sN}}` splices "42", not "42.0".
        if value.fract() == 0.0 && value.abs() < 9.0e15 {
            Ok(json!(value as i64))
        } else {
            Ok(json!(value))
        }
    }
}

/// Why the calculator could never evaluate `expression`, whatever the steps
/// it references return: it is not an expression the calculator reads
/// (`sort(names.txt)`, `upper('ada')`), or it counts or adds up the words
/// written in it instead of a step's text (`count(names.txt)`). Each
/// `{{...}}` is read as a number here, so only errors no result could
/// avoid count (not a division by zero, nor a text with no number).
fn never_evaluates(expression: &str) -> Option<String> {
    let mut probe = String::new();
    let mut from = 0;
    for r in crate::refs::find_references(expression) {
        probe.push_str(&expression[from..r.span.0]);
        probe.push('1');
        from = r.span.1;
    }
    probe.push_str(&expression[from..]);
    if let Some(call) = super::calculator::aggregates_of_words(expression).first() {
        return Some(format!(
            "`{call}` works on the text written in it, not on a file: pass the text of the step that read the file, as count({{{{s1}}}}) or sum({{{{s1}}}})"
        ));
    }
    let error = super::evaluate_expression(&probe).err()?;
    let depends_on_results = ["by zero", "no finite result", "found no number"]
        .iter()
        .any(|e| error.contains(e));
    (!depends_on_results).then(|| format!(
        "the calculator cannot evaluate `{expression}` ({error}): it does arithmetic on numbers, round(x, n), count, sum, mean, min and max of a text's lines (as count({{{{s1}}}})) and words({{{{s1}}}}); to sort, filter, extract or change a text, use a reasoning step (\"tool\": null, \"args\": {{}}) that depends on the step with the text"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn calculate(expression: &str) -> Value {
        Calculator.call(json!({ "expression": expression })).await.unwrap()
    }

    #[tokio::test]
    async fn a_list_is_written_one_item_per_line_except_to_a_json_file() {
        let dir = tempfile::tempdir().unwrap();
        let write = WriteFile(Arc::new(Workspace::new(dir.path()).unwrap()));
        let listing = r#"["data/sales.csv","data/stock.csv"]"#;
        write
            .call(json!({"path": "csv.txt", "content": listing}))
            .await
            .unwrap();
        let written = std::fs::read_to_string(dir.path().join("csv.txt")).unwrap();
        assert_eq!(written, "data/sales.csv\ndata/stock.csv\n");
        write
            .call(json!({"path": "files.json", "content": listing}))
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("files.json")).unwrap(), listing);
        // Not a list of texts: as it is.
        let objects = r#"[{"a": 1}]"#;
        write.call(json!({"path": "o.txt", "content": objects})).await.unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("o.txt")).unwrap(), objects);
    }

    #[test]
    fn a_calculation_of_a_whole_output_is_sent_back_to_the_planner() {
        let why = Calculator.plan_check(&json!({"expression": " {{s1}} "})).unwrap();
        assert!(why.contains("reasoning step"), "{why}");
        assert_eq!(Calculator.plan_check(&json!({"expression": "{{s1}} + {{s2}}"})), None);
        assert_eq!(Calculator.plan_check(&json!({"expression": "{{s1}} * 2"})), None);
    }

    #[test]
    fn a_function_the_calculator_does_not_know_is_sent_back_to_the_planner() {
        let why = Calculator.plan_check(&json!({"expression": "sort({{s1}})"})).unwrap();
        assert!(
            why.contains("`sort({{s1}})`") && why.contains("reasoning step"),
            "{why}"
        );
        assert!(Calculator
            .plan_check(&json!({"expression": "sort(names.txt)"}))
            .is_some());
        let why = Calculator
            .plan_check(&json!({"expression": "count(names.txt)"}))
            .unwrap();
        assert!(why.contains("count({{s1}})"), "{why}");
        assert_eq!(Calculator.plan_check(&json!({"expression": "sum(12.5, 3.1, 7)"})), None);
        let why = Calculator
            .plan_check(&json!({"expression": "sum(scores.txt) / count(scores.txt)"}))
            .unwrap();
        assert!(why.contains("sum({{s1}})"), "{why}");
        let why = Calculator
            .plan_check(&json!({"expression": "{{s1}} / count(scores.txt)"}))
            .unwrap();
        assert!(
            why.contains("`count(scores.txt)` works on the text written in it"),
            "{why}"
        );
        let why = Calculator
            .plan_check(&json!({"expression": "upper('ada lovelace')"}))
            .unwrap();
        assert!(why.contains("reasoning step"), "{why}");
        // What it can do passes, whatever the referenced steps return.
        for fine in [
            "count({{s1}})",
            "sum({{s2}})",
            "round({{s1}} / 1.609344, 2)",
            "{{s1}} / ({{s2}} - 1)",
        ] {
            assert_eq!(Calculator.plan_check(&json!({ "expression": fine })), None, "{fine}");
        }
    }

    #[tokio::test]
    async fn a_pattern_read_reads_the_one_file_it_matches_and_names_several() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inbox")).unwrap();
        std::fs::write(dir.path().join("inbox/msg-0847.txt"), "ship on friday").unwrap();
        let ws = Arc::new(Workspace::new(dir.path()).unwrap());
        let tool = ReadFile(ws);
        let read = |path: &str| tool.call(json!({ "path": path }));
        assert_eq!(read("inbox/*").await.unwrap(), json!("ship on friday"));
        assert_eq!(read("inbox/*.txt").await.unwrap(), json!("ship on friday"));
        let none = read("inbox/*.md").await.unwrap_err();
        assert!(
            none.message.contains("no file matches `inbox/*.md`"),
            "{}",
            none.message
        );
        std::fs::write(dir.path().join("inbox/msg-0912.txt"), "or monday").unwrap();
        let two = read("inbox/*").await.unwrap_err();
        assert!(
            two.message
                .contains("matches 2 files (inbox/msg-0847.txt, inbox/msg-0912.txt)"),
            "{}",
            two.message
        );
    }

    #[tokio::test]
    async fn results_are_written_without_float_noise() {
        assert_eq!(calculate("1000 * 1.05 ^ 3").await.to_string(), "1157.625");
        assert_eq!(calculate("0.1 + 0.2").await.to_string(), "0.3");
        assert_eq!(calculate("round(42.195 / 1.609344, 2)").await.to_string(), "26.22");
        assert_eq!(calculate("(80 + 92 + 75 + 88) / 4").await.to_string(), "83.75");
        assert_eq!(calculate("2 ^ 10").await.to_string(), "1024");
        assert_eq!(calculate("1 / 3").await.to_string(), "0.333333333333333");
    }
}
