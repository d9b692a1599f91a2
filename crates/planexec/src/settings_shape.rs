//! Where each value of a settings file stands, for a program written with
//! the files shown: the keys of a YAML, TOML, INI or JSON file as the
//! Python reader of its format takes them (`data['schedule']['night']
//! ['target']`), and how a `.env` file, which no standard reader takes, is
//! read.
//!
//! A small model shown a settings file whole still guesses where a value
//! sits: on held-out-40 (spent) six of seven programs for a thermostat's
//! night temperature read `settings['night']` where the file nests it under
//! `schedule`, and all seven for a `.env` read it with `configparser`,
//! which takes no file without sections. As with tables
//! ([`crate::file_shape::table_note`]), a reader shown is copied more
//! surely than a file's layout is followed.

/// The heading of the notes in a prompt.
pub(crate) const SETTINGS_HEADING: &str = "How the settings files above are read, and where their values stand:";

/// Most keys listed for one file.
const MOST_KEYS: usize = 24;

/// How to read the settings file at `path`, whose text is `text`: the
/// reader of its format and where each of its values stands. `None` for a
/// file of another kind, or one with no keys found.
pub(crate) fn settings_note(path: &str, text: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == ".env" || name.ends_with(".env") || name.starts_with(".env.") {
        return env_note(path, text);
    }
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    let (reader, keys) = match extension.as_str() {
        "yaml" | "yml" => (
            format!("data = yaml.safe_load(open('{path}', encoding='utf-8'))"),
            yaml_keys(text),
        ),
        "toml" => (format!("data = tomllib.load(open('{path}', 'rb'))"), toml_keys(text)?),
        "ini" | "cfg" | "conf" => (
            format!("data = configparser.ConfigParser(); data.read('{path}', encoding='utf-8')"),
            ini_keys(text),
        ),
        "json" => (
            format!("data = json.load(open('{path}', encoding='utf-8'))"),
            json_keys(text)?,
        ),
        _ => return None,
    };
    let note = said(path, &reader, keys)?;
    Some(match extension.as_str() {
        "toml" => format!("{note} (tomllib cannot write: to change a value, change its line in the file's text)"),
        "ini" | "cfg" | "conf" => {
            format!("{note} (configparser drops comments when it writes: to change a value, change its line in the file's text)")
        }
        _ => note,
    })
}

/// The note of a `.env` file: its names, and a reader (no module of the
/// standard library reads one).
fn env_note(path: &str, text: &str) -> Option<String> {
    let names: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.trim_start_matches("export ").split_once('='))
        .map(|(name, _)| format!("data['{}']", name.trim()))
        .collect();
    if names.is_empty() {
        return None;
    }
    let reader = format!(
        "data = {{}}\nfor line in open('{path}', encoding='utf-8').read().splitlines():\n    if '=' in line and not line.strip().startswith('#'):\n        name, value = line.split('=', 1)\n        data[name.strip()] = value.strip().strip('\"\\'')"
    );
    let note = said(path, &reader, names)?;
    Some(format!(
        "{note} (lines of NAME=value with no sections: configparser does not read it)"
    ))
}

/// The note: the reader, then where the values stand.
fn said(path: &str, reader: &str, keys: Vec<String>) -> Option<String> {
    if keys.is_empty() {
        return None;
    }
    let more = keys.len().saturating_sub(MOST_KEYS);
    let mut listed = keys.into_iter().take(MOST_KEYS).collect::<Vec<_>>().join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    Some(format!(
        "{path} is read so:\n```python\n{reader}\n```\nand its values are at: {listed}"
    ))
}

/// A path of keys as Python subscripts: `data['a']['b']`.
fn subscripts(keys: &[String]) -> String {
    let mut out = "data".to_string();
    for key in keys {
        out.push_str(&format!("[{key:?}]").replace('"', "'"));
    }
    out
}

/// The keys of a YAML file by its indentation: each value's path, and a
/// list's path once, marked so (what its items hold is not followed).
/// Comments and documents' marks aside.
fn yaml_keys(text: &str) -> Vec<String> {
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    // The indentation of the dash of the list being passed over.
    let mut in_list: Option<usize> = None;
    for line in text.lines() {
        let content = yaml_without_comment(line).trim_end();
        let bare = content.trim_start();
        if bare.is_empty() || bare.starts_with("---") || bare.starts_with("...") {
            continue;
        }
        let indent = content.len() - bare.len();
        let dash = bare.starts_with("- ") || bare == "-";
        match in_list {
            Some(at) if indent > at || (dash && indent == at) => continue,
            _ => in_list = None,
        }
        if dash {
            let path: Vec<String> = open
                .iter()
                .filter(|(i, _)| *i <= indent)
                .map(|(_, k)| k.clone())
                .collect();
            if !path.is_empty() {
                keys.push(format!("{} (a list)", subscripts(&path)));
            }
            in_list = Some(indent);
            continue;
        }
        let Some((key, value)) = bare.split_once(':').filter(|(key, _)| !key.is_empty()) else {
            continue;
        };
        open.retain(|(i, _)| *i < indent);
        let key = key.trim().trim_matches(['"', '\'']).to_string();
        match value.trim().is_empty() {
            true => open.push((indent, key)),
            false => {
                let mut path: Vec<String> = open.iter().map(|(_, k)| k.clone()).collect();
                path.push(key);
                keys.push(subscripts(&path));
            }
        }
    }
    keys
}

