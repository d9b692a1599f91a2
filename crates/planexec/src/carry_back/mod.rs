//! An edit of a configuration file made through a parser's dump, carried
//! back to the file's own lines: the settings whose values it changed (or
//! took out) are changed (or taken out) in the file as it was, and every
//! other line, comments and order included, is left as it was.
//!
//! Told that its dump dropped the comments ([`crate::config_edit`]), the
//! 1.5B model wrote the same `configparser.write` again (held-out-25's kiln
//! and gym edits), and the run failed with the right value in the file. What
//! the dump changed can be read from the two texts alone, setting by
//! setting: the work is the values, the layout is the person's. The
//! runtime does this for every provider (a hosted model's `yaml.safe_dump`
//! sorts keys too), where a program's edit is seen before and after: the
//! vote over programs on a copy ([`crate::sandbox`]), the check's programs
//! ([`crate::recompute`]) and a step of the run ([`crate::executor`]),
//! whose record says so. A JSON file's edit is carried back to its own
//! layout the same way ([`json`]), and an XML file's to its own text
//! ([`xml`]).

use std::ops::Range;

mod json;
mod xml;

/// One setting line of a configuration file: where it is (the section, or
/// the keys it is under, and its own key, lowercased: `configparser`
/// lowercases keys), which line it is, and where its key and its value are
/// in that line.
#[derive(Debug)]
struct Entry {
    place: String,
    line: usize,
    key: Range<usize>,
    value: Range<usize>,
}

impl Entry {
    /// The place of the section or the keys the setting is under.
    fn parent(&self) -> &str {
        self.place.rsplit_once('.').map_or("", |(parent, _)| parent)
    }

    /// The setting's own key, as its place holds it.
    fn name(&self) -> &str {
        self.place.rsplit('.').next().unwrap_or(&self.place)
    }
}

/// A configuration file read as settings: its lines, the settings among
/// them, its sections' headers (name and line), and its other lines that
/// are neither blank, a comment nor a section (list items), trimmed and
/// unquoted, which a carried-back edit must leave as they were.
struct Read<'a> {
    lines: Vec<&'a str>,
    entries: Vec<Entry>,
    headers: Vec<(String, usize)>,
    rest: Vec<String>,
}

impl Read<'_> {
    fn value(&self, entry: &Entry) -> &str {
        &self.lines[entry.line][entry.value.clone()]
    }

    fn key(&self, entry: &Entry) -> &str {
        &self.lines[entry.line][entry.key.clone()]
    }
}

/// An edit of a file's lines, setting by setting: a key or a value
/// changed in a line, lines taken out, and lines put in after a line.
#[derive(Default)]
struct Edit {
    changed: Vec<(usize, Range<usize>, String)>,
    /// The keys renamed, as they were and as they are.
    renamed: Vec<(String, String)>,
    gone: Vec<usize>,
    added: Vec<(usize, String)>,
}

/// The text of the configuration file at `path` as it was (`was`) with the
/// settings `now` changes carried to its own lines, and what was wrong
/// with `now`, when `now` rewrote the file for `task`
/// ([`crate::config_edit::rewritten`], made by `programs`) or put a key it renamed in another
/// line than the old key's (`configparser` puts it at the end of its
/// section), and its edit is one of settings only (the same lists): values
/// changed, keys renamed (the same value under another key beside it),
/// settings taken out, and settings added where the file has others
/// beside them; a dump that changed no setting gives the file as it was.
/// `None` otherwise (a finding stands).
pub(crate) fn carried_back(
    path: &str,
    was: &str,
    now: &str,
    task: &str,
    programs: &[&str],
) -> Option<(String, String)> {
    if json::is_json(path) {
        return json::carried_back(path, was, now);
    }
    if xml::is_xml(path) {
        return xml::carried_back(path, was, now);
    }
    if !crate::config_edit::is_config(path) {
        return None;
    }
    let finding = crate::config_edit::rewrite_found(path, was, now, task, programs);
    let yaml = is_yaml(path);
    let (before, after) = (read(was, yaml)?, read(now, yaml)?);
    if sorted(before.rest.clone()) != sorted(after.rest.clone()) {
        return None;
    }
    // A dump that changed no setting (a revision that wrote the same
    // program again over a file carried back) changed only the layout: the
    // file gets its own back.
    let edit = edit(&before, &after, yaml)?;
    let found = match (finding, edit.renamed.first()) {
        (Some(finding), _) => finding,
        (None, Some((old, new))) => {
            format!("{path} was edited in place and its key `{old}` was renamed `{new}` in another line than its own")
        }
        (None, None) => return None,
    };
    let merged = applied(was, edit);
    (merged != now && carries(&merged, &after, yaml)).then_some((merged, found))
}

