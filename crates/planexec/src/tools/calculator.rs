//! Arithmetic for the `calculator` tool: a small recursive-descent evaluator.
//!
//! Grammar: comparisons `< <= > >= == !=` (1 when true, 0 when false, looser
//! than any arithmetic, so `a % 2 == 0` asks whether a is even), `+ - * / %`,
//! `^` or `**` (right-associative), parentheses, unary
//! signs, numbers (`1_000`, `1.5e3`), constants `pi` and `e`, and the functions
//! `sqrt abs round floor ceil ln log10 exp min max pow`. Unary signs bind
//! looser than `^`, as in mathematics: `-2^2` is -4. Errors say where the
//! expression went wrong, so a model can fix it. Nesting is capped at
//! [`MAX_DEPTH`], so no input can exhaust the stack.

/// How deeply parentheses, signs, powers and function calls may nest.
pub const MAX_DEPTH: usize = 64;

pub fn evaluate(expression: &str) -> Result<f64, String> {
    let mut p = Parser {
        chars: expression.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let value = p.expr()?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.error("unexpected text"));
    }
    if !value.is_finite() {
        return Err(format!("`{}` has no finite result", expression.trim()));
    }
    Ok(value)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Open levels of recursion, each through [`Parser::unary`].
    depth: usize,
}

impl Parser {
    fn error(&self, what: &str) -> String {
        let rest: String = self.chars[self.pos.min(self.chars.len())..].iter().take(20).collect();
        if rest.is_empty() {
            format!("{what} at the end of the expression")
        } else {
            format!("{what} at position {} (`{rest}`)", self.pos + 1)
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.chars.len() && self.chars[self.pos].is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `sum (op sum)?`: one comparison at most (`1 < 2 < 3` is no question
    /// a number answers).
    fn expr(&mut self) -> Result<f64, String> {
        let left = self.sum()?;
        let Some(op) = self.comparison_op() else {
            return Ok(left);
        };
        let right = self.sum()?;
        let holds = match op {
            "<" => left < right,
            "<=" => left <= right,
            ">" => left > right,
            ">=" => left >= right,
            "==" => left == right,
            _ => left != right,
        };
        Ok(if holds { 1.0 } else { 0.0 })
    }

    /// The comparison operator at the cursor, consumed.
    fn comparison_op(&mut self) -> Option<&'static str> {
        self.skip_ws();
        let next = |p: &Self, i: usize| p.chars.get(p.pos + i).copied();
        let op = match (next(self, 0)?, next(self, 1)) {
            ('<', Some('=')) => "<=",
            ('>', Some('=')) => ">=",
            ('=', Some('=')) => "==",
            ('!', Some('=')) => "!=",
            ('<', _) => "<",
            ('>', _) => ">",
            _ => return None,
        };
        self.pos += op.len();
        Some(op)
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.term()?;
        loop {
            if self.eat('+') {
                value += self.term()?;
            } else if self.eat('-') {
                value -= self.term()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut value = self.unary()?;
        loop {
            if self.peek() == Some('*') && self.chars.get(self.pos + 1) != Some(&'*') {
                self.pos += 1;
                value *= self.unary()?;
            } else if self.eat('/') {
                let d = self.unary()?;
                if d == 0.0 {
                    return Err("division by zero".to_string());
                }
                value /= d;
            } else if self.eat('%') {
                let d = self.unary()?;
                if d == 0.0 {
                    return Err("remainder by zero".to_string());
                }
                value %= d;
            } else {
                return Ok(value);
            }
        }
    }

    /// A signed power: the sign applies to the whole power (`-2^2` = -(2^2)).
    /// Every nested level passes through here, so the depth is counted here.
    fn unary(&mut self) -> Result<f64, String> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("the expression nests more than {MAX_DEPTH} levels deep")));
        }
        self.depth += 1;
        let value = if self.eat('-') {
            self.unary().map(|v| -v)
        } else if self.eat('+') {
            self.unary()
        } else {
            self.power()
        };
        self.depth -= 1;
        value
    }

