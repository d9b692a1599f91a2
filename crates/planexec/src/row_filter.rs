//! Whether the rows a program or a run copied from a table were picked by
//! a value the task names found inside longer words of the line, where
//! the task's rows hold it as one column's cell. "Copy the lines whose
//! status is paid" done as `'paid' in line` copies the paid rows and the
//! unpaid and part-paid ones with them. Only a value found inside another
//! word is evidence: a row that holds it as a word of its own elsewhere
//! ("previous invoice unpaid") may be what a task that says "mentions"
//! asks for, and held-out-45's plumber (spent), whose `'unpaid' in line`
//! kept such a row where the task named the status, is left to other
//! checks. No model reads the task here: the evidence is the rows copied,
//! each cut at the table's delimiter, beside the rows left out.

/// The flaw, said for the program or the run, when the lines of `text`
/// (the file `path` holds, two lines or more) are lines of one table
/// among `inputs` (path, text), some of its rows left out, and they are
/// every row whose cell in one column is a value `task` names as a word
/// (two rows or more), and besides them only rows that hold the value
/// inside a longer word (one or more; their own cell in the column no
/// value the task names), and the table's first line, its header.
pub(crate) fn matched_elsewhere(path: &str, text: &str, task: &str, inputs: &[(&str, &str)]) -> Option<String> {
    let written: std::collections::HashSet<&str> =
        text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    if written.len() < 2 {
        return None;
    }
    inputs
        .iter()
        .filter(|(input, _)| *input != path)
        .find_map(|(input, held)| {
            let table = Table::read(held)?;
            let kept: Vec<bool> = table.lines.iter().map(|line| written.contains(line)).collect();
            let held: std::collections::HashSet<&str> = table.lines.iter().copied().collect();
            let all_written = written.iter().all(|line| held.contains(line));
            if !all_written || kept.iter().skip(table.first_data_row()).all(|&k| k) {
                return None;
            }
            let (column, value, stray) = table.stray_row(&kept, task)?;
            Some(format!(
                "{path} copies rows of {input} whose column {} is not `{value}` but which hold `{value}` inside another word (`{}`), beside the rows whose column {} is `{value}`: match the value in its column, as a whole cell, not anywhere in the line",
                column + 1,
                table.lines[stray],
                column + 1
            ))
        })
}

/// The delimiters a table's lines may be cut at.
const DELIMITERS: [char; 4] = ['|', '\t', ';', ','];

/// A table's lines, trimmed and not blank, and each one's cells, trimmed
/// and lower-cased.
struct Table<'a> {
    lines: Vec<&'a str>,
    cells: Vec<Vec<String>>,
}

impl<'a> Table<'a> {
    /// `text` as a table: four lines or more, each cut at one delimiter
    /// into the same number of cells, three or more. `None` for any other
    /// text: a quoted comma that shifts a row's cells leaves no column to
    /// read.
    fn read(text: &'a str) -> Option<Self> {
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
        if lines.len() < 4 {
            return None;
        }
        DELIMITERS.iter().find_map(|&delimiter| {
            let cells: Vec<Vec<String>> = lines
                .iter()
                .map(|line| line.split(delimiter).map(|cell| cell.trim().to_lowercase()).collect())
                .collect();
            let width = cells[0].len();
            (width >= 3 && cells.iter().all(|row| row.len() == width)).then(|| Table {
                lines: lines.clone(),
                cells,
            })
        })
    }

    /// A column, a value `task` names and a stray row kept, when the rows
    /// `kept` (by line) are those whose cell in the column is the value,
    /// two or more and all of them, and strays, one or more: rows that
    /// hold it only inside longer words (`paid` in `unpaid`), their own
    /// cell in the column no value the task names (`part-paid` in "paid or
    /// part-paid"); the first line (a header) may be kept too.
    fn stray_row(&self, kept: &[bool], task: &str) -> Option<(usize, String, usize)> {
        let width = self.cells[0].len();
        let task = task.to_lowercase();
        (0..width).find_map(|column| {
            let rows = self.first_data_row()..self.lines.len();
            let value = rows
                .clone()
                .filter(|&row| kept[row])
                .map(|row| self.cells[row][column].as_str())
                .find(|value| value.chars().filter(|c| c.is_alphabetic()).count() >= 2 && names(&task, value))?;
            let holds = |row: usize| {
                let line = self.lines[row].to_lowercase();
                line.contains(value) && !names(&line, value) && !names(&task, &self.cells[row][column])
            };
            let in_column = |row: usize| self.cells[row][column] == value;
            let every_one_kept = rows.clone().filter(|&row| in_column(row)).all(|row| kept[row]);
            let matched = rows.clone().filter(|&row| in_column(row)).count();
            let strays: Vec<usize> = rows.clone().filter(|&row| kept[row] && !in_column(row)).collect();
            let all_hold = strays.iter().all(|&row| holds(row));
            (every_one_kept && matched >= 2 && !strays.is_empty() && all_hold)
                .then(|| (column, value.to_string(), strays[0]))
        })
    }

    /// The first row of data: the second when the first is a header (no
    /// cell of it holds a digit).
    fn first_data_row(&self) -> usize {
        let header = self.cells[0]
            .iter()
            .all(|cell| !cell.contains(|c: char| c.is_ascii_digit()));
        usize::from(header)
    }
}

