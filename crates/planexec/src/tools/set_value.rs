//! `set_value`: change one setting of a file in place, keeping the rest.
//!
//! "Change retries to 5" or "set the log level to debug" is the edit users
//! ask of an agent most. With only `write_file`, a planner must write the
//! whole file back, and a small one writes just the new value. This tool
//! does the edit a person would: in a JSON file the field at a dotted path,
//! in any other text file (ini, env, YAML, TOML, properties) the line that
//! sets the key, with the file's own spacing, quoting and order kept.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{io_error, str_arg, string_args};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

pub(crate) struct SetValue(pub Arc<Workspace>);

#[async_trait]
impl Tool for SetValue {
    fn name(&self) -> &str {
        "set_value"
    }
    fn description(&self) -> &str {
        "Change one value in a file in place, keeping every other line: in a .json file the field at a dotted path (server.port, items.0.price); in other files the line key=value or key: value (section.key for an ini section). Returns the line before and after."
    }
    fn summary(&self) -> &str {
        "Change one key (or dotted JSON field) of a file in place."
    }
    fn parameters(&self) -> Value {
        string_args(&[
            ("path", "file path relative to the workspace root"),
            ("key", "the key or dotted field to change"),
            ("value", "its new value"),
        ])
    }
    fn effect(&self) -> Effect {
        Effect::WritesWorkspace
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let path = str_arg(&args, "path")?;
        let key = str_arg(&args, "key")?.trim();
        let value = str_arg(&args, "value")?;
        let full = self.0.resolve(path)?;
        let text = tokio::fs::read_to_string(&full).await.map_err(|e| io_error(path, e))?;
        let is_json = path.to_ascii_lowercase().ends_with(".json");
        let edit = if is_json {
            set_json_field(&text, key, value)
        } else {
            set_line_value(&text, key, value)
        }
        .map_err(|why| ToolError::invalid_args(format!("`{path}`: {why}")))?;
        tokio::fs::write(&full, &edit.text)
            .await
            .map_err(|e| io_error(path, e))?;
        Ok(json!({"path": self.0.display(&full), "before": edit.before, "after": edit.after}))
    }
}

/// A file's new text, and the changed value or line as it was and is.
#[derive(Debug)]
struct Edit {
    text: String,
    before: String,
    after: String,
}

/// `text` (a JSON document) with the field at dotted `key` set to `value`.
/// The new value keeps the old one's type where it can: `"5"` over a number
/// is the number 5, over a text the text "5". Indentation is kept.
fn set_json_field(text: &str, key: &str, value: &str) -> Result<Edit, String> {
    let mut document: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let old = super::search::field_of(&document, key)?;
    let new = match (&old, serde_json::from_str::<Value>(value.trim())) {
        (Value::String(_), _) | (_, Err(_)) => Value::String(value.to_string()),
        (_, Ok(parsed)) => parsed,
    };
    let slot = key
        .split('.')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .try_fold(&mut document, |at, k| match at {
            Value::Object(map) => map.get_mut(k),
            Value::Array(items) => k.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        })
        .ok_or_else(|| format!("`{key}` is a field of each item of a list: name one item, as items.0.{key}"))?;
    *slot = new.clone();
    let mut out = match indent_of(text) {
        Some(indent) => {
            let mut bytes = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            let mut writer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
            serde::Serialize::serialize(&document, &mut writer).map_err(|e| e.to_string())?;
            String::from_utf8(bytes).map_err(|e| e.to_string())?
        }
        None => document.to_string(),
    };
    if text.ends_with('\n') {
        out.push('\n');
    }
    Ok(Edit {
        text: out,
        before: old.to_string(),
        after: new.to_string(),
    })
}

/// The indentation of a pretty-printed document's first indented line;
/// `None` for one written on one line.
fn indent_of(text: &str) -> Option<String> {
    text.lines()
        .skip(1)
        .map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect::<String>())
        .find(|indent| !indent.is_empty())
}

/// `text` with the value on the one line that sets `key` replaced by `value`:
/// `key=…`, `key = …`, `key: …`, `export key=…`; `section.key` looks only
/// inside the ini section `[section]`. Spacing and quotes are kept.
fn set_line_value(text: &str, key: &str, value: &str) -> Result<Edit, String> {
    let (section, name) = match key.rsplit_once('.') {
        Some((section, name)) if text.lines().any(|l| l.trim() == format!("[{section}]")) => (Some(section), name),
        _ => (None, key),
    };
    let mut in_section = section.is_none();
    let mut found: Vec<(usize, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            in_section = section.is_none_or(|s| s == header);
            continue;
        }
        if in_section {
            if let Some(changed) = with_value(line, name, value) {
                found.push((n, changed));
            }
        }
    }
    let (n, changed) = match found.as_slice() {
        [one] => one.clone(),
        [] => return Err(format!("no line sets `{key}`; {}", keys_in(text))),
        many => {
            let lines: Vec<String> = many.iter().map(|(n, _)| (n + 1).to_string()).collect();
            return Err(format!(
                "`{key}` is set on lines {}: name its section as section.{key}",
                lines.join(", ")
            ));
        }
    };
    let mut lines: Vec<&str> = text.lines().collect();
    let before = lines[n].to_string();
    lines[n] = &changed;
    let mut out = lines.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    Ok(Edit {
        text: out,
        before,
        after: changed.clone(),
    })
}

