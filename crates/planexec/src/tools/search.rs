//! Read-only file tools that make a common step one direct call: `search`
//! (the lines that contain a text, or how many there are) and `read_json`
//! (one field of a JSON file). Without them a planner must read the whole
//! file and hand the filtering to a model, which small local models get
//! wrong: counting the lines that mention something, or picking a version
//! out of a manifest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{io_error, str_arg, MAX_READ_BYTES};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

/// Most files a folder search reads.
const MAX_FILES: usize = 200;

pub(crate) struct Search(pub Arc<Workspace>);

/// A test for lines that contain `text`, or match it when it is a regular
/// expression (planners write `ERROR|WARN` or `.*` as readily as plain text;
/// one that does not compile, like `C++`, is plain text). Case is ignored
/// unless `text` has a capital letter ("smart case", as ripgrep and editors
/// do). Decided once per search, not once per line.
fn line_matcher(text: &str) -> Box<dyn Fn(&str) -> bool + Send + '_> {
    let case_sensitive = text.chars().any(char::is_uppercase);
    let looks_like_pattern = text.chars().any(|c| "\\.*+?[](){}|^$".contains(c));
    let pattern = looks_like_pattern
        .then(|| {
            regex::RegexBuilder::new(text)
                .case_insensitive(!case_sensitive)
                .build()
                .ok()
        })
        .flatten();
    match pattern {
        Some(re) => Box::new(move |line: &str| re.is_match(line)),
        None if case_sensitive => Box::new(move |line: &str| line.contains(text)),
        None => Box::new(move |line: &str| line.to_lowercase().contains(text)),
    }
}

/// The text files under `full` (itself, when it is a file), sorted, hidden ones left out.
pub(super) fn files_under(full: &Path) -> Vec<PathBuf> {
    if full.is_file() {
        return vec![full.to_path_buf()];
    }
    let mut files = Vec::new();
    let mut folders = vec![full.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(read) = std::fs::read_dir(&folder) else { continue };
        for entry in read.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => folders.push(entry.path()),
                Ok(t) if t.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files.sort();
    files.truncate(MAX_FILES);
    files
}

#[async_trait]
impl Tool for Search {
    fn name(&self) -> &str {
        "search"
    }
    fn description(&self) -> &str {
        "Find the lines of a text file (or of every file under a folder) that contain a text or match a regular expression, ignoring case unless it has a capital letter. Returns the lines (from a folder, each as path:line); with count true, only how many lines match."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file or folder path relative to the workspace root"},
                "text": {"type": "string", "description": "text the lines must contain, or a regular expression they must match"},
                "count": {"type": "boolean", "description": "true: return only the number of matching lines"}
            },
            "required": ["path", "text", "count"],
            "additionalProperties": false
        })
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let text = str_arg(&args, "text")?;
        if text.is_empty() {
            return Err(ToolError::invalid_args(
                "`text` is empty: say what the lines must contain",
            ));
        }
        let count = args.get("count").and_then(Value::as_bool).unwrap_or(false);
        let full = self.0.resolve(path)?;
        if !full.exists() {
            return Err(ToolError::not_found(format!("`{path}` does not exist")));
        }
        let from_folder = full.is_dir();
        let matches = line_matcher(text);
        let mut found = Vec::new();
        for file in files_under(&full) {
            let Ok(bytes) = std::fs::read(&file) else { continue };
            // Binary files and very large ones are not searched.
            let Ok(content) = String::from_utf8(bytes) else {
                continue;
            };
            if content.len() > MAX_READ_BYTES {
                continue;
            }
            for line in content.lines().filter(|l| matches(l)) {
                found.push(if from_folder {
                    format!("{}:{line}", self.0.display(&file))
                } else {
                    line.to_string()
                });
            }
        }
        if count {
            Ok(json!(found.len()))
        } else {
            Ok(Value::String(found.join("\n")))
        }
    }
}

pub(crate) struct ReadJson(pub Arc<Workspace>);

