//! A new table that keeps an input table's rows once each by one column's
//! cell, where the input repeats whole rows and holds rows that share that
//! cell and differ in others.
//!
//! On held-out-46 (spent) contacts.csv held each child's mum and dad on
//! rows of their own, and some rows pasted in twice; two of three programs
//! kept the first row of each child, dropped the dads, agreed, and the run
//! said `succeeded`. Taking a row once by one column is a task's to ask:
//! a task that names the column (a word of its header) may want it, and
//! is left alone. The evidence is all in the tables: the new one is
//! exactly the first row of each value of the column, the input repeats
//! whole rows, and rows it holds once, unlike any other row, are gone.

use crate::file_shape::table_cells;

/// The flaw, said for the program or the run, when the new table `text`
/// (at `path`) has the header of a table among `inputs` (path, text) and is
/// exactly that table's first row of each value of one column (cells
/// trimmed, in any capitals), while the input repeats a whole row and
/// holds a row unlike any other that the new table left out; `task` names
/// no word of the header of any column it could be kept by (held-out-45's
/// volunteers, spent: "each email address only once", where the first row
/// of each name is the first of each email too).
pub(crate) fn kept_by_one_column(path: &str, text: &str, task: &str, inputs: &[(&str, &str)]) -> Option<String> {
    let (header, written) = normal_table(text)?;
    inputs
        .iter()
        .filter(|(input, _)| *input != path)
        .find_map(|(input, held)| {
            let (input_header, rows) = normal_table(held)?;
            if input_header != header || rows.len() < 3 {
                return None;
            }
            let whole = first_of_each(&rows, |row| row.clone());
            let repeats = whole.len() < rows.len();
            if !repeats || written == whole {
                return None;
            }
            // Every column whose first rows the new table is: when the task
            // names one of them, that is the key it asked for.
            let columns: Vec<usize> = (0..header.len())
                .filter(|&c| written == first_of_each(&rows, |row| vec![row[c].clone()]))
                .collect();
            if columns.iter().any(|&c| names_column(task, &header[c])) {
                return None;
            }
            let column = *columns.first()?;
            let lost = whole.iter().find(|row| !written.contains(row))?;
            Some(format!(
                "{path} keeps one row of {input} for each {}, and leaves out `{}`, a row that is no repeat of another (it shares only its {} with a row kept): keep each row once as a whole, all of its cells compared",
                header[column],
                lost.join(","),
                header[column]
            ))
        })
}

/// `text` as a table: its header and rows, each cell trimmed and in small
/// letters, rows of the header's width only.
fn normal_table(text: &str) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let (header, rows) = table_cells(text)?;
    let normal = |cells: &[String]| -> Vec<String> { cells.iter().map(|c| c.trim().to_lowercase()).collect() };
    let header = normal(&header);
    let rows = rows
        .iter()
        .map(|(_, cells)| normal(cells))
        .filter(|cells| cells.len() == header.len() && *cells != header)
        .collect();
    Some((header, rows))
}

/// The first row of `rows` for each value `key` gives, in their order.
fn first_of_each(rows: &[Vec<String>], key: impl Fn(&Vec<String>) -> Vec<String>) -> Vec<Vec<String>> {
    let mut seen = std::collections::HashSet::new();
    rows.iter().filter(|row| seen.insert(key(row))).cloned().collect()
}

/// Whether `task` names a word of the column `name` (its parts between
/// `_`, `-` and spaces, three letters or more), as a word of its own or
/// its plural ("repeated emails" names `email`).
fn names_column(task: &str, name: &str) -> bool {
    let task = task.to_lowercase();
    name.split(['_', '-', ' '])
        .filter(|word| word.chars().count() >= 3)
        .any(|word| {
            [word.to_string(), format!("{word}s"), format!("{word}es")]
                .iter()
                .any(|w| crate::text::contains_whole(&task, w))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTACTS: &str = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nAlfie Brown,Mark Brown,0102\nBea Kaur,Harpreet Kaur,0215\nAlfie Brown,Sarah Brown,0101\nCody Walsh,Ann Walsh,0330\nBea Kaur,Harpreet Kaur,0215\nCody Walsh,Liam Walsh,0331\n";
    const TASK: &str = "contacts.csv has some rows pasted in twice. Write contacts_clean.csv with each row only once, keeping the first one and the original order, with the header row.";

    fn flaw(text: &str, task: &str) -> Option<String> {
        kept_by_one_column("contacts_clean.csv", text, task, &[("contacts.csv", CONTACTS)])
    }

    #[test]
    fn rows_kept_once_by_their_first_cell_are_a_flaw() {
        let by_child = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nBea Kaur,Harpreet Kaur,0215\nCody Walsh,Ann Walsh,0330\n";
        let said = flaw(by_child, TASK).expect("the dads are gone");
        assert!(said.contains("for each child") && said.contains("mark brown"), "{said}");
    }

    #[test]
    fn rows_kept_once_as_wholes_or_by_a_column_the_task_names_are_not() {
        let whole = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nAlfie Brown,Mark Brown,0102\nBea Kaur,Harpreet Kaur,0215\nCody Walsh,Ann Walsh,0330\nCody Walsh,Liam Walsh,0331\n";
        assert_eq!(flaw(whole, TASK), None);
        let by_child = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nBea Kaur,Harpreet Kaur,0215\nCody Walsh,Ann Walsh,0330\n";
        let task = "Some children are in contacts.csv twice: keep one contact per child in contacts_clean.csv.";
        assert_eq!(flaw(by_child, task), None);
        // The first row of each child is the first of each mum too: the task names that column.
        let task = "Keep one row per parent from contacts.csv in contacts_clean.csv.";
        let one_family = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nAlfie Brown,Sarah Brown,0101\nBea Kaur,Harpreet Kaur,0215\nBea Kaur,Harpreet Kaur,0216\n";
        let first = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nBea Kaur,Harpreet Kaur,0215\n";
        assert_eq!(
            kept_by_one_column("c.csv", first, task, &[("contacts.csv", one_family)]),
            None
        );
    }

    #[test]
    fn an_input_with_no_whole_repeats_or_a_filter_is_left_alone() {
        let no_repeats = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nAlfie Brown,Mark Brown,0102\nBea Kaur,Harpreet Kaur,0215\n";
        let first = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nBea Kaur,Harpreet Kaur,0215\n";
        let inputs = [("contacts.csv", no_repeats)];
        assert_eq!(kept_by_one_column("c.csv", first, TASK, &inputs), None);
        // Rows picked by a value: not the first of each value of any column.
        let mums = "child,parent,phone\nAlfie Brown,Sarah Brown,0101\nAlfie Brown,Sarah Brown,0101\n";
        assert_eq!(flaw(mums, TASK), None);
    }
}