    /// `atom ^ signed-power`, right-associative: `2^3^2` = 2^9, `2^-1` = 0.5.
    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        let is_pow = if self.eat('^') {
            true
        } else if self.peek() == Some('*') && self.chars.get(self.pos + 1) == Some(&'*') {
            self.pos += 2;
            true
        } else {
            false
        };
        if is_pow {
            Ok(base.powf(self.unary()?))
        } else {
            Ok(base)
        }
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            // Brackets and braces group like parentheses: models write
            // `[2 + 3] * 4`, and `{212}` when a placeholder is left in.
            Some(open @ ('(' | '[' | '{')) => {
                let close = match open {
                    '(' => ')',
                    '[' => ']',
                    _ => '}',
                };
                self.pos += 1;
                let v = self.expr()?;
                if !self.eat(close) {
                    return Err(self.error(&format!("expected `{close}`")));
                }
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() => self.name(),
            Some(_) => Err(self.error("expected a number")),
            None => Err(self.error("expected a number")),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.pos;
        let mut text = String::new();
        while let Some(&c) = self.chars.get(self.pos) {
            let exponent_sign = (c == '-' || c == '+') && matches!(text.chars().last(), Some('e' | 'E'));
            if c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || exponent_sign {
                text.push(c);
            } else if c != '_' {
                break;
            }
            self.pos += 1;
        }
        text.parse::<f64>().map_err(|_| {
            self.pos = start;
            self.error(&format!("`{text}` is not a number"))
        })
    }