/// The edit from `before` to `after`, setting by setting; `None` when a
/// setting added has no setting (or section) beside it in `before`.
fn edit(before: &Read<'_>, after: &Read<'_>, yaml: bool) -> Option<Edit> {
    let mut edit = Edit::default();
    let mut used = vec![false; after.entries.len()];
    let mut gone: Vec<&Entry> = Vec::new();
    for entry in &before.entries {
        let matching = (0..after.entries.len()).find(|&i| !used[i] && after.entries[i].place == entry.place);
        let Some(i) = matching else {
            gone.push(entry);
            continue;
        };
        used[i] = true;
        let (old, new) = (before.value(entry), after.value(&after.entries[i]));
        if !same_value(old, new, yaml) {
            edit.changed
                .push((entry.line, entry.value.clone(), written_as(old, new)));
        }
    }
    let added = after
        .entries
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(a, _)| a);
    for new in added {
        let value = after.value(new);
        let renamed = gone
            .iter()
            .position(|old| old.parent() == new.parent() && same_value(before.value(old), value, yaml));
        if let Some(at) = renamed {
            let old = gone.remove(at);
            edit.changed
                .push((old.line, old.key.clone(), after.key(new).to_string()));
            edit.renamed
                .push((before.key(old).to_string(), after.key(new).to_string()));
            continue;
        }
        edit.added.push(put_in(before, after, new)?);
    }
    edit.gone = gone.iter().map(|entry| entry.line).collect();
    Some(edit)
}

/// Where the setting `new` of `after` goes in `before`, and its line: after
/// the last setting beside it, in that one's indentation, else after its
/// section's header; `None` where there is neither.
fn put_in(before: &Read<'_>, after: &Read<'_>, new: &Entry) -> Option<(usize, String)> {
    let text = after.lines[new.line].trim();
    let beside = before.entries.iter().rev().find(|old| old.parent() == new.parent());
    if let Some(old) = beside {
        let line = before.lines[old.line];
        let indent = &line[..line.len() - line.trim_start().len()];
        return Some((old.line, format!("{indent}{text}\n")));
    }
    let header = before.headers.iter().find(|(name, _)| name == new.parent())?;
    Some((header.1, format!("{text}\n")))
}

/// `was` with `edit` made to its lines.
fn applied(was: &str, edit: Edit) -> String {
    let mut lines: Vec<String> = was.split_inclusive('\n').map(str::to_string).collect();
    for (n, range, text) in edit.changed {
        let line = &lines[n];
        lines[n] = format!("{}{text}{}", &line[..range.start], &line[range.end..]);
    }
    for n in edit.gone {
        lines[n].clear();
    }
    for (n, text) in edit.added {
        if !lines[n].ends_with('\n') {
            lines[n].push('\n');
        }
        lines[n].push_str(&text);
    }
    lines.concat()
}

/// Whether an edit of the file at `path` may be carried back to its own
/// lines ([`carried_back`]): a configuration file, or JSON.
pub(crate) fn is_carried(path: &str) -> bool {
    crate::config_edit::is_config(path) || json::is_json(path)
}

