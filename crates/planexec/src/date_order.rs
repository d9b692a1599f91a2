//! Whether a table a program or a run wrote has its rows in the order of a
//! date column read as text: `02/04/2025` before `11/03/2025`. A date
//! written day or month first does not sort by its characters (the year
//! comes last), so rows sorted so are in no date's order. On held-out-45
//! (spent) two programs sorted caving trips by a `dd/mm/yyyy` column as
//! strings, agreed, and the run said `succeeded`. No model reads the task
//! here: the evidence is the rows, an input's rows put in another order
//! that fits the dates as text and fits them as dates in neither reading.

use std::cmp::Ordering;

/// The flaw, said for the program or the run, when the rows of `text` (the
/// table `path` holds, `.csv` or `.tsv`, four data rows or more) are the
/// data rows of one of `inputs` (path, text) in another order, and that
/// order is the order of a column of dates written day or month first
/// compared as text, and not their order as dates, read either way, and no
/// other column runs one way (the rows may have been sorted by it).
pub(crate) fn sorted_as_text(path: &str, text: &str, inputs: &[(&str, &str)]) -> Option<String> {
    if !is_table(path) {
        return None;
    }
    let written = crate::content::rows(text);
    let data = data_rows(&written);
    if data.len() < ROWS_AT_LEAST {
        return None;
    }
    let reordered = inputs.iter().any(|(input, held)| {
        let held = crate::content::rows(held);
        let held = data_rows(&held);
        *input != path && held != data && same_rows(held, data)
    });
    if !reordered {
        return None;
    }
    let columns = data.iter().map(Vec::len).min()?;
    let cells = |column: usize| -> Vec<&str> { data.iter().map(|row| row[column].as_str()).collect() };
    let (column, (before, after)) =
        (0..columns).find_map(|column| Some((column, text_not_date_order(&cells(column))?)))?;
    // Rows sorted by another column ("by cave") may leave a date column
    // running as text by chance: then which column sorted them is unknown.
    if (0..columns).any(|other| other != column && runs_one_way(&cells(other))) {
        return None;
    }
    // A header is named only where its cells stand over the data's: a
    // quoted comma shifts a row's cells.
    let header = written
        .first()
        .filter(|first| first.len() == columns && data.iter().all(|row| row.len() == columns));
    let name = header
        .filter(|first| first[column] != data[0][column])
        .map_or(format!("column {}", column + 1), |first| format!("`{}`", first[column]));
    Some(format!(
        "the rows of {path} are in the order of {name} read as text (`{before}` before `{after}`): a date written day or month first does not sort by its characters, its year comes last; sort by the date's year, month and day, and keep the dates as they are written"
    ))
}

/// The fewest data rows whose order is evidence: with three, one order in
/// three of a column runs as text by chance.
const ROWS_AT_LEAST: usize = 4;

/// Whether `cells` change and run one way, up or down, as text or as
/// numbers: a column the rows may have been sorted by.
fn runs_one_way(cells: &[&str]) -> bool {
    if cells.windows(2).all(|w| w[0] == w[1]) {
        return false;
    }
    let numbers: Option<Vec<f64>> = cells.iter().map(|cell| cell.parse::<f64>().ok()).collect();
    [Ordering::Less, Ordering::Greater]
        .into_iter()
        .any(|way| match &numbers {
            Some(numbers) => numbers
                .windows(2)
                .all(|w| w[0].partial_cmp(&w[1]) != Some(way.reverse())),
            None => runs(cells, way, |cell| cell.to_lowercase()),
        })
}

/// Whether `path` names a table, by its extension.
fn is_table(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".csv") || lower.ends_with(".tsv")
}

/// The rows of `rows` below its header: the first row goes when no cell of
/// it holds a digit (a header of names).
fn data_rows(rows: &[Vec<String>]) -> &[Vec<String>] {
    match rows.first() {
        Some(first) if first.iter().all(|cell| !cell.contains(|c: char| c.is_ascii_digit())) => &rows[1..],
        _ => rows,
    }
}

/// Whether `a` and `b` hold the same rows, each as often, in any order.
fn same_rows(a: &[Vec<String>], b: &[Vec<String>]) -> bool {
    let mut a: Vec<&Vec<String>> = a.iter().collect();
    let mut b: Vec<&Vec<String>> = b.iter().collect();
    a.sort();
    b.sort();
    a == b
}

/// When every one of `cells` is a date written day or month first (`d/m/y`
/// with `/`, `-` or `.`), they run one way as text (up or down), and they
/// do not run that way as dates, read day first or month first (each
/// reading whose months are months; one at least): the first two
/// neighbours out of the dates' order, as the first such reading has it.
fn text_not_date_order<'a>(cells: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let dates: Vec<(u32, u32, u32)> = cells
        .iter()
        .map(|cell| day_or_month_first(cell))
        .collect::<Option<_>>()?;
    let direction = [Ordering::Less, Ordering::Greater]
        .into_iter()
        .find(|&way| runs(cells, way, |t| *t) && cells.windows(2).any(|w| w[0] != w[1]))?;
    // A reading is one only where each of its months is a month; cells no
    // reading takes for dates (scores `21-15-21`) are no dates.
    let day_first: Vec<(u32, u32, u32)> = dates.iter().map(|&(y, a, b)| (y, b, a)).collect();
    let readings: Vec<Vec<(u32, u32, u32)>> = [day_first, dates]
        .into_iter()
        .filter(|reading| reading.iter().all(|&(_, month, _)| (1..=12).contains(&month)))
        .collect();
    if readings.is_empty() || readings.iter().any(|reading| runs(reading, direction, |d| *d)) {
        return None;
    }
    let at = readings[0]
        .windows(2)
        .position(|w| w[0].cmp(&w[1]) == direction.reverse())?;
    Some((cells[at], cells[at + 1]))
}

