//! A count a run made of the different values of an input table's column
//! that counts one value written in other capitals or spaces as another
//! (`Merino` and `merino`), said as a fact with its other way: counted
//! as one value.
//!
//! On held-out-48 (spent) a fleece sale's breeds were written `Merino`,
//! `merino` and ` Merino `; two of the 1.5B model's programs counted the
//! different breeds with a set of the cells as written, agreed, and the
//! run said `succeeded`. Whether such spellings are one value is the
//! task's to say, so this is a choice the task is asked about, not a
//! finding. The count is found from the written number and the table
//! alone: a column whose different values, counted as written, are the
//! number, and counted casefolded with their spaces squeezed, are fewer.

use std::collections::BTreeSet;

use super::two_ways::TwoWays;

/// When `now`, a file the run made at `path` for `task`, holds just a
/// whole number that is how many different values a word column `task`
/// names, of one of `inputs` (path and text), holds counted as written
/// (or with the spaces at their ends trimmed), and fewer when one value
/// in other capitals or spaces counts as one: the first such column, and
/// the two ways the count could be. A column whose values are all
/// different is left alone (its count of values is its count of rows).
pub(crate) fn counted_apart_from(path: &str, now: &str, task: &str, inputs: &[(String, String)]) -> Option<TwoWays> {
    let count: usize = now.trim().parse().ok()?;
    let task = task.to_lowercase().replace(['_', '-'], " ");
    inputs
        .iter()
        .filter(|(input, _)| input != path)
        .find_map(|(input, text)| {
            let (header, rows) = crate::file_shape::table_cells(text)?;
            header.iter().enumerate().find_map(|(i, name)| {
                if !names_column(&task, name) {
                    return None;
                }
                let cells: Vec<&str> = rows
                    .iter()
                    .filter_map(|(_, row)| row.get(i).map(String::as_str))
                    .filter(|cell| !cell.trim().is_empty())
                    .collect();
                let spelled = Spellings::of(&cells)?;
                let [a, b] = spelled.pair(&cells, count)?;
                (spelled.folded < count).then(|| TwoWays {
                    text: format!(
                        "{count} in {path} is how many values column `{name}` of {input} holds when one written in other capitals or spaces counts as another (`{a}` and `{b}`); counted as one, it holds {}.\n\n",
                        spelled.folded
                    ),
                    question: format!("how are `{a}` and `{b}` in column `{name}` counted?"),
                    ways: [
                        format!("`{a}` and `{b}` counted as two ({count})"),
                        format!("`{a}` and `{b}` counted as one, the same written two ways ({})", spelled.folded),
                    ],
                })
            })
        })
}

/// How many different values a word column holds, counted three ways.
struct Spellings {
    exact: usize,
    trimmed: usize,
    folded: usize,
}

impl Spellings {
    /// The column of `cells` (its filled cells), when it holds words (no
    /// cell holds a digit: numbers, dates and codes are no words in
    /// capitals), repeats a value, and writes one value in two spellings.
    fn of(cells: &[&str]) -> Option<Spellings> {
        if cells.iter().any(|cell| cell.chars().any(|c| c.is_ascii_digit())) {
            return None;
        }
        let exact: BTreeSet<&str> = cells.iter().copied().collect();
        let trimmed: BTreeSet<&str> = cells.iter().map(|cell| cell.trim()).collect();
        let casefolded: BTreeSet<String> = cells.iter().map(|cell| folded(cell)).collect();
        if exact.len() == cells.len() || casefolded.len() == exact.len() {
            return None;
        }
        Some(Spellings {
            exact: exact.len(),
            trimmed: trimmed.len(),
            folded: casefolded.len(),
        })
    }

    /// Two of `cells` that `count` counts apart and that are one value in
    /// other capitals or spaces: two that differ trimmed too, shown
    /// trimmed, when `count` is the values counted as written or trimmed;
    /// else, when it is them as written, two that differ in spaces alone.
    fn pair(&self, cells: &[&str], count: usize) -> Option<[String; 2]> {
        let find = |apart: &dyn Fn(&str, &str) -> bool| {
            cells.iter().enumerate().find_map(|(at, first)| {
                let other = cells[at + 1..]
                    .iter()
                    .find(|other| apart(first, other) && folded(other) == folded(first))?;
                Some([first.to_string(), other.to_string()])
            })
        };
        if count != self.exact && count != self.trimmed {
            return None;
        }
        match find(&|a, b| a.trim() != b.trim()) {
            Some([a, b]) => Some([a.trim().to_string(), b.trim().to_string()]),
            None if count == self.exact => find(&|a, b| a != b),
            None => None,
        }
    }
}