/// A setting an edit of the configuration file at `path` from `was` to
/// `now` added in another place than the file's own setting of that name,
/// which it left as it was, said as a flaw: two checking programs for
/// held-out-25's gym.yaml (spent) put `weekend_close: 21` at the top of the
/// file, under `hours:` stayed `weekend_close: 20`, and they refuted the
/// run's right edit. A key the file has names the setting it has, unless
/// `task` names the section (or the key) the new one is under: "add
/// timeout under [client]" beside `[server]`'s.
pub(crate) fn shadowed(path: &str, was: &str, now: &str, task: &str) -> Option<String> {
    if !crate::config_edit::is_config(path) {
        return None;
    }
    let task = task.to_lowercase();
    let named = |entry: &Entry| {
        let parent = entry.parent();
        let under = parent.rsplit('.').next().unwrap_or(parent);
        !under.is_empty() && task.contains(under)
    };
    let yaml = is_yaml(path);
    let (before, after) = (read(was, yaml)?, read(now, yaml)?);
    let kept = |old: &Entry| {
        after
            .entries
            .iter()
            .any(|a| a.place == old.place && same_value(after.value(a), before.value(old), yaml))
    };
    after.entries.iter().find_map(|new| {
        if named(new) || before.entries.iter().any(|old| old.place == new.place) {
            return None;
        }
        let own = before.entries.iter().find(|old| old.name() == new.name() && kept(old))?;
        Some(format!(
            "it added `{}` in another place of {path} and left the file's own `{}` (`{}`) as it was: change the setting the file has, where it is",
            after.lines[new.line].trim(),
            own.place,
            before.lines[own.line].trim()
        ))
    })
}

/// What a step's record says of a file it carried back, from what was
/// found wrong with the step's edit ([`carried_back`]).
pub(crate) fn said(path: &str, found: &str) -> String {
    if json::is_json(path) {
        return format!(
            "{found}, as a dump leaves it: planexec wrote the values the step changed back in the layout of {path} as it was"
        );
    }
    format!(
        "{found}, as a parser's dump leaves it: planexec carried the settings the step changed back to the lines of {path} as they were, and kept the others, its comments and their order"
    )
}

/// Whether `merged` holds every setting of `after` with its value: the
/// carry-back lost nothing the edit did.
fn carries(merged: &str, after: &Read<'_>, yaml: bool) -> bool {
    let Some(read) = read(merged, yaml) else {
        return false;
    };
    read.entries.len() == after.entries.len()
        && read.entries.iter().all(|entry| {
            after
                .entries
                .iter()
                .any(|a| a.place == entry.place && same_value(after.value(a), read.value(entry), yaml))
        })
}

/// Whether the file at `path` is YAML, whose places are its keys'
/// indentation, not sections.
fn is_yaml(path: &str) -> bool {
    crate::config_edit::has_extension(path, &["yaml", "yml"])
}

fn sorted(mut lines: Vec<String>) -> Vec<String> {
    lines.sort();
    lines
}

/// `text` read as settings; `None` for a line that cannot be read so (a
/// block scalar), where a carry-back could lose it.
fn read(text: &str, yaml: bool) -> Option<Read<'_>> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (mut entries, mut headers, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    let mut section = String::new();
    // YAML's keys a line is under: their indentation and name.
    let mut above: Vec<(usize, String)> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim();
        if trimmed.is_empty() || is_comment(trimmed) {
            continue;
        }
        let indent = body.len() - body.trim_start().len();
        if !yaml && trimmed.starts_with('[') && trimmed.ends_with(']') {
            section = trimmed.trim_matches(['[', ']']).trim().to_lowercase();
            headers.push((section.clone(), n));
            continue;
        }
        if yaml && (trimmed == "-" || trimmed.starts_with("- ")) {
            rest.push(unquoted(trimmed.trim_start_matches('-').trim()).to_string());
            continue;
        }
        let Some((key, value)) = setting(body, yaml) else {
            rest.push(trimmed.to_string());
            continue;
        };
        let name = body[key.clone()].trim_matches(['"', '\'']).to_lowercase();
        let shown = &body[value.clone()];
        if yaml && (shown.starts_with('|') || shown.starts_with('>')) {
            return None;
        }
        let place = match yaml {
            true => {
                above.retain(|(at, _)| *at < indent);
                let keys: Vec<&str> = above.iter().map(|(_, k)| k.as_str()).collect();
                [keys, vec![name.as_str()]].concat().join(".")
            }
            false => format!("{section}.{name}"),
        };
        if yaml && shown.is_empty() {
            above.push((indent, name));
            continue;
        }
        entries.push(Entry {
            place,
            line: n,
            key,
            value,
        });
    }
    Some(Read {
        lines,
        entries,
        headers,
        rest,
    })
}

