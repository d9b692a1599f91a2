//! The columns a task lists for a table it writes, held against the header
//! a program wrote: a column the list leaves out is not asked for.
//!
//! On held-out-44 (spent) "make scents.csv with the columns scent,
//! burn_hours, price" was written by two programs, which agreed, with a
//! fourth column, `wax`, that the INI held too, and the run said
//! `succeeded`. A task that lists columns one after another (commas, `and`,
//! quotes between them and nothing else) says which columns it wants; one
//! that names columns in a sentence ("a total column, qty times price")
//! lists nothing, and is left alone. Nothing here is keyed to how a task is
//! worded beyond that: the columns are the header's own names.

/// Words that may stand between two columns of a list, beside commas,
/// quotes and spaces.
const JOINING: [&str; 2] = ["and", "&"];

/// What is said of `text`, a new table at `path`, whose header holds a
/// column beside those `task` lists for it, when it lists two or more. A
/// column the task names elsewhere is asked for ("add a total column"),
/// and a header made of the columns of the tables it read (`inputs`: path
/// and text) is rows copied whole, as a sort, a dedupe or a join writes.
pub(crate) fn unlisted(path: &str, text: &str, task: &str, inputs: &[(&str, &str)]) -> Option<String> {
    let extension = std::path::Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    if !matches!(extension.as_str(), "csv" | "tsv") {
        return None;
    }
    let (header, _) = crate::file_shape::table_cells(text)?;
    let header: Vec<String> = header
        .iter()
        .map(|name| name.trim_start_matches('\u{feff}').trim().to_string())
        .collect();
    let read: Vec<String> = inputs
        .iter()
        .filter_map(|(_, text)| crate::file_shape::table_cells(text))
        .flat_map(|(names, _)| names)
        .map(|name| name.trim_start_matches('\u{feff}').trim().to_lowercase())
        .collect();
    if header.iter().all(|name| read.contains(&name.to_lowercase())) {
        return None;
    }
    let listed = listed_columns(&header, task)?;
    let lower_task = task.to_lowercase();
    let extra: Vec<&str> = header
        .iter()
        .filter(|name| !name.is_empty() && !listed.contains(name))
        .filter(|name| whole_at(&lower_task, &name.to_lowercase()).is_none())
        .map(String::as_str)
        .collect();
    (!extra.is_empty()).then(|| {
        format!(
            "{path}'s header has {}, beside the columns the task lists ({}): write only the columns the task lists",
            extra
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", "),
            listed.join(", ")
        )
    })
}

/// The longest run of `header`'s columns that `task` lists one after
/// another, when two or more.
fn listed_columns(header: &[String], task: &str) -> Option<Vec<String>> {
    let task = task.to_lowercase();
    let mut names: Vec<&String> = Vec::new();
    for name in header.iter().filter(|name| !name.is_empty()) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let mut found: Vec<(usize, usize, &String)> = names
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let at = whole_at(&task, &lower)?;
            Some((at, at + lower.len(), name))
        })
        .collect();
    found.sort();
    let mut best: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let mut end = 0;
    for (start, stop, name) in found {
        // A name found inside the last one (`price` in `unit price`) stands
        // in no list of its own.
        let Some(between) = task.get(end..start).filter(|_| start >= end) else {
            continue;
        };
        if run.is_empty() || !only_joining(between) {
            run.clear();
        }
        run.push(name.clone());
        end = stop;
        if run.len() > best.len() {
            best = run.clone();
        }
    }
    (best.len() >= 2).then_some(best)
}

/// Where `part` first stands in `text` as a whole word: not inside a
/// longer word or number.
fn whole_at(text: &str, part: &str) -> Option<usize> {
    let inner = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(part)
        .map(|(at, _)| at)
        .find(|&at| !inner(text[..at].chars().next_back()) && !inner(text[at + part.len()..].chars().next()))
}

/// Whether `between` holds only what joins two items of a list.
fn only_joining(between: &str) -> bool {
    between
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '`' | '"' | '\'' | '/'))
        .filter(|word| !word.is_empty())
        .all(|word| JOINING.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "Make scents.csv with the columns scent, burn_hours, price (header row first).";

    #[test]
    fn a_column_beside_those_the_task_lists_is_said() {
        let written = "scent,burn_hours,price,wax\nfig,40,12.5,soy\npine,30,9,paraffin\n";
        let said = unlisted("scents.csv", written, TASK, &[]).expect("wax is not listed");
        assert!(
            said.contains("has `wax`, beside the columns the task lists (scent, burn_hours, price)"),
            "{said}"
        );
        assert_eq!(
            unlisted(
                "scents.csv",
                "scent,burn_hours,price\nfig,40,12.5\npine,30,9\n",
                TASK,
                &[]
            ),
            None
        );
    }

    #[test]
    fn columns_named_in_a_sentence_are_no_list() {
        let task = "Copy orders.csv to totals.csv with a total column: qty times price.";
        let written = "item,qty,price,total\npen,2,1.5,3\nink,1,4,4\n";
        assert_eq!(unlisted("totals.csv", written, task, &[]), None);
        // One column named is no list either.
        let task = "Sort launches.csv by apogee_m into sorted.csv.";
        assert_eq!(unlisted("sorted.csv", "name,apogee_m\na,3\nb,2\n", task, &[]), None);
        // Nor is a file that is no table.
        assert_eq!(unlisted("scents.json", "{}", TASK, &[]), None);
    }

    #[test]
    fn rows_copied_whole_names_inside_names_and_repeats_are_no_extra_column() {
        // A sort "by city and age" writes every column of the table it read.
        let people = "name,city,age\nAnn,Leeds,30\nBo,York,41\n";
        let task = "Sort people.csv by city and age into sorted.csv.";
        assert_eq!(unlisted("sorted.csv", people, task, &[("people.csv", people)]), None);
        // `price` inside `unit_price`, a repeated column: no panic, and
        // `total`, which the task names, is asked for.
        let task = "Write priced.csv with the columns item, unit_price, qty and price, and a total column.";
        let written = "item,unit_price,qty,price,total,item\npen,1,2,2,2,pen\nink,2,1,2,2,ink\n";
        assert_eq!(unlisted("priced.csv", written, task, &[]), None);
        let written = "\u{feff}item,unit_price,qty,price,note\npen,1,2,2,x\nink,2,1,2,y\n";
        let said = unlisted("priced.csv", written, task, &[]).expect("note is not listed");
        assert!(
            said.contains("has `note`, beside the columns the task lists (item, unit_price, qty, price)"),
            "{said}"
        );
    }

    #[test]
    fn a_list_joined_by_and_or_quotes_is_a_list() {
        let task = "Write unpaid.csv with `date`, `name` and `amount` for the unpaid visits.";
        let written = "date,name,amount,paid\n2024-01-02,Ann,12,no\n2024-01-03,Bo,9,no\n";
        let said = unlisted("unpaid.csv", written, task, &[]).expect("paid is not listed");
        assert!(said.contains("has `paid`"), "{said}");
    }
}