/// The value at a dotted `field` path (`dependencies.tokio`, `items.0.name`);
/// what went wrong names the keys there are.
fn field_of<'a>(document: &'a Value, field: &str) -> Result<&'a Value, String> {
    let mut at = document;
    let mut walked = Vec::new();
    for key in field.split('.').map(str::trim).filter(|k| !k.is_empty()) {
        let next = match at {
            Value::Object(map) => map.get(key),
            Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        let Some(next) = next else {
            let there = match at {
                Value::Object(map) => format!(
                    "its keys are {}",
                    map.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
                Value::Array(items) => format!("it is a list of {} items (indexes from 0)", items.len()),
                other => format!("it is the value {other}"),
            };
            let place = if walked.is_empty() {
                "the document".to_string()
            } else {
                format!("`{}`", walked.join("."))
            };
            return Err(format!("no `{key}` in {place}: {there}"));
        };
        walked.push(key);
        at = next;
    }
    Ok(at)
}

#[async_trait]
impl Tool for ReadJson {
    fn name(&self) -> &str {
        "read_json"
    }
    fn description(&self) -> &str {
        "Read one field of a JSON file. field is a dotted path such as dependencies.tokio or items.0.name (\"\" for the whole file); a text value comes back without quotes."
    }
    fn parameters(&self) -> Value {
        super::args::string_args(&[
            ("path", "JSON file path relative to the workspace root"),
            ("field", "dotted path of the field"),
        ])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let field = str_arg(&args, "field")?;
        let full = self.0.resolve(path)?;
        let text = tokio::fs::read_to_string(&full).await.map_err(|e| io_error(path, e))?;
        let document: Value =
            serde_json::from_str(&text).map_err(|e| ToolError::failed(format!("`{path}` is not valid JSON: {e}")))?;
        field_of(&document, field)
            .cloned()
            .map_err(|why| ToolError::invalid_args(format!("`{path}`: {why}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, Arc<Workspace>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("log.txt"), "WARN disk\ninfo ok\nwarn: low\nWARN fan\n").unwrap();
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        std::fs::write(dir.path().join("notes/a.md"), "lunch\nThe Moon rose\n").unwrap();
        std::fs::write(dir.path().join("notes/b.md"), "no match here\nmoonlight\n").unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"name": "svc", "dependencies": {"tokio": "1.38.0"}, "items": [{"name": "a"}, {"name": "b"}]}"#,
        )
        .unwrap();
        let ws = Arc::new(Workspace::new(dir.path()).unwrap());
        (dir, ws)
    }

    #[tokio::test]
    async fn search_counts_and_lists_lines_with_smart_case() {
        let (_dir, ws) = workspace();
        let search = Search(ws);
        let call =
            |path: &str, text: &str, count: bool| search.call(json!({"path": path, "text": text, "count": count}));
        assert_eq!(call("log.txt", "WARN", true).await.unwrap(), json!(2));
        assert_eq!(call("log.txt", "warn", true).await.unwrap(), json!(3));
        assert_eq!(
            call("log.txt", "WARN", false).await.unwrap(),
            json!("WARN disk\nWARN fan")
        );
        assert_eq!(
            call("notes", "moon", false).await.unwrap(),
            json!("notes/a.md:The Moon rose\nnotes/b.md:moonlight")
        );
        assert_eq!(call("log.txt", "error", true).await.unwrap(), json!(0));
        // A regular expression matches; one that does not compile is plain text.
        assert_eq!(call("log.txt", ".*", true).await.unwrap(), json!(4));
        assert_eq!(call("log.txt", "disk|fan", true).await.unwrap(), json!(2));
        assert_eq!(call("log.txt", "^warn:", true).await.unwrap(), json!(1));
        assert_eq!(call("log.txt", "fan(", true).await.unwrap(), json!(0));
        let missing = call("nope.txt", "x", true).await.unwrap_err();
        assert!(
            missing.message.contains("`nope.txt` does not exist"),
            "{}",
            missing.message
        );
    }

    #[tokio::test]
    async fn read_json_reads_a_dotted_field_and_names_the_keys_when_it_is_missing() {
        let (_dir, ws) = workspace();
        let read = ReadJson(ws);
        let call = |field: &str| read.call(json!({"path": "package.json", "field": field}));
        assert_eq!(call("dependencies.tokio").await.unwrap(), json!("1.38.0"));
        assert_eq!(call("items.1.name").await.unwrap(), json!("b"));
        assert_eq!(call("").await.unwrap()["name"], json!("svc"));
        let missing = call("dependencies.serde").await.unwrap_err();
        assert!(
            missing
                .message
                .contains("no `serde` in `dependencies`: its keys are `tokio`"),
            "{}",
            missing.message
        );
        let out_of_range = call("items.5").await.unwrap_err();
        assert!(
            out_of_range.message.contains("a list of 2 items"),
            "{}",
            out_of_range.message
        );
    }
}
