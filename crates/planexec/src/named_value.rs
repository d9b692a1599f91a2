//! A value of a table's column that the task names and a program never
//! quotes (and a column of two values the task names and a program never
//! reads, [`flag_ignored`]): the task asks about some rows ("kilos of tomatoes", "the fiction
//! total"), and a program with no string holding the value counts them all.
//!
//! On held-out-40 (spent) harvest.csv held tomatoes, courgettes and beans
//! in its `crop` column; of five programs for "how many kilos of tomatoes",
//! one kept the rows of tomatoes, two summed every crop, agreed, and the run
//! said `succeeded`. A filter on a value compares a cell with a string the
//! program holds, so a program with no literal holding the value (comments
//! and names aside: `total_tomato_weight` filters nothing) did not filter.
//! The check reads only the task and the data: it asks nothing of how the
//! task is worded. It stays quiet when the task names two values of one
//! column (a program may count every value then), when the column holds one
//! value only, and for numbers and the column's own name.

use std::collections::BTreeSet;

/// The shortest value held to this: shorter ones ("no", "a") stand in
/// tasks as plain words too often to be taken as naming a row.
const SHORTEST: usize = 3;

/// What is said of a program that never quotes the one value of a column
/// of a table `tables` holds (path and text) that `task` names, when it
/// does not. A literal that is a file the task names, and no table's
/// value, compares nothing: on held-out-49 (spent) two programs took
/// `data['teams'][3]` for "the U14 team's coach" and agreed on the U12's,
/// and `'u14_coach.txt'`, the file to write, was taken for a comparison
/// with `U14` (a host `db1.lan` a table holds stays a comparison).
pub(crate) fn ignored(code: &str, task: &str, tables: &[(&str, &str)]) -> Option<String> {
    let held = |literal: &str| tables.iter().any(|(_, text)| text.to_lowercase().contains(literal));
    let files: Vec<String> = crate::plan::paths_named_by(task)
        .iter()
        .map(|path| path.to_lowercase())
        .filter(|path| !held(path))
        .collect();
    let quoted: Vec<String> = quoted_in(code)
        .to_lowercase()
        .lines()
        .filter(|literal| !files.iter().any(|file| file == literal.trim()))
        .map(str::to_string)
        .collect();
    let quoted = quoted.join("\n");
    let task = task.to_lowercase();
    tables.iter().find_map(|(path, text)| {
        tables_in(path, text)
            .into_iter()
            .find_map(|(header, rows)| unpicked(&quoted, &task, path, &header, &rows))
    })
}

/// The tables of the file `path` holding `text`: a table's rows, or the
/// lists of records of a structured file.
fn tables_in(path: &str, text: &str) -> Vec<(Vec<String>, crate::file_shape::Rows)> {
    crate::file_shape::table_cells(text)
        .into_iter()
        .chain(records(path, text))
        .collect()
}

/// What is said of a program (`code`) that reads a table of `tables`
/// (path and text) by its columns' names and never reads a column of two
/// values whose name `task` says ([`flag_unread`]); `written`, the texts
/// it wrote, hold no such column (a program that copies rows whole, the
/// column among their fields, reads it).
pub(crate) fn flag_ignored(code: &str, task: &str, tables: &[(&str, &str)], written: &[&str]) -> Option<String> {
    let quoted = quoted_in(code).to_lowercase();
    let task = task.to_lowercase();
    let written = written.join("\n").to_lowercase();
    tables.iter().find_map(|(path, text)| {
        tables_in(path, text)
            .into_iter()
            .find_map(|(header, rows)| flag_unread(&quoted, &task, path, &header, &rows))
            .filter(|(name, _)| !crate::text::contains_whole(&written, name))
            .map(|(_, said)| said)
    })
}

