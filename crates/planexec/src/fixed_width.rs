//! A table printed with its columns at fixed places (an old system's
//! report, a `.prn` or `.txt` export): found from the spaces every line
//! shares, said with a reader that cuts each line at those places.
//!
//! Such a table has no separator for `csv` to split at, and its values may
//! hold a space (`Portland Whitbed`), so a program that splits its lines at
//! spaces cuts them and reads the next column's value in their place: the
//! 1.5B model's programs for the heaviest Bath stone block in a stone
//! yard's register did (held-out-52, spent), though the task said the
//! table was fixed-width.

/// Fewest spaces between two columns: one space stands inside a value.
const GAP: usize = 2;

/// Fewest columns, and fewest rows below the header, for a fixed-width table.
const COLUMNS: usize = 3;
const ROWS: usize = 3;

/// Most lines weighed, and most lines above the header (a title).
const LINES: usize = 200;
const ABOVE: usize = 2;

/// How to read the fixed-width table in `text`, the file at `path`, when
/// a plain split at spaces misreads it (a value holds a space, or a cell
/// is blank): where its columns stand, and lines of Python that read its
/// rows. `None` for a text that is no such table, or one `split()` reads.
pub(crate) fn note(path: &str, text: &str) -> Option<String> {
    // Tabs and page breaks move columns, and Python splits lines at the latter.
    if !text_file(path) || text.contains(['\t', '\u{c}']) {
        return None;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().take(LINES).collect();
    // Lines that are blank or a rule under the header hold no cells.
    let filled: Vec<usize> = (0..lines.len()).filter(|i| !rule_or_blank(lines[*i])).collect();
    // A title above the table shares no gaps with it: the header is the
    // first line from which on the lines share them, and names each column.
    let (header, starts) = (0..=ABOVE).find_map(|above| {
        let table = filled.get(above..)?;
        let starts = column_starts(&table.iter().map(|i| lines[*i]).collect::<Vec<_>>())?;
        let header = *table.first()?;
        let names = cut(lines[header], &starts);
        // A name holds no digit (a first row of values is no header) and no
        // gap (two columns a long value ran together are no one name).
        let named = names
            .iter()
            .all(|name| !name.is_empty() && !name.contains(|c: char| c.is_ascii_digit()) && !name.contains("  "));
        named.then_some((header, starts))
    })?;
    let cells = |line: &str| -> Vec<String> { cut(line, &starts) };
    let rows: Vec<Vec<String>> = filled
        .iter()
        .filter(|i| **i > header)
        .map(|i| cells(lines[*i]))
        .collect();
    let spaced = rows.iter().flatten().find(|cell| cell.contains(' '));
    let blank = rows.iter().any(|row| row.iter().any(String::is_empty));
    if rows.len() < ROWS || (spaced.is_none() && !blank) {
        return None;
    }
    let why = match spaced {
        Some(cell) => format!(
            "some of its values hold a space (`{}`)",
            crate::text::one_line(cell, 40)
        ),
        None => "some of its cells are blank".to_string(),
    };
    let spans: Vec<String> = starts
        .iter()
        .enumerate()
        .map(|(i, start)| match starts.get(i + 1) {
            Some(next) => format!("({start}, {next})"),
            None => format!("({start}, None)"),
        })
        .collect();
    Some(format!(
        "{path}: it is a fixed-width table, its header line {} (`{}`): each column stands at the same place on every line, and {why}, so a line split at spaces is cut wrong. Its rows, as dicts keyed by the header's names, are read so:\n```python\nlines = [line for line in open('{path}', encoding='utf-8-sig').read().splitlines() if line.strip(' -=+')][{}:]\nspans = [{}]  # where each column stands on every line\ncells = [[line[a:b].strip() for a, b in spans] for line in lines]\nrows = [dict(zip(cells[0], row)) for row in cells[1:]]\n```",
        header + 1,
        crate::text::one_line(lines[header].trim_end(), 80),
        filled.iter().position(|i| *i == header).unwrap_or(0),
        spans.join(", ")
    ))
}

/// Whether `line` is blank, or a rule of `-`, `=` and `+` under a header.
fn rule_or_blank(line: &str) -> bool {
    line.trim_matches([' ', '-', '=', '+']).is_empty()
}

/// Whether `path` names a file a fixed-width table may be printed to: a
/// text, report or data file, none of the formats with their own syntax.
fn text_file(path: &str) -> bool {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        None => true,
        Some(extension) => ["txt", "prn", "dat", "log", "out", "tbl", "rpt", "lst"].contains(&extension),
    }
}

