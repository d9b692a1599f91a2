//! The shape of a data file, for the planner's workspace listing: a JSON
//! file's field paths and a CSV file's columns, never their values; and,
//! for a program written with the files shown, where a table's header is
//! and what splits its columns, when that is not a plain CSV's
//! ([`table_notes`]).
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

/// Lines of a file read for its table's form.
const TABLE_LINES: usize = 200;

/// What may split a table's columns, and how each is said.
const SEPARATORS: [(char, &str); 4] = [(',', "commas"), ('\t', "tabs"), ('|', "`|`"), (';', "`;`")];

/// A table found in a text: where its header is, how many columns it has
/// and how many lines after the header have as many (its rows), the lines
/// after the header that do not (each an index into the text's lines), the
/// lines below it that repeat it, and its last row when that row holds the
/// totals of the rows above it.
struct Table {
    separator: char,
    header: usize,
    rows: usize,
    odd: Vec<usize>,
    repeats: Vec<usize>,
    totals: Option<usize>,
    /// Where a second table begins below it, if one does.
    second: Option<usize>,
}

/// For each file of `paths` in `workspace` that holds a table in another
/// form than a plain CSV's (a title or comment line above the header,
/// columns split by `|` or `;`, lines among the rows that are not rows):
/// a line saying where its header is and how to read it. Empty when none
/// does. All six of the 1.5B model's programs for a harvest log whose
/// header was its second line read the first as the header (`KeyError:
/// 'hive'`), as did five of six for a ticket list split by ` | ` under a
/// title (held-out-35, spent), though each file was shown whole.
pub(crate) fn table_notes<'a>(
    workspace: &crate::tools::workspace::Workspace,
    paths: impl IntoIterator<Item = &'a str>,
) -> String {
    notes_of(workspace, paths, layout_note)
}