/// What is said of a program that reads the table (`header`, `rows`, of
/// `path`) by its columns' names (`quoted`: its string literals, one a
/// line, in small letters) and never reads a column of two values (`yes`
/// and `no`, `paid` and `unpaid`) whose name `task` says. Such a column
/// says which rows a record is about: both of the 1.5B model's programs for
/// "what percentage of the target have we actually received" summed every
/// pledge of a sponsors list, its `received` column unread, and agreed
/// (held-out-53, spent). A program that reads the table by places quotes
/// no name, and is left alone.
fn flag_unread(
    quoted: &str,
    task: &str,
    path: &str,
    header: &[String],
    rows: &crate::file_shape::Rows,
) -> Option<(String, String)> {
    let literals: Vec<&str> = quoted.lines().map(str::trim).collect();
    let names: Vec<String> = header.iter().map(|name| name.trim().to_lowercase()).collect();
    let by_name = names.iter().any(|name| literals.contains(&name.as_str()));
    if !by_name {
        return None;
    }
    names.iter().enumerate().find_map(|(column, name)| {
        let values = flag_values(rows, column)?;
        let named = name.chars().count() >= SHORTEST && said_in(task, name);
        let read = quoted.contains(name.as_str()) || values.iter().any(|value| literals.contains(&value.as_str()));
        if !named || read {
            return None;
        }
        let [one, other] = values;
        let said = format!(
            "the task says {name:?}, a column of {path} whose rows hold {one:?} or {other:?}, and the program never reads it: it takes every row whatever its {name} (read the column, and keep the rows the task asks about)"
        );
        Some((name.clone(), said))
    })
}

/// Whether `task` (in small letters) says the column `name`: each of its
/// words (split at `_`, `-` and spaces) as a whole word, or without a
/// plural's `s` (`needs_mains` in "need mains power").
fn said_in(task: &str, name: &str) -> bool {
    name.split(['_', '-', ' '])
        .filter(|word| !word.is_empty())
        .all(|word| names(task, word))
}

/// The two values of `column` in `rows`, in small letters and in order,
/// when it holds two and no more (blank cells aside) and they say yes and
/// no (`yes`/`no`, `true`/`false`, `paid`/`unpaid`): a flag. Two other
/// words (`cash`/`card`) are a kind, which a task may sum over.
fn flag_values(rows: &crate::file_shape::Rows, column: usize) -> Option<[String; 2]> {
    let values: BTreeSet<String> = rows
        .iter()
        .filter_map(|(_, fields)| fields.get(column))
        .map(|value| value.trim().to_lowercase())
        .filter(|value| !value.is_empty())
        .collect();
    let [one, other]: [String; 2] = values.into_iter().collect::<Vec<_>>().try_into().ok()?;
    const PAIRS: [[&str; 2]; 4] = [["no", "yes"], ["n", "y"], ["false", "true"], ["n", "yes"]];
    let negated = |a: &str, b: &str| {
        ["un", "not ", "no ", "non-", "not-"]
            .iter()
            .any(|no| a == format!("{no}{b}"))
    };
    let yes_no = PAIRS.iter().any(|pair| pair == &[one.as_str(), other.as_str()])
        || negated(&one, &other)
        || negated(&other, &one);
    yes_no.then_some([one, other])
}

/// What is said of a program whose string literals (`quoted`) hold no
/// value of the table (`header`, `rows`, of `path`) that `task` names one
/// of, in a column of more than one value.
fn unpicked(quoted: &str, task: &str, path: &str, header: &[String], rows: &crate::file_shape::Rows) -> Option<String> {
    let named_in = |column: usize| -> (usize, Vec<String>) {
        let values = column_values(rows, column);
        let named = values
            .iter()
            .filter(|value| !header.iter().any(|h| h.to_lowercase() == **value))
            .filter(|value| names(task, value))
            .cloned()
            .collect();
        (values.len(), named)
    };
    let columns: Vec<(usize, Vec<String>)> = (0..header.len()).map(named_in).collect();
    // Rows picked by another value the task names are picked: "change
    // Biscuit's status from active to retired" names the status the
    // row holds now, and a program that finds the row by its name
    // takes no row of every status (held-out-43, spent: the flaw set
    // a right edit aside for a program that dropped the other rows).
    // A column of one value picks no row, whatever the program quotes of it.
    let picked = columns
        .iter()
        .filter(|(distinct, _)| *distinct >= 2)
        .flat_map(|(_, named)| named)
        .any(|value| quotes(quoted, value));
    if picked {
        return None;
    }
    header.iter().zip(&columns).find_map(|(name, (distinct, named))| match named.as_slice() {
        [one] if *distinct >= 2 => Some(format!(
            "the task names {one:?}, a value of column {name:?} of {path}, and the program holds no string with it: it takes the rows of every {name}, not only those of {one:?} (compare the column with {one:?}, in any capitals)"
        )),
        _ => None,
    })
}

