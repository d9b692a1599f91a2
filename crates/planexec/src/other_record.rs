//! Whether an edit in place changed a record the task does not name and
//! left the one it names as it was: the records of a list in a JSON, YAML
//! or TOML file, or the rows of a table, told apart by a value the task
//! names as a word (`Miso`, a cat's `name`).
//!
//! On held-out-52 (spent) both of the 1.5B model's programs for "cut
//! Miso's evening meal from 40 g to 35 g in feeder.json" looped over the
//! cats to find Miso and then changed `cat['meals'][1]` after the loop,
//! where `cat` was the last cat, Pickle: they agreed, and the run said
//! `succeeded` with Pickle's lunch at 35 g and Miso's supper at 40 g. No
//! model reads the task here: the evidence is which record the edit
//! changed, beside the values each record holds.

use serde_json::{Map, Value};

/// The flaw, said for the program or the run, when the edit of the file at
/// `path` from `was` to `now` changed one record of a list of two records
/// or more (an object of a JSON, YAML or TOML list, or a table's row), and
/// no value of that record is one `task` names, where another record of
/// the list, left as it was, holds such a value in a field of its own.
pub(crate) fn changed_unnamed(path: &str, was: &str, now: &str, task: &str) -> Option<String> {
    let (before, after) = (records_of(path, was)?, records_of(path, now)?);
    let task = task.to_lowercase();
    let mut place = Vec::new();
    other_record(&before, &after, &task, &mut place).map(|said| format!("{path}: {said}"))
}

/// The file `text` at `path` as a value: a table's rows as objects keyed
/// by its header, else the structured file its extension says.
fn records_of(path: &str, text: &str) -> Option<Value> {
    let extension = path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase());
    if !matches!(extension.as_deref(), Some("csv" | "tsv")) {
        return crate::named_value::structured(path, text);
    }
    let (header, rows) = crate::file_shape::table_cells(text)?;
    let records = rows
        .into_iter()
        .map(|(_, cells)| {
            let fields = header
                .iter()
                .zip(cells)
                .map(|(name, cell)| (name.clone(), Value::String(cell)));
            Value::Object(fields.collect())
        })
        .collect();
    Some(Value::Array(records))
}

/// The first list under `before` (at `place`) whose one changed record in
/// `after` no value `task` names picks out, and another record does: said.
/// Lists whose length changed, and objects' keys not in both, are not read.
fn other_record(before: &Value, after: &Value, task: &str, place: &mut Vec<String>) -> Option<String> {
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => old.iter().find_map(|(key, value)| {
            place.push(format!(".{key}"));
            let found = new.get(key).and_then(|again| other_record(value, again, task, place));
            place.pop();
            found
        }),
        (Value::Array(old), Value::Array(new)) if old.len() == new.len() => {
            if let Some(said) = in_list(old, new, task, place) {
                return Some(said);
            }
            old.iter().zip(new).enumerate().find_map(|(i, (value, again))| {
                place.push(format!("[{i}]"));
                let found = other_record(value, again, task, place);
                place.pop();
                found
            })
        }
        _ => None,
    }
}

/// [`other_record`] for the list `old`, now `new`, of records (objects).
fn in_list(old: &[Value], new: &[Value], task: &str, place: &[String]) -> Option<String> {
    let records: Vec<&Map<String, Value>> = old.iter().filter_map(Value::as_object).collect();
    if records.len() < 2 || records.len() != old.len() {
        return None;
    }
    let changed: Vec<usize> = (0..old.len()).filter(|&i| old[i] != new[i]).collect();
    let [changed] = changed[..] else {
        return None;
    };
    let named = |record: &'_ Map<String, Value>| {
        named_field(record, &records, task).map(|(k, v)| (k.to_string(), v.to_string()))
    };
    let now = new[changed].as_object()?;
    if named(records[changed]).is_some() || named(now).is_some() {
        return None;
    }
    // A field the edit changed is what it set, not what picks the record.
    let set = |key: &str| records[changed].get(key) != now.get(key);
    let (other, (key, value)) = (0..records.len())
        .filter(|&i| i != changed)
        .find_map(|i| named(records[i]).filter(|(key, _)| !set(key)).map(|field| (i, field)))?;
    let list = match place.concat() {
        list if list.is_empty() => "the list".to_string(),
        list => list.trim_start_matches('.').to_string(),
    };
    Some(format!(
        "the edit changed record {} of {list}{}, which the task does not name, and left record {} ({key}: {value}), which it names, as it was: change the record the task names",
        changed + 1,
        described(records[changed]),
        other + 1
    ))
}

/// The first field of `record` whose text (three letters or more) `task`
/// names as a word, in a column that tells every one of `records` apart
/// (a name, not a status two records share): a value that picks the
/// record out.
fn named_field<'a>(
    record: &'a Map<String, Value>,
    records: &[&Map<String, Value>],
    task: &str,
) -> Option<(&'a str, &'a str)> {
    record.iter().find_map(|(key, value)| {
        let text = value.as_str()?.trim();
        let letters = text.chars().filter(|c| c.is_alphabetic()).count() >= 3;
        let named = letters && tells_apart(key, records) && crate::text::contains_whole(task, &text.to_lowercase());
        named.then_some((key.as_str(), text))
    })
}

