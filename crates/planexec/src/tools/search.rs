//! Read-only file tools that make a common step one direct call: `search`
//! (the lines that contain a text, or how many there are) and `read_json`
//! (one field of a JSON file). Without them a planner must read the whole
//! file and hand the filtering to a model, which small local models get
//! wrong: counting the lines that mention something, or picking a version
//! out of a manifest.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{io_error, str_arg, MAX_READ_BYTES};
use super::glob::{files_under, is_pattern, matching_files};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

pub(crate) struct Search(pub Arc<Workspace>);

/// What lines must hold: `text` itself, or what it matches when it is a
/// regular expression (planners write `ERROR|WARN` or `.*` as readily as
/// plain text; one that does not compile, like `C++`, is plain text). Case is
/// ignored unless `text` has a capital letter ("smart case", as ripgrep and
/// editors do). Decided once per search, not once per line.
fn line_matcher(text: &str) -> Result<regex::Regex, ToolError> {
    let case_sensitive = text.chars().any(char::is_uppercase);
    let looks_like_pattern = text.chars().any(|c| "\\.*+?[](){}|^$".contains(c));
    let build = |pattern: &str| {
        regex::RegexBuilder::new(pattern)
            .case_insensitive(!case_sensitive)
            .build()
    };
    looks_like_pattern
        .then(|| build(text).ok())
        .flatten()
        .map_or_else(|| build(&regex::escape(text)), Ok)
        .map_err(|e| ToolError::invalid_args(format!("cannot search for `{text}`: {e}")))
}

#[async_trait]
impl Tool for Search {
    fn name(&self) -> &str {
        "search"
    }
    fn description(&self) -> &str {
        "Find the lines inside a text file (or inside every file under a folder or matching a pattern such as logs/*.log) that contain a text or match a regular expression, ignoring case unless it has a capital letter. Returns the lines (from a folder, each as path:line); with count true, only how many lines match; with matches true, only the matching parts, one per line (to extract emails, URLs, dates or #tags with a regular expression). To find files by name, use glob."
    }
    fn summary(&self) -> &str {
        "Lines of a file or folder containing a text or matching a regex; count: only how many; matches: only the matching parts."
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "file or folder path relative to the workspace root"},
                "text": {"type": "string", "description": "text the lines must contain, or a regular expression they must match"},
                "count": {"type": "boolean", "description": "true: return only the number of matching lines"},
                "matches": {"type": "boolean", "description": "true: return only the parts that match, one per line"}
            },
            "required": ["path", "text", "count", "matches"],
            "additionalProperties": false
        })
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    /// A search for a kind of file (`.jpg`, `*.csv`) in a folder looks for
    /// that text inside the files: planners mean the files' names.
    fn plan_check(&self, args: &Value) -> Option<String> {
        if let Some(value) = keyed_value_in_csv(&self.0, args) {
            return Some(format!(
                "{CSV_KEYED}: a row holds only values, separated by commas, never `column: value`: search for the text \"{value}\""
            ));
        }
        let pattern = file_kind_pattern(args)?;
        Some(format!(
            "search looks for lines inside files, not for file names: to list the files whose names match, use glob with pattern \"{pattern}\" (and count({{{{sN}}}}) in the calculator to count them)"
        ))
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
        let parts = args.get("matches").and_then(Value::as_bool).unwrap_or(false);
        let full = self.0.resolve(path)?;
        let (files, from_folder) = if full.exists() {
            (files_under(&full), full.is_dir())
        } else if is_pattern(path) {
            (matching_files(&self.0, path), true)
        } else {
            return Err(ToolError::not_found(format!("`{path}` does not exist")));
        };
        let matcher = line_matcher(text)?;
        let mut found = Vec::new();
        for file in files {
            let Ok(bytes) = std::fs::read(&file) else { continue };
            // Binary files and very large ones are not searched.
            let Ok(content) = String::from_utf8(bytes) else {
                continue;
            };
            if content.len() > MAX_READ_BYTES {
                continue;
            }
            for line in content.lines().filter(|l| matcher.is_match(l)) {
                let hits: Vec<&str> = match parts {
                    true => matcher.find_iter(line).map(|m| m.as_str()).collect(),
                    false => vec![line],
                };
                for hit in hits {
                    found.push(if from_folder {
                        format!("{}:{hit}", self.0.display(&file))
                    } else {
                        hit.to_string()
                    });
                }
            }
        }
        if count {
            Ok(json!(found.len()))
        } else {
            Ok(Value::String(found.join("\n")))
        }
    }
}