/// Where the key and the value are in a setting line (`key = value`,
/// `key: value`, `export KEY=value`; an inline comment is no part of the
/// value); `None` for another line.
fn setting(line: &str, yaml: bool) -> Option<(Range<usize>, Range<usize>)> {
    let at = match yaml {
        true => line
            .find(": ")
            .or_else(|| line.ends_with(':').then(|| line.len() - 1))?,
        false => line.find('=').or_else(|| line.find(':'))?,
    };
    let key_text = line[..at].trim_end();
    let mut start = line.len() - line.trim_start().len();
    if line[start..].starts_with("export ") {
        start += "export ".len();
    }
    if start >= key_text.len() || key_text[start..].starts_with(['-', '[', '{']) {
        return None;
    }
    let after = at + 1;
    let from = after + (line[after..].len() - line[after..].trim_start().len());
    let to = from + without_comment(&line[from..]).trim_end().len();
    Some((start..key_text.len(), from..to))
}

/// A value without an inline comment: what comes before ` #` (or ` ;`)
/// outside quotes.
fn without_comment(value: &str) -> &str {
    let mut quote = None;
    let mut last = ' ';
    for (i, c) in value.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#' | ';') if last.is_whitespace() && i > 0 => return &value[..i],
            _ => {}
        }
        last = c;
    }
    value
}

fn is_comment(line: &str) -> bool {
    line.starts_with('#') || line.starts_with(';')
}

fn unquoted(value: &str) -> &str {
    let value = value.trim();
    for q in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

/// Whether two values of a setting are one value, as a parser reads them:
/// the same text unquoted, the same number (`1.50`, `1.5`), or in YAML the
/// same truth (`yes`, `true`).
fn same_value(a: &str, b: &str, yaml: bool) -> bool {
    let (a, b) = (unquoted(a), unquoted(b));
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x == y;
    }
    let truth = |v: &str| match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" => Some(false),
        _ => None,
    };
    yaml && truth(a).is_some() && truth(a) == truth(b)
}

