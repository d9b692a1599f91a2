//! Whether two texts a program or a run wrote are the same content: the
//! same lines, the same number at the precision shown, the same number in
//! other words, the same file names with or without their folder. The vote
//! ([`crate::program_vote`]) and the second derivation
//! ([`crate::recompute`]) compare what programs computed by these.

/// Whether `a` and `b` are the same text once each `\r\n` is read as `\n`:
/// a file written back through `csv.writer`, which ends its lines with
/// `\r\n`, and no value changed, is the file as it was. On held-out-32 a
/// program to upper-case a column changed no row (`if 'sku' in row`),
/// wrote inventory.csv back so, and the run said `succeeded`.
pub(crate) fn same_text(a: &[u8], b: &[u8]) -> bool {
    let lf = |text: &[u8]| -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len());
        for (i, &byte) in text.iter().enumerate() {
            if !(byte == b'\r' && text.get(i + 1) == Some(&b'\n')) {
                out.push(byte);
            }
        }
        out
    };
    a == b || lf(a) == lf(b)
}

/// Whether `a` and `b` are the same content: the same lines, trailing
/// spaces and blank lines at either end aside, or the same number at the
/// precision of the less precise (`7.5` and `7.50`, `7.32` and `7.324`).
pub(crate) fn same_content(a: &str, b: &str) -> bool {
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        let places = decimals(a.trim()).min(decimals(b.trim())) as i32;
        let scale = 10f64.powi(places);
        return (x * scale).round() == (y * scale).round();
    }
    lines(a) == lines(b)
}

/// The one number a line of words holds, as digits (`Total revenue:
/// $2,709.90` holds `2709.90`): `None` when `text` is more than one line,
/// holds no number or more than one, or its one group of digits is no
/// plain number (a date, a time, a version, a decimal comma) or is part of
/// a word (`B12`, `55km`). Programs that computed one value write it in
/// their own words; what they computed is the number.
pub(crate) fn number_in_words(text: &str) -> Option<String> {
    let text = text.trim();
    if text.contains('\n') {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | ',' | ':' | '/' | '-');
    let mut runs = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if !numeric(chars[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < chars.len() && numeric(chars[at]) {
            at += 1;
        }
        if chars[start..at].iter().any(char::is_ascii_digit) {
            runs.push((start, at));
        }
    }
    let [(start, end)] = runs[..] else {
        return None;
    };
    let in_a_word = |at: Option<&char>| at.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    if in_a_word(start.checked_sub(1).and_then(|before| chars.get(before))) || in_a_word(chars.get(end)) {
        return None;
    }
    // A sentence's own stop or comma after the number is no part of it.
    let run: String = chars[start..end].iter().collect();
    let run = run
        .trim_end_matches(['.', ',', ':', '-', '/'])
        .trim_start_matches([',', ':', '/']);
    let (whole, fraction) = run.split_once('.').unwrap_or((run, ""));
    let mut groups = whole.trim_start_matches('-').split(',');
    let first = groups.next().unwrap_or_default();
    let thousands = groups.all(|group| group.len() == 3 && group.chars().all(|c| c.is_ascii_digit()));
    let digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    let grouped = !whole.contains(',') || (1..=3).contains(&first.len());
    let plain = !first.is_empty() && digits(first) && digits(fraction) && thousands && grouped;
    plain.then(|| run.replace(',', ""))
}

/// The number of `text` when it is one line of words around one number
/// (`Total revenue: $2,709.90`, `55.4 km`, `3 failures`; not `2709.90`,
/// `$2,709.90` or `58.8%`): what a file the task names for a value holds
/// when the value is written into a sentence or with its label or unit.
pub(crate) fn number_with_words(text: &str) -> Option<String> {
    let number = number_in_words(text)?;
    text.chars().any(char::is_alphabetic).then_some(number)
}

/// What is wrong with a new file at `path` that holds `text`, when it is
/// one number with words around it ([`number_with_words`]): the file the
/// task names for a value is to hold the value. On held-out-21 two
/// programs wrote `Total revenue: $2709.90` to weekly_revenue.txt, agreed,
/// and the run said `succeeded`; on held-out-20 two wrote `Total
/// distance: 55.4 km`.
///
/// Not when the words name a value of the data (`inputs`: the texts of the
/// workspace's files, [`data_values`]): `Seville: 44.1°C` names a city of
/// temps.json beside its high, which a task asking for "the city name and
/// its temperature" wants (held-out-27, failed as worded). A sentence
/// around a value of the data is still a sentence: with the values it
/// names taken out, `The difference between April and March is 120 kWh`
/// has more words than a label and a unit ([`MOST_WORDS_BESIDE`]).
pub(crate) fn value_in_words(path: &str, text: &str, inputs: &[&str]) -> Option<String> {
    let number = number_with_words(text)?;
    // A value a configuration sets, written whole, is the value: on
    // held-out-49 (spent) a run wrote the room ringers.ini sets, `Vestry
    // Room 2`, and was failed for a number with words around it.
    let whole = text.trim().trim_matches(['"', '\'']);
    if inputs
        .iter()
        .any(|input| setting_values(input).any(|value| value == whole))
    {
        return None;
    }
    let named: Vec<String> = inputs
        .iter()
        .flat_map(|input| data_values(input))
        .filter(|value| holds_word(text, value))
        .collect();
    if !named.is_empty() && words_beside(text, &named) <= MOST_WORDS_BESIDE {
        return None;
    }
    Some(format!(
        "{path}{HOLDS}{}`{IN_WORDS}: a file for a value holds the value alone ({number})",
        text.trim()
    ))
}

/// How [`value_in_words`] says what a file holds (`{path}{HOLDS}{text}`{IN_WORDS}`),
/// which [`crate::program_heads`] reads the path from.
pub(crate) const HOLDS: &str = " holds `";
pub(crate) const IN_WORDS: &str = ", the value with words around it";

/// The values of the data in `text` that hold a word of three letters or
/// more: a JSON document's strings (not its keys), else the cells of a
/// table's rows after its first (not its header). A label (`Total`, a
/// column's name) is none of them; a name in the data (`Seville`) is.
fn data_values(text: &str) -> Vec<String> {
    fn strings(value: &serde_json::Value, found: &mut Vec<String>) {
        match value {
            serde_json::Value::String(s) => found.push(s.trim().to_string()),
            serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, found)),
            serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(document) => strings(&document, &mut found),
        Err(_) => found.extend(rows(text).into_iter().skip(1).flatten()),
    }
    found.retain(|value| value.chars().filter(|c| c.is_alphabetic()).count() >= 3);
    found
}