/// How the error of a search for `column: value` in a CSV file starts (its mend looks for it).
pub(crate) const CSV_KEYED: &str = "the file is CSV";

/// The value of a search text written `city: Paris` (or `city=Paris`) in a
/// CSV file with a `city` column: a planner pictures the rows as records,
/// and the search finds nothing.
pub(crate) fn keyed_value_in_csv(workspace: &Workspace, args: &Value) -> Option<String> {
    static KEYED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^\s*([A-Za-z_][A-Za-z0-9_ ]*?)\s*[:=]\s*(.+?)\s*$").expect("a valid pattern")
    });
    let path = args.get("path")?.as_str()?;
    if !path.to_ascii_lowercase().ends_with(".csv") {
        return None;
    }
    let keyed = KEYED.captures(args.get("text")?.as_str()?)?;
    let file = workspace.resolve(path).ok()?;
    let value = keyed[2].trim_matches(['"', '\'']);
    (super::csv_has_column(&file, &keyed[1]) && !value.is_empty()).then(|| value.to_string())
}

/// The glob pattern a search whose text is a file extension (`.jpg`, `*.jpg`)
/// was meant to be (`photos/*.jpg`); `None` for a search of real text.
pub(crate) fn file_kind_pattern(args: &Value) -> Option<String> {
    let text = args.get("text")?.as_str()?.trim();
    // `md` in `docs/**/*.md`: the kind the path already names.
    let path = args.get("path").and_then(Value::as_str).unwrap_or_default().trim();
    if !text.is_empty()
        && path.contains('*')
        && path
            .to_ascii_lowercase()
            .ends_with(&format!("*.{}", text.to_ascii_lowercase()))
    {
        return Some(path.to_string());
    }
    let extension = text.strip_prefix('*').unwrap_or(text).strip_prefix('.')?;
    if extension.is_empty() || extension.len() > 5 || !extension.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let folder = args.get("path").and_then(Value::as_str).unwrap_or(".").trim();
    let folder = folder.trim_start_matches("./").trim_end_matches('/');
    Some(match folder {
        "" | "." => format!("*.{extension}"),
        folder => format!("{folder}/*.{extension}"),
    })
}

pub(crate) struct ReadJson(pub Arc<Workspace>);

/// The value at a dotted `field` path (`dependencies.tokio`, `items.0.name`);
/// what went wrong names the keys there are. A key that is no index of a
/// list is taken from each of its items (`items.price` is every item's
/// price, as jq's `.items[].price`): planners ask for it that way.
pub(super) fn field_of(document: &Value, field: &str) -> Result<Value, String> {
    let keys: Vec<&str> = field.split('.').map(str::trim).filter(|k| !k.is_empty()).collect();
    value_at(document, &keys, &mut Vec::new())
}

/// Whether the structured file at `file` (JSON, TOML, YAML, INI) has a
/// value at the dotted `field` path, as `read_json` reads it (a plan check
/// asks, to tell a field from a file).
pub(crate) fn json_has_field(file: &std::path::Path, field: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    super::documents::parse(&file.to_string_lossy(), &text).is_ok_and(|document| field_of(&document, field).is_ok())
}

/// [`field_of`], or where its path is wrong the one value it leads to from
/// somewhere deeper (`owner.name` in a file that nests it as
/// `service.owner.name`), or else the one value anywhere in the document
/// under the path's last key (`server.port` in a file with a top-level
/// `port`): a planner guesses the nesting, not the names. Two or more such
/// values leave the error as it was.
fn field_or_only_key(document: &Value, field: &str) -> Result<Value, String> {
    field_of(document, field).or_else(|error| {
        let keys: Vec<&str> = field.split('.').map(str::trim).filter(|k| !k.is_empty()).collect();
        let mut found = Vec::new();
        values_at_suffix(document, &keys, &mut found);
        if let [only] = found.as_slice() {
            return Ok((*only).clone());
        }
        let last = keys.last().copied().unwrap_or_default();
        let mut found = Vec::new();
        values_at_suffix(document, &[last], &mut found);
        match found.as_slice() {
            [only] if last.parse::<usize>().is_err() => Ok((*only).clone()),
            _ => Err(error),
        }
    })
}

/// Every value that `keys` lead to, key by key (an index for a list), from
/// a value at any depth of `at`.
fn values_at_suffix<'a>(at: &'a Value, keys: &[&str], found: &mut Vec<&'a Value>) {
    let walked = keys.iter().try_fold(at, |value, key| match value {
        Value::Object(map) => map.get(*key),
        Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    });
    if let (Some(value), false) = (walked, keys.is_empty()) {
        found.push(value);
    }
    match at {
        Value::Object(map) => map.values().for_each(|v| values_at_suffix(v, keys, found)),
        Value::Array(items) => items.iter().for_each(|v| values_at_suffix(v, keys, found)),
        _ => {}
    }
}