/// Whether a program (`code`) that changes the file at `path` edits it as
/// text, finding the record by its line: a TOML, YAML or XML file it reads
/// through no parser. Such a file is left out of [`ignored`]'s tables
/// (Python cannot write TOML, and a program that replaces
/// `course_time_seconds = 41` names no record). One it loads picks its
/// record by a value or by a place: on held-out-51 (spent) a program set
/// `data['tanks'][1]['salinity_ppt']`, tank A2's, for "tank B2".
pub(crate) fn edited_as_text(path: &str, code: &str) -> bool {
    let marked = [".toml", ".yaml", ".yml", ".xml"].iter().any(|ext| path.ends_with(ext));
    // Read with its strings taken out: a file's own name (`'trial.toml'`)
    // is no parser.
    let bare: String = code
        .lines()
        .map(|line| crate::text::quotes_apart(line).0)
        .collect::<Vec<_>>()
        .join("\n");
    let parsers = [
        "yaml",
        "toml",
        "tomli",
        "ruamel",
        "ElementTree",
        "etree",
        "minidom",
        "xmltodict",
    ];
    let parsed = parsers.iter().any(|parser| {
        bare.contains(&format!("import {parser}"))
            || bare.contains(&format!("{parser}."))
            || bare.contains(&format!("{parser} import"))
    });
    marked && !parsed
}

/// The lists of records in a structured `text` (JSON, or TOML or YAML
/// by `path`'s extension), each as a table: the keys with a plain value
/// (text, number, true or false) in any record, in the order first met,
/// and each record's values of them. On held-out-44 (spent) two programs
/// took `data['members'][4]['phone']` for "our caller's phone", where the
/// members' `role` holds `caller` once, and agreed on the drummer's; on
/// held-out-46 (spent) two took `classes[2]` of trial.toml's
/// `[[classes]]` for "the course time for Agility Grade 4", and agreed on
/// the Jumping class's.
fn records(path: &str, text: &str) -> Vec<(Vec<String>, crate::file_shape::Rows)> {
    fn walk(value: &serde_json::Value, found: &mut Vec<(Vec<String>, crate::file_shape::Rows)>) {
        match value {
            serde_json::Value::Array(items) => {
                let records: Vec<&serde_json::Map<String, serde_json::Value>> =
                    items.iter().filter_map(serde_json::Value::as_object).collect();
                if records.len() >= 2 && records.len() == items.len() {
                    found.push(as_table(&records));
                }
                items.iter().for_each(|item| walk(item, found));
            }
            serde_json::Value::Object(fields) => fields.values().for_each(|field| walk(field, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    if path.to_ascii_lowercase().ends_with(".xml") {
        return xml_records(text);
    }
    if let Some(value) = structured(path, text) {
        walk(&value, &mut found);
    }
    found
}

/// The elements of an XML `text` with attributes, as records: for each
/// name two elements or more have, a table of their attributes. On
/// held-out-49 (spent) a program took the first `<method>` of the EU
/// zone for "express shipping to the EU zone", where the methods'
/// `name` holds `express`, and two programs agreed on the standard price.
fn xml_records(text: &str) -> Vec<(Vec<String>, crate::file_shape::Rows)> {
    static TAG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"<([A-Za-z_][\w.:-]*)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))+)\s*/?>"#)
            .expect("a valid pattern")
    });
    static ATTRIBUTE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')"#).expect("a valid pattern")
    });
    static ASIDE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?s)<!--.*?-->|<!\[CDATA\[.*?\]\]>").expect("a valid pattern"));
    // A commented-out element is no record.
    let text = ASIDE.replace_all(text, " ");
    let mut by_name: Vec<(&str, Vec<serde_json::Map<String, serde_json::Value>>)> = Vec::new();
    for tag in TAG.captures_iter(&text) {
        let (Some(name), Some(attributes)) = (tag.get(1), tag.get(2)) else {
            continue;
        };
        let record: serde_json::Map<String, serde_json::Value> = ATTRIBUTE
            .captures_iter(attributes.as_str())
            .filter_map(|a| {
                let value = a.get(2).or_else(|| a.get(3))?.as_str();
                Some((a.get(1)?.as_str().to_string(), serde_json::Value::from(value)))
            })
            .collect();
        match by_name.iter_mut().find(|(n, _)| *n == name.as_str()) {
            Some((_, records)) => records.push(record),
            None => by_name.push((name.as_str(), vec![record])),
        }
    }
    by_name
        .iter()
        .filter(|(_, records)| records.len() >= 2)
        .map(|(_, records)| as_table(&records.iter().collect::<Vec<_>>()))
        .collect()
}