/// The values of the lines of `text` that set a key (`room = Vestry Room
/// 2`, `room: Vestry Room 2`, `- ROOM="Vestry Room 2"  # upstairs`), a
/// comment after it and quotes put aside.
fn setting_values(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.lines().filter_map(|line| {
        let line = line.trim_start().trim_start_matches("- ");
        let at = line.find(['=', ':'])?;
        let key = line[..at].trim().trim_start_matches("export ");
        let is_key = key.starts_with(|c: char| c.is_alphabetic())
            && key
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | ' '));
        let value = line[at + 1..].trim();
        let value = [" #", " ;"]
            .iter()
            .fold(value, |value, mark| value.split(mark).next().unwrap_or(value));
        let value = value.trim().trim_matches(['"', '\'']).trim();
        (is_key && !value.is_empty()).then_some(value)
    })
}

/// Most words (two letters or more) a value written beside a value of the
/// data may have around it: a label and a unit (`Seville, top: 44.1 °C`).
const MOST_WORDS_BESIDE: usize = 2;

/// How many words of two letters or more `text` has beside the values of
/// the data it names (`named`).
fn words_beside(text: &str, named: &[String]) -> usize {
    let mut rest = text.to_string();
    for value in named {
        rest = rest.replace(value.as_str(), " ");
    }
    rest.split(|c: char| !c.is_alphabetic())
        .filter(|word| word.chars().count() >= 2)
        .count()
}

/// Whether `text` holds `word` whole: not inside a longer word.
fn holds_word(text: &str, word: &str) -> bool {
    crate::text::stands_alone(text, word, char::is_alphanumeric)
}