/// Whether `items` never step against `way` (equal neighbours allowed).
fn runs<T, K: Ord>(items: &[T], way: Ordering, key: impl Fn(&T) -> K) -> bool {
    items.windows(2).all(|w| key(&w[0]).cmp(&key(&w[1])) != way.reverse())
}

/// A date written with its year last (`05/03/2025`, `5-3-25`, `05.03.2025`)
/// as (year, first number, second number); `None` for any other cell.
fn day_or_month_first(cell: &str) -> Option<(u32, u32, u32)> {
    let separator = cell.chars().find(|c| matches!(c, '/' | '-' | '.'))?;
    let parts: Vec<&str> = cell.split(separator).collect();
    let [first, second, year] = parts[..] else {
        return None;
    };
    let number = |part: &str, most: usize| {
        (!part.is_empty() && part.len() <= most && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse::<u32>().ok())
            .flatten()
    };
    let (first, second) = (number(first, 2)?, number(second, 2)?);
    let year = number(year, 4).filter(|_| year.len() == 2 || year.len() == 4)?;
    (first <= 31 && second <= 31).then_some((year, first, second))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIPS: &str = "date,cave,people\n14/03/2025,Dan yr Ogof,4\n02/11/2024,Giants Hole,3\n28/01/2025,Swildons,5\n09/06/2024,Peak Cavern,6\n";

    #[test]
    fn rows_ordered_by_a_day_first_date_as_text_are_a_flaw() {
        let as_text = "date,cave,people\n02/11/2024,Giants Hole,3\n09/06/2024,Peak Cavern,6\n14/03/2025,Dan yr Ogof,4\n28/01/2025,Swildons,5\n";
        let inputs = [("trips.csv", TRIPS)];
        let said = sorted_as_text("by_date.csv", as_text, &inputs).expect("a flaw");
        assert!(
            said.contains("`date` read as text") && said.contains("`02/11/2024` before `09/06/2024`"),
            "{said}"
        );
        let as_dates = "date,cave,people\n09/06/2024,Peak Cavern,6\n02/11/2024,Giants Hole,3\n28/01/2025,Swildons,5\n14/03/2025,Dan yr Ogof,4\n";
        assert_eq!(sorted_as_text("by_date.csv", as_dates, &inputs), None);
        let newest_first: String = std::iter::once("date,cave,people")
            .chain(as_dates.lines().skip(1).collect::<Vec<_>>().into_iter().rev())
            .map(|line| format!("{line}\n"))
            .collect();
        assert_eq!(sorted_as_text("by_date.csv", &newest_first, &inputs), None);
    }

    #[test]
    fn rows_in_the_input_order_or_not_the_inputs_rows_say_nothing() {
        assert_eq!(sorted_as_text("copy.csv", TRIPS, &[("trips.csv", TRIPS)]), None);
        let other = "date,cave,people\n01/01/2025,A,1\n02/02/2024,B,2\n03/03/2023,C,3\n";
        assert_eq!(sorted_as_text("other.csv", other, &[("trips.csv", TRIPS)]), None);
        // ISO dates sort as text: no flaw.
        let iso = "date,n\n2025-03-14,1\n2024-11-02,2\n2025-01-28,3\n";
        let iso_sorted = "date,n\n2024-11-02,2\n2025-01-28,3\n2025-03-14,1\n";
        assert_eq!(sorted_as_text("iso.csv", iso_sorted, &[("in.csv", iso)]), None);
    }

    #[test]
    fn rows_sorted_by_another_column_or_cells_that_are_no_dates_say_nothing() {
        // By cave, A to Z: the dates happen to run as text.
        let by_cave = "cave,date\nA Pot,02/11/2024\nB Hole,09/06/2024\nC Cave,14/03/2025\nD Shaft,28/01/2025\n";
        let input = "cave,date\nC Cave,14/03/2025\nA Pot,02/11/2024\nD Shaft,28/01/2025\nB Hole,09/06/2024\n";
        assert_eq!(sorted_as_text("by_cave.csv", by_cave, &[("caves.csv", input)]), None);
        // Set scores are no dates: no reading has months for months.
        let scores = "set,n\n21-25-15,1\n13-25-21,2\n25-19-15,3\n23-25-13,4\n";
        let sorted = "set,n\n13-25-21,2\n21-25-15,1\n23-25-13,4\n25-19-15,3\n";
        assert_eq!(sorted_as_text("sets.csv", sorted, &[("in.csv", scores)]), None);
    }

    #[test]
    fn month_first_dates_as_text_are_said_by_the_reading_that_is_one() {
        let input = "when,n\n12/25/2024,1\n01/15/2025,2\n02/14/2024,3\n11/30/2024,4\n";
        let as_text = "when,n\n01/15/2025,2\n02/14/2024,3\n11/30/2024,4\n12/25/2024,1\n";
        let said = sorted_as_text("out.csv", as_text, &[("in.csv", input)]).expect("a flaw");
        assert!(said.contains("`01/15/2025` before `02/14/2024`"), "{said}");
    }

    #[test]
    fn dates_written_year_last_are_read_and_others_are_not() {
        assert_eq!(day_or_month_first("05/03/2025"), Some((2025, 5, 3)));
        assert_eq!(day_or_month_first("5-3-25"), Some((25, 5, 3)));
        assert_eq!(day_or_month_first("2025-03-05"), None);
        assert_eq!(day_or_month_first("1.5"), None);
        assert_eq!(day_or_month_first("12/345/2025"), None);
    }
}
