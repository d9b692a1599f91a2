//! A value a new file holds that a configuration file holds under one key,
//! where the same key stands in a section the task names too, holding
//! another value: the program read the key at a level the task does not
//! ask about.
//!
//! On held-out-48 (spent) a dye workshop's YAML held a `deposit` for the
//! workshop and one under its `materials`; asked for the materials
//! deposit, two of the 1.5B model's programs read the workshop's, agreed,
//! and the run said `succeeded`. The check reads only the file written,
//! the configuration's keys and whether the task names a section's own
//! name (as a whole word, `_` and `-` read as spaces): nothing is keyed to
//! how a task is worded. It stays quiet when the task names a section of
//! the key that was read too, and for values the file holds under no key.

use serde_json::Value;

/// Longest text of a new file taken for one value.
const LONGEST_VALUE: usize = 80;

/// A key's place in a configuration file: the names of the sections it
/// stands in, then its own, and the value it holds as text.
type Leaf = (Vec<String>, String);

/// What is said of `text`, a new file at `path`, when it holds just one
/// value that one of `inputs` the task names (path and text: JSON, YAML,
/// TOML or INI) holds at a key the task names, whose name stands in
/// another section too, with another value, under a section of its own
/// (the key read does not stand in it) that `task` names (see
/// [`named_elsewhere`]), and no section of the key read that the other
/// lacks is named.
/// `None` otherwise.
pub(crate) fn read_elsewhere(path: &str, text: &str, task: &str, inputs: &[(&str, &str)]) -> Option<String> {
    let value = text.trim();
    if value.is_empty() || value.contains('\n') || value.len() > LONGEST_VALUE {
        return None;
    }
    let named_paths = crate::plan::paths_named_by(task);
    // A file's name is no section's ("server.yaml" does not name `server`).
    let task = named_paths
        .iter()
        .fold(task.to_string(), |task, named| task.replace(named.as_str(), " "));
    let task = words_of(&task);
    let named_inputs = inputs
        .iter()
        .filter(|(input, _)| *input != path && named_paths.iter().any(|named| named == input));
    named_inputs.into_iter().find_map(|(input, config)| {
        let leaves = leaves_of(input, config)?;
        let read = leaves.iter().filter(|(_, held)| same_value(held, value));
        read.into_iter().find_map(|(at, _)| {
            let (named, (other, held)) = named_elsewhere(at, value, &leaves, &task)?;
            Some(format!(
                "{path} holds {value}, the `{}` of {input}; {input} holds `{}` = {held} too, under `{named}`, which the task names: read the key in the section the task names",
                at.join("."),
                other.join("."),
            ))
        })
    })
}

/// Another leaf of `leaves` with the key of `at`, which `task` (its
/// words) names, holding a value other than `value`, under a section
/// that `at` does not stand in named by `task` (the innermost such; on
/// held-out-51, spent, "the spirit still's hearts_end_abv" was
/// `stills.spirit.cuts.hearts_end_abv`, its innermost section `cuts`
/// unnamed, and a program read `defaults.hearts_end_abv`), where no
/// section `at` stands in and it does not is named: that section's name,
/// and the leaf.
fn named_elsewhere<'a>(at: &[String], value: &str, leaves: &'a [Leaf], task: &str) -> Option<(&'a str, &'a Leaf)> {
    let (key, sections) = at.split_last()?;
    if !names(task, key) {
        return None;
    }
    leaves.iter().find_map(|leaf| {
        let (other, held) = leaf;
        let (other_key, other_sections) = other.split_last()?;
        if !other_key.eq_ignore_ascii_case(key) || other.as_slice() == at || same_value(held, value) {
            return None;
        }
        let own_named = sections
            .iter()
            .any(|section| !other_sections.contains(section) && names(task, section));
        // Its innermost section of its own, named by the task in any form,
        // or one above it named as a word of the task that is a member
        // among sibling sections (`spirit` beside `wash` under `stills`):
        // a collection above the member that holds the key
        // (`environments` above `staging`, for "production") names none.
        let mut own: Vec<usize> = (0..other_sections.len())
            .filter(|i| !sections.contains(&other_sections[*i]))
            .collect();
        let innermost = own.pop()?;
        let member = |depth: usize| names_as_word(task, &other_sections[depth]) && has_sibling(leaves, other, depth);
        let named = std::iter::once(innermost)
            .filter(|depth| names(task, &other_sections[*depth]))
            .chain(own.into_iter().rev().filter(|depth| member(*depth)))
            .next()?;
        (!own_named).then_some((other_sections[named].as_str(), leaf))
    })
}