/// Whether `task` (in small letters, `_` and `-` as spaces) names the
/// column `name`, as a whole word or phrase or in its plural.
fn names_column(task: &str, name: &str) -> bool {
    let name = name.trim().to_lowercase().replace(['_', '-'], " ");
    name.chars().count() >= 3
        && ["", "s", "es"]
            .iter()
            .any(|plural| crate::text::contains_whole(task, &format!("{name}{plural}")))
}

/// A cell lowercased, with each run of spaces one space and none at its ends.
fn folded(cell: &str) -> String {
    cell.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "How many different breeds are in fleeces.csv? Write the number to breeds.txt.";

    fn fleeces() -> Vec<(String, String)> {
        let text = "fleece,breed,kg\nF1,Merino,3.2\nF2,merino,2.9\nF3,Jacob,2.1\nF4, Merino ,3.0\nF5,Jacob,2.4\nF6,Shetland,1.8\n";
        vec![("fleeces.csv".to_string(), text.to_string())]
    }

    #[test]
    fn a_count_of_spellings_as_written_is_a_choice() {
        let fact = counted_apart_from("breeds.txt", "5\n", TASK, &fleeces()).expect("a choice");
        assert!(fact.text.contains("column `breed` of fleeces.csv"), "{}", fact.text);
        assert!(fact.text.contains("(`Merino` and `merino`)"), "{}", fact.text);
        assert!(fact.ways[1].contains("(3)"), "{:?}", fact.ways);
        // Trimmed first, ` Merino ` is `Merino`: four values, and the pair shown differs trimmed.
        let trimmed = counted_apart_from("breeds.txt", "4", TASK, &fleeces()).expect("a choice");
        assert!(
            trimmed.question.contains("`Merino` and `merino`"),
            "{}",
            trimmed.question
        );
    }

    #[test]
    fn a_count_that_folds_the_spellings_or_is_another_number_is_no_choice() {
        assert_eq!(counted_apart_from("breeds.txt", "3", TASK, &fleeces()), None);
        assert_eq!(counted_apart_from("breeds.txt", "6", TASK, &fleeces()), None);
        assert_eq!(counted_apart_from("breeds.txt", "3 breeds", TASK, &fleeces()), None);
    }

    #[test]
    fn a_column_the_task_does_not_name_is_left_alone() {
        let orders = vec![(
            "orders.csv".to_string(),
            "customer,shipped\nAnn,yes\nann,yes\nBob,no\nCy,yes\nBob,yes\n".to_string(),
        )];
        let task = "How many orders in orders.csv were shipped? Write it to n.txt.";
        assert_eq!(counted_apart_from("n.txt", "4", task, &orders), None);
        let task = "How many customers placed orders, per orders.csv? Write it to n.txt.";
        assert!(counted_apart_from("n.txt", "4", task, &orders).is_some());
    }

    #[test]
    fn columns_of_numbers_or_of_all_different_values_are_left_alone() {
        let numbers = vec![("t.csv".to_string(), "id,code\n1,A\n2,a\n3,A\n".to_string())];
        let task = "How many codes and ids does t.csv hold? Write it to n.txt.";
        // `code` holds A, a, A: two as written, one folded; `id` holds numbers.
        assert!(counted_apart_from("n.txt", "2", task, &numbers).is_some());
        assert_eq!(counted_apart_from("n.txt", "3", task, &numbers), None);
        let unique = vec![("t.csv".to_string(), "name\nAda\nada\nBo\n".to_string())];
        let task = "How many names are in t.csv? Write it to n.txt.";
        assert_eq!(counted_apart_from("n.txt", "3", task, &unique), None);
    }

    #[test]
    fn spellings_apart_in_spaces_alone_are_shown_as_written() {
        let spaced = vec![(
            "t.csv".to_string(),
            "colour,pot\nred,1\n red,2\nblue,3\nblue,4\n".to_string(),
        )];
        let task = "How many colours are in t.csv? Write it to n.txt.";
        let fact = counted_apart_from("n.txt", "3", task, &spaced).expect("a choice");
        assert!(fact.question.contains("`red` and ` red`"), "{}", fact.question);
    }
}