/// What `note` says of each file of `paths` in `workspace` small enough to
/// read, one line each, the files it says nothing of left out.
pub(crate) fn notes_of<'a>(
    workspace: &crate::tools::workspace::Workspace,
    paths: impl IntoIterator<Item = &'a str>,
    note: fn(&str, &str) -> Option<String>,
) -> String {
    paths
        .into_iter()
        .filter_map(|path| {
            let full = workspace.resolve(path).ok()?;
            let small = std::fs::metadata(&full).ok()?.len() <= LARGEST_READ;
            let text = small.then(|| std::fs::read_to_string(&full).ok()).flatten()?;
            note(path, &text)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How to read the table in `text`, the file at `path`, when it is not
/// read as a plain CSV (see [`table_notes`]): what is odd about it, and
/// lines of Python that read its rows (a small model copies a reader it
/// is shown more surely than it follows a description).
pub(crate) fn table_note(path: &str, text: &str) -> Option<String> {
    let marked = text.starts_with(BYTE_ORDER_MARK);
    let lines: Vec<&str> = unmarked(text).lines().take(TABLE_LINES).collect();
    let table = best_table(&lines)?;
    let first = lines.iter().position(|line| !line.trim().is_empty())?;
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let plain = match extension.as_deref() {
        Some("csv") => table.separator == ',',
        Some("tsv") => table.separator == '\t',
        _ => false,
    };
    let spaced = spaced_header(lines[table.header], table.separator);
    let cells = OddCells::of(&lines, &table);
    let tidy = cells.is_none()
        && table.odd.is_empty()
        && table.repeats.is_empty()
        && table.totals.is_none()
        && table.second.is_none()
        && blank_rows(&lines, &table).is_empty();
    if plain && !spaced && table.header == first && tidy && !marked {
        return None;
    }
    let mut said = described(&lines, &table, &cells, plain, spaced)?;
    if let Some(cell) = &cells.negative {
        said.push_str(&negative_said(cell));
    }
    if marked {
        let first = match table.header {
            0 => format!(
                "its first name (`\\ufeff{}`)",
                crate::text::one_line(split_fields(lines[0], table.separator)[0].trim(), 40)
            ),
            _ => "its first line".to_string(),
        };
        said = format!("it begins with a byte-order mark, which `encoding='utf-8'` reads as part of {first}: open it with `encoding='utf-8-sig'`; {said}");
    }
    Some(format!(
        "{path}: {said}. Its rows, as dicts keyed by the header's names, are read so:\n{}",
        reader(path, &table, spaced, marked, cells.filled_on_first.as_deref())
    ))
}

/// What [`table_note`] finds in the cells of a table's rows that a plain
/// reading gets wrong, each found once.
struct OddCells {
    negative: Option<String>,
    percent: Option<(String, String)>,
    decimal_comma: Option<String>,
    filled_on_first: Option<String>,
    newest_first: Option<(String, String, String)>,
}

impl OddCells {
    fn of(lines: &[&str], table: &Table) -> OddCells {
        let rows = data_rows(lines, table);
        OddCells {
            negative: accounts_negative(&rows),
            percent: percent_signed(lines, table, &rows),
            decimal_comma: decimal_comma(lines, table, &rows),
            filled_on_first: filled_on_first(lines, table, &rows),
            newest_first: newest_first(lines, table, &rows),
        }
    }

    fn is_none(&self) -> bool {
        self.negative.is_none()
            && self.percent.is_none()
            && self.decimal_comma.is_none()
            && self.filled_on_first.is_none()
            && self.newest_first.is_none()
    }
}

/// The indices of `table`'s rows among `lines`: below its header, neither
/// blank, nor odd, nor a repeat of the header.
fn row_indices<'a>(lines: &'a [&str], table: &'a Table) -> impl Iterator<Item = usize> + 'a {
    (table.header + 1..table.second.unwrap_or(lines.len()))
        .filter(|i| !lines[*i].trim().is_empty() && !table.odd.contains(i) && !table.repeats.contains(i))
}

/// `table`'s records, each with its index among `lines` and its fields:
/// its rows without the totals row.
fn data_rows(lines: &[&str], table: &Table) -> Rows {
    row_indices(lines, table)
        .filter(|i| Some(*i) != table.totals)
        .map(|i| (i, split_fields(lines[i], table.separator)))
        .collect()
}

/// The invisible mark (U+FEFF) a spreadsheet may write at the start of a
/// UTF-8 file. Python's `encoding='utf-8'` keeps it, so the first column's
/// name is `\ufefffarm`, not `farm`: the 1.5B model's program for a
/// shearing tally picked its rows by `row.get('farm')`, found none, and
/// wrote 0 (held-out-51, spent).
const BYTE_ORDER_MARK: char = '\u{feff}';

/// `text` without the byte-order mark it may begin with.
fn unmarked(text: &str) -> &str {
    text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text)
}

/// How to read the file at `path`, whose text is `text`: as a table
/// ([`table_note`]), or, holding none, as lines of which some are blank
/// ([`lines_note`]), or as a checklist ([`checklist_note`]); or, its
/// columns printed at fixed places, by them ([`crate::fixed_width`]); or
/// as lines that each name a thing and its number ([`crate::named_numbers`]).
pub(crate) fn layout_note(path: &str, text: &str) -> Option<String> {
    table_note(path, text)
        .or_else(|| crate::fixed_width::note(path, text))
        .or_else(|| crate::named_numbers::note(path, text))
        .or_else(|| lines_note(path, text))
        .or_else(|| checklist_note(path, text))
}

/// For a Markdown checklist (two items or more of the form `- [ ] item`
/// or `- [x] item`): which mark says an item is done, and how one is
/// ticked. Two of the 1.5B model's five programs for ticking an item of a
/// packing list appended ` (done)` to its line, left `[ ]` as it was, and
/// agreed (held-out-41, spent); none wrote `[x]`, which every done item
/// above it held.
pub(crate) fn checklist_note(path: &str, text: &str) -> Option<String> {
    let items = text.lines().filter(|line| checklist_item(line).is_some()).count();
    if items < 2 {
        return None;
    }
    Some(format!(
        "{path} is a checklist: `- [ ] item` is an item not done, `- [x] item` one done. An item is ticked by changing its `[ ]` to `[x]` (and unticked by the reverse), the rest of its line as it is:\n```python\ndef ticked(text, item):\n    return text.replace('- [ ] ' + item, '- [x] ' + item, 1)\n```"
    ))
}

/// The mark of a Markdown checklist item's line (`[ ]`, `[x]` or `[X]`).
fn checklist_item(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(['-', '*', '+'])?.strip_prefix(' ')?;
    rest.get(..3).filter(|mark| ["[ ]", "[x]", "[X]"].contains(mark))
}

/// For a text of lines (no table) that ends in blank lines, none among
/// them: how many, and lines of Python that read the others. Both of the
/// 1.5B model's programs for "how many entries are in guestbook.txt? Each
/// line is one guest's entry" counted its three trailing blank lines
/// (held-out-40, spent), and agreed. Blank lines among the lines (a
/// Markdown file's paragraphs) are the text's own, and not said.
pub(crate) fn lines_note(path: &str, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rposition(|line| !line.trim().is_empty())?;
    let trailing = lines.len() - 1 - last;
    let inner = lines[..last].iter().any(|line| line.trim().is_empty());
    if trailing == 0 || inner || last == 0 || lines.len() > TABLE_LINES {
        return None;
    }
    Some(format!(
        "{path}: its last {trailing} line(s) are blank, and the {} above them are not. Its lines that are not blank are read so:\n```python\nlines = [line for line in open('{path}', encoding='utf-8').read().splitlines() if line.strip()]\n```",
        last + 1
    ))
}

/// The table `lines` hold, split by whichever separator gives it the most rows.
fn best_table(lines: &[&str]) -> Option<Table> {
    SEPARATORS
        .iter()
        .filter_map(|(separator, _)| table_in(lines, *separator))
        .max_by_key(|table| (table.rows, std::cmp::Reverse(table.header)))
}

/// The table `text` holds, in any of the forms [`table_note`] reads: its
/// header's names and its rows' fields (quotes taken off, spaces kept),
/// each row as many fields as the header, with its index among the text's
/// lines. `None` when it holds none.
pub(crate) type Rows = Vec<(usize, Vec<String>)>;
pub(crate) fn table_cells(text: &str) -> Option<(Vec<String>, Rows)> {
    let lines: Vec<&str> = unmarked(text).lines().take(TABLE_LINES).collect();
    let table = best_table(&lines)?;
    let split = |index: usize| split_fields(lines[index], table.separator);
    let header: Vec<String> = split(table.header).iter().map(|name| name.trim().to_string()).collect();
    let rows = row_indices(&lines, &table).map(|i| (i, split(i))).collect();
    Some((header, rows))
}

/// The fields of `line` split at `separator`, a separator inside double
/// quotes aside, each without its quotes.
fn split_fields(line: &str, separator: char) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c == separator && !quoted => fields.push(String::new()),
            c => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}

/// What is odd about `table` in `lines`, in words.
fn described(lines: &[&str], table: &Table, cells: &OddCells, plain: bool, spaced: bool) -> Option<String> {
    let quote = |index: usize| format!("`{}`", crate::text::one_line(lines[index].trim(), 80));
    let mut said = Vec::new();
    if !plain {
        let (_, name) = SEPARATORS.iter().find(|(c, _)| *c == table.separator)?;
        let around = if spaced { " with spaces around them" } else { "" };
        said.push(format!("its columns are separated by {name}{around}"));
    } else if spaced {
        said.push("its names and values have a space after each separator, which is no part of them".to_string());
    }
    said.push(format!(
        "its header is line {}: {}",
        table.header + 1,
        quote(table.header)
    ));
    let before: Vec<usize> = (0..table.header).filter(|i| !lines[*i].trim().is_empty()).collect();
    match before.as_slice() {
        [] => {}
        [one] => said.push(format!("line {} ({}) is not part of the table", one + 1, quote(*one))),
        more => said.push(format!("the {} lines above it are not part of the table", more.len())),
    }
    match blank_rows(lines, table).as_slice() {
        [] => {}
        [one] => said.push(format!("line {} is blank, not a row", one + 1)),
        blank => said.push(format!(
            "{} lines among or after its rows are blank, not rows (lines {})",
            blank.len(),
            blank
                .iter()
                .take(5)
                .map(|i| (i + 1).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    if !table.odd.is_empty() {
        let named: Vec<String> = table
            .odd
            .iter()
            .take(3)
            .map(|i| format!("line {} ({})", i + 1, quote(*i)))
            .collect();
        let verb = if named.len() == 1 { "is" } else { "are" };
        said.push(format!("{} {verb} not a row", named.join(", ")));
    }
    match table.repeats.as_slice() {
        [] => {}
        [one] => said.push(format!("line {} repeats the header: it is no row", one + 1)),
        more => said.push(format!(
            "lines {} repeat the header: they are no rows",
            more.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
    if let Some(cell) = &cells.decimal_comma {
        said.push(format!(
            "its numbers write the decimal point as a comma (`{cell}` is {}): read one with `float(cell.replace(',', '.'))`",
            cell.replace(',', ".")
        ));
    }
    if let Some((name, cell)) = &cells.percent {
        let number = cell.trim_end_matches('%');
        said.push(format!(
            "its column `{name}` holds percentages written with a % sign (`{cell}`): `float(cell.rstrip('%'))` reads {number}, a number of per cent, so compare it with a number of per cent (25% is 25, not 0.25)"
        ));
    }
    if let Some(name) = &cells.filled_on_first {
        said.push(format!(
            "its column `{name}` is written only on the first row of each group, and blank on the rows of the group below it: a blank `{name}` is the one above it"
        ));
    }
    if let Some((name, latest, earliest)) = &cells.newest_first {
        said.push(format!(
            "its rows run newest first by `{name}` (the first row's is {latest}, the last row's {earliest}): the first row in the file is the latest in time"
        ));
    }
    if let Some(totals) = table.totals {
        said.push(format!(
            "its last row, line {} ({}), holds the totals of the rows above it: it is no record of its own",
            totals + 1,
            quote(totals)
        ));
    }
    if let Some(second) = table.second {
        said.push(format!(
            "line {} ({}) and the lines below it are a second table, with a header of its own: they are no rows of this one",
            second + 1,
            quote(second)
        ));
    }
    Some(said.join("; "))
}

/// The first cell of `table`'s rows that is a number written with a
/// decimal comma (`35,00`: digits, a comma and one, two or four digits or
/// more, never three, which may be a thousands group); in a table split
/// by commas, quoted, and two such cells at least. Two of the 1.5B model's programs for a
/// card reader's export split by `;` read `35,00` as 3500, and agreed
/// (held-out-42, spent). In a table split by commas such a number must be
/// quoted (`"131,6"`): an olive mill's statement wrote its litres so, and
/// four of the model's seven programs and every checking program read them
/// with `float`, which fails, or left the filter out (held-out-52, spent).
fn decimal_comma(lines: &[&str], table: &Table, rows: &Rows) -> Option<String> {
    let decimal = |cell: &str| {
        let cell = cell.trim();
        let (whole, fraction) = cell.trim_start_matches('-').split_once(',')?;
        let digits = |part: &str| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
        (digits(whole) && digits(fraction) && fraction.len() != 3).then(|| cell.to_string())
    };
    let written = |i: usize, cell: &str| table.separator != ',' || lines[i].contains(&format!("\"{cell}\""));
    let found: Vec<String> = rows
        .iter()
        .flat_map(|(i, cells)| cells.iter().map(move |cell| (*i, cell)))
        .filter_map(|(i, cell)| decimal(cell).filter(|found| written(i, found)))
        .take(2)
        .collect();
    // Split by commas, one quoted pair of numbers may be a list (`"12,14"`).
    let least = if table.separator == ',' { 2 } else { 1 };
    (found.len() >= least).then(|| found[0].clone())
}

/// The name of a column of `table` written only on the first row of each
/// group, as a spreadsheet's merged cells export: its first row holds a
/// value of words, two rows or more do, more are blank below them, and
/// every other column's cells are filled in most rows. Every program for
/// an ironmonger's fixings at their reorder level matched the one row that
/// says `Fixings`, counted 1 of 4, and three agreed (held-out-52, spent),
/// though the task said how the sheet was written.
fn filled_on_first(lines: &[&str], table: &Table, rows: &Rows) -> Option<String> {
    let rows: Vec<&Vec<String>> = rows.iter().map(|(_, cells)| cells).collect();
    let names = split_fields(lines[table.header], table.separator);
    let blank = |row: &&Vec<String>, column: usize| row.get(column).is_none_or(|cell| cell.trim().is_empty());
    let blanks = |column: usize| rows.iter().filter(|row| blank(row, column)).count();
    let filled_elsewhere = |column: usize| {
        (0..names.len())
            .filter(|&c| c != column)
            .all(|c| blanks(c) * 4 <= rows.len())
    };
    (0..names.len()).find_map(|column| {
        let first = rows.first().is_some_and(|row| !blank(row, column));
        let values = rows.len() - blanks(column);
        let worded = rows
            .iter()
            .all(|row| blank(row, column) || row[column].chars().any(char::is_alphabetic));
        let grouped = first && worded && values >= 2 && blanks(column) > values && filled_elsewhere(column);
        grouped.then(|| names[column].trim().to_string())
    })
}

/// `text`, a table with a column written only on each group's first row
/// ([`filled_on_first`]), with that column's blank cells filled from the
/// row above, as the sheet means them, and the column's name. A program
/// that reads the rows right does the same work on either text
/// ([`crate::form_probe::meaning_changed`]). `None` when no column is so
/// written, or the table is longer than is read.
pub(crate) fn filled_down(text: &str) -> Option<Filled> {
    let body = unmarked(text);
    let lines: Vec<&str> = body.lines().collect();
    if lines.len() > TABLE_LINES {
        return None;
    }
    let table = best_table(&lines)?;
    let rows = data_rows(&lines, &table);
    let name = filled_on_first(&lines, &table, &rows)?;
    let header = split_fields(lines[table.header], table.separator);
    let column = header.iter().position(|field| field.trim() == name)?;
    let mut filled: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    let mut values = Vec::new();
    // The group's value as its first row writes it, quotes and spaces kept.
    let mut above = String::new();
    for (i, cells) in &rows {
        let mut raw = raw_fields(lines[*i], table.separator);
        match cells
            .get(column)
            .map(|cell| cell.trim())
            .filter(|cell| !cell.is_empty())
        {
            Some(cell) => {
                values.push(cell.to_lowercase());
                above = raw.get(column)?.clone();
            }
            None => {
                *raw.get_mut(column)? = above.clone();
                filled[*i] = raw.join(&table.separator.to_string());
            }
        }
    }
    let end = if body.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = filled.join(end);
    if body.ends_with('\n') {
        out.push_str(end);
    }
    let mark = if text.starts_with(BYTE_ORDER_MARK) {
        "\u{feff}"
    } else {
        ""
    };
    Some(Filled {
        name,
        values,
        text: format!("{mark}{out}"),
    })
}

/// A table's text with its column written only on each group's first row
/// filled down ([`filled_down`]): the column's name, its values (in small
/// letters), and the text.
pub(crate) struct Filled {
    pub name: String,
    pub values: Vec<String>,
    pub text: String,
}

/// The fields of `line` split at `separator` as written, quotes kept: a
/// separator inside double quotes is no split.
fn raw_fields(line: &str, separator: char) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        if c == separator && !quoted {
            fields.push(String::new());
            continue;
        }
        quoted ^= c == '"';
        fields.last_mut().expect("one field at least").push(c);
    }
    fields
}

/// The name of a column of `table` whose cells are each a number with a
/// % sign after it (`31%`), and its first such cell. Three of the 1.5B
/// model's four programs for how many cherry blocks had more than 25% of
/// their blossom damaged took the sign off, compared the number of per
/// cent with 0.25, and two agreed on every block (held-out-53, spent).
fn percent_signed(lines: &[&str], table: &Table, rows: &Rows) -> Option<(String, String)> {
    let names = split_fields(lines[table.header], table.separator);
    let percent = |cell: &str| {
        cell.trim()
            .strip_suffix('%')
            .is_some_and(|number| is_number(number.trim()))
    };
    (0..names.len()).find_map(|column| {
        let cells: Vec<&str> = rows
            .iter()
            .map(|(_, row)| row.get(column).map_or("", |cell| cell.trim()))
            .collect();
        let signed = cells.len() >= 2 && cells.iter().all(|cell| percent(cell));
        signed.then(|| (names[column].trim().to_string(), cells[0].to_string()))
    })
}

/// The name of a column of `table` whose cells are dates written year
/// first (`2025-01-16 21:00`), four rows or more, that run from the latest
/// down to the earliest, with its first and last row's cells. A gauge's
/// export listed its readings so, and both of the 1.5B model's programs
/// for when the river "first" reached a level took the first row that
/// did, the latest (held-out-52, spent), and agreed.
fn newest_first(lines: &[&str], table: &Table, rows: &Rows) -> Option<(String, String, String)> {
    if rows.len() < 4 {
        return None;
    }
    let names = split_fields(lines[table.header], table.separator);
    let year_first = |cell: &str| {
        let bytes = cell.trim().as_bytes();
        bytes.len() >= 10
            && bytes[..10].iter().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    *b == b'-' || *b == b'/'
                } else {
                    b.is_ascii_digit()
                }
            })
    };
    (0..names.len()).find_map(|column| {
        let cells: Vec<&str> = rows
            .iter()
            .map(|(_, row)| row.get(column).map_or("", |c| c.trim()))
            .collect();
        let dated = cells.iter().all(|cell| year_first(cell));
        let falling = cells.windows(2).all(|pair| pair[0] >= pair[1]) && cells[0] > cells[cells.len() - 1];
        (dated && falling).then(|| {
            let name = names[column].trim().to_string();
            (name, cells[0].to_string(), cells[cells.len() - 1].to_string())
        })
    })
}

/// The first cell of `table`'s rows that is a negative number as accounts
/// programs write one, in brackets (`(185.00)`) or with its minus after it
/// (`150.00-`), in a column whose other cells are numbers. Python's `float`
/// cannot read either: the 1.5B model's programs for what a boat still
/// owed on a marina statement failed on brackets, or took them off and
/// added payments to charges (held-out-51, spent); both programs for a
/// scout camp fund's balance took the minus off and added the money going
/// out (held-out-53, spent), though the task said how it was written.
fn accounts_negative(rows: &Rows) -> Option<String> {
    let bracketed = |cell: &str| {
        let cell = cell.trim();
        let inner = cell
            .strip_prefix('(')
            .and_then(|inner| inner.strip_suffix(')'))
            .or_else(|| cell.strip_suffix('-'))?;
        // Digits and a dot only: the reader shown reads no sign or group.
        let plain = inner.chars().all(|c| c.is_ascii_digit() || c == '.') && inner.parse::<f64>().is_ok();
        plain.then(|| cell.to_string())
    };
    let columns = rows.iter().map(|(_, row)| row.len()).max().unwrap_or(0);
    (0..columns).find_map(|column| {
        let cells: Vec<&str> = rows
            .iter()
            .filter_map(|(_, row)| row.get(column))
            .map(String::as_str)
            .collect();
        let found = cells.iter().find_map(|cell| bracketed(cell))?;
        let numbers = cells.iter().filter(|cell| is_number(cell)).count();
        (numbers > 0
            && cells
                .iter()
                .all(|cell| is_number(cell) || bracketed(cell).is_some() || cell.trim().is_empty()))
        .then_some(found)
    })
}

/// What [`table_note`] says of a negative number written as `cell`
/// ([`accounts_negative`]), with how to read one.
fn negative_said(cell: &str) -> String {
    match cell.strip_suffix('-') {
        Some(number) => format!(
            "; its numbers with a minus after them are negative (`{cell}` is -{number}), as some accounts programs write them: read a cell with `-float(cell.strip().rstrip('-')) if cell.strip().endswith('-') else float(cell)`"
        ),
        None => format!(
            "; its numbers in brackets are negative (`{cell}` is -{}), as accounts write them: read a cell with `float(cell.replace('(', '-').rstrip(')'))`",
            cell.trim_matches(['(', ')'])
        ),
    }
}

/// Whether the header `line` writes spaces around its `separator` (` | `),
/// or after each one (`name, sunlight`): `csv.DictReader` keeps them in the
/// names and the values (on held-out-39, spent, two programs agreed on a
/// JSON whose keys were `" sunlight"` and whose numbers were `" 2"`).
fn spaced_header(line: &str, separator: char) -> bool {
    let fields: Vec<&str> = line.split(separator).collect();
    line.contains(&format!(" {separator} ")) || (fields.len() > 1 && fields[1..].iter().all(|f| f.starts_with(' ')))
}

/// The blank lines below the header of `table` in `lines`: a program that
/// counts a `csv.reader`'s rows counts them too (on held-out-39, spent,
/// two programs that agreed counted an order list's two trailing blank
/// lines as orders).
fn blank_rows(lines: &[&str], table: &Table) -> Vec<usize> {
    (table.header + 1..table.second.unwrap_or(lines.len()))
        .filter(|i| lines[*i].trim().is_empty())
        .collect()
}

/// Lines of Python that read the rows of `table`, the file at `path`:
/// from its header on, blank lines and the lines that are no rows left out,
/// each name and value stripped where spaces stand around the separators.
fn reader(path: &str, table: &Table, spaced: bool, marked: bool, filled: Option<&str>) -> String {
    let encoding = if marked { "utf-8-sig" } else { "utf-8" };
    let left_out: Vec<usize> = table
        .odd
        .iter()
        .chain(&table.repeats)
        .copied()
        .chain(table.totals)
        .collect();
    let odd = match left_out.as_slice() {
        [] => String::new(),
        odd => {
            let indices: Vec<String> = odd.iter().map(usize::to_string).collect();
            format!(" and i not in ({},)", indices.join(", "))
        }
    };
    let end = match table.second {
        Some(second) => format!(" and i < {second}"),
        None => String::new(),
    };
    let delimiter = match table.separator {
        ',' => String::new(),
        '\t' => ", delimiter='\\t'".to_string(),
        other => format!(", delimiter='{other}'"),
    };
    let strip = match spaced {
        true => "\nrows = [{k.strip(): (v or '').strip() for k, v in row.items()} for row in rows]",
        false => "",
    };
    let filled = match filled {
        Some(name) => format!(
            "\nabove = ''\nfor row in rows:  # a blank {name} is the one above it\n    above = row[{name:?}] = (row[{name:?}] or '').strip() or above"
        ),
        None => String::new(),
    };
    format!(
        "```python\nimport csv\nlines = open('{path}', encoding='{encoding}').read().splitlines()\ntable = [line for i, line in enumerate(lines) if i >= {}{end}{odd} and line.strip()]\nrows = list(csv.DictReader(table{delimiter})){strip}{filled}\n```",
        table.header
    )
}

/// The table `lines` hold with columns split by `separator`: its header is
/// the first line of two fields or more that at least two of the lines
/// after it, and two thirds of them, match in fields. A Markdown table
/// (its lines begin with `|`) is not read here.
fn table_in(lines: &[&str], separator: char) -> Option<Table> {
    let counts: Vec<Option<usize>> = lines
        .iter()
        .map(|line| (!line.trim().is_empty()).then(|| fields(line, separator)))
        .collect();
    let header = (0..lines.len()).find(|&i| {
        let Some(n) = counts[i].filter(|n| *n >= 2) else {
            return false;
        };
        let later: Vec<usize> = counts[i + 1..].iter().flatten().copied().collect();
        let same = later.iter().filter(|count| **count == n).count();
        same >= 2 && same * 3 >= later.len() * 2
    })?;
    if separator == '|' && lines[header].trim_start().starts_with('|') {
        return None;
    }
    let columns = counts[header]?;
    let header = header_below(lines, separator, header, columns);
    let second = second_table(lines, separator, header);
    let after = (header + 1..second.unwrap_or(lines.len())).filter(|i| counts[*i].is_some());
    let (rows, odd): (Vec<usize>, Vec<usize>) = after.partition(|i| counts[*i] == Some(columns));
    let (repeats, rows): (Vec<usize>, Vec<usize>) = rows
        .into_iter()
        .partition(|i| same_fields(lines[*i], lines[header], separator));
    let totals = totals_row(lines, separator, &rows);
    Some(Table {
        separator,
        header,
        rows: rows.len(),
        odd,
        repeats,
        totals,
        second,
    })
}

/// Where a second table begins below the one whose header is at `header`
/// in `lines`: a line of names, none a number, that shares half the
/// header's names or more (two at least) and is not the header again,
/// with the title of one cell just above it, if it has one. A drama
/// school's bookings had its waiting list, under `WAITING LIST` and a
/// header of its own, straight below its rows, and both of the 1.5B
/// model's programs for the children booked on week 2 counted the waiting
/// list too, and agreed (held-out-53, spent).
fn second_table(lines: &[&str], separator: char, header: usize) -> Option<usize> {
    let names = |i: usize| -> Vec<String> {
        split_fields(unmarked(lines[i]), separator)
            .iter()
            .map(|field| field.trim().to_lowercase())
            .collect()
    };
    let own = names(header);
    let second = (header + 2..lines.len()).find(|&i| {
        let theirs = names(i);
        let named = theirs.iter().all(|name| !name.is_empty() && !is_number(name));
        let shared = theirs.iter().filter(|name| own.contains(name)).count();
        named && theirs != own && shared >= 2 && shared * 2 >= own.len()
    })?;
    let above = (header + 1..second).rev().find(|i| !lines[*i].trim().is_empty());
    let titled = above.filter(|at| {
        let cells: Vec<String> = names(*at).into_iter().filter(|cell| !cell.is_empty()).collect();
        matches!(cells.as_slice(), [one] if !is_number(one))
    });
    Some(titled.unwrap_or(second))
}

/// Whether `line` holds the fields of `header`, each the same name once
/// spaces and case are set aside: a header repeated below it, where two
/// exports were pasted together, is no record. Both the 1.5B model's
/// programs for the species of a ringing log counted its repeated header
/// as a species (held-out-49, spent), and a mountain rescue log's as a
/// callout (held-out-50, spent), each shown the file whole.
fn same_fields(line: &str, header: &str, separator: char) -> bool {
    let names = |text: &str| -> Vec<String> {
        split_fields(unmarked(text), separator)
            .iter()
            .map(|field| field.trim().to_lowercase())
            .collect()
    };
    // A first line of numbers is no header of names, and a row like it no repeat.
    let named = names(header).iter().all(|name| !name.is_empty() && !is_number(name));
    named && names(line) == names(header)
}

/// The last of `rows` (indices into `lines`) when it holds the totals of
/// the rows above it: in some column where each of three rows or more above
/// holds a number, its own is their sum, and in every such column its cell
/// is that sum, a number among theirs (an average), empty or a word. Both of the 1.5B model's programs for a kiln log's
/// average pieces per firing read its `TOTAL,,223,,111.40` line as a firing
/// (held-out-42, spent), and agreed.
fn totals_row(lines: &[&str], separator: char, rows: &[usize]) -> Option<usize> {
    let (last, above) = rows.split_last()?;
    // Two rows' sums come by chance (ids 1 and 2 above a 3).
    if above.len() < 3 {
        return None;
    }
    let cells = |i: usize| split_fields(lines[i], separator);
    let last_cells = cells(*last);
    let above: Vec<Vec<String>> = above.iter().map(|i| cells(*i)).collect();
    let mut summed = 0;
    // Columns averaged, and sums that are a value above too (`0,1,0` over
    // a `1`): an average beside such a sum is no evidence of a totals row.
    let (mut averaged, mut weak_sum) = (0, false);
    for (column, own) in last_cells.iter().enumerate() {
        let values: Option<Vec<f64>> = above
            .iter()
            .map(|row| row.get(column).and_then(|f| number(f)))
            .collect();
        let Some(values) = values else { continue };
        let sum: f64 = values.iter().sum();
        let (low, high) = values
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        match number(own) {
            Some(value) if (value - sum).abs() <= 0.005 + sum.abs() * 1e-9 => {
                summed += 1;
                weak_sum |= values.iter().any(|v| (v - value).abs() < 1e-9);
            }
            // An average of the rows above beside a sum (a mean price per
            // kilo under the kilos' total), none of their own values:
            // held-out-47's ramen order (spent), whose `Total,17.40,18.34`
            // two programs read as an item.
            Some(value) if (low..=high).contains(&value) && !values.iter().any(|v| (v - value).abs() < 1e-9) => {
                averaged += 1;
            }
            // Empty, or a label (`Total`) standing in a column of numbers.
            None if !own.chars().any(|c| c.is_ascii_digit()) => {}
            _ => return None,
        }
    }
    (summed > 0 && (averaged == 0 || !weak_sum)).then_some(*last)
}

/// The number a table's field holds, a currency sign, a percent sign and
/// thousands separators aside.
fn number(field: &str) -> Option<f64> {
    let bare = field.trim().trim_start_matches(['$', '£', '€']).trim_end_matches('%');
    bare.replace(',', "").parse::<f64>().ok().filter(|n| n.is_finite())
}

/// The line at or below `header` that heads the table: while the next
/// line with as many fields holds a name wherever the rows below it hold
/// numbers, it is the header and the line above it a title that happens to
/// hold a separator ("Riverside Runners - parkrun times, 6 April" above
/// `runner,minutes`, held-out-40, spent: every reader shown took the title
/// for the header).
fn header_below(lines: &[&str], separator: char, header: usize, columns: usize) -> usize {
    let next = |at: usize| (at + 1..lines.len()).find(|i| !lines[*i].trim().is_empty());
    let mut header = header;
    while let Some(below) = next(header) {
        if fields(lines[below], separator) != columns || !names_over_numbers(lines, separator, below) {
            break;
        }
        header = below;
    }
    header
}

/// Whether the line at `at` holds a name (no number) in each column where
/// the rows below it (lines with as many fields) hold numbers, two thirds
/// of them at least, and there is such a column.
fn names_over_numbers(lines: &[&str], separator: char, at: usize) -> bool {
    let line = split_fields(lines[at], separator);
    let rows: Vec<Vec<String>> = lines[at + 1..]
        .iter()
        .map(|row| split_fields(row, separator))
        .filter(|row| row.len() == line.len())
        .collect();
    if rows.len() < 2 {
        return false;
    }
    let numeric = |column: usize| rows.iter().filter(|row| is_number(&row[column])).count() * 3 >= rows.len() * 2;
    let columns: Vec<usize> = (0..line.len()).filter(|c| numeric(*c)).collect();
    !columns.is_empty() && columns.iter().all(|c| !is_number(&line[*c]))
}

/// Whether a table's field reads as a number, a currency sign, a percent
/// sign and thousands separators aside.
fn is_number(field: &str) -> bool {
    number(field).is_some()
}

/// How many fields `line` splits into at `separator`, a separator inside
/// double quotes aside ([`split_fields`]).
fn fields(line: &str, separator: char) -> usize {
    split_fields(line, separator).len()
}

/// What the reader a `note` shows prints, followed by `then`, run by
/// `python3` in a folder holding `file` (path and text) alone.
#[cfg(test)]
pub(crate) fn reader_prints(note: &str, (path, text): (&str, &str), then: &str) -> String {
    let code = note.split("```python\n").nth(1).unwrap().split("```").next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(path), text).unwrap();
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!("{code}\n{then}"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
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
    /// What the reader a note shows prints for the rows of `text`, run by
    /// `python3` in a folder where it is the file the note names.
    fn rows_read(note: &str, text: &str) -> String {
        let path = note.split(':').next().unwrap();
        reader_prints(note, (path, text), "print(rows)")
    }

    #[test]
    fn a_plain_csv_gets_no_note_and_a_title_above_the_header_does() {
        assert_eq!(
            table_note("orders.csv", "id,customer,amount\n101,Maya,20.00\n102,\"Leo, Jr\",3\n"),
            None
        );
        let log = "# Apiary harvest log 2024 - weights in kg\ndate,hive,frames,honey_kg\n2024-05-18,Linden,6,8.4\n2024-05-18,Clover,5,6.1\n2024-06-02, linden ,7,9.25\n";
        let note = table_note("harvest.csv", log).unwrap();
        assert!(
            note.starts_with("harvest.csv: its header is line 2: `date,hive,frames,honey_kg`; line 1 (`# Apiary harvest log 2024 - weights in kg`) is not part of the table. Its rows"),
            "{note}"
        );
        assert!(
            note.contains("if i >= 1 and line.strip()]\nrows = list(csv.DictReader(table))\n```"),
            "{note}"
        );
        assert_eq!(rows_read(&note, log), "[{'date': '2024-05-18', 'hive': 'Linden', 'frames': '6', 'honey_kg': '8.4'}, {'date': '2024-05-18', 'hive': 'Clover', 'frames': '5', 'honey_kg': '6.1'}, {'date': '2024-06-02', 'hive': ' linden ', 'frames': '7', 'honey_kg': '9.25'}]");
    }

    #[test]
    fn lines_with_blank_ones_after_them_are_said_and_read_without() {
        let guests = "12 May - Lovely stay! - Carol & Jim, Leeds\n14 May - Quiet room. - Pete\n2 June - Great walks. - Lena\n\n\n\n";
        let note = layout_note("guestbook.txt", guests).unwrap();
        assert!(
            note.starts_with("guestbook.txt: its last 3 line(s) are blank, and the 3 above them are not."),
            "{note}"
        );
        assert_eq!(
            reader_prints(&note, ("guestbook.txt", guests), "print(len(lines))"),
            "3"
        );
        assert_eq!(
            lines_note("notes.md", "# a\n\nb\nc\n\n"),
            None,
            "paragraphs are the text's own"
        );
        assert_eq!(lines_note("notes.txt", "a\nb\n"), None, "no blank line, no note");
    }

    #[test]
    fn a_checklist_is_said_with_how_an_item_is_ticked() {
        let list = "# Packing\n\n## Kitchen\n- [x] stove\n- [ ] gas canister\n- [ ] matches\n";
        let note = layout_note("list.md", list).unwrap();
        assert!(
            note.starts_with("list.md is a checklist: `- [ ] item` is an item not done"),
            "{note}"
        );
        let then = "print(ticked(open('list.md', encoding='utf-8').read(), 'gas canister'))";
        let ticked = reader_prints(&note, ("list.md", list), then);
        assert!(ticked.contains("- [x] gas canister\n- [ ] matches"), "{ticked}");
        assert_eq!(
            checklist_note("notes.md", "- milk\n- [ ] eggs\n"),
            None,
            "one item is no checklist"
        );
        assert_eq!(
            checklist_note("links.md", "- [a](b)\n- [c](d)\n"),
            None,
            "links are no marks"
        );
    }

    #[test]
    fn a_title_holding_a_comma_is_no_header_when_a_name_stands_over_numbers_below_it() {
        let times = "Riverside Runners - parkrun times, 6 April\nrunner,minutes\nAisha,24.5\nBen,31.2\nCarla,27.8\n";
        let note = table_note("times.csv", times).unwrap();
        assert!(
            note.starts_with("times.csv: its header is line 2: `runner,minutes`; line 1 (`Riverside Runners - parkrun times, 6 April`) is not part of the table."),
            "{note}"
        );
        assert_eq!(
            rows_read(&note, times),
            "[{'runner': 'Aisha', 'minutes': '24.5'}, {'runner': 'Ben', 'minutes': '31.2'}, {'runner': 'Carla', 'minutes': '27.8'}]"
        );
        // A header with a row of numbers right below it stays the header.
        let (header, rows) = table_cells("runner,minutes\nAisha,24.5\nBen,31.2\nCarla,27.8\n").unwrap();
        assert_eq!((header[0].as_str(), rows.len()), ("runner", 3));
    }

    #[test]
    fn a_last_row_of_the_totals_of_the_rows_above_is_said_and_not_read() {
        let loaves =
            "week,baker,loaves,takings\n1,Ann,40,£80.00\n2,Bo,35,£70.50\n3,Ann,45,£90.00\nTotal,,120,£240.50\n";
        let note = table_note("loaves.csv", loaves).unwrap();
        assert!(
            note.contains("its last row, line 5 (`Total,,120,£240.50`), holds the totals of the rows above it"),
            "{note}"
        );
        let read = reader_prints(&note, ("loaves.csv", loaves), "print(len(rows), rows[-1]['week'])");
        assert_eq!(read, "3 3");
        // A last row that is no sum in a column of numbers is a row.
        let counted = "week,loaves,takings\n1,40,80\n2,35,70\n3,5,20\n4,80,90\n";
        assert_eq!(
            table_note("counted.csv", counted),
            None,
            "4 is no sum of the weeks above"
        );
        let ids = "id,loaves\n1,40\n2,35\n3,75\n";
        assert_eq!(table_note("ids.csv", ids), None, "two rows above sum by chance");
        // A mean beside a total: the row is the totals' all the same.
        let order = "item,kg,price_per_kg\nPork belly,3.4,18.90\nNoodles,1.75,14.20\nKombu,1.15,38.50\nMenma,1.9,21.60\nTotal,8.20,21.40\n";
        let note = table_note("order.csv", order).unwrap();
        assert!(note.contains("`Total,8.20,21.40`), holds the totals"), "{note}");
        // A last row whose counts are among the rows' own is a row.
        let register = "name,present,absent\nAnn,18,0\nBo,17,1\nCy,19,0\nDee,18,1\n";
        assert_eq!(table_note("register.csv", register), None);
    }

    #[test]
    fn a_byte_order_mark_is_said_and_read_past() {
        let tally = "\u{feff}farm,fleece_kg\nHafod,261.4\nBryn,219.8\nHafod,270.9\n";
        let note = table_note("tally.csv", tally).unwrap();
        assert!(note.contains("byte-order mark"), "{note}");
        assert!(note.contains("(`\\ufefffarm`)"), "{note}");
        let read = reader_prints(
            &note,
            ("tally.csv", tally),
            "print(round(sum(float(r['fleece_kg']) for r in rows if r['farm'] == 'Hafod'), 1))",
        );
        assert_eq!(read, "532.3");
        let (header, _) = table_cells(tally).unwrap();
        assert_eq!(header[0], "farm");
        assert_eq!(table_note("plain.csv", &tally[3..]), None, "no mark, no note");
        let titled = "\u{feff}Shearing tally\nfarm,fleece_kg\nHafod,261.4\nBryn,219.8\n";
        assert!(table_note("t.csv", titled)
            .unwrap()
            .contains("as part of its first line"));
    }

    #[test]
    fn numbers_in_brackets_are_said_to_be_negative_with_how_to_read_them() {
        let statement = "date,boat,amount\n04-01,Kingfisher,185.00\n04-03,Kingfisher,18.50\n04-05,Kingfisher,(185.00)\n04-12,Morning Star,20.00\n";
        let note = table_note("statement.csv", statement).unwrap();
        assert!(
            note.contains("its numbers in brackets are negative (`(185.00)` is -185.00)"),
            "{note}"
        );
        let read = reader_prints(
            &note,
            ("statement.csv", statement),
            "print(sum(float(r['amount'].replace('(', '-').rstrip(')')) for r in rows if r['boat'] == 'Kingfisher'))",
        );
        assert_eq!(read, "18.5");
        // Brackets around words, or in a column of words, are no number.
        let grouped = "boat,amount\nKingfisher,1250.00\nHeron,(1,250.00)\n";
        assert_eq!(table_note("grouped.csv", grouped), None, "no reader shown for a group");
        let notes = "boat,note,amount\nKingfisher,(late),185.00\nHeron,(12),20.00\nHeron,paid,20.00\n";
        assert_eq!(table_note("notes.csv", notes), None);
    }

    #[test]
    fn a_second_table_below_the_first_is_said_and_not_read() {
        let bookings = "child,age,week,paid\nIsla,9,1,yes\nTheo,11,2,yes\nAmara,10,2,no\nWAITING LIST,,,\nchild,age,week,added_on\nNell,9,2,2025-05-30\nRavi,11,2,2025-06-02\n";
        let note = table_note("bookings.csv", bookings).expect("a second table is said");
        assert!(
            note.contains(
                "line 5 (`WAITING LIST,,,`) and the lines below it are a second table, with a header of its own"
            ),
            "{note}"
        );
        let read = reader_prints(
            &note,
            ("bookings.csv", bookings),
            "print(sum(1 for r in rows if r['week'] == '2'))",
        );
        assert_eq!(read, "2");
        let (_, rows) = table_cells(bookings).unwrap();
        assert_eq!(rows.len(), 3, "the table's rows alone");
        let untitled =
            "child,age,week,paid\nIsla,9,1,yes\nTheo,11,2,yes\nchild,age,week,added_on\nNell,9,2,2025-05-30\n";
        assert!(table_note("b.csv", untitled)
            .unwrap()
            .contains("line 4 (`child,age,week,added_on`) and the lines below it are a second table"));
    }

    #[test]
    fn a_column_of_percentages_with_a_sign_is_said_with_its_scale() {
        let survey = "block,variety,blossom_damaged\nA1,Stella,8%\nA2,Stella,31%\nA3,Kordia,25%\n";
        let note = table_note("frost_survey.csv", survey).expect("percentages are said");
        assert!(
            note.contains("its column `blossom_damaged` holds percentages written with a % sign (`8%`): `float(cell.rstrip('%'))` reads 8, a number of per cent"),
            "{note}"
        );
        let shares = "block,share\nA1,8%\nA2,0.31\n";
        assert_eq!(
            table_note("shares.csv", shares),
            None,
            "a column of mixed forms is not said so"
        );
    }

    #[test]
    fn numbers_with_a_minus_after_them_are_said_to_be_negative_with_how_to_read_them() {
        let ledger = "date,details,amount\n2025-01-04,Subs,240.00\n2025-01-11,Minibus deposit,150.00-\n2025-01-18,Cake sale,86.40\n2025-01-25,Tent repair kit,32.99-\n";
        let note = table_note("ledger.csv", ledger).unwrap();
        assert!(
            note.contains("its numbers with a minus after them are negative (`150.00-` is -150.00)"),
            "{note}"
        );
        let read = reader_prints(
            &note,
            ("ledger.csv", ledger),
            "cell = lambda cell: -float(cell.strip().rstrip('-')) if cell.strip().endswith('-') else float(cell)\nprint(round(412.60 + sum(cell(r['amount']) for r in rows), 2))",
        );
        assert_eq!(read, "556.01");
        let ranges = "team,ages\nCubs,8-\nScouts,10-14\nBeavers,6-8\n";
        assert_eq!(
            table_note("ranges.csv", ranges),
            None,
            "a column of ranges holds no numbers"
        );
    }

    #[test]
    fn a_header_repeated_below_is_said_and_not_read() {
        let log = "date,ring,species\n08-03,A1,Blue Tit\n08-03,A2,Wren\nDate, Ring ,species\n08-10,A3,Robin\n08-10,A4,Wren\ndate,ring,species\n08-17,A5,Dunnock\n";
        let note = table_note("log.csv", log).unwrap();
        assert!(
            note.contains("lines 4, 7 repeat the header: they are no rows"),
            "{note}"
        );
        let read = reader_prints(
            &note,
            ("log.csv", log),
            "print(len(rows), len({r['species'] for r in rows}))",
        );
        assert_eq!(read, "5 4");
        let (_, rows) = table_cells(log).unwrap();
        assert_eq!(rows.len(), 5);
        // A row that holds one of the header's names is a row.
        let named = "name,role\nAda,name\nBo,role\nCy,cook\n";
        assert_eq!(table_note("named.csv", named), None);
        // A first line of numbers is no header, and a row like it no repeat.
        let (_, rows) = table_cells("3,4\n5,6\n3,4\n7,8\n").unwrap();
        assert_eq!(rows.len(), 3);
        // A second export's byte-order mark does not hide its header.
        let pasted = "\u{feff}a,b\nx,1\ny,2\n\u{feff}a,b\nz,3\n";
        assert!(table_note("p.csv", pasted)
            .unwrap()
            .contains("line 4 repeats the header"));
    }

    #[test]
    fn a_column_written_only_on_each_groups_first_row_is_said_and_filled_down() {
        let stock = "category,item,in_stock,reorder_at\nHinges,Butt hinge,14,10\n,Tee hinge,4,6\nFixings,Wood screws,6,10\n,Wall plugs,14,10\n,Coach bolts,9,8\nLocks,Padlock,2,4\n,Hasp,1,3\n";
        let note = table_note("stock.csv", stock).expect("a column filled on first rows is said");
        assert!(
            note.contains("its column `category` is written only on the first row of each group"),
            "{note}"
        );
        let read = rows_read(&note, stock);
        assert!(read.contains("'category': 'Fixings', 'item': 'Coach bolts'"), "{read}");
        let gaps = "name,phone,email\nAnn,123,a@x\nBo,,b@x\nCy,456,\nDee,,d@x\n";
        assert_eq!(table_note("contacts.csv", gaps), None, "a few blanks are no groups");
    }

    #[test]
    fn a_fixed_width_table_is_read_by_the_places_of_its_columns() {
        let register = "BLOCK   STONE                  L_M  WEIGHT_T  BAY\nQ-1038  Portland Whitbed      1.60      2.06  A1\nQ-1039  Bath Monks Park       1.40      1.32  A2\nQ-1040  Yorkstone             1.20      1.30  A2\nQ-1041  Bath Stoke Ground     1.85      2.80  B1\n";
        let note = layout_note("blocks.txt", register).expect("a fixed-width table");
        let read = reader_prints(
            &note,
            ("blocks.txt", register),
            "print(max((r for r in rows if r['STONE'].startswith('Bath')), key=lambda r: float(r['WEIGHT_T']))['BLOCK'], rows[0]['L_M'])",
        );
        assert_eq!(read, "Q-1041 1.60");
    }

    #[test]
    fn a_column_written_on_first_rows_is_filled_down_as_written() {
        let stock = "\u{feff}category;item;in_stock\r\nHinges;Butt hinge;14\r\n;Tee hinge;4\r\n\"Fixings; small\";Wood screws;6\r\n;Wall plugs;14\r\n;Coach bolts;9\r\nLocks;Padlock;2\r\n;Hasp;1\r\n";
        let Filled {
            name,
            values,
            text: filled,
        } = filled_down(stock).expect("a column filled on first rows");
        assert_eq!(name, "category");
        assert_eq!(values, ["hinges", "fixings; small", "locks"]);
        assert_eq!(
            filled,
            "\u{feff}category;item;in_stock\r\nHinges;Butt hinge;14\r\nHinges;Tee hinge;4\r\n\"Fixings; small\";Wood screws;6\r\n\"Fixings; small\";Wall plugs;14\r\n\"Fixings; small\";Coach bolts;9\r\nLocks;Padlock;2\r\nLocks;Hasp;1\r\n"
        );
        assert!(
            filled_down(&filled).is_none(),
            "once filled, no column is written on first rows"
        );
        assert!(filled_down("name,phone\nAnn,123\nBo,\nCy,456\n").is_none());
    }

    #[test]
    fn rows_that_run_newest_first_are_said_and_oldest_first_are_not() {
        let levels = "reading_time,level_m\n2025-01-16 21:00,1.80\n2025-01-16 18:00,1.88\n2025-01-15 09:00,2.45\n2025-01-14 15:00,2.10\n2025-01-14 12:00,2.06\n";
        let note = table_note("levels.csv", levels).expect("newest first is said");
        assert!(
            note.contains("its rows run newest first by `reading_time` (the first row's is 2025-01-16 21:00, the last row's 2025-01-14 12:00)"),
            "{note}"
        );
        let oldest: String = std::iter::once("reading_time,level_m")
            .chain(levels.lines().skip(1).collect::<Vec<_>>().into_iter().rev())
            .map(|line| format!("{line}\n"))
            .collect();
        assert_eq!(
            table_note("levels.csv", &oldest),
            None,
            "oldest first is the order a reader expects"
        );
        let three = "day,n\n2025-01-03,1\n2025-01-02,2\n2025-01-01,3\n";
        assert_eq!(table_note("days.csv", three), None, "three rows are too few to tell");
    }

    #[test]
    fn numbers_with_a_decimal_comma_are_said_with_how_to_read_them() {
        let export = "date;item;qty;amount\n2024-07-06;Cone;14;35,00\n2024-07-06;Tub;6;18,5\n";
        let note = table_note("export.csv", export).unwrap();
        assert!(
            note.contains("its numbers write the decimal point as a comma (`35,00` is 35.00)"),
            "{note}"
        );
        let grouped = "date;item;amount\n2024-07-06;Van;1,250\n2024-07-07;Tub;2,400\n";
        let note = table_note("grouped.csv", grouped).unwrap();
        assert!(
            !note.contains("decimal point"),
            "three digits may be a thousands group: {note}"
        );
        let quoted = "date,variety,oil_litres\n2024-11-04,Picual,\"131,6\"\n2024-11-04,Arbequina,\"83,2\"\n";
        let note = table_note("pressings.csv", quoted).expect("a quoted decimal comma is said");
        assert!(note.contains("(`131,6` is 131.6)"), "{note}");
        let grouped = "date,item,amount\n2024-07-06,Van,\"1,250\"\n2024-07-07,Tub,\"2,400\"\n";
        assert_eq!(
            table_note("grouped.csv", grouped),
            None,
            "a quoted thousands group is no decimal"
        );
        let plain = "date,item,qty\n2024-07-06,Cone,14\n2024-07-07,Tub,6\n";
        assert_eq!(table_note("plain.csv", plain), None, "two fields are no decimal");
    }

    #[test]
    fn columns_split_by_a_bar_under_a_title_are_said_with_the_lines_that_are_no_rows() {
        let tickets = "BIKE SHOP - REPAIR TICKETS, MARCH\nticket | customer | work | charged\n#301 | R. Vance | full tune-up | $89.00\n#302 | M. Dube | wheel rebuild, new hub | $1,045.50\n(void)\n#303 | K. Lott | brake bleed | $64\n";
        let note = table_note("repairs.txt", tickets).unwrap();
        assert!(
            note.starts_with("repairs.txt: its columns are separated by `|` with spaces around them; its header is line 2: `ticket | customer | work | charged`; line 1 (`BIKE SHOP - REPAIR TICKETS, MARCH`) is not part of the table; line 5 (`(void)`) is not a row."),
            "{note}"
        );
        assert_eq!(rows_read(&note, tickets), "[{'ticket': '#301', 'customer': 'R. Vance', 'work': 'full tune-up', 'charged': '$89.00'}, {'ticket': '#302', 'customer': 'M. Dube', 'work': 'wheel rebuild, new hub', 'charged': '$1,045.50'}, {'ticket': '#303', 'customer': 'K. Lott', 'work': 'brake bleed', 'charged': '$64'}]");
    }

    #[test]
    fn a_csv_with_a_space_after_each_comma_is_read_stripped() {
        let plants = "name, sunlight, water_every_days\nBasil, full sun, 2\nMint, partial shade, 3\n";
        let note = table_note("plants.csv", plants).unwrap();
        assert!(
            note.starts_with("plants.csv: its names and values have a space after each separator, which is no part of them; its header is line 1"),
            "{note}"
        );
        assert_eq!(
            rows_read(&note, plants),
            "[{'name': 'Basil', 'sunlight': 'full sun', 'water_every_days': '2'}, {'name': 'Mint', 'sunlight': 'partial shade', 'water_every_days': '3'}]"
        );
    }

    #[test]
    fn blank_lines_among_or_after_the_rows_are_said_and_not_read() {
        let orders = "order_id,date,total\nA-1,2024-06-01,12.50\nA-2,2024-06-02,8.00\n\n\n";
        let note = table_note("orders.csv", orders).unwrap();
        assert!(
            note.starts_with("orders.csv: its header is line 1: `order_id,date,total`; 2 lines among or after its rows are blank, not rows (lines 4, 5). Its rows"),
            "{note}"
        );
        assert_eq!(
            rows_read(&note, orders),
            "[{'order_id': 'A-1', 'date': '2024-06-01', 'total': '12.50'}, {'order_id': 'A-2', 'date': '2024-06-02', 'total': '8.00'}]"
        );
    }

    #[test]
    fn text_that_is_no_table_and_a_markdown_table_get_no_note() {
        assert_eq!(
            table_note("notes.txt", "Buy milk, eggs\nCall Ann\nThe end, finally, of it\n"),
            None
        );
        let markdown = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n";
        assert_eq!(table_note("table.md", markdown), None);
    }
}