/// Where the columns of `lines` (not blank, the header first) start: the
/// places after each run of [`GAP`] or more places that are a space on
/// every line, the first column at 0. `None` when fewer than [`COLUMNS`].
fn column_starts(lines: &[&str]) -> Option<Vec<usize>> {
    let width = lines.iter().map(|line| line.chars().count()).max()?;
    let chars: Vec<Vec<char>> = lines.iter().map(|line| line.chars().collect()).collect();
    let open = |place: usize| chars.iter().all(|line| line.get(place).is_none_or(|c| *c == ' '));
    if open(0) || lines.len() < ROWS + 1 {
        return None;
    }
    let mut starts = vec![0];
    let mut run = 0;
    for place in 0..width {
        match open(place) {
            true => run += 1,
            false => {
                if run >= GAP {
                    starts.push(place);
                }
                run = 0;
            }
        }
    }
    (starts.len() >= COLUMNS).then_some(starts)
}

/// The cells of `line` between the column `starts`, spaces taken off.
fn cut(line: &str, starts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    starts
        .iter()
        .enumerate()
        .map(|(i, start)| {
            let end = starts.get(i + 1).copied().unwrap_or(chars.len()).min(chars.len());
            chars
                .get(*start..end)
                .map_or(String::new(), |cell| cell.iter().collect::<String>().trim().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTER: &str = "Stone yard register\n\nBLOCK   STONE                  L_M  WEIGHT_T  BAY\nQ-1038  Portland Whitbed      1.60      2.06  A1\nQ-1039  Bath Monks Park       1.40      1.32  A2\nQ-1040  Yorkstone             1.20      1.30  A2\nQ-1041  Bath Stoke Ground     1.85      2.80  B1\n";

    #[test]
    fn a_fixed_width_table_with_spaced_values_is_said_with_its_columns_places() {
        let note = note("blocks.txt", REGISTER).expect("a fixed-width table");
        assert!(
            note.contains("it is a fixed-width table, its header line 3 (`BLOCK   STONE")
                && note.contains("some of its values hold a space (`Portland Whitbed`)"),
            "{note}"
        );
        assert!(
            note.contains("lines = [line for line in open('blocks.txt', encoding='utf-8-sig').read().splitlines() if line.strip(' -=+')][1:]\nspans = [(0, 8), (8, 30), (30, 36), (36, 46), (46, None)]"),
            "the title above the header is left out: {note}"
        );
    }

    #[test]
    fn text_a_split_reads_or_no_table_gets_no_note() {
        let plain = "name  score  team\nAnn   12     red\nBo    9      blue\nCy    15     red\n";
        assert_eq!(note("scores.txt", plain), None, "split() reads it");
        let prose = "Dear all,\nThe hall opens at nine.  Bring a flask.\nSee you there.\nJo\n";
        assert_eq!(note("letter.txt", prose), None);
        assert_eq!(note("blocks.py", REGISTER), None, "a program is no table");
        let log = "2025-01-01 10:00  INFO   started\n2025-01-01 10:05  WARN   disk low\n2025-01-01 10:09  INFO   retry ok\n2025-01-01 10:12  ERROR  failed\n";
        assert_eq!(note("app.log", log), None, "a first row of values is no header");
        let merged = "id  name         city   score\n1   Ann          York   12\n2   Bartholomew Leeds   9\n3   Cy           Hull   15\n";
        assert_eq!(
            note("scores.txt", merged),
            None,
            "a value that fills a gap runs two columns together"
        );
    }
}
