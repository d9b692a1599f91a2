//! The shape of a data file, for the planner's workspace listing: a JSON
//! file's field paths and a CSV file's columns, never their values.
//!
//! A planner that sees only `inventory.json (size 118 bytes)` guesses its
//! fields: the 1.5B model counted the items of a list where the task asked
//! for the sum of their `qty`, and read made-up fields when shown a worked
//! plan with one. The field paths are written as `read_json` takes them
//! (`items.qty` is every item's `qty`), so the plan can name a real one.

use serde_json::Value;

/// Largest file whose shape is read: a listing stays cheap to build.
const LARGEST_READ: u64 = 64 * 1024;

/// Most field paths shown for one JSON file.
const MOST_FIELDS: usize = 12;

/// How deep field paths go.
const DEEPEST: usize = 4;

/// `; JSON fields: …` or `; CSV columns: …` for the file at `path` of `size`
/// bytes, or `None` for other files, bigger ones and ones that do not parse.
pub(crate) fn shape_of(path: &std::path::Path, size: u64) -> Option<String> {
    if size > LARGEST_READ {
        return None;
    }
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    let text = std::fs::read_to_string(path).ok()?;
    match extension.as_str() {
        "json" => json_shape(&text),
        "csv" => csv_shape(&text, ','),
        "tsv" => csv_shape(&text, '\t'),
        _ => None,
    }
}

fn json_shape(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    match &value {
        Value::Object(_) => {
            let mut paths = Vec::new();
            let mut lists = Vec::new();
            field_paths(&value, "", 0, &mut paths, &mut lists);
            if paths.is_empty() {
                return None;
            }
            let more = paths.len().saturating_sub(MOST_FIELDS);
            paths.truncate(MOST_FIELDS);
            let mut out = format!("JSON fields: {}", paths.join(", "));
            if more > 0 {
                out.push_str(&format!(" and {more} more"));
            }
            if !lists.is_empty() {
                out.push_str(&format!(" ({})", lists.join(", ")));
            }
            Some(out)
        }
        Value::Array(items) => Some(format!("JSON: a list of {} items", items.len())),
        _ => None,
    }
}

/// The dotted paths of `value`'s leaves under `prefix`. A list's items share
/// one path (`items.qty`), as read_json reads them, and the list is noted in
/// `lists` with its length.
fn field_paths(value: &Value, prefix: &str, depth: usize, paths: &mut Vec<String>, lists: &mut Vec<String>) {
    let join = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match value {
        Value::Object(fields) if depth < DEEPEST => {
            for (key, inner) in fields {
                field_paths(inner, &join(key), depth + 1, paths, lists);
            }
        }
        Value::Array(items) if depth < DEEPEST && items.first().is_some_and(Value::is_object) && !prefix.is_empty() => {
            lists.push(format!("{prefix}: a list of {}", items.len()));
            let mut seen = serde_json::Map::new();
            for item in items.iter().take(3).filter_map(Value::as_object) {
                for (key, inner) in item {
                    seen.entry(key.clone()).or_insert_with(|| inner.clone());
                }
            }
            field_paths(&Value::Object(seen), prefix, depth, paths, lists);
        }
        _ if !prefix.is_empty() => paths.push(prefix.to_string()),
        _ => {}
    }
}

/// The header's column names, when the first line looks like one: more than
/// one field and none of them a number.
fn csv_shape(text: &str, separator: char) -> Option<String> {
    let header = text.lines().next()?.trim();
    let columns: Vec<&str> = header.split(separator).map(|c| c.trim().trim_matches('"')).collect();
    let is_name = |c: &&str| !c.is_empty() && c.parse::<f64>().is_err();
    if columns.len() < 2 || header.len() > 200 || !columns.iter().all(is_name) {
        return None;
    }
    Some(format!(
        "CSV columns: {} (the first line is the header)",
        columns.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_files_shape_is_its_field_paths_as_read_json_takes_them() {
        let inventory = r#"{"warehouse": "north", "items": [{"sku": "A1", "qty": 12}, {"sku": "B2", "qty": 7}]}"#;
        assert_eq!(
            json_shape(inventory).unwrap(),
            "JSON fields: warehouse, items.sku, items.qty (items: a list of 2)"
        );
        let nested = r#"{"database": {"host": "db", "port": 5432}, "debug": false}"#;
        assert_eq!(
            json_shape(nested).unwrap(),
            "JSON fields: database.host, database.port, debug"
        );
        assert_eq!(json_shape("[1, 2, 3]").unwrap(), "JSON: a list of 3 items");
        assert_eq!(json_shape("not json"), None);
        // No values are shown, only names.
        assert!(!json_shape(inventory).unwrap().contains("north"));
    }

    #[test]
    fn many_fields_are_cut_with_a_count_of_the_rest() {
        let fields: Vec<String> = (0..20).map(|i| format!("\"f{i:02}\": {i}")).collect();
        let shape = json_shape(&format!("{{{}}}", fields.join(", "))).unwrap();
        assert!(shape.starts_with("JSON fields: f00, f01,"), "{shape}");
        assert!(shape.ends_with("f11 and 8 more"), "{shape}");
    }

    #[test]
    fn a_csv_header_gives_the_columns_and_a_headless_file_gives_nothing() {
        let orders = "id,customer,amount\n101,Maya,20.00\n";
        assert_eq!(
            csv_shape(orders, ',').unwrap(),
            "CSV columns: id, customer, amount (the first line is the header)"
        );
        assert_eq!(csv_shape("101,Maya,20.00\n102,Leo,3\n", ','), None);
        assert_eq!(csv_shape("just one column\n", ','), None);
    }
}