fn value_at<'a>(at: &Value, keys: &[&'a str], walked: &mut Vec<&'a str>) -> Result<Value, String> {
    let Some((key, rest)) = keys.split_first() else {
        return Ok(at.clone());
    };
    let next = match at {
        Value::Object(map) => map.get(*key),
        Value::Array(items) => match key.parse::<usize>() {
            Ok(i) => items.get(i),
            Err(_) if *key == "*" || !items.is_empty() => {
                let rest = if *key == "*" { rest } else { keys };
                let each: Result<Vec<Value>, String> = items
                    .iter()
                    .map(|item| value_at(item, rest, &mut walked.clone()))
                    .collect();
                return each.map(Value::Array);
            }
            Err(_) => None,
        },
        _ => None,
    };
    let Some(next) = next else {
        return Err(missing_key(at, key, walked));
    };
    walked.push(key);
    value_at(next, rest, walked)
}

/// Why `key` is not in `at`, the value at the path `walked`.
fn missing_key(at: &Value, key: &str, walked: &[&str]) -> String {
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
    format!("no `{key}` in {place}: {there}")
}

#[async_trait]
impl Tool for ReadJson {
    fn name(&self) -> &str {
        "read_json"
    }
    fn description(&self) -> &str {
        "Read one field of a JSON file (or a TOML, YAML, INI or .env file, by its name). field is a dotted path such as dependencies.tokio, items.0.name or section.key (\"\" for the whole file); items.price gives the price of every item of a list. A text value comes back without quotes."
    }
    fn summary(&self) -> &str {
        "One field of a JSON, TOML, YAML, INI or .env file by dotted path (\"\" for all of it)."
    }
    fn parameters(&self) -> Value {
        super::args::string_args(&[
            (
                "path",
                "JSON (or TOML, YAML, INI, .env) file path relative to the workspace root",
            ),
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
        let document = super::documents::parse(path, &text).map_err(ToolError::failed)?;
        let field = without_list_name(&document, path, field);
        field_or_only_key(&document, field).map_err(|why| ToolError::invalid_args(format!("`{path}`: {why}")))
    }
}

/// `field` without a first key that names the file when the file is itself
/// the list (`users.1.age` in `users.json`, which holds `[{…}, {…}]`): a
/// planner names the list it sees in the file's name.
fn without_list_name<'a>(document: &Value, path: &str, field: &'a str) -> &'a str {
    let stem = std::path::Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match (document, field.split_once('.')) {
        (Value::Array(_), Some((first, rest))) if first.trim().to_lowercase() == stem => rest,
        (Value::Array(_), None) if field.trim().to_lowercase() == stem => "",
        _ => field,
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

    #[test]
    fn a_search_for_column_colon_value_in_a_csv_file_is_sent_back_with_the_value() {
        let (dir, ws) = workspace();
        std::fs::write(dir.path().join("people.csv"), "name,city\nAnna,Paris\n").unwrap();
        let check = |path: &str, text: &str| {
            Search(ws.clone()).plan_check(&json!({"path": path, "text": text, "count": true, "matches": false}))
        };
        let told = check("people.csv", "city: Paris").unwrap();
        assert!(told.starts_with(CSV_KEYED) && told.ends_with("\"Paris\""), "{told}");
        assert!(check("people.csv", "City = 'Paris'").unwrap().ends_with("\"Paris\""));
        // Not a column of the file, or not a CSV file: searched as written.
        assert_eq!(check("people.csv", "note: Paris"), None);
        assert_eq!(check("log.txt", "city: Paris"), None);
        assert_eq!(check("people.csv", "Paris"), None);
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
        // A path pattern searches the files it matches.
        assert_eq!(
            call("notes/*.md", "moon", false).await.unwrap(),
            json!("notes/a.md:The Moon rose\nnotes/b.md:moonlight")
        );
        assert_eq!(call("notes/b.*", "moon", true).await.unwrap(), json!(1));
        let missing = call("nope.txt", "x", true).await.unwrap_err();
        assert!(
            missing.message.contains("`nope.txt` does not exist"),
            "{}",
            missing.message
        );
    }

    #[tokio::test]
    async fn matches_true_extracts_the_matching_parts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("post.txt"),
            "Shipped! #rustlang\nThanks all.\nNext: #async docs #OpenSource\nmail maya@example.org or leo.k@example.com\n",
        )
        .unwrap();
        let search = Search(Arc::new(Workspace::new(dir.path()).unwrap()));
        let parts = |text: &str, count: bool| {
            search.call(json!({"path": "post.txt", "text": text, "count": count, "matches": true}))
        };
        assert_eq!(
            parts("#\\w+", false).await.unwrap(),
            json!("#rustlang\n#async\n#OpenSource")
        );
        assert_eq!(
            parts(r"[\w.+-]+@[\w-]+\.\w+", false).await.unwrap(),
            json!("maya@example.org\nleo.k@example.com")
        );
        // Counted, they are matches, not lines.
        assert_eq!(parts("#\\w+", true).await.unwrap(), json!(3));
        // Plain text is its own match, in the case the line has it.
        assert_eq!(parts("next", false).await.unwrap(), json!("Next"));
    }

    #[test]
    fn a_search_for_a_kind_of_file_is_sent_back_as_a_glob() {
        let (_dir, ws) = workspace();
        let search = Search(ws);
        let why = search
            .plan_check(&json!({"path": "photos/", "text": ".jpg", "count": true}))
            .unwrap();
        assert!(why.contains("use glob with pattern \"photos/*.jpg\""), "{why}");
        assert_eq!(
            file_kind_pattern(&json!({"path": ".", "text": "*.csv"})).as_deref(),
            Some("*.csv")
        );
        // The kind its path names, searched for inside the files.
        assert_eq!(
            file_kind_pattern(&json!({"path": "docs/**/*.md", "text": "md"})).as_deref(),
            Some("docs/**/*.md")
        );
        assert_eq!(file_kind_pattern(&json!({"path": "notes.md", "text": "md"})), None);
        for text in ["ERROR", "moon.", "a.b", ".*"] {
            assert_eq!(
                search.plan_check(&json!({"path": "log.txt", "text": text, "count": true})),
                None,
                "{text}"
            );
        }
    }

    #[tokio::test]
    async fn a_first_key_that_names_a_file_holding_a_list_is_the_list() {
        let (_dir, ws) = workspace();
        std::fs::write(
            ws.root().join("users.json"),
            r#"[{"name": "Ana", "age": 34}, {"name": "Bo", "age": 27}]"#,
        )
        .unwrap();
        let tool = ReadJson(ws.clone());
        let read = |field: &str| tool.call(json!({"path": "users.json", "field": field}));
        assert_eq!(read("users.1.age").await.unwrap(), json!(27));
        assert_eq!(read("1.age").await.unwrap(), json!(27));
        assert_eq!(read("users").await.unwrap().as_array().map(Vec::len), Some(2));
        assert!(read("people.1.age").await.is_err());
    }

    #[tokio::test]
    async fn read_json_reads_a_dotted_field_and_names_the_keys_when_it_is_missing() {
        let (_dir, ws) = workspace();
        let read = ReadJson(ws);
        let call = |field: &str| read.call(json!({"path": "package.json", "field": field}));
        assert_eq!(call("dependencies.tokio").await.unwrap(), json!("1.38.0"));
        assert_eq!(call("items.1.name").await.unwrap(), json!("b"));
        // A field of each item of a list.
        assert_eq!(call("items.name").await.unwrap(), json!(["a", "b"]));
        assert_eq!(call("items.*.name").await.unwrap(), json!(["a", "b"]));
        let none = call("items.price").await.unwrap_err();
        assert!(none.message.contains("no `price` in"), "{}", none.message);
        assert_eq!(call("").await.unwrap()["name"], json!("svc"));
        // A wrong nesting finds the one value of that name.
        assert_eq!(call("deps.tokio").await.unwrap(), json!("1.38.0"));
        let missing = call("dependencies.serde").await.unwrap_err();
        assert!(
            missing
                .message
                .contains("no `serde` in `dependencies`: its keys are `tokio`"),
            "{}",
            missing.message
        );
        // A path that starts deeper than the top finds the one value it
        // leads to; a last key that stands in two places is not guessed.
        std::fs::write(
            _dir.path().join("service.json"),
            r#"{"service": {"name": "billing", "owner": {"name": "Ines Moreau"}}, "version": "4.2.0"}"#,
        )
        .unwrap();
        let service = |field: &str| read.call(json!({"path": "service.json", "field": field}));
        assert_eq!(service("owner.name").await.unwrap(), json!("Ines Moreau"));
        let two = service("name").await.unwrap_err();
        assert!(two.message.contains("no `name`"), "{}", two.message);
        let out_of_range = call("items.5").await.unwrap_err();
        assert!(
            out_of_range.message.contains("a list of 2 items"),
            "{}",
            out_of_range.message
        );
    }
}