/// Whether every one of `records` holds a text under `key`, each another.
fn tells_apart(key: &str, records: &[&Map<String, Value>]) -> bool {
    let texts: Option<Vec<String>> = records
        .iter()
        .map(|record| record.get(key)?.as_str().map(|text| text.trim().to_lowercase()))
        .collect();
    texts.is_some_and(|texts| texts.iter().collect::<std::collections::HashSet<_>>().len() == texts.len())
}

/// ` (key: text)` of the first text field of `record`, or nothing.
fn described(record: &Map<String, Value>) -> String {
    record
        .iter()
        .find_map(|(key, value)| {
            value
                .as_str()
                .map(|text| format!(" ({key}: {})", crate::text::one_line(text, 40)))
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FEEDER: &str = r#"{
  "cafe": "Whiskers & Co",
  "cats": [
    {"name": "Biscuit", "bowl": 1, "meals": [{"time": "07:30", "portion_g": 45}, {"time": "18:00", "portion_g": 40}]},
    {"name": "Miso", "bowl": 2, "meals": [{"time": "07:30", "portion_g": 40}, {"time": "18:00", "portion_g": 40}]},
    {"name": "Pickle", "bowl": 3, "meals": [{"time": "07:30", "portion_g": 35}, {"time": "12:30", "portion_g": 15}]}
  ]
}"#;
    const TASK: &str =
        "The vet wants Miso's evening meal cut from 40 g to 35 g. Please change that portion in feeder.json.";

    #[test]
    fn an_edit_of_another_record_than_the_one_the_task_names_is_said() {
        let wrong = FEEDER.replace(r#""12:30", "portion_g": 15"#, r#""12:30", "portion_g": 35"#);
        let said = changed_unnamed("feeder.json", FEEDER, &wrong, TASK).expect("Pickle's meal was changed");
        assert!(
            said.starts_with("feeder.json: the edit changed record 3 of cats (name: Pickle), which the task does not name, and left record 2 (name: Miso)"),
            "{said}"
        );
        let right = FEEDER.replace(
            r#""18:00", "portion_g": 40}]},
    {"name": "Pickle""#,
            r#""18:00", "portion_g": 35}]},
    {"name": "Pickle""#,
        );
        assert_ne!(right, FEEDER);
        assert_eq!(changed_unnamed("feeder.json", FEEDER, &right, TASK), None);
    }

    #[test]
    fn a_table_row_and_a_yaml_record_are_records_too() {
        let table = "cat,bowl,portion_g\nBiscuit,1,45\nMiso,2,40\nPickle,3,15\n";
        let wrong = table.replace("Pickle,3,15", "Pickle,3,35");
        assert!(changed_unnamed("feeder.csv", table, &wrong, TASK).is_some());
        assert_eq!(
            changed_unnamed("feeder.csv", table, &table.replace("Miso,2,40", "Miso,2,35"), TASK),
            None
        );
        let yaml = "cats:\n  - name: Miso\n    bowl: 2\n  - name: Pickle\n    bowl: 3\n";
        let moved = yaml.replace("bowl: 3", "bowl: 4");
        assert!(changed_unnamed("cats.yaml", yaml, &moved, "Move Miso to bowl 4 in cats.yaml.").is_some());
    }

    #[test]
    fn edits_the_task_does_not_pick_out_by_a_record_are_left_alone() {
        let table = "cat,bowl,portion_g\nBiscuit,1,45\nMiso,2,40\nPickle,3,15\n";
        let renamed = table.replace("Pickle,3", "Pumpkin,3");
        assert_eq!(
            changed_unnamed("feeder.csv", table, &renamed, "Rename Pickle to Pumpkin in feeder.csv."),
            None,
            "the changed record held the value the task names"
        );
        let two = table
            .replace("Biscuit,1,45", "Biscuit,1,50")
            .replace("Pickle,3,15", "Pickle,3,20");
        assert_eq!(
            changed_unnamed("feeder.csv", table, &two, TASK),
            None,
            "two records changed"
        );
        let bowl = table.replace("Pickle,3,15", "Pickle,3,20");
        assert_eq!(
            changed_unnamed(
                "feeder.csv",
                table,
                &bowl,
                "Give the cat in bowl 3 five grams more in feeder.csv."
            ),
            None,
            "no record is named by a word"
        );
        let shared = "cat,diet,g\nMiso,senior,40\nPickle,senior,30\n";
        let changed = shared.replace("Pickle,senior,30", "Pickle,senior,35");
        assert_eq!(
            changed_unnamed("diet.csv", shared, &changed, "Cut the senior diet to 35 g in diet.csv."),
            None,
            "a value every record holds picks none out"
        );
        let jobs = "id,job,status\n1,Paint fence,done\n2,Fix gate,todo\n3,Weed beds,todo\n";
        let done = jobs.replace("2,Fix gate,todo", "2,Fix gate,done");
        assert_eq!(
            changed_unnamed("jobs.csv", jobs, &done, "Mark job 2 as done in jobs.csv."),
            None,
            "a status two records share picks none out"
        );
        let added = format!("{table}Tofu,4,30\n");
        assert_eq!(changed_unnamed("feeder.csv", table, &added, TASK), None, "rows added");
    }
}