/// Whether `task` (its words) names `section` (or a key), as a whole word
/// or phrase, its `_` and `-` read as spaces, or as a plural's stem.
fn names(task: &str, section: &str) -> bool {
    let section = words_of(section);
    section.chars().count() >= 3 && crate::named_value::names(task, &section)
}

/// Whether the section at `depth` of the key `at` has a sibling section
/// among `leaves`: another section under the same parent.
fn has_sibling(leaves: &[Leaf], at: &[String], depth: usize) -> bool {
    leaves
        .iter()
        .any(|(path, _)| path.len() > depth + 1 && path[..depth] == at[..depth] && path[depth] != at[depth])
}

/// Whether `task` (its words) holds `section`'s name as a whole word or
/// phrase, no plural's stem.
fn names_as_word(task: &str, section: &str) -> bool {
    let section = words_of(section);
    section.chars().count() >= 3 && crate::text::contains_whole(task, &section)
}

/// `text` in small letters with `_` and `-` as spaces.
fn words_of(text: &str) -> String {
    text.to_lowercase().replace(['_', '-'], " ")
}

/// Whether a key's value (as text) and the value a file holds are one:
/// as text, or as numbers.
fn same_value(held: &str, value: &str) -> bool {
    let number = |s: &str| s.trim().trim_matches(['"', '\'']).parse::<f64>().ok();
    match (number(held), number(value)) {
        (Some(a), Some(b)) => a == b,
        _ => held.trim().trim_matches(['"', '\'']) == value.trim_matches(['"', '\'']),
    }
}

/// Every key holding a plain value in the configuration `text` (the file
/// at `path`), with the sections it stands in; `None` when it is no JSON,
/// YAML, TOML or INI file, or does not parse.
fn leaves_of(path: &str, text: &str) -> Option<Vec<Leaf>> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let value: Value = match extension.as_str() {
        "json" => serde_json::from_str(text).ok()?,
        "toml" => toml::from_str(text).ok()?,
        "yaml" | "yml" => serde_norway::from_str(text).ok()?,
        "ini" | "cfg" | "conf" => return Some(ini_leaves(text)),
        _ => return None,
    };
    let mut leaves = Vec::new();
    walk(&value, &mut Vec::new(), &mut leaves);
    Some(leaves)
}

/// The plain values under `path` in `value`, into `leaves`; the items of
/// a list are not followed (their place is no key).
fn walk(value: &Value, path: &mut Vec<String>, leaves: &mut Vec<Leaf>) {
    match value {
        // A TOML date parses as a table of one private key: it is a value.
        Value::Object(fields) if fields.keys().any(|key| key.starts_with("$__toml")) => {}
        Value::Object(fields) => {
            for (key, inner) in fields {
                path.push(key.clone());
                walk(inner, path, leaves);
                path.pop();
            }
        }
        Value::Array(_) | Value::Null => {}
        Value::String(text) => leaves.push((path.clone(), text.clone())),
        other => leaves.push((path.clone(), other.to_string())),
    }
}