/// `text` parsed as the structured file `path`'s extension says (TOML,
/// YAML), else as JSON; `None` when it is none of them.
pub(crate) fn structured(path: &str, text: &str) -> Option<serde_json::Value> {
    let extension = path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase());
    match extension.as_deref() {
        Some("toml") => toml::from_str(text).ok(),
        Some("yaml" | "yml") => serde_norway::from_str(text).ok(),
        _ => serde_json::from_str(text).ok(),
    }
}

/// `records` as a table: their keys of plain values, and their values.
fn as_table(records: &[&serde_json::Map<String, serde_json::Value>]) -> (Vec<String>, crate::file_shape::Rows) {
    let plain = |value: &serde_json::Value| match value {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => Some(value.to_string()),
        _ => None,
    };
    let mut header: Vec<String> = Vec::new();
    for (key, value) in records.iter().flat_map(|record| record.iter()) {
        if plain(value).is_some() && !header.contains(key) {
            header.push(key.clone());
        }
    }
    let rows = records
        .iter()
        .enumerate()
        .map(|(at, record)| {
            let fields = header
                .iter()
                .map(|key| record.get(key).and_then(plain).unwrap_or_default());
            (at, fields.collect())
        })
        .collect();
    (header, rows)
}

/// The distinct values of `column` in `rows`, in small letters, trimmed:
/// not numbers, not shorter than [`SHORTEST`].
fn column_values(rows: &crate::file_shape::Rows, column: usize) -> BTreeSet<String> {
    rows.iter()
        .filter_map(|(_, fields)| fields.get(column))
        .map(|value| value.trim().to_lowercase())
        .filter(|value| value.chars().count() >= SHORTEST && crate::content::number(value).is_none())
        .filter(|value| value.chars().any(char::is_alphabetic))
        .collect()
}

/// Whether `task` (in small letters) names `value`, as a whole word or
/// without a plural's `s` ("tomato" names "tomatoes").
pub(crate) fn names(task: &str, value: &str) -> bool {
    crate::text::contains_whole(task, value) || crate::text::contains_whole(task, stem(value))
}

/// Whether the string literals of a program (`quoted`, one a line, in
/// small letters) hold `value`, or a part of it a filter may compare with
/// (`l.startswith('oat')` for "oat milk").
fn quotes(quoted: &str, value: &str) -> bool {
    quoted.contains(stem(value))
        || quoted
            .lines()
            .map(str::trim)
            .any(|literal| literal.chars().count() >= SHORTEST && value.contains(literal))
}

/// `value` without the `s` of a plural, when long enough to have one.
fn stem(value: &str) -> &str {
    match value.strip_suffix("es").or_else(|| value.strip_suffix('s')) {
        Some(stem) if value.chars().count() >= 5 => stem,
        _ => value,
    }
}

/// The string literals of `code` (Python), comments aside, each trimmed
/// and in small letters.
pub(crate) fn literals(code: &str) -> Vec<String> {
    quoted_in(code)
        .to_lowercase()
        .lines()
        .map(|literal| literal.trim().to_string())
        .collect()
}