/// `line` with its value set to `value`, when it sets `key`.
fn with_value(line: &str, key: &str, value: &str) -> Option<String> {
    let indent_len = line.len() - line.trim_start().len();
    let body = &line[indent_len..];
    let body_after_export = body.strip_prefix("export ").unwrap_or(body);
    let rest = body_after_export.strip_prefix(key)?;
    let separator_at = rest.find(|c: char| !c.is_whitespace())?;
    let separator = rest[separator_at..].chars().next()?;
    if separator != '=' && separator != ':' {
        return None;
    }
    let after_separator = &rest[separator_at + 1..];
    let gap = &after_separator[..after_separator.len() - after_separator.trim_start().len()];
    let old = after_separator.trim();
    let quote = ['"', '\'']
        .into_iter()
        .find(|q| old.len() >= 2 && old.starts_with(*q) && old.ends_with(*q));
    let new = match quote {
        Some(q) => format!("{q}{value}{q}"),
        None => value.to_string(),
    };
    let head = &line[..line.len() - after_separator.len()];
    Some(format!("{head}{gap}{new}"))
}

/// The keys a file's lines set, to name when the asked one is not there.
fn keys_in(text: &str) -> String {
    let keys: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let end = l.find(['=', ':'])?;
            let key = l[..end].trim();
            (!key.is_empty() && !key.starts_with('#')).then(|| format!("`{key}`"))
        })
        .take(20)
        .collect();
    if keys.is_empty() {
        "it has no key=value or key: value lines".to_string()
    } else {
        format!("its keys are {}", keys.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_line_gets_its_new_value_and_every_other_line_is_kept() {
        let ini = "timeout=30\nretries=3\nmode=fast\n";
        let edit = set_line_value(ini, "retries", "5").unwrap();
        assert_eq!(edit.text, "timeout=30\nretries=5\nmode=fast\n");
        assert_eq!((edit.before.as_str(), edit.after.as_str()), ("retries=3", "retries=5"));

        let yaml = "name: \"svc\"\nlevel:   info # x\n";
        assert_eq!(
            set_line_value(yaml, "name", "api").unwrap().text,
            "name: \"api\"\nlevel:   info # x\n"
        );
        assert_eq!(
            set_line_value("  export PORT = 80", "PORT", "8080").unwrap().text,
            "  export PORT = 8080"
        );
        // `retry` is not `retries`.
        let missing = set_line_value(ini, "retry", "5").unwrap_err();
        assert!(
            missing.contains("no line sets `retry`") && missing.contains("`retries`"),
            "{missing}"
        );
    }

    #[test]
    fn a_key_in_two_ini_sections_is_named_by_its_section() {
        let ini = "[db]\nport=5432\n[web]\nport=80\n";
        let twice = set_line_value(ini, "port", "81").unwrap_err();
        assert!(twice.contains("lines 2, 4"), "{twice}");
        assert_eq!(
            set_line_value(ini, "web.port", "81").unwrap().text,
            "[db]\nport=5432\n[web]\nport=81\n"
        );
    }

    #[test]
    fn a_json_field_keeps_its_type_the_files_indentation_and_key_order() {
        let doc = "{\n    \"name\": \"svc\",\n    \"log\": {\"level\": \"info\", \"depth\": 2},\n    \"port\": 80\n}\n";
        let edit = set_json_field(doc, "port", "8080").unwrap();
        let back: Value = serde_json::from_str(&edit.text).unwrap();
        assert_eq!(back["port"], json!(8080));
        assert!(edit.text.starts_with("{\n    \"name\""), "{}", edit.text);
        assert!(edit.text.ends_with("}\n"));
        let edit = set_json_field(doc, "log.level", "debug").unwrap();
        let back: Value = serde_json::from_str(&edit.text).unwrap();
        assert_eq!(back["log"], json!({"level": "debug", "depth": 2}));
        assert_eq!(edit.before, "\"info\"");
        let missing = set_json_field(doc, "log.colour", "red").unwrap_err();
        assert!(missing.contains("its keys are `level`, `depth`"), "{missing}");
        assert_eq!(set_json_field("{\"a\":1}", "a", "2").unwrap().text, "{\"a\":2}");
    }

    #[tokio::test]
    async fn the_tool_edits_the_file_in_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("settings.ini"), "timeout=30\nretries=3\n").unwrap();
        let tool = SetValue(Arc::new(Workspace::new(dir.path()).unwrap()));
        let out = tool
            .call(json!({"path": "settings.ini", "key": "retries", "value": "5"}))
            .await
            .unwrap();
        assert_eq!(out["after"], json!("retries=5"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("settings.ini")).unwrap(),
            "timeout=30\nretries=5\n"
        );
        let missing = tool
            .call(json!({"path": "nope.ini", "key": "a", "value": "1"}))
            .await
            .unwrap_err();
        assert!(missing.message.contains("does not exist"), "{}", missing.message);
    }
}