/// The new value `new` written the way the old one (`old`) was: in its
/// quotes when it was quoted, else as the dump wrote it, unquoted when that
/// reads the same.
fn written_as(old: &str, new: &str) -> String {
    let inner = unquoted(new);
    let quote = old
        .trim()
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'') && unquoted(old) != old.trim());
    match quote {
        Some(q) if !inner.contains(q) => format!("{q}{inner}{q}"),
        Some(_) => new.to_string(),
        None if inner.is_empty() || inner.contains([':', '#', '\'', '"']) || inner != inner.trim() => new.to_string(),
        None => inner.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The carried-back text alone.
    fn carried_back(path: &str, was: &str, now: &str, task: &str) -> Option<String> {
        super::carried_back(path, was, now, task, &[]).map(|(text, _)| text)
    }

    /// A key renamed and put at the end of its section (configparser's
    /// way), with nothing else changed, keeps the old key's line; renamed
    /// in its own line, there is nothing to carry.
    #[test]
    fn a_key_renamed_in_another_line_is_carried_to_its_own() {
        let was = "[app]\nname = \"station\"\n\n[network]\nhost = \"10.0.0.4\"\ntimeout = 30\nretries = 3\n";
        let dumped =
            "[app]\nname = \"station\"\n\n[network]\nhost = \"10.0.0.4\"\nretries = 3\ntimeout_seconds = 30\n\n";
        let task = "In config.toml, rename timeout in [network] to timeout_seconds.";
        let (merged, found) = super::carried_back("config.toml", was, dumped, task, &[]).expect("a rename moved");
        assert_eq!(merged, was.replace("timeout =", "timeout_seconds ="));
        assert!(found.contains("`timeout` was renamed `timeout_seconds`"), "{found}");
        let in_place = was.replace("timeout =", "timeout_seconds =");
        assert_eq!(carried_back("config.toml", was, &in_place, task), None);
    }

    const KILN: &str = "; settings for the studio kiln\n[kiln]\nname = Big Blue\nmax_temp_c = 1280\n\n[safety]\n; minutes before the door opens\ncooldown_minutes = 90\ndoor_lock = true\n";

    /// configparser's dump lowercases keys, drops comments and puts a
    /// blank line after each section: the value it changed is carried to
    /// the old line and the rest is as it was.
    #[test]
    fn an_ini_dump_is_carried_back_to_the_files_lines() {
        let dumped =
            "[kiln]\nname = Big Blue\nmax_temp_c = 1280\n\n[safety]\ncooldown_minutes = 120\ndoor_lock = true\n\n";
        let task = "In kiln.ini, change cooldown_minutes under [safety] to 120.";
        let merged = carried_back("kiln.ini", KILN, dumped, task).expect("a dump of one value");
        assert_eq!(merged, KILN.replace("cooldown_minutes = 90", "cooldown_minutes = 120"));
        let no_change =
            "[kiln]\nname = Big Blue\nmax_temp_c = 1280\n\n[safety]\ncooldown_minutes = 90\ndoor_lock = true\n\n";
        assert_eq!(
            carried_back("kiln.ini", KILN, no_change, task).as_deref(),
            Some(KILN),
            "layout only"
        );
        let line_edit = KILN.replace("= 90", "= 120");
        assert_eq!(
            carried_back("kiln.ini", KILN, &line_edit, task),
            None,
            "no dump, nothing to carry"
        );
    }

    /// YAML's dump sorts keys, requotes values and reindents lists: the
    /// nested value is found by the keys above it, in its own quotes.
    #[test]
    fn a_yaml_dump_is_carried_back_by_the_keys_above_each_value() {
        let was = "# Crux Hall\ngym: Crux Hall\nhours:\n    weekday_close: 22\n    weekend_close: '20'   # summer\nwalls:\n    - bouldering\n    - top rope\n";
        let dumped =
            "gym: Crux Hall\nhours:\n  weekday_close: 22\n  weekend_close: 21\nwalls:\n- bouldering\n- top rope\n";
        let task = "Set weekend_close to 21 in gym.yaml.";
        let merged = carried_back("gym.yaml", was, dumped, task).expect("a dump of one value");
        assert_eq!(merged, was.replace("'20'", "'21'"));
    }

    /// A setting taken out is taken out of the old lines, one added goes
    /// after the last beside it, and a key renamed keeps its line; one
    /// added in a new section, a list changed, or a file that is no
    /// configuration is not carried.
    #[test]
    fn settings_taken_out_added_or_renamed_are_carried() {
        let dumped = "[kiln]\nname = Big Blue\n\n[safety]\ncooldown_minutes = 90\ndoor_lock = true\n";
        let task = "Remove max_temp_c from kiln.ini.";
        let merged = carried_back("kiln.ini", KILN, dumped, task).expect("a setting taken out");
        assert_eq!(merged, KILN.replace("max_temp_c = 1280\n", ""));
        let added = "[kiln]\nname = Big Blue\nmax_temp_c = 1280\n[safety]\ncooldown_minutes = 90\ndoor_lock = true\nalarm = on\n";
        let merged = carried_back("kiln.ini", KILN, added, "Add alarm = on to [safety] in kiln.ini.");
        assert_eq!(merged.as_deref(), Some(format!("{KILN}alarm = on\n").as_str()));
        let renamed = "[kiln]\nname = Big Blue\nmax_temp_c = 1280\n\n[safety]\ncool_down = 90\ndoor_lock = true\n";
        let merged = carried_back(
            "kiln.ini",
            KILN,
            renamed,
            "Rename cooldown_minutes to cool_down in kiln.ini.",
        );
        assert_eq!(
            merged.as_deref(),
            Some(KILN.replace("cooldown_minutes", "cool_down").as_str())
        );
        let new_section = format!("{dumped}\n[alerts]\nemail = on\n");
        assert_eq!(
            carried_back("kiln.ini", KILN, &new_section, "Add an [alerts] section."),
            None
        );
        let was = "# gym\nwalls:\n  - bouldering\n";
        let other_list = "walls:\n- lead\n";
        assert_eq!(
            carried_back("gym.yaml", was, other_list, "Change the wall in gym.yaml."),
            None
        );
        assert_eq!(
            carried_back("names.txt", "# b\na = 1\n", "a = 2\n", "Set a to 2."),
            None
        );
    }

    /// An .env file's `export` is no part of its key, and a TOML table is
    /// a section.
    #[test]
    fn env_and_toml_settings_are_read_by_their_keys() {
        let env = "# local only\nexport DEBUG=true\nPORT=8080\n";
        let merged = carried_back(".env", env, "DEBUG=true\nPORT=9090\n", "Set PORT to 9090 in .env.");
        assert_eq!(merged.as_deref(), Some(env.replace("8080", "9090").as_str()));
        let toml = "# the tool\n[tool.lint]\nline-length = 88  # black's\nstrict = false\n";
        let dumped = "[tool.lint]\nline-length = 100\nstrict = false\n";
        let merged = carried_back("pyproject.toml", toml, dumped, "Set line-length to 100.");
        assert_eq!(merged.as_deref(), Some(toml.replace("= 88", "= 100").as_str()));
    }

    /// A setting put in another place beside the file's own of that
    /// name, left as it was, is a flaw; changing the file's own, or adding
    /// a name it does not have, is none.
    #[test]
    fn a_setting_added_beside_the_files_own_is_a_flaw() {
        let was = "hours:\n  weekend_close: 20\nstaff: 3\n";
        let appended = format!("{was}weekend_close: 21\n");
        let task = "Set weekend_close to 21 in gym.yaml.";
        let flaw = shadowed("gym.yaml", was, &appended, task).unwrap_or_default();
        assert!(
            flaw.contains("`weekend_close: 21`") && flaw.contains("`hours.weekend_close`"),
            "{flaw}"
        );
        assert_eq!(shadowed("gym.yaml", was, &was.replace("20", "21"), task), None);
        assert_eq!(shadowed("gym.yaml", was, &format!("{was}lockers: 40\n"), task), None);
        let both = format!("{}weekend_close: 21\n", was.replace("20", "21"));
        assert_eq!(
            shadowed("gym.yaml", was, &both, task),
            None,
            "the file's own changed too"
        );
        let ini = "[server]\ntimeout = 30\n[client]\nretries = 2\n";
        let added = format!("{ini}timeout = 30\n");
        let asked = "Add timeout = 30 to the [client] section of app.ini.";
        assert_eq!(
            shadowed("app.ini", ini, &added, asked),
            None,
            "the task names where it goes"
        );
        assert!(shadowed("app.ini", ini, &added, "Set the timeout to 30 in app.ini.").is_some());
    }

    #[test]
    fn an_inline_comment_is_no_part_of_a_value() {
        assert_eq!(without_comment("21   # summer"), "21   ");
        assert_eq!(without_comment("'a # b' # c"), "'a # b' ");
        assert_eq!(without_comment("#fff"), "#fff");
        assert!(same_value("'1.50'", "1.5", false));
        assert!(same_value("yes", "true", true));
        assert!(!same_value("yes", "true", false));
    }
}