/// The text of every string literal in `code` (Python), comments aside,
/// one after another: what a program can compare a cell with.
fn quoted_in(code: &str) -> String {
    code.lines()
        .map(crate::typed_value::without_comment)
        .flat_map(|line| crate::text::quotes_apart(line).1)
        .map(|string| string + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HARVEST: &str = "date,crop,kg\n2024-07-02,tomatoes,1.2\n2024-07-02,courgettes,2.5\n# scale recalibrated\n2024-07-06,Tomatoes,0.8\n2024-07-09,beans,0.6\n";
    const TASK: &str =
        "How many kilos of tomatoes have I picked? It's in harvest.csv. Put just the number in total.txt.";

    fn flaw(code: &str, task: &str) -> Option<String> {
        ignored(code, task, &[("harvest.csv", HARVEST)])
    }

    #[test]
    fn a_program_that_sums_every_crop_ignores_the_one_the_task_names() {
        let code = "import csv\n# the weight of tomatoes\ntotal_tomato_weight = sum(float(r['kg']) for r in rows)\n";
        let said = flaw(code, TASK).expect("no string holds tomatoes");
        assert!(said.contains("\"tomatoes\"") && said.contains("\"crop\""), "{said}");
    }

    #[test]
    fn a_program_that_compares_the_column_with_the_value_does_not() {
        assert_eq!(flaw("if r['crop'].lower() == 'tomatoes':\n    t += 1", TASK), None);
        assert_eq!(flaw("if 'tomato' in r[\"crop\"].lower():\n    t += 1", TASK), None);
        assert_eq!(
            flaw("if r['crop'] == 'tomatoes':", &TASK.replace("tomatoes", "tomato")),
            None
        );
        assert_eq!(
            flaw("if r['crop'].startswith('toma'):", TASK),
            None,
            "a part of the value"
        );
    }

    #[test]
    fn a_task_that_names_no_value_or_two_of_one_column_is_left_alone() {
        let sum_all = "total = sum(float(r['kg']) for r in rows)";
        assert_eq!(flaw(sum_all, "What did I pick in total? harvest.csv has it all."), None);
        assert_eq!(
            flaw(sum_all, "Tomatoes and beans: how many kilos? See harvest.csv."),
            None
        );
        // The column's own name is no row's value.
        assert_eq!(flaw(sum_all, "Sum the kg of every crop in harvest.csv."), None);
    }

    #[test]
    fn rows_picked_by_another_value_the_task_names_are_picked() {
        let horses = "name,breed,status\nBiscuit,Welsh Cob,active\nClover,Connemara,active\nHazel,Highland,resting\n";
        let task = "Biscuit has retired. In horses.csv, change his status from active to retired.";
        let by_name = "for row in rows:\n    if row['name'] == 'Biscuit':\n        row['status'] = 'retired'";
        assert_eq!(ignored(by_name, task, &[("horses.csv", horses)]), None);
        let every_row = "for row in rows:\n    row['status'] = 'retired'";
        let said = ignored(every_row, task, &[("horses.csv", horses)]).expect("no row is picked");
        assert!(said.contains("\"biscuit\"") || said.contains("\"active\""), "{said}");
    }

    #[test]
    fn a_record_of_a_json_list_taken_by_its_place_ignores_the_value_the_task_names() {
        let task = "Can you find our caller's phone number in band.json and save it to caller_phone.txt?";
        let band = r#"{"band": "Reelers", "members": [
            {"name": "Ann", "role": "fiddle", "phone": "1"},
            {"name": "Bea", "role": "caller", "phone": "2"},
            {"name": "Cal", "role": "drums", "phone": "3"}]}"#;
        let by_place = "import json\nd = json.load(open('band.json'))\nprint(d['members'][2]['phone'])";
        let said = ignored(by_place, task, &[("band.json", band)]).expect("the caller is not picked");
        assert!(said.contains("\"caller\", a value of column \"role\""), "{said}");
        let by_role = "import json\nd = json.load(open('band.json'))\nprint([m for m in d['members'] if m['role'] == 'caller'][0]['phone'])";
        assert_eq!(ignored(by_role, task, &[("band.json", band)]), None);
    }

    #[test]
    fn the_name_of_a_file_the_task_names_is_no_comparison_with_a_value() {
        let task =
            "What's the email address of the U14 team's coach in club.json? Write just the address to u14_coach.txt.";
        let club = r#"{"teams": [
            {"name": "U16", "coach": {"email": "a@x.org"}},
            {"name": "U14", "coach": {"email": "b@x.org"}},
            {"name": "U12", "coach": {"email": "c@x.org"}}]}"#;
        let by_place = "import json\nd = json.load(open('club.json'))\nopen('u14_coach.txt', 'w').write(d['teams'][2]['coach']['email'])";
        let said = ignored(by_place, task, &[("club.json", club)]).expect("the team is not picked");
        assert!(said.contains("\"u14\""), "{said}");
        let by_name = "import json\nd = json.load(open('club.json'))\nt = [t for t in d['teams'] if t['name'] == 'U14'][0]\nopen('u14_coach.txt', 'w').write(t['coach']['email'])";
        assert_eq!(ignored(by_name, task, &[("club.json", club)]), None);
    }

    #[test]
    fn elements_of_an_xml_file_are_records_of_their_attributes() {
        let shop = r#"<shop><shipping>
            <zone id="uk"><method name="standard" price="4.95"/><method name="express" price="9.50"/></zone>
            <zone id="eu"><method name='standard' price='12.00'/><method name='express' price='24.50'/></zone>
        </shipping></shop>"#;
        let task = "According to shop.xml, how much does express shipping to the EU zone cost? Just tell me the price.";
        let first = "import xml.etree.ElementTree as ET\nr = ET.parse('shop.xml').getroot()\nfor z in r.iter('zone'):\n    if z.get('id') == 'eu':\n        print(z.find('method').get('price'))";
        let said = ignored(first, task, &[("shop.xml", shop)]).expect("express is not picked");
        assert!(said.contains("\"express\", a value of column \"name\""), "{said}");
        let by_name = first.replace("z.find('method')", "z.find(\"method[@name='express']\")");
        assert_eq!(ignored(&by_name, task, &[("shop.xml", shop)]), None);
        // A commented-out element is no record: one `<logger>` is no table.
        let log =
            r#"<config><!-- <logger name="web" level="debug"/> --><logger name="billing" level="warn"/></config>"#;
        let task = "What level is the billing logger at in log.xml? Write it to level.txt.";
        assert_eq!(ignored("print(1)", task, &[("log.xml", log)]), None);
    }

    #[test]
    fn a_file_name_a_table_holds_is_still_a_comparison() {
        let servers = "host,ip\nweb1.lan,10.0.0.5\ndb1.lan,10.0.0.9\n";
        let task = "What's the IP of db1.lan in servers.csv? Write it to ip.txt.";
        let by_host = "import csv\nfor r in csv.DictReader(open('servers.csv')):\n    if r['host'] == 'db1.lan':\n        open('ip.txt', 'w').write(r['ip'])";
        assert_eq!(ignored(by_host, task, &[("servers.csv", servers)]), None);
    }

    #[test]
    fn a_program_that_never_reads_a_flag_column_the_task_says_is_found_out() {
        let sponsors = "sponsor,rider,pledged,received\nAunt Judith,Sam,50,yes\nHalton Garage,Sam,150,yes\nMr Patel,Sam,25,no\nDr Okafor,Leah,30,no\n";
        let task = "sponsors.csv lists who sponsored us, what they pledged and whether it has come in. What share of the target have we actually received so far? Write it to share.txt.";
        let tables = [("sponsors.csv", sponsors)];
        let summed = "import csv\nrows = list(csv.DictReader(open('sponsors.csv')))\nprint(sum(float(r['pledged']) for r in rows) / 2500 * 100)";
        let flaw = flag_ignored(summed, task, &tables, &["21.6"]).expect("the flag is unread");
        assert!(
            flaw.starts_with("the task says \"received\", a column of sponsors.csv whose rows hold \"no\" or \"yes\", and the program never reads it"),
            "{flaw}"
        );
        let filtered = "import csv\nrows = list(csv.DictReader(open('sponsors.csv')))\nprint(sum(float(r['pledged']) for r in rows if r['received'] == 'yes') / 2500 * 100)";
        assert_eq!(flag_ignored(filtered, task, &tables, &[]), None);
        let by_place = "import csv\nrows = list(csv.reader(open('sponsors.csv')))[1:]\nprint(sum(float(r[2]) for r in rows) / 2500 * 100)";
        assert_eq!(
            flag_ignored(by_place, task, &tables, &[]),
            None,
            "a program reading by places quotes no name"
        );
        let copied = "sponsor,rider,pledged,received\nHalton Garage,Sam,150,yes\n";
        assert_eq!(
            flag_ignored(summed, task, &tables, &[copied]),
            None,
            "rows copied whole carry the column"
        );
        let layouts = "layout,gauge,needs_mains\nLittle Pentre,N,yes\nTiny Tramway,N,no\nDockside,OO,yes\n";
        let counted = "import csv\nprint(sum(1 for r in csv.DictReader(open('layouts.csv')) if r['gauge'] == 'N'))";
        let asked = "how many of the N gauge layouts need mains power? Write it to n.txt.";
        assert!(
            flag_ignored(counted, asked, &[("layouts.csv", layouts)], &["2"]).is_some(),
            "a name of two words is said by them"
        );
        let unsaid = "What share of the target was pledged? Write it to share.txt.";
        assert_eq!(
            flag_ignored(summed, unsaid, &tables, &[]),
            None,
            "the task does not say the column"
        );
    }

    #[test]
    fn a_value_of_a_column_of_one_value_picks_no_row() {
        let task = "How many kilos of tomatoes did the allotment pick? harvest.csv. Put the number in total.txt.";
        let one_plot = "plot,crop,kg\nallotment,tomatoes,1.2\nallotment,beans,0.8\n";
        let said = ignored("if plot == 'allotment': t += kg", task, &[("harvest.csv", one_plot)]);
        assert!(said.is_some_and(|said| said.contains("\"tomatoes\"")));
    }

    #[test]
    fn a_column_of_one_value_is_no_filter() {
        let only = "date,crop,kg\n2024-07-02,tomatoes,1.2\n2024-07-06,tomatoes,0.8\n";
        assert_eq!(ignored("t = 0", TASK, &[("harvest.csv", only)]), None);
    }

    #[test]
    fn a_structured_file_is_edited_as_text_only_when_no_parser_reads_it() {
        let replaced = "text = open('tanks.yaml').read().replace('salinity_ppt: 28', 'salinity_ppt: 31')";
        let loaded = "import yaml\ndata = yaml.safe_load(open('tanks.yaml'))\ndata['tanks'][1]['salinity_ppt'] = 31";
        assert!(edited_as_text("tanks.yaml", replaced));
        assert!(!edited_as_text("tanks.yaml", loaded));
        assert!(!edited_as_text("tanks.csv", replaced), "a table is no structured file");
        assert!(!edited_as_text("show.xml", "import xml.etree.ElementTree as ET"));
        let toml_text =
            "t = open('trial.toml').read().replace('time = 41', 'time = 45')\nopen('trial.toml', 'w').write(t)";
        assert!(edited_as_text("trial.toml", toml_text), "the file's name is no parser");
        assert!(!edited_as_text(
            "trial.toml",
            "import tomllib\nd = tomllib.load(open('trial.toml', 'rb'))"
        ));
        assert!(!edited_as_text("a.yaml", "from ruamel.yaml import YAML"));
    }

    #[test]
    fn a_table_of_a_toml_or_yaml_list_taken_by_its_place_ignores_the_value_the_task_names() {
        let task = "What's the course time for Agility Grade 4 in trial.toml? Write just the number of seconds to course_time.txt.";
        let trial = "[trial]\nname = \"Summer Show\"\n\n[[classes]]\nname = \"Jumping Grade 1\"\ncourse_time_seconds = 52\n\n[[classes]]\nname = \"Agility Grade 4\"\ncourse_time_seconds = 41\n\n[[classes]]\nname = \"Jumping Grade 4\"\ncourse_time_seconds = 38\n";
        let by_place = "import tomllib\nd = tomllib.load(open('trial.toml', 'rb'))\nopen('course_time.txt', 'w').write(str(d['classes'][2]['course_time_seconds']))";
        let said = ignored(by_place, task, &[("trial.toml", trial)]).expect("the class is not picked");
        assert!(said.contains("\"agility grade 4\""), "{said}");
        let by_name = "import tomllib\nd = tomllib.load(open('trial.toml', 'rb'))\nc = [c for c in d['classes'] if c['name'] == 'Agility Grade 4'][0]";
        assert_eq!(ignored(by_name, task, &[("trial.toml", trial)]), None);
        let yaml = "classes:\n  - name: Jumping Grade 1\n    course_time_seconds: 52\n  - name: Agility Grade 4\n    course_time_seconds: 41\n";
        let task = task.replace("trial.toml", "trial.yaml");
        assert!(
            ignored(by_place, &task, &[("trial.yaml", yaml)]).is_some(),
            "the same list in YAML"
        );
    }
}