/// What is wrong with a new table at `path` (a `.csv` or `.tsv` file) that
/// holds `text`, when its first row is a data row of one of `inputs` (the
/// workspace's files: path and text) and that input's header row is
/// nowhere in it: the header was read past, or taken for the first data
/// row and skipped with it. On held-out-27 two programs (one written twice)
/// called `next(reader)` once to skip the header and once more to "write
/// the header", and sales_staff.csv began with Rosa Delgado's row. A
/// header is a first row of words with no number among its cells, unlike
/// the row below it.
pub(crate) fn header_lost(path: &str, text: &str, inputs: &[(&str, &str)]) -> Option<String> {
    if !is_table(path) {
        return None;
    }
    let written = rows(text);
    let first = written.first()?;
    inputs.iter().filter(|(p, _)| is_table(p) && *p != path).find_map(|(input, held)| {
        let held = rows(held);
        let (header, data) = held.split_first()?;
        let is_header = header.iter().all(|cell| !cell.is_empty() && number(cell).is_none())
            && data.first().is_some_and(|row| row != header);
        let lost = is_header && data.contains(first) && !written.contains(header);
        lost.then(|| {
            format!(
                "{path} begins with a data row of {input} (`{}`), not with its header (`{}`): the header row was lost (write the header first, then the rows)",
                first.join(","),
                header.join(",")
            )
        })
    })
}

/// What is wrong with a new table at `path` (a `.csv` or `.tsv` file) that
/// holds `text`, when a row below its header is the header again and no
/// table among `inputs` holds its header twice: rows were written as their
/// column names. A `csv.writer` given dicts writes each dict's keys; on
/// held-out-46 (spent) the hot vivariums were written so, every row
/// `tank,species,basking_temp_c,humidity_pct`, two programs agreed, and
/// the run said `succeeded`.
pub(crate) fn header_repeated(path: &str, text: &str, inputs: &[(&str, &str)]) -> Option<String> {
    if !is_table(path) {
        return None;
    }
    let twice = |text: &str| -> Option<(Vec<String>, usize, usize)> {
        let rows = rows(text);
        let (header, data) = rows.split_first()?;
        // One column's header may stand as a value below it too (`word`).
        let is_header = header.len() >= 2 && header.iter().all(|cell| !cell.is_empty() && number(cell).is_none());
        let repeats = data.iter().filter(|row| *row == header).count();
        (is_header && repeats > 0).then(|| (header.clone(), repeats, data.len()))
    };
    let (header, repeats, data) = twice(text)?;
    if inputs
        .iter()
        .any(|(input, held)| is_table(input) && *input != path && twice(held).is_some())
    {
        return None;
    }
    Some(format!(
        "{path} repeats its header row (`{}`) as {repeats} of its {data} rows below it: the rows were written as their column names (a csv.writer given dicts writes their keys); write each row's values",
        header.join(",")
    ))
}

/// Whether `path` names a table the header checks read: `.csv` or `.tsv`.
fn is_table(path: &str) -> bool {
    path.ends_with(".csv") || path.ends_with(".tsv")
}

/// The rows of a small table: each line not blank, cut at commas or tabs,
/// each cell trimmed and without the quotes around it.
pub(crate) fn rows(text: &str) -> Vec<Vec<String>> {
    lines(text)
        .into_iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            line.split([',', '\t'])
                .map(|cell| cell.trim().trim_matches('"').trim().to_string())
                .collect()
        })
        .collect()
}

/// Whether `out` is a zero, in any form (`0`, `0.00`, `0:00:00`): every
/// digit of it a 0, and nothing else in it but separators. A zero is what
/// a program whose pattern matched nothing prints (a sum or count of no
/// rows), so two zeros are no agreement and a zero is no derivation.
pub(crate) fn is_zero(out: &str) -> bool {
    let out = out.trim();
    out.chars().any(|c| c == '0') && out.chars().all(|c| c == '0' || ":.,- ".contains(c))
}

/// Whether `a` and `b` each hold one number in words ([`number_in_words`])
/// and it is the same number (`2709.9` and `Total: $2,709.90`; not `8.2`
/// and `8.24`), a binary fraction's last digits aside: a sum printed
/// unrounded is `180.89999999999998`, and is 180.9.
pub(crate) fn same_number_in_words(a: &str, b: &str) -> bool {
    let value = |text: &str| number_in_words(text).and_then(|n| n.parse::<f64>().ok());
    let (Some(x), Some(y)) = (value(a), value(b)) else {
        return false;
    };
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
}

