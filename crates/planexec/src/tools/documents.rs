//! The structured files `read_json` reads, as one JSON value: JSON, and by
//! their names TOML, YAML and INI-style key = value files (`.ini`, `.cfg`,
//! `.conf`, `.properties`, `.env`). A field of `Cargo.toml`, of a
//! `deploy.yaml` or of a `[replica]` section is the same step as a field of
//! `package.json`, and planners reach for the one tool for all of them.

use serde_json::{Map, Value};

/// The formats a structured file may be in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    Json,
    Toml,
    Yaml,
    /// `[section]` headers over `key = value` (or `key: value`) lines.
    KeyValue,
}

impl Format {
    /// The format `path`'s name says; JSON for any other name.
    fn of(path: &str) -> Format {
        let name = std::path::Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let extension = name.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
        match extension {
            "toml" => Format::Toml,
            "yaml" | "yml" => Format::Yaml,
            "ini" | "cfg" | "conf" | "properties" | "env" => Format::KeyValue,
            // `.env`, `.env.example`, `.env.local`: the dotenv family.
            _ if name == ".env" || name.starts_with(".env.") => Format::KeyValue,
            _ => Format::Json,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
            Format::KeyValue => "key = value",
        }
    }
}

/// The document in `text`, read in the format `path`'s name says. The error
/// names the format it was read as and where it broke.
pub(super) fn parse(path: &str, text: &str) -> Result<Value, String> {
    let format = Format::of(path);
    let parsed = match format {
        Format::Json => serde_json::from_str(text).map_err(|e| e.to_string()),
        Format::Toml => toml::from_str::<Value>(text).map_err(|e| e.message().to_string()),
        Format::Yaml => serde_norway::from_str::<Value>(text).map_err(|e| e.to_string()),
        Format::KeyValue => Ok(key_values(text)),
    };
    parsed.map_err(|e| format!("`{path}` is not valid {}: {e}", format.name()))
}

/// An INI or dotenv text as an object: keys before any section at the top,
/// each `[section]` an object of its keys. Comments (`#`, `;`) and lines
/// that are no `key = value` are skipped; quotes around a value are dropped;
/// `export KEY=value` (a dotenv habit) is `KEY`.
fn key_values(text: &str) -> Value {
    let mut top = Map::new();
    let mut section: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_string();
            top.entry(name.clone()).or_insert_with(|| Value::Object(Map::new()));
            section = Some(name);
            continue;
        }
        let Some((key, value)) = line.split_once(['=', ':']) else {
            continue;
        };
        let key = key.trim();
        let key = key.strip_prefix("export ").unwrap_or(key).trim();
        let value = unquoted(value.trim());
        let into = match &section {
            Some(name) => top.get_mut(name).and_then(Value::as_object_mut),
            None => Some(&mut top),
        };
        if let Some(map) = into {
            map.insert(key.to_string(), Value::String(value.to_string()));
        }
    }
    Value::Object(top)
}

/// `value` without one pair of matching quotes around it.
fn unquoted(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote).and_then(|v| v.strip_suffix(quote)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_format_is_read_by_its_name() {
        let toml = "[package]\nname = \"svc\"\nversion = \"0.3.1\"\n[dependencies]\nserde = \"1\"\n";
        assert_eq!(parse("Cargo.toml", toml).unwrap()["package"]["version"], json!("0.3.1"));
        let yaml = "service: checkout\nspec:\n  replicas: 3\n  ports: [80, 443]\n";
        let doc = parse("deploy/app.yml", yaml).unwrap();
        assert_eq!(
            (doc["spec"]["replicas"].clone(), doc["spec"]["ports"][1].clone()),
            (json!(3), json!(443))
        );
        let ini = "; settings\nname = main\n[replica]\nhost = db2\nport = 5433\n[primary]\nport: 5432\n";
        let doc = parse("db.ini", ini).unwrap();
        assert_eq!(
            doc,
            json!({"name": "main", "replica": {"host": "db2", "port": "5433"}, "primary": {"port": "5432"}})
        );
        let env = "# copy to .env\nexport DATABASE_URL=\"postgres://localhost/app\"\nDEBUG=false\n";
        let doc = parse(".env.example", env).unwrap();
        assert_eq!(doc["DATABASE_URL"], json!("postgres://localhost/app"));
        assert_eq!(doc["DEBUG"], json!("false"));
        assert_eq!(parse("a.json", "[1, 2]").unwrap(), json!([1, 2]));
    }

    #[test]
    fn a_broken_file_says_what_it_was_read_as() {
        let error = parse("Cargo.toml", "[package\nname = 1").unwrap_err();
        assert!(error.starts_with("`Cargo.toml` is not valid TOML"), "{error}");
        let error = parse("data.json", "name = 1").unwrap_err();
        assert!(error.starts_with("`data.json` is not valid JSON"), "{error}");
        let error = parse("a.yaml", "a: [1, 2").unwrap_err();
        assert!(error.starts_with("`a.yaml` is not valid YAML"), "{error}");
    }
}