/// A YAML line without its comment: a `#` at its start or after a space,
/// outside quotes.
fn yaml_without_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut before = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') if before == ' ' => return &line[..i],
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            _ => {}
        }
        before = c;
    }
    line
}

/// The keys of a TOML file, parsed: each value's path, a list's once.
fn toml_keys(text: &str) -> Option<Vec<String>> {
    let value: toml::Value = toml::from_str(text).ok()?;
    let mut keys = Vec::new();
    value_keys(&as_json(&value), &mut Vec::new(), &mut keys);
    Some(keys)
}

/// The tables and arrays of a TOML value as JSON, every other value `null`:
/// only where values stand is read.
fn as_json(value: &toml::Value) -> serde_json::Value {
    match value {
        toml::Value::Table(table) => table.iter().map(|(key, inner)| (key.clone(), as_json(inner))).collect(),
        toml::Value::Array(_) => serde_json::Value::Array(Vec::new()),
        _ => serde_json::Value::Null,
    }
}

/// The keys of a JSON file, parsed: each value's path, a list's once.
fn json_keys(text: &str) -> Option<Vec<String>> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    json.is_object().then_some(())?;
    let mut keys = Vec::new();
    value_keys(&json, &mut Vec::new(), &mut keys);
    Some(keys)
}

/// Each path of a value under `path` in `value`, into `keys`.
fn value_keys(value: &serde_json::Value, path: &mut Vec<String>, keys: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, inner) in fields {
                path.push(key.clone());
                value_keys(inner, path, keys);
                path.pop();
            }
        }
        serde_json::Value::Array(_) => keys.push(format!("{} (a list)", subscripts(path))),
        _ => keys.push(subscripts(path)),
    }
}

/// The keys of an INI file: each setting under its section, as
/// configparser takes them (names in small letters).
fn ini_keys(text: &str) -> Vec<String> {
    ini_settings(text)
        .into_iter()
        .filter_map(|(section, name, _)| Some(subscripts(&[section?, name.to_lowercase()])))
        .collect()
}

/// The settings of an INI file, each with the section it stands under
/// (none above the first), its name and its value, trimmed; comments
/// and blank lines aside.
pub(crate) fn ini_settings(text: &str) -> Vec<(Option<String>, String, String)> {
    let mut section: Option<String> = None;
    let mut settings = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = Some(name.trim().to_string());
            continue;
        }
        let Some((name, value)) = line.split_once(['=', ':']) else {
            continue;
        };
        settings.push((section.clone(), name.trim().to_string(), value.trim().to_string()));
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_yaml_value_is_given_by_its_whole_path() {
        let yaml = "# Hallway thermostat\nunits: celsius\nschedule:\n  morning:\n    start: \"06:30\"\n    target: 20.5\n  night:\n    start: \"22:30\"  # late\n    target: 16.5\naway_mode:\n  target: 14\nrooms:\n  - hall\n  - kitchen\nzones:\n- name: veg\n  minutes: 10\n- name: lawn\nunits_shown: true\n";
        let note = settings_note("thermostat.yaml", yaml).unwrap();
        assert!(note.starts_with("thermostat.yaml is read so:\n```python\ndata = yaml.safe_load(open('thermostat.yaml', encoding='utf-8'))\n```"), "{note}");
        assert!(
            note.ends_with("data['units'], data['schedule']['morning']['start'], data['schedule']['morning']['target'], data['schedule']['night']['start'], data['schedule']['night']['target'], data['away_mode']['target'], data['rooms'] (a list), data['zones'] (a list), data['units_shown']"),
            "{note}"
        );
    }

    #[test]
    fn a_dot_env_is_read_by_lines_and_its_names_listed() {
        let env = "# Reef tank\nTANK_NAME=Coral Corner\nLIGHTS_OFF=21:45\n";
        let note = settings_note(".env", env).unwrap();
        assert!(note.contains("data['TANK_NAME'], data['LIGHTS_OFF']"), "{note}");
        assert!(note.contains("configparser does not read it"), "{note}");
        // The reader shown reads the file.
        let printed =
            crate::file_shape::reader_prints(&note, (".env", env), "print(data['LIGHTS_OFF'], data['TANK_NAME'])");
        assert_eq!(printed, "21:45 Coral Corner");
    }

    #[test]
    fn toml_ini_and_json_keys_are_given_as_their_readers_take_them() {
        let toml = "title = \"show\"\n[export.mp3]\nbitrate = 128\n[[episodes]]\nname = \"a\"\n";
        let note = settings_note("podcast.toml", toml).unwrap();
        assert!(
            note.contains(
                "data['episodes'] (a list), data['export']['mp3']['bitrate'], data['title'] (tomllib cannot write"
            ),
            "{note}"
        );
        let ini = "; printers\n[Colour Printer]\nIP = 10.0.0.7\n[mono]\nip: 10.0.0.8\n";
        let note = settings_note("office.ini", ini).unwrap();
        assert!(
            note.contains("data['Colour Printer']['ip'], data['mono']['ip'] (configparser drops comments"),
            "{note}"
        );
        let json = r#"{"zones": [{"name": "veg"}], "rain": {"skip": true}}"#;
        assert!(settings_note("sprinkler.json", json)
            .unwrap()
            .ends_with("data['zones'] (a list), data['rain']['skip']"));
        assert_eq!(settings_note("notes.txt", "a: b\n"), None);
        assert_eq!(settings_note("list.json", "[1, 2]"), None);
    }
}