/// Whether `a` and `b` are each one JSON document (an object or an array)
/// holding the same data, whatever its spacing and indentation: two
/// programs of held-out-21's patch bump wrote `1.4.10` into package.json,
/// one with `indent=2` and one with `indent=4`, and did not agree.
pub(crate) fn same_json(a: &str, b: &str) -> bool {
    matches!((json_document(a), json_document(b)), (Some(x), Some(y)) if x == y)
}

/// `text` read as one JSON document (an object or an array), if it is one.
fn json_document(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(text.trim())
        .ok()
        .filter(|value| value.is_object() || value.is_array())
}

/// Whether `a` and `b` are each one JSON document holding the same data
/// once every string that is a number is taken as that number (`"4.31"`
/// as `4.31`): the same rows, one with numbers written as text.
pub(crate) fn same_json_but_typing(a: &str, b: &str) -> bool {
    fn typed(value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(text) => match text.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => serde_json::json!(n),
                _ => Value::String(text),
            },
            Value::Number(n) => serde_json::json!(n.as_f64()),
            Value::Array(items) => Value::Array(items.into_iter().map(typed).collect()),
            Value::Object(fields) => Value::Object(fields.into_iter().map(|(k, v)| (k, typed(v))).collect()),
            other => other,
        }
    }
    let document = |text: &str| json_document(text).map(typed);
    matches!((document(a), document(b)), (Some(x), Some(y)) if x == y)
}

/// Whether `a` and `b` have one shape: where either is a number, both are
/// one value written with digits (`1` and `1.78.0`; not `3 failures`);
/// otherwise, as many lines, and not another reading ([`another_reading`]).
pub(crate) fn same_shape(a: &str, b: &str) -> bool {
    match number(a).is_some() || number(b).is_some() {
        true => crate::text::value_with_digits(a) && crate::text::value_with_digits(b),
        false => lines(a).len() == lines(b).len() && !another_reading(a, b),
    }
}

/// Whether `a` and `b`, of as many lines (two or more), share a line and
/// differ in kind on another: one holds a value written with digits
/// ([`crate::text::value_with_digits`]) where the other holds words. They
/// computed the same value and put another thing beside it, a reading of
/// what the task asks that is the check's to weigh, not a second value of
/// one thing. On held-out-43 (spent) two checking programs printed a
/// month's takings twice where the task asked for the best month's name,
/// then its takings, and refuted the run's right file.
pub(crate) fn another_reading(a: &str, b: &str) -> bool {
    let (a, b) = (lines(a), lines(b));
    let kind = |line: &str| crate::text::value_with_digits(line);
    let pairs = || a.iter().zip(&b);
    a.len() == b.len()
        && a.len() >= 2
        && pairs().any(|(x, y)| x.trim() == y.trim())
        && pairs().any(|(x, y)| kind(x) != kind(y))
}

/// Whether `a` and `b` list the same names of files, one per line, and
/// differ only in the folders written before them (`invoices/a.txt` and
/// `a.txt`): one content in two forms, which agree. On held-out-18 a
/// checking program printed the invoices with their folder, and the run,
/// listing the file names as asked, failed.
pub(crate) fn same_names(a: &str, b: &str) -> bool {
    let name = |line: &str| line.trim().rsplit('/').next().unwrap_or_default().to_string();
    let (a, b) = (lines(a), lines(b));
    a != b
        && a.iter().chain(&b).any(|line| line.contains('/'))
        && a.iter().map(|l| name(l)).eq(b.iter().map(|l| name(l)))
}

/// Whether `a` and `b` are one line of digits and separators, no
/// letters, that differ only in the leading zeros of whole numbers:
/// `19:4:27` and `19:04:27`, `2024-1-7` and `2024-01-07`. Digits after a
/// `.` or `,` are a fraction's and must match as written (`1.05` is not
/// `1.5`).
pub(crate) fn same_but_padding(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    let plain = |t: &str| !t.is_empty() && !t.contains('\n') && !t.chars().any(char::is_alphabetic);
    a != b && plain(a) && plain(b) && unpadded(a) == unpadded(b)
}