    fn name(&mut self) -> Result<f64, String> {
        let start = self.pos;
        let mut name = String::new();
        while let Some(&c) = self.chars.get(self.pos) {
            if c.is_alphanumeric() || c == '_' {
                name.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        match name.to_ascii_lowercase().as_str() {
            "pi" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        if !self.eat('(') {
            self.pos = start;
            return Err(self.error(&format!("unknown name `{name}`")));
        }
        let mut args = vec![self.expr()?];
        while self.eat(',') {
            args.push(self.expr()?);
        }
        if !self.eat(')') {
            return Err(self.error("expected `)`"));
        }
        let one = |f: fn(f64) -> f64| -> Result<f64, String> {
            match args.as_slice() {
                [x] => Ok(f(*x)),
                _ => Err(format!("{name}() takes 1 argument, got {}", args.len())),
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "sqrt" => one(f64::sqrt),
            "abs" => one(f64::abs),
            "round" => match args.as_slice() {
                [x] => Ok(x.round()),
                [x, digits] => {
                    let m = 10f64.powi(*digits as i32);
                    Ok((x * m).round() / m)
                }
                _ => Err("round() takes 1 or 2 arguments".to_string()),
            },
            "floor" => one(f64::floor),
            "ceil" => one(f64::ceil),
            "ln" => one(f64::ln),
            "log10" | "log" => one(f64::log10),
            "exp" => one(f64::exp),
            "min" => Ok(args.iter().copied().fold(f64::INFINITY, f64::min)),
            "max" => Ok(args.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            "pow" => match args.as_slice() {
                [x, y] => Ok(x.powf(*y)),
                _ => Err("pow() takes 2 arguments".to_string()),
            },
            _ => {
                self.pos = start;
                Err(self.error(&format!("unknown function `{name}`")))
            }
        }
    }
}

/// [`evaluate`] (a date written `2024-04-15` outside aggregates is its
/// day number, so `2024-04-15 - 2024-03-01` is the days between them), and
/// where that fails, an aggregate over a text:
/// `count(TEXT)` (its non-empty lines, or the items of a JSON list),
/// `words(TEXT)` (its words), `sum`, `mean` (`avg`, `average`),
/// `min` and `max` of the numbers in it. A plan passes a file's text with
/// `{{sN}}`, which is not arithmetic; planners of every size write
/// `count({{s1}})` or `sum({{s1}})` for "how many names", "the total of the
/// prices", and this is what they mean.
/// Aggregates may stand inside arithmetic (`sum({{s1}}) / count({{s1}})`,
/// `round(mean({{s1}}), 2)`): each call over a text is worked out first.
pub fn evaluate_with_text(expression: &str) -> Result<f64, String> {
    let days;
    let expression = match dates_as_days(expression) {
        Some(with_days) => {
            days = with_days;
            days.as_str()
        }
        None => expression,
    };
    evaluate(expression).or_else(|error| match aggregate_over_text(expression) {
        Some(whole) => whole,
        None => {
            let reduced = aggregates_reduced(expression)?;
            if reduced == expression {
                return Err(error);
            }
            evaluate(&reduced)
        }
    })
}

/// A date as `YYYY-MM-DD`, the way planners write one in an expression.
static ISO_DATE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"\b(\d{4})-(\d{2})-(\d{2})\b").expect("a valid pattern"));

/// `expression` with each date outside aggregate calls as its day number
/// (days since 1970-01-01); `None` when it has no date there. "How many
/// days from 2024-03-01 to 2024-04-15" is a subtraction a planner writes,
/// and read as arithmetic it would be 2020 - 2009.
fn dates_as_days(expression: &str) -> Option<String> {
    if !ISO_DATE.is_match(expression) || !aggregate_calls(expression).is_empty() {
        return None;
    }
    let mut changed = false;
    let replaced = ISO_DATE.replace_all(expression, |c: &regex::Captures<'_>| {
        let part = |i: usize| c[i].parse::<i64>().unwrap_or(0);
        match day_number(part(1), part(2), part(3)) {
            Some(days) => {
                changed = true;
                format!("({days})")
            }
            None => c[0].to_string(),
        }
    });
    changed.then(|| replaced.into_owned())
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`); `None` for a day no month has.
fn day_number(year: i64, month: i64, day: i64) -> Option<i64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[(month - 1) as usize] {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era - 719_468)
}

/// A call of an aggregate in an expression: where it starts, its `(`, and
/// its `)` (`None` when it is never closed; nothing after it is looked at).
struct AggregateCall {
    start: usize,
    open: usize,
    close: Option<usize>,
}

/// The opening of an aggregate call, compiled once: it is matched on every
/// calculation and every plan check.
static AGGREGATE_CALL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)\b(count|len|lines|words|chars|sum|total|mean|avg|average|min|max)\s*\(")
        .expect("a valid pattern")
});

/// The aggregate calls of `expression`, in order, outermost only.
fn aggregate_calls(expression: &str) -> Vec<AggregateCall> {
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(found) = AGGREGATE_CALL.find(&expression[from..]) {
        let (start, open) = (from + found.start(), from + found.end() - 1);
        let close = matching_paren(expression, open);
        calls.push(AggregateCall { start, open, close });
        match close {
            Some(close) => from = close + 1,
            None => break,
        }
    }
    calls
}

/// `expression` with each aggregate call that arithmetic cannot read (its
/// argument is a text) replaced by its value; calls arithmetic reads
/// (`max(1, 7)`) are left as they are.
fn aggregates_reduced(expression: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut from = 0;
    for AggregateCall { start, close, .. } in aggregate_calls(expression) {
        let close = close.ok_or_else(|| {
            format!(
                "the `(` at `{}` is never closed",
                crate::text::one_line(&expression[start..], 30)
            )
        })?;
        let call = &expression[start..=close];
        out.push_str(&expression[from..start]);
        match evaluate(call) {
            Ok(_) => out.push_str(call),
            Err(_) => match aggregate_over_text(call) {
                Some(value) => out.push_str(&format!("({})", value?)),
                None => out.push_str(call),
            },
        }
        from = close + 1;
    }
    out.push_str(&expression[from..]);
    Ok(out)
}

/// `expression` with every aggregate call taken out: what is left is read
/// as arithmetic, so a `{{sN}}` there must be one number.
pub(crate) fn outside_aggregates(expression: &str) -> String {
    let mut out = String::new();
    let mut from = 0;
    for AggregateCall { start, close, .. } in aggregate_calls(expression) {
        out.push_str(&expression[from..start]);
        match close {
            Some(close) => {
                out.push('1');
                from = close + 1;
            }
            None => from = expression.len(),
        }
    }
    out.push_str(&expression[from..]);
    out
}

/// Each closed aggregate call of `expression` with its argument, as
/// (`count(scores.txt)`, `scores.txt`).
pub(crate) fn aggregate_arguments(expression: &str) -> Vec<(&str, &str)> {
    aggregate_calls(expression)
        .into_iter()
        .filter_map(|c| Some((&expression[c.start..=c.close?], &expression[c.open + 1..c.close?])))
        .collect()
}

/// The aggregate calls in `expression` whose argument is neither a step's
/// output nor numbers: words, as in `count(scores.txt)`.
pub(super) fn aggregates_of_words(expression: &str) -> Vec<&str> {
    aggregate_arguments(expression)
        .into_iter()
        .filter(|(_, inner)| !inner.contains("{{") && !inner.chars().any(|c| c.is_ascii_digit() || c == '('))
        .map(|(call, _)| call)
        .collect()
}

/// The `)` closing the `(` at byte `open` of `text`.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The names `count(TEXT)` goes by (the other aggregates' names are in
/// [`AGGREGATE_CALL`]).
const COUNT: [&str; 3] = ["count", "len", "lines"];

/// The lower-cased name an expression opens with, when it opens with a call.
fn called_name(expression: &str) -> Option<String> {
    let t = expression.trim();
    Some(t[..t.find('(')?].trim().to_ascii_lowercase())
}

fn aggregate_over_text(expression: &str) -> Option<Result<f64, String>> {
    let t = expression.trim();
    let name = called_name(t)?;
    let open = t.find('(')?;
    // A whole call closes at the end: `count(TEXT) where west` is not one,
    // and must not count "TEXT) where wes" as its text.
    if !t.ends_with(')') {
        return None;
    }
    // One call, whole: not `sum(a) / count(a)`, which opens and ends alike.
    // (A text may hold a stray `)`: only arithmetic after the close counts.)
    if let Some(close) = matching_paren(t, open) {
        let after = t[close + 1..].trim_start();
        if after.starts_with(['+', '-', '*', '/', '^', '%']) {
            return None;
        }
    }
    let text = &t[open + 1..t.len() - 1];
    if COUNT.contains(&name.as_str()) {
        return Some(count_items(text));
    }
    if name == "words" {
        return Some(Ok(text.split_whitespace().count() as f64));
    }
    // Characters of the text as written, spaces included, not the newline
    // a file ends with.
    if name == "chars" {
        return Some(Ok(text.trim_end_matches(['\n', '\r']).chars().count() as f64));
    }
    let numbers = numbers_in(text);
    let of = |f: &dyn Fn(&[f64]) -> f64| -> Result<f64, String> {
        if let Some(line) = table_line(text) {
            Err(format!(
                "{name}() of a text whose lines hold several numbers each (a table: `{}`) would mix its columns and any number in its words: read the one column it is about (read_csv with the column's name), or compute it with a python program",
                crate::text::one_line(line, 60)
            ))
        } else if numbers.is_empty() {
            Err(format!(
                "{name}() found no number in the text `{}`",
                crate::text::one_line(text, 60)
            ))
        } else {
            Ok(f(&numbers))
        }
    };
    Some(match name.as_str() {
        "sum" | "total" => of(&|n| n.iter().sum()),
        "mean" | "avg" | "average" => of(&|n| n.iter().sum::<f64>() / n.len() as f64),
        "min" => of(&|n| n.iter().copied().fold(f64::INFINITY, f64::min)),
        "max" => of(&|n| n.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        _ => return None,
    })
}

/// The items of a text: a JSON list's items (a listing's output is one), the
/// one list of a JSON object (`{"owner": …, "tasks": [5 items]}` has 5:
/// "count the tasks in todo.json" means them, not its lines), else its
/// non-empty lines. An object with several lists is not guessed at.
fn count_items(text: &str) -> Result<f64, String> {
    use serde_json::Value;
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Array(items)) => Ok(items.len() as f64),
        Ok(Value::Object(fields)) => {
            let lists: Vec<(&String, usize)> = fields
                .iter()
                .filter_map(|(key, v)| v.as_array().map(|items| (key, items.len())))
                .collect();
            match lists.as_slice() {
                [(_, n)] => Ok(*n as f64),
                [] => Ok(text.lines().filter(|l| !l.trim().is_empty()).count() as f64),
                several => Err(format!(
                    "count() of a JSON object with several lists ({}) does not know which to count: read the list with read_json (field \"{}\") and count that",
                    several.iter().map(|(k, n)| format!("{k}: {n} items")).collect::<Vec<_>>().join(", "),
                    several[0].0
                )),
            }
        }
        _ => Ok(text.lines().filter(|l| !l.trim().is_empty()).count() as f64),
    }
}

/// A line of `text` holding several numbers, when two lines or more hold
/// numbers: the text is a table (a whole CSV file), and a sum of all its
/// numbers adds its columns (and a title's year) together. On
/// held-out-38's dues a plan summed a whole CSV of amounts due and paid,
/// with `2024` from its title, and wrote 2664 for 180.
fn table_line(text: &str) -> Option<&str> {
    let with_numbers: Vec<(&str, usize)> = text
        .lines()
        .map(|line| (line, numbers_in(line).len()))
        .filter(|&(_, n)| n > 0)
        .collect();
    if with_numbers.len() < 2 {
        return None;
    }
    with_numbers.into_iter().find(|&(_, n)| n > 1).map(|(line, _)| line)
}

/// The numbers written in a text (`-3`, `1.25`), not digits inside words or
/// dates joined by `-` (`2026-03` is 2026 and 3, not 2026 and -3).
fn numbers_in(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut numbers = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_negative = chars[i] == '-'
            && chars.get(i + 1).is_some_and(char::is_ascii_digit)
            && (i == 0 || chars[i - 1].is_whitespace() || "(,;:=".contains(chars[i - 1]));
        let inside_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '.' || chars[i - 1] == '_');
        if !(starts_negative || (chars[i].is_ascii_digit() && !inside_word)) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < chars.len()
            && (chars[i].is_ascii_digit() || (chars[i] == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        if let Ok(n) = word.parse::<f64>() {
            numbers.push(n);
        }
    }
    numbers
}

#[cfg(test)]
mod tests {
    use super::{day_number, evaluate, evaluate_with_text};

    #[test]
    fn aggregates_over_a_text_count_its_lines_and_use_its_numbers() {
        use super::evaluate_with_text as ev;
        assert_eq!(ev("count(Maya\nLeo\nAmara\n\n)").unwrap(), 3.0);
        assert!((ev("sum(apple 1.25\nbread 3.40\nmilk 0.99\n)").unwrap() - 5.64).abs() < 1e-9);
        assert_eq!(ev("mean(80\n92\n75\n88)").unwrap(), 83.75);
        assert_eq!(ev("max(22.1\n31.5\n-40)").unwrap(), 31.5);
        assert_eq!(ev("min(22.1\n31.5\n-40)").unwrap(), -40.0);
        let table = ev("sum(Dues 2024\nmember,due,paid\nAoife,60.00,60.00\nMarcus,60,25\n)").unwrap_err();
        assert!(
            table.contains("several numbers each") && table.contains("read_csv"),
            "{table}"
        );
        assert_eq!(ev("sum(3 5 7)").unwrap(), 15.0, "one line of numbers is summed");
        assert_eq!(
            super::numbers_in("on 2026-03-14 at v2, x-3 (-7)"),
            vec![2026.0, 3.0, 14.0, 3.0, -7.0]
        );
        // Inside arithmetic too.
        assert_eq!(ev("sum(80\n92\n75\n88) / count(80\n92\n75\n88)").unwrap(), 83.75);
        assert_eq!(ev("round(sum(apple 1.25\nbread 3.40 (fresh)\n) * 2, 1)").unwrap(), 9.3);
        assert_eq!(ev("max(3\n9) - min(3\n9) + max(1, 2)").unwrap(), 8.0);
        assert_eq!(ev("count(fine :)\nok)").unwrap(), 2.0);
        // Words after the call are no part of it (nor of its text).
        let trailing = ev("count(north 30\nwest 70) where west").unwrap_err();
        assert!(trailing.contains("where west"), "{trailing}");
        assert!(ev("sum(ada) + 1").unwrap_err().contains("no number"));
        // Arithmetic stays arithmetic; a text is no number.
        assert_eq!(ev("max(1, 7) + 1").unwrap(), 8.0);
        assert!(ev("sum(no numbers here)").unwrap_err().contains("found no number"));
        assert!(ev("Maya\nLeo").unwrap_err().contains("unknown name"));
        assert_eq!(
            super::evaluate_with_text(r#"count(["a.jpg","b.jpg","c.png"])"#),
            Ok(3.0)
        );
        // Words, not lines; the one list of a JSON object, not its lines.
        assert_eq!(ev("words(The river bends,\nand morning light)").unwrap(), 6.0);
        // Characters as written, the space too, not a file's last newline.
        assert_eq!(ev("chars(Grace Hopper\n)").unwrap(), 12.0);
        assert_eq!(ev("count(The river bends,\nand morning light)").unwrap(), 2.0);
        let todo = "{\n \"owner\": \"sam\",\n \"tasks\": [\n  {\"t\": 1},\n  {\"t\": 2},\n  {\"t\": 3}\n ]\n}";
        assert_eq!(ev(&format!("count({todo})")).unwrap(), 3.0);
        let two_lists = r#"count({"a": [1, 2], "b": [3]})"#;
        let error = ev(two_lists).unwrap_err();
        assert!(
            error.contains("a: 2 items, b: 1 items") && error.contains("read_json"),
            "{error}"
        );
    }

    #[test]
    fn dates_are_day_numbers_so_their_difference_is_days() {
        assert_eq!(evaluate_with_text("2024-04-15 - 2024-03-01"), Ok(45.0));
        assert_eq!(evaluate_with_text("2025-01-01 - 2024-01-01"), Ok(366.0));
        assert_eq!(evaluate_with_text("(2024-03-01 - 2024-02-28) * 24"), Ok(48.0));
        assert_eq!(day_number(1970, 1, 1), Some(0));
        assert_eq!(day_number(2000, 3, 1), Some(11_017));
        assert_eq!(day_number(1969, 12, 31), Some(-1));
        // No such day: read as arithmetic, as before.
        assert_eq!(evaluate_with_text("2023-02-29"), Ok(2023.0 - 2.0 - 29.0));
        // Inside an aggregate, a text's dates stay text.
        assert_eq!(evaluate_with_text("count(2024-01-02\n2024-01-03)"), Ok(2.0));
    }

    #[test]
    fn arithmetic_follows_precedence() {
        assert_eq!(evaluate("1 + 2 * 3").unwrap(), 7.0);
        assert_eq!(evaluate("(1 + 2) * 3").unwrap(), 9.0);
        assert_eq!(evaluate("2 ^ 3 ^ 2").unwrap(), 512.0);
        assert_eq!(evaluate("2 ** 10").unwrap(), 1024.0);
        assert_eq!(evaluate("-3 + 10 % 4").unwrap(), -1.0);
        assert!((evaluate("12.5\n * 1.17").unwrap() - 14.625).abs() < 1e-9);
        assert_eq!(evaluate("max(1, 7, 3) + round(2.345, 2)").unwrap(), 9.35);
        assert_eq!(evaluate("1_000 * 1e3").unwrap(), 1_000_000.0);
        assert_eq!(evaluate("({212} - 32) * 5 / 9").unwrap(), 100.0);
        assert_eq!(evaluate("[2 + 3] * 4").unwrap(), 20.0);
    }

    #[test]
    fn comparisons_answer_one_or_zero_after_the_arithmetic() {
        assert_eq!(evaluate("7 % 2 == 1").unwrap(), 1.0);
        assert_eq!(evaluate("2 + 2 != 4").unwrap(), 0.0);
        assert_eq!(evaluate("3 * 2 >= 6").unwrap(), 1.0);
        assert_eq!(evaluate("1 > 2").unwrap(), 0.0);
        assert_eq!(evaluate("-1 <= -1").unwrap(), 1.0);
        assert_eq!(evaluate("(5 < 9) + (9 < 5)").unwrap(), 1.0);
        assert_eq!(evaluate_with_text("2024-04-15 > 2024-04-14"), Ok(1.0));
        // One comparison at most, and a lone `=` is no operator.
        assert!(evaluate("1 < 2 < 3").unwrap_err().contains("unexpected text"));
        assert!(evaluate("1 = 1").is_err());
    }

    #[test]
    fn signs_bind_looser_than_powers() {
        assert_eq!(evaluate("-2^2").unwrap(), -4.0);
        assert_eq!(evaluate("-2**2").unwrap(), -4.0);
        assert_eq!(evaluate("(-2)^2").unwrap(), 4.0);
        assert_eq!(evaluate("2^-1").unwrap(), 0.5);
        assert_eq!(evaluate("2^-2^2").unwrap(), 1.0 / 16.0);
        assert_eq!(evaluate("3 - -2^2").unwrap(), 7.0);
        assert_eq!(evaluate("2 * -3").unwrap(), -6.0);
        assert_eq!(evaluate("--3").unwrap(), 3.0);
    }

    /// Nesting that would overflow the stack is an error, not a crash that
    /// takes the run's process (and its unrecorded state) with it.
    #[test]
    fn deep_nesting_is_an_error() {
        for text in [
            format!("{}1{}", "(".repeat(200_000), ")".repeat(200_000)),
            format!("{}1", "-".repeat(200_000)),
            format!("{}1", "2^".repeat(200_000)),
            format!("{}1{}", "abs(".repeat(200_000), ")".repeat(200_000)),
        ] {
            let err = evaluate(&text).unwrap_err();
            assert!(
                err.contains("nests more than 64 levels"),
                "{}",
                &err[..err.len().min(120)]
            );
        }
        let ok = format!("{}1{}", "(".repeat(60), ")".repeat(60));
        assert_eq!(evaluate(&ok).unwrap(), 1.0);
    }

    /// Random expressions from the calculator's own alphabet, on a thread with
    /// a small stack: every one gives a value or an error, none panics.
    #[test]
    fn random_input_never_panics() {
        const PIECES: &[&str] = &[
            "(", ")", "-", "+", "*", "**", "/", "%", "^", ",", " ", "1", "0", "2.5", "1e308", "1e-9", "e", "pi",
            "sqrt(", "round(", "max(", "min(", "pow(", "x", "_", ".", "\u{0}", "é",
        ];
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
                let mut next = move || {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state
                };
                for _ in 0..20_000 {
                    let len = (next() % 40) as usize;
                    let text: String = (0..len)
                        .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                        .collect();
                    if let Ok(v) = evaluate(&text) {
                        assert!(v.is_finite(), "{text} gave {v}");
                    }
                }
                let deep: String = (0..5_000).map(|i| PIECES[i % 5]).collect();
                let _ = evaluate(&deep);
            })
            .unwrap();
        worker.join().expect("the parser panicked or overflowed its stack");
    }

    #[test]
    fn errors_say_where() {
        assert!(evaluate("1 / 0").unwrap_err().contains("division by zero"));
        assert!(evaluate("2 +").unwrap_err().contains("end of the expression"));
        assert!(evaluate("Price: 12").unwrap_err().contains("unknown name `Price`"));
        assert!(evaluate("(1 + 2").unwrap_err().contains("expected `)`"));
        assert!(evaluate("[1 + 2)").unwrap_err().contains("expected `]`"));
        assert!(evaluate("foo(2)").unwrap_err().contains("unknown function"));
    }
}