/// The settings of an INI file under their sections (those above the
/// first section under none).
fn ini_leaves(text: &str) -> Vec<Leaf> {
    crate::settings_shape::ini_settings(text)
        .into_iter()
        .map(|(section, name, value)| (section.into_iter().chain([name]).collect(), value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKSHOP: &str =
        "workshop:\n  name: Indigo basics\n  deposit: 20\n  materials:\n    kit: wool skeins\n    deposit: 15\n";

    #[test]
    fn a_value_read_outside_the_section_the_task_names_is_a_flaw() {
        let task = "workshop.yaml describes my dye workshop. What is the deposit for the materials? Write just the number to deposit.txt.";
        let flaw = read_elsewhere("deposit.txt", "20\n", task, &[("workshop.yaml", WORKSHOP)]).expect("a flaw");
        assert!(flaw.contains("`workshop.deposit`"), "{flaw}");
        assert!(flaw.contains("`workshop.materials.deposit` = 15"), "{flaw}");
        assert_eq!(
            read_elsewhere("deposit.txt", "15", task, &[("workshop.yaml", WORKSHOP)]),
            None
        );
    }

    #[test]
    fn a_task_that_names_no_section_or_the_one_read_is_left_alone() {
        let plain = "What is the workshop deposit in workshop.yaml? Write just the number to deposit.txt.";
        assert_eq!(
            read_elsewhere("deposit.txt", "20", plain, &[("workshop.yaml", WORKSHOP)]),
            None
        );
        let ini = "[web]\nport = 8080\n[database_server]\nport = 5432\n";
        let web = "Which port does the web front end use, per app.ini? Write it to port.txt.";
        assert_eq!(read_elsewhere("port.txt", "8080", web, &[("app.ini", ini)]), None);
        let db = "Which port does the database server listen on, per app.ini? Write it to port.txt.";
        let flaw = read_elsewhere("port.txt", "8080", db, &[("app.ini", ini)]).expect("a flaw");
        assert!(flaw.contains("`database_server.port` = 5432"), "{flaw}");
    }

    #[test]
    fn an_inherited_value_a_coincidence_or_a_section_named_by_a_file_is_left_alone() {
        let deploy = "timeout: 30\nenvironments:\n  staging:\n    timeout: 90\n  production:\n    replicas: 4\n";
        let task = "What timeout will the production environment use, per deploy.yaml? Write it to timeout.txt.";
        assert_eq!(
            read_elsewhere("timeout.txt", "30", task, &[("deploy.yaml", deploy)]),
            None
        );
        let plans = "limits:\n  retries: 3\n  max_users: 5\npremium:\n  retries: 5\n  max_users: 50\n";
        let task = "How many retries do premium accounts get in plans.yaml? Write it to r.txt.";
        assert_eq!(read_elsewhere("r.txt", "5", task, &[("plans.yaml", plans)]), None);
        let server = "port: 80\nadmin:\n  port: 9000\n";
        let task = "Which port does server.yaml give the site? Write it to p.txt.";
        assert_eq!(read_elsewhere("p.txt", "80", task, &[("server.yaml", server)]), None);
        // A file the task does not name is not read.
        let task = "Which port does the admin panel use? Write it to p.txt.";
        assert_eq!(read_elsewhere("p.txt", "80", task, &[("server.yaml", server)]), None);
    }

    #[test]
    fn a_section_the_task_names_above_the_keys_own_is_named() {
        let toml = "[defaults]\nhearts_end_abv = 60.0\n\n[stills.spirit.cuts]\nhearts_end_abv = 64.5\n\n[stills.wash.cuts]\nlow_wines_end_abv = 1.0\n";
        let task = "still.toml is our stills' config. At what ABV does the spirit still end the hearts cut (its hearts_end_abv)? Write it to end.txt.";
        let found = read_elsewhere("end.txt", "60.0", task, &[("still.toml", toml)]).unwrap_or_default();
        assert!(found.contains("under `spirit`, which the task names"), "{found}");
        assert_eq!(read_elsewhere("end.txt", "64.5", task, &[("still.toml", toml)]), None);
        // A collection named as a word names no member of it.
        let deploy = "timeout: 30\nenvironments:\n  staging:\n    timeout: 90\n";
        let task = "What timeout does production use? deploy.yaml lists our environments. Write it to t.txt.";
        assert_eq!(read_elsewhere("t.txt", "30", task, &[("deploy.yaml", deploy)]), None);
    }

    #[test]
    fn values_of_toml_and_json_are_read_by_their_keys() {
        let toml = "[shop]\nshipping = 4.5\n[shop.express]\nshipping = 12.0\n";
        let task = "What does express shipping cost in shop.toml? Write the number to cost.txt.";
        assert!(read_elsewhere("cost.txt", "4.5", task, &[("shop.toml", toml)]).is_some());
        assert_eq!(read_elsewhere("cost.txt", "12", task, &[("shop.toml", toml)]), None);
        let json = r#"{"timeout": 30, "retry": {"timeout": 5}}"#;
        let task = "What is the retry timeout in client.json? Write it to t.txt.";
        assert!(read_elsewhere("t.txt", "30", task, &[("client.json", json)]).is_some());
        assert_eq!(
            read_elsewhere("t.txt", "30 seconds\nand more", task, &[("client.json", json)]),
            None
        );
    }
}