/// Whether `task` (lower-cased) holds `value` as words of its own: not
/// inside a longer word, `-` joining words (`paid` is not named by
/// "unpaid" or "part-paid"), and a value of several words ("gel manicure")
/// as it stands.
fn names(task: &str, value: &str) -> bool {
    crate::text::stands_alone(task, value, |c| c.is_alphanumeric() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAYBOOK: &str = "\
2025-03-03 | Boiler service | 14 Elm Road | £85.00 | paid
2025-03-03 | Leaking kitchen tap | 2 Quarry Cottages | £60.00 | unpaid
2025-03-04 | Radiator valve | 31 Station Street | £95.00 | part-paid
2025-03-05 | Return visit, previous invoice unpaid | 2 Quarry Cottages | £0.00 | paid
2025-03-06 | New outside tap | 8 Beech Grove | £120.00 | unpaid
2025-03-07 | Power flush | 19 Mill Lane | £380.00 | paid
";

    fn lines(numbers: &[usize]) -> String {
        let all: Vec<&str> = DAYBOOK.lines().collect();
        numbers.iter().map(|&n| format!("{}\n", all[n])).collect()
    }

    const TASK: &str = "Copy every line from daybook.txt whose status is unpaid into unpaid.txt.";

    #[test]
    fn a_row_kept_for_the_value_inside_another_word_is_a_flaw() {
        let inputs = [("daybook.txt", DAYBOOK)];
        // `paid` in `unpaid`.
        let paid = "Copy the lines whose status is paid into paid.txt.";
        let said = matched_elsewhere("paid.txt", &lines(&[0, 1, 2, 3, 4, 5]), paid, &inputs);
        assert_eq!(said, None, "nothing left out is no filter");
        let said = matched_elsewhere("paid.txt", &lines(&[0, 1, 3, 4, 5]), paid, &inputs).expect("a flaw");
        assert!(
            said.contains("`paid`") && said.contains("column 5") && said.contains("unpaid"),
            "{said}"
        );
        // The value as a word of its own elsewhere may be what the task
        // asks for ("lines that mention unpaid").
        assert_eq!(matched_elsewhere("unpaid.txt", &lines(&[1, 3, 4]), TASK, &inputs), None);
        // Both values the task names.
        let either = "Copy the lines whose status is paid or part-paid into settled.txt.";
        assert_eq!(
            matched_elsewhere("settled.txt", &lines(&[0, 2, 3, 5]), either, &inputs),
            None
        );
    }

    #[test]
    fn a_row_that_holds_the_value_as_a_cell_of_another_column_is_no_stray() {
        let people =
            "name,born_in,lives_in\nAnn,Leeds,Leeds\nBob,Leeds,Leeds\nCat,York,Leeds\nDan,Hull,York\nEve,York,Hull\n";
        let task = "Copy the people who live in Leeds, with the header, into leeds.csv";
        let kept = "name,born_in,lives_in\nAnn,Leeds,Leeds\nBob,Leeds,Leeds\nCat,York,Leeds\n";
        assert_eq!(
            matched_elsewhere("leeds.csv", kept, task, &[("people.csv", people)]),
            None
        );
    }

    #[test]
    fn rows_picked_by_their_column_or_by_a_value_the_task_does_not_name_pass() {
        let inputs = [("daybook.txt", DAYBOOK)];
        assert_eq!(matched_elsewhere("unpaid.txt", &lines(&[1, 4]), TASK, &inputs), None);
        // The task names no value the rows share a column in.
        let mentions = "Copy the lines about Quarry Cottages into quarry.txt.";
        assert_eq!(
            matched_elsewhere("quarry.txt", &lines(&[1, 3]), mentions, &inputs),
            None
        );
        // Rows of a second condition that do not hold the value.
        let either = "Copy the lines whose status is unpaid or part-paid into owed.txt.";
        assert_eq!(matched_elsewhere("owed.txt", &lines(&[1, 2, 4]), either, &inputs), None);
        // One line written says nothing of a filter.
        let one = "Copy the lines whose status is part-paid into part.txt.";
        assert_eq!(matched_elsewhere("part.txt", &lines(&[2]), one, &inputs), None);
        // Lines not of the table, or a text that is no table.
        assert_eq!(
            matched_elsewhere("unpaid.txt", "unpaid\nunpaid jobs\n", TASK, &inputs),
            None
        );
        let prose = [("notes.txt", "unpaid bills\npaid the rent\nunpaid tax\nall paid\n")];
        assert_eq!(
            matched_elsewhere("unpaid.txt", "unpaid bills\nunpaid tax\n", TASK, &prose),
            None
        );
    }

    #[test]
    fn a_header_kept_with_the_rows_is_read_past() {
        let table = format!("date | job | address | fee | status\n{DAYBOOK}");
        let inputs = [("daybook.txt", table.as_str())];
        let header = "date | job | address | fee | status\n";
        let paid = "Copy the lines whose status is paid into paid.txt.";
        let kept = format!("{header}{}", lines(&[0, 1, 3, 5]));
        assert!(matched_elsewhere("paid.txt", &kept, paid, &inputs).is_some());
        let right = format!("{header}{}", lines(&[0, 3, 5]));
        assert_eq!(matched_elsewhere("paid.txt", &right, paid, &inputs), None);
    }
}
