//! A table's column of numbers written with a fixed count of decimal
//! places (`12.50`, `6.00`), in which an edit in place wrote a number with
//! another count (`13.0`): the column keeps its form.
//!
//! On held-out-51 (spent) a program that raised the ramen dishes' prices
//! by 50p wrote `round(float(price) + 0.50, 2)` back through
//! `csv.DictWriter`, which writes `13.0`; the run said `succeeded`. What a
//! column's numbers look like is read from the file before the edit: every
//! number of the column with as many decimal places, and more than one of
//! them. Only a task that names the new value itself may ask for another
//! form. The check reads only the file before and after.

use crate::file_shape::table_cells;

/// What is said of `path`, a table that held `was` and holds `now` (as
/// many rows), when a cell of a column whose numbers all had the same count
/// of decimal places (one or more) now holds a number with another count,
/// which `task` does not name, and other cells of the column still have
/// that count. `None` otherwise.
pub(crate) fn changed_places(path: &str, was: &str, now: &str, task: &str) -> Option<String> {
    let (header, before) = table_cells(was)?;
    let (header_now, after) = table_cells(now)?;
    if header != header_now || before.len() != after.len() {
        return None;
    }
    (0..header.len()).find_map(|column| {
        let places = column_places(&before, column)?;
        // A column all of whose numbers changed form was asked another
        // form ("round every price to the pound"); one left mixed was not.
        let kept_form = after
            .iter()
            .filter_map(|(_, cells)| cells.get(column))
            .any(|cell| decimal_places(cell.trim()) == Some(places));
        if !kept_form {
            return None;
        }
        let cell = |row: &(usize, Vec<String>)| row.1.get(column).map(|c| c.trim().to_string());
        before.iter().zip(&after).find_map(|(old, new)| {
            let (old, new) = (cell(old)?, cell(new)?);
            let wrong = old != new && decimal_places(&new).is_some_and(|n| n != places);
            (wrong && !names_number(task, &new)).then(|| {
                format!(
                    "{path}'s column `{}` writes its numbers with {places} decimal places ({old}), and the edit wrote {new}: keep the column's form (write the number with f'{{value:.{places}f}}')",
                    header[column]
                )
            })
        })
    })
}

/// Whether `task` holds the number `value` as a number of its own: not
/// inside a longer one (`13` in `113` or `13.5`; a full stop after it is
/// the sentence's).
fn names_number(task: &str, value: &str) -> bool {
    task.match_indices(value).any(|(at, _)| {
        let before = task[..at].chars().next_back();
        let mut after = task[at + value.len()..].chars();
        let next = after.next();
        let digit_after_dot = next == Some('.') && after.next().is_some_and(|c| c.is_ascii_digit());
        !before.is_some_and(|c| c.is_ascii_digit() || c == '.')
            && !next.is_some_and(|c| c.is_ascii_digit())
            && !digit_after_dot
    })
}

/// The count of decimal places every number of `column` of `rows` is
/// written with, when there are two numbers or more, each with the same
/// count, one at least, and the column holds nothing else but empty cells.
fn column_places(rows: &[(usize, Vec<String>)], column: usize) -> Option<usize> {
    let cells: Vec<&str> = rows
        .iter()
        .filter_map(|(_, cells)| cells.get(column))
        .map(|cell| cell.trim())
        .filter(|cell| !cell.is_empty())
        .collect();
    let places: Option<Vec<usize>> = cells.iter().map(|cell| decimal_places(cell)).collect();
    let places = places?;
    let first = *places.first()?;
    (places.len() >= 2 && first >= 1 && places.iter().all(|p| *p == first)).then_some(first)
}

/// How many decimal places `cell` is written with, when it is a plain
/// number (digits, one dot at most, a sign): 0 for a whole number.
fn decimal_places(cell: &str) -> Option<usize> {
    let digits = cell.trim_start_matches('-');
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    (!whole.is_empty() && all_digits(whole) && all_digits(fraction) && !(digits.contains('.') && fraction.is_empty()))
        .then_some(fraction.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MENU: &str =
        "item,category,price_gbp\nTonkotsu ramen,ramen,12.50\nGyoza (6),small plates,6.50\nShoyu ramen,ramen,11.00\n";
    const TASK: &str = "Put the price of every ramen dish in menu.csv up by 50p, keeping two decimal places.";

    #[test]
    fn a_number_written_with_other_decimal_places_changed_the_columns_form() {
        let now = MENU.replace("12.50", "13.0").replace("11.00", "11.5");
        let said = changed_places("menu.csv", MENU, &now, TASK).expect("13.0 in a column of 2 places");
        assert!(
            said.contains("column `price_gbp` writes its numbers with 2 decimal places (12.50)"),
            "{said}"
        );
        assert!(said.contains("the edit wrote 13.0"), "{said}");
    }

    #[test]
    fn an_edit_in_the_columns_form_a_named_value_or_a_mixed_column_is_left_alone() {
        let kept = MENU.replace("12.50", "13.00").replace("11.00", "11.50");
        assert_eq!(changed_places("menu.csv", MENU, &kept, TASK), None);
        let named = "Set the Tonkotsu ramen's price in menu.csv to 13.";
        assert_eq!(
            changed_places("menu.csv", MENU, &MENU.replace("12.50", "13"), named),
            None
        );
        let mixed = "item,kg\na,1.5\nb,2.25\nc,3\n";
        assert_eq!(
            changed_places("w.csv", mixed, &mixed.replace("1.5", "1.75"), TASK),
            None
        );
        let rounded = MENU.replace("12.50", "13").replace("6.50", "7").replace("11.00", "11");
        assert_eq!(
            changed_places(
                "menu.csv",
                MENU,
                &rounded,
                "Round every price in menu.csv to the pound."
            ),
            None
        );
        let whole = "item,qty\na,1\nb,2\n";
        assert_eq!(
            changed_places("q.csv", whole, &whole.replace("a,1", "a,1.5"), TASK),
            None
        );
        assert_eq!(decimal_places("4."), None);
        assert!(names_number("set it to 13.", "13") && !names_number("set it to 13.5", "13"));
        assert_eq!(decimal_places("-0.25"), Some(2));
    }
}