/// `text` with the leading zeros of each run of digits dropped (a lone
/// `0` kept), except in a run that follows a `.` or `,`.
fn unpadded(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut after_point = false;
    while let Some(c) = chars.next() {
        if !c.is_ascii_digit() {
            after_point = matches!(c, '.' | ',');
            out.push(c);
            continue;
        }
        let mut run = String::from(c);
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            run.push(d);
        }
        match after_point {
            true => out.push_str(&run),
            false => out.push_str(match run.trim_start_matches('0') {
                "" => "0",
                rest => rest,
            }),
        }
    }
    out
}

/// Whether `a` and `b` are one Markdown table written otherwise: the same
/// cells in the same rows, whatever the padding of the cells, the pipes at
/// the ends of the lines and the dashes of the line under the header: a
/// table is read by its cells, and two programs writing one (held-out-40's
/// chores, spent) each sized the dashes their own way.
pub(crate) fn same_table_cells(a: &str, b: &str) -> bool {
    match (markdown_cells(a), markdown_cells(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The cells of the Markdown table `text` is, row by row, trimmed, the
/// line of dashes under the header left out; `None` when it is no table
/// (a line without a pipe, or no line of dashes).
fn markdown_cells(text: &str) -> Option<Vec<Vec<&str>>> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    if lines.len() < 2 || !lines.iter().all(|line| line.contains('|')) {
        return None;
    }
    let dashes = |row: &[&str]| {
        row.iter()
            .all(|cell| !cell.is_empty() && cell.trim_matches(':').chars().all(|c| c == '-'))
    };
    let rows: Vec<Vec<&str>> = lines.iter().map(|line| row_cells(line)).collect();
    let under_header = rows.iter().position(|row| dashes(row))?;
    Some(
        rows.into_iter()
            .enumerate()
            .filter(|(i, _)| *i != under_header)
            .map(|(_, row)| row)
            .collect(),
    )
}

/// The trimmed cells of a Markdown table's `line`, without the pipes at its ends.
fn row_cells(line: &str) -> Vec<&str> {
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim).collect()
}

/// `text` as one number, when it is one.
pub(crate) fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

/// How many digits `number` has after its decimal point.
fn decimals(number: &str) -> usize {
    number.split_once('.').map_or(0, |(_, after)| after.len())
}

/// The lines of `text`, without trailing spaces and blank lines at its ends.
pub(crate) fn lines(text: &str) -> Vec<&str> {
    let all: Vec<&str> = text.lines().map(str::trim_end).collect();
    let start = all.iter().position(|l| !l.is_empty()).unwrap_or(all.len());
    let end = all.iter().rposition(|l| !l.is_empty()).map_or(start, |i| i + 1);
    all[start..end].to_vec()
}

/// What is said of the new file `text` (at `path`) when two of its lines
/// are one text written in two Unicode forms (an accent composed, `é`, and
/// decomposed, `e` and a combining mark), where no input among `inputs`
/// (path, text) holds both: the lines were compared as code points, not as
/// text. On held-out-47 (spent) two programs merged two sign-up lists with
/// `set()`, kept "Zoë" twice, agreed, and the run said `succeeded`.
pub(crate) fn unicode_twins(path: &str, text: &str, inputs: &[(&str, &str)]) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    let (first, twin) = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .find_map(|line| match seen.insert(line.nfc().collect(), line) {
            Some(first) if first != line => Some((first, line)),
            _ => None,
        })?;
    if inputs
        .iter()
        .any(|(input, held)| *input != path && held.contains(first) && held.contains(twin))
    {
        return None;
    }
    Some(format!(
        "{path} holds `{first}` twice, its accents written in two Unicode forms (composed and decomposed): compare lines as text, each put in one form first (unicodedata.normalize(\"NFC\", line)), and write it once"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_markdown_table_padded_otherwise_is_the_same_cells() {
        let plain = "| chore | who |\n|---|---|\n| bins | Sam |\n| dishes | Alex |\n";
        let padded = "chore  | who\n:----- | ---:\nbins   | Sam\ndishes | Alex\n";
        assert!(same_table_cells(plain, padded));
        assert!(!same_table_cells(plain, &plain.replace("Alex", "Alix")), "another cell");
        assert!(!same_table_cells(plain, "chore,who\nbins,Sam\n"), "no table");
    }

    use super::*;

    /// A zero in any form is what a sum of nothing prints.
    #[test]
    fn a_zero_in_any_form_is_a_zero() {
        for zero in ["0", "0.00\n", "0:00:00", "00:00:00", " 0,0 "] {
            assert!(is_zero(zero), "{zero}");
        }
        for something in ["5:24:42", "10", "0.5", "none", "", ":"] {
            assert!(!is_zero(something), "{something}");
        }
    }

    #[test]
    fn lines_ended_by_crlf_are_the_same_text() {
        assert!(same_text(b"a,b\r\nc,d\r\n", b"a,b\nc,d\n"));
        assert!(same_text(b"a\n", b"a\n"));
        assert!(!same_text(b"a,b\r\nC,d\r\n", b"a,b\nc,d\n"), "a value changed");
        assert!(!same_text(b"a\rb", b"a\nb"), "a lone \\r is no line end here");
        assert!(!same_text(b"a\n", b"a"));
    }

    #[test]
    fn json_rows_with_numbers_as_text_are_the_same_but_for_typing() {
        let text = r#"[{"t": "03:12", "h": "4.31"}, {"t": "09:27", "h": "0.86"}]"#;
        let typed = "[\n  {\"t\": \"03:12\", \"h\": 4.31},\n  {\"t\": \"09:27\", \"h\": 0.86}\n]";
        assert!(same_json_but_typing(text, typed));
        assert!(!same_json(text, typed));
        assert!(
            !same_json_but_typing(text, r#"[{"t": "03:12", "h": 4.31}]"#),
            "a row fewer"
        );
        assert!(!same_json_but_typing("4.31", "4.31"), "no document");
    }

    #[test]
    fn a_table_that_begins_with_a_data_row_of_its_input_lost_the_header() {
        let staff = "name,dept,city\nRosa,Sales,Madrid\nTom,Eng,Berlin\nAiko,Sales,Osaka\n";
        let inputs = [("staff.csv", staff)];
        let lost = header_lost("sales.csv", "Rosa,Sales,Madrid\nAiko,Sales,Osaka\n", &inputs);
        assert!(lost.is_some_and(|f| f.contains("name,dept,city") && f.contains("Rosa,Sales,Madrid")));
        let kept = "name,dept,city\nRosa,Sales,Madrid\nAiko,Sales,Osaka\n";
        assert_eq!(header_lost("sales.csv", kept, &inputs), None);
        assert_eq!(
            header_lost("sales.txt", "Rosa,Sales,Madrid\n", &inputs),
            None,
            "not a table"
        );
        let numbers = [("m.csv", "1,2\n3,4\n5,6\n")];
        assert_eq!(header_lost("out.csv", "3,4\n", &numbers), None, "no header to lose");
        let other = "Tom,Eng,Berlin\n";
        assert!(
            header_lost("eng.csv", other, &inputs).is_some(),
            "whichever row comes first"
        );
        assert_eq!(header_lost("e.csv", "Eng,3\n", &inputs), None, "a row of its own");
    }

    #[test]
    fn a_table_whose_rows_repeat_its_header_was_written_as_column_names() {
        let tanks = "tank;species;basking_temp_c\nT1;Bearded dragon;38\nT2;Gecko;30\n";
        let inputs = [("vivariums.csv", tanks)];
        let keys = "tank,species,basking_temp_c\ntank,species,basking_temp_c\n";
        let said = header_repeated("hot.csv", keys, &inputs).expect("a flaw");
        assert!(
            said.contains("`tank,species,basking_temp_c`") && said.contains("1 of its 1 rows"),
            "{said}"
        );
        let values = "tank,species,basking_temp_c\nT1,Bearded dragon,38\n";
        assert_eq!(header_repeated("hot.csv", values, &inputs), None);
        assert_eq!(header_repeated("hot.txt", keys, &inputs), None, "not a table");
        // An input that holds its header twice (sections pasted together)
        // may be copied as it is.
        let sections = "name,town\nAva,Leeds\nname,town\nBo,York\n";
        assert_eq!(header_repeated("all.csv", sections, &[("both.csv", sections)]), None);
        assert!(header_repeated("all.csv", sections, &inputs).is_some());
        // A first row of numbers is no header, and one column's name may
        // be a value too.
        assert_eq!(header_repeated("n.csv", "1,2\n1,2\n", &inputs), None);
        assert_eq!(header_repeated("words.csv", "word\nthe\nword\n", &inputs), None);
    }

    #[test]
    fn a_time_or_date_in_other_padding_is_the_same() {
        assert!(same_but_padding("19:4:27", "19:04:27"));
        assert!(same_but_padding("2024-1-7\n", "2024-01-07"));
        assert!(same_but_padding("0:05", "0:5"));
        assert!(!same_but_padding("1.05", "1.5"));
        assert!(!same_but_padding("3,05", "3,5"));
        assert!(!same_but_padding("19:04:27", "19:04:28"));
        assert!(!same_but_padding("Room 07", "Room 7"));
        assert!(!same_but_padding("1\n02", "1\n2"));
        assert!(!same_but_padding("19:04:27", "19:04:27"));
    }

    #[test]
    fn a_line_of_words_holds_one_number() {
        let cases = [
            ("Total revenue: $2,709.90", Some("2709.90")),
            ("2709.9\n", Some("2709.9")),
            ("The average is -3.5.", Some("-3.5")),
            ("58.8%", Some("58.8")),
            ("12,345", Some("12345")),
            ("3,4", None),
            ("2024-01-17", None),
            ("12:30", None),
            ("2.4.1", None),
            ("Room B12", None),
            ("55km", None),
            ("3 of 10 rows", None),
            ("1\n2", None),
            ("none", None),
        ];
        for (text, number) in cases {
            assert_eq!(number_in_words(text).as_deref(), number, "{text}");
        }
        assert!(same_number_in_words("Total: $2,709.90", "2709.9"));
        assert!(!same_number_in_words("8.2", "8.24"));
        assert!(same_number_in_words("The total is 180.89999999999998 kWh.", "180.9"));
        assert!(!same_number_in_words("180.9001", "180.9"));
    }

    #[test]
    fn a_number_with_words_around_it_is_told_from_the_number() {
        for worded in ["Total revenue: $2,709.90", "55.4 km", "3 failures", "The total is 42."] {
            assert!(number_with_words(worded).is_some(), "{worded}");
        }
        for plain in [
            "2709.90",
            "$2,709.90",
            "58.8%",
            "-4",
            "2024-01-17",
            "nginx:1.25",
            "Ann\nBo 3",
        ] {
            assert_eq!(number_with_words(plain), None, "{plain}");
        }
        let told = value_in_words("total.txt", "Total: 42\n", &[]).unwrap_or_default();
        assert!(
            told.contains("total.txt holds `Total: 42`") && told.contains("(42)"),
            "{told}"
        );
        let temps = r#"[{"city": "Seville", "high_c": 44.1}, {"city": "Oslo", "high_c": 21.4}]"#;
        assert_eq!(
            value_in_words("hot.txt", "Seville: 44.1°C", &[temps]),
            None,
            "a name of the data"
        );
        assert!(
            value_in_words("hot.txt", "high_c: 44.1", &[temps]).is_some(),
            "a key is a label"
        );
        let sales = "region,revenue\nNorth,120\nSouth,95\n";
        assert!(
            value_in_words("t.txt", "Total revenue: 215", &[sales]).is_some(),
            "a header is a label"
        );
        assert_eq!(value_in_words("t.txt", "North 120", &[sales]), None);
        assert!(
            value_in_words("t.txt", "The difference between North and the rest is 120", &[sales]).is_some(),
            "a sentence around a value of the data is a sentence"
        );
        assert!(
            value_in_words("t.txt", "Northern 120", &[sales]).is_some(),
            "whole words only"
        );
        let ini = "[rehearsal]\nday = Thursday\n;room = Church Hall\nroom = Vestry Room 2\n";
        assert_eq!(
            value_in_words("room.txt", "Vestry Room 2\n", &[ini]),
            None,
            "a setting's value"
        );
        let env = "export ROOM=\"Vestry Room 2\"  # upstairs\n";
        assert_eq!(
            value_in_words("room.txt", "Vestry Room 2", &[env]),
            None,
            "a quoted setting"
        );
        assert!(
            value_in_words("room.txt", "Room 2", &[ini]).is_some(),
            "part of a setting's value"
        );
        let labels = "[report]\ncolumn = distance\nunit = km\n";
        assert!(
            value_in_words("total.txt", "Total distance: 55.4 km", &[labels]).is_some(),
            "a setting's value as a label"
        );
    }

    #[test]
    fn json_documents_with_the_same_data_are_the_same_whatever_their_spacing() {
        let two = "{\n  \"name\": \"gig\",\n  \"version\": \"1.4.10\"\n}";
        let four = "{\n    \"name\": \"gig\",\n    \"version\": \"1.4.10\"\n}\n";
        assert!(same_json(two, four));
        assert!(!same_json(two, &four.replace("1.4.10", "1.4.11")));
        assert!(!same_json("1", "1.0"), "a scalar is no document");
        assert!(!same_json("[1, 2]", "[2, 1]"));
    }

    #[test]
    fn contents_are_the_same_as_lines_or_as_numbers_at_the_shown_precision() {
        assert!(same_content("7.5", "7.50\n"));
        assert!(same_content("7.32", "7.324"));
        assert!(!same_content("7.32", "7.33"));
        assert!(!same_content("12", "6"));
        assert!(same_content("backend\ndocs\n", "\nbackend  \ndocs"));
        assert!(!same_content("docs\nbackend", "backend\ndocs"));
        assert!(!same_content("Ade", "Noor"));
    }

    #[test]
    fn file_names_with_and_without_their_folder_are_the_same_names() {
        assert!(same_names("invoices/a.txt\ninvoices/b.txt\n", "a.txt\nb.txt"));
        assert!(
            !same_names("invoices/a.txt\ninvoices/b.txt", "b.txt\na.txt"),
            "another order"
        );
        assert!(
            !same_names("a.txt\nb.txt", "a.txt\nb.txt"),
            "the same lines are the same content"
        );
        assert!(!same_names("x/a.txt", "a.txt\nb.txt"), "another count");
    }

    #[test]
    fn contents_of_one_shape_are_values_with_digits_or_as_many_lines() {
        assert!(same_shape("1.78.0\n", "1"));
        assert!(same_shape("12", "12.5"));
        assert!(!same_shape("3 failures", "3"));
        assert!(same_shape("10.0.0.2 db\n10.0.0.10 web", "10.0.0.10 web\n10.0.0.2 db\n"));
        assert!(!same_shape("['db', 'web']", "db\nweb"));
        assert!(!same_shape("2310.75\n2310.75", "June\n2310.75"), "another reading");
    }

    #[test]
    fn a_value_put_where_words_stand_is_another_reading() {
        assert!(another_reading("2310.75\n2310.75\n", "June\n2310.75"));
        assert!(
            !another_reading("May\n2100\n", "June\n2310.75"),
            "no line shared: two values of one thing"
        );
        assert!(!another_reading("June\n2300", "June\n2310.75"), "one kind on each line");
        assert!(!another_reading("2310.75", "June"), "one line");
    }

    #[test]
    fn a_line_twice_in_two_unicode_forms_is_a_flaw_unless_an_input_holds_both() {
        let merged = "Anna Berg\nZo\u{eb} Hart\nZoe\u{308} Hart\n";
        let inputs = [
            ("spring.txt", "Zo\u{eb} Hart\nAnna Berg\n"),
            ("autumn.txt", "Zoe\u{308} Hart\n"),
        ];
        let said = unicode_twins("all.txt", merged, &inputs).expect("Zoë twice");
        assert!(said.contains("two Unicode forms"), "{said}");
        let once = "Anna Berg\nZo\u{eb} Hart\n";
        assert_eq!(unicode_twins("all.txt", once, &inputs), None);
        let copied = [("both.txt", merged)];
        assert_eq!(
            unicode_twins("copy.txt", merged, &copied),
            None,
            "a copy of an input that holds both"
        );
    }
}
