//! A date the task names that falls inside the dates of a table's date
//! column, where the program reads the table by its columns' names and
//! never reads that column, nor holds a date of its own: it takes the rows
//! of every date.
//!
//! "From 1 June every session that was going to be in the Church Hall
//! moves": six of the 1.5B model's seven programs for a toddler group's
//! venue change moved the May sessions too, their `date` column unread,
//! and the run said `succeeded` (held-out-53, spent). The evidence is the
//! task's date, the column's dates and the program's strings; nothing here
//! reads how the task is worded beyond a date written as dates are.

use std::sync::LazyLock;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

static DAY_MONTH: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\b")
        .expect("a valid pattern")
});
static MONTH_DAY: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b")
        .expect("a valid pattern")
});
/// A string that holds a date or a month: a program that holds one reads
/// the dates its own way.
static DATED: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)\d{1,2}[-/.]\d{1,2}|\b(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b")
        .expect("a valid pattern")
});
static ISO: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b\d{4}-(\d{2})-(\d{2})\b").expect("a valid pattern"));

/// What is said of a program (`code`) for `task` that reads a table of
/// `tables` (path and text) by its columns' names and never reads its
/// column of dates (written year first), where the task names a date with
/// rows of that column on both sides of it; `None` when it holds a date or
/// a month of its own (it reads dates some other way).
pub(crate) fn date_ignored(code: &str, task: &str, tables: &[(&str, &str)]) -> Option<String> {
    let named = task_dates(task);
    if named.is_empty() {
        return None;
    }
    let literals: Vec<String> = crate::named_value::literals(code);
    let dated = literals.iter().any(|literal| DATED.is_match(literal));
    if dated {
        return None;
    }
    tables.iter().find_map(|(path, text)| {
        let (header, rows) = crate::file_shape::table_cells(text)?;
        let names: Vec<String> = header.iter().map(|name| name.trim().to_lowercase()).collect();
        if !names.iter().any(|name| literals.contains(name)) {
            return None;
        }
        let dated: Vec<(&String, Vec<(u32, u32)>)> = names
            .iter()
            .enumerate()
            .filter_map(|(column, name)| {
                let days: Option<Vec<(u32, u32)>> = rows
                    .iter()
                    .map(|(_, cells)| month_day(cells.get(column)?.trim()))
                    .collect();
                Some((name, days.filter(|days| days.len() >= 2)?))
            })
            .collect();
        // A program that reads one of the date columns reads the dates.
        if dated.iter().any(|(name, _)| subscripted(code, name)) {
            return None;
        }
        dated.iter().find_map(|(name, days)| {
            let inside = named
                .iter()
                .find(|day| days.iter().any(|d| d < *day) && days.iter().any(|d| d >= *day))?;
            {
                Some(format!(
                    "the task names the date {} {}, and column {name:?} of {path} holds dates before it and from it on; the program never reads {name:?}: it takes the rows of every date (compare each row's {name} with the task's date)",
                    inside.1,
                    month_name(inside.0)
                ))
            }
        })
    })
}

/// Whether `code` reads the column `name` of a row: subscripts it
/// (`row['date']`) or gets it (`row.get("date")`). A list of the names to
/// write (`fieldnames=['date', ...]`) reads nothing.
fn subscripted(code: &str, name: &str) -> bool {
    let code = code.to_lowercase();
    ['\'', '"'].iter().any(|quote| {
        code.contains(&format!("[{quote}{name}{quote}]")) || code.contains(&format!("get({quote}{name}{quote}"))
    })
}

/// The dates `task` names, each as (month, day).
fn task_dates(task: &str) -> Vec<(u32, u32)> {
    let month = |name: &str| {
        MONTHS
            .iter()
            .position(|m| name.to_lowercase().starts_with(m))
            .map(|i| i as u32 + 1)
    };
    let mut found: Vec<(u32, u32)> = Vec::new();
    for c in DAY_MONTH.captures_iter(task) {
        found.extend(month(&c[2]).zip(c[1].parse().ok()));
    }
    for c in MONTH_DAY.captures_iter(task) {
        found.extend(month(&c[1]).zip(c[2].parse().ok()));
    }
    for c in ISO.captures_iter(task) {
        found.extend(c[1].parse().ok().zip(c[2].parse().ok()));
    }
    found.retain(|(month, day)| (1..=12).contains(month) && (1..=31).contains(day));
    found
}

/// The (month, day) of a cell written year first (`2025-06-02`, with or
/// without a time after it).
fn month_day(cell: &str) -> Option<(u32, u32)> {
    let c = ISO.captures(cell.get(..10)?)?;
    Some((c[1].parse().ok()?, c[2].parse().ok()?))
}

fn month_name(month: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES.get(month as usize - 1).copied().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSIONS: &str = "date,session,venue\n2025-05-12,Rhyme Time,Church Hall\n2025-05-29,Baby Sensory,Church Hall\n2025-06-02,Rhyme Time,Church Hall\n2025-06-09,Rhyme Time,Library Room\n";
    const TASK: &str = "From 1 June every session that was going to be in the Church Hall moves to the Hub. Update the venue in sessions.csv.";

    #[test]
    fn a_program_that_never_reads_the_dates_around_the_tasks_date_is_found_out() {
        let tables = [("sessions.csv", SESSIONS)];
        let every = "import csv\nrows = list(csv.DictReader(open('sessions.csv', encoding='utf-8')))\nfor r in rows:\n    if r['venue'] == 'Church Hall':\n        r['venue'] = 'Marketside Hub'\n";
        let flaw = date_ignored(every, TASK, &tables).expect("the dates are unread");
        assert!(
            flaw.starts_with("the task names the date 1 June, and column \"date\" of sessions.csv holds dates before it and from it on"),
            "{flaw}"
        );
        let written =
            format!("{every}w = csv.DictWriter(open('sessions.csv', 'w'), fieldnames=['date', 'session', 'venue'])\n");
        assert!(
            date_ignored(&written, TASK, &tables).is_some(),
            "naming the column to write reads nothing"
        );
        let dated = every.replace(
            "if r['venue'] == 'Church Hall':",
            "if r['venue'] == 'Church Hall' and r['date'] >= '2025-06-01':",
        );
        assert_eq!(date_ignored(&dated, TASK, &tables), None);
        let after = "After 30 June nothing changes. Update sessions.csv.";
        assert_eq!(date_ignored(every, after, &tables), None, "no row is after the date");
        assert_eq!(
            date_ignored(every, "Update sessions.csv.", &tables),
            None,
            "no date named"
        );
        let decimal = "Give the average to 2 decimal places, or June's Junior 2 count, in sessions.csv.";
        assert_eq!(
            date_ignored(every, decimal, &tables),
            None,
            "words that begin as months name no date"
        );
    }
}
