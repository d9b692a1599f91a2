//! A test of a list a task writes, read from the task alone before any
//! program for it has run: the order the task states for its lines, and
//! whether it says each value once. Each program's file in the vote
//! ([`crate::program_vote`]) is held to it on its copy of the workspace,
//! with no model: a program whose lines break it is not counted.
//!
//! Two programs written apart that read the task the same loose way agree,
//! and their agreement passes wrong work: of held-out-33's 26 runs, six
//! said `succeeded`, among them dates of one year neither deduplicated nor
//! sorted where the task said "each date once, earliest first", and emails
//! by `sorted(set(...))` where it said "in the order it first appears". A
//! program that does the task is long and each part of it can go wrong;
//! which order a task states is one question, answered from its words with
//! no program's way of doing it in view (tests written apart from programs
//! to tell right programs from wrong ones are CodeT's idea, Chen et al.
//! 2022). The 1.5B model asked to write such a test as Python wrote the
//! task's program again with `assert`s of values it made up, so the test
//! is asked for as a choice among a few kinds, and checked here.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::context::ModelCalls;
use crate::llm::{ChatRequest, JsonSchemaFormat, Message, Role};
use crate::run::RunError;

/// The order a task states for the lines of a file it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// No order stated.
    Any,
    /// Smallest, earliest or A first.
    Ascending,
    /// Largest, latest or Z first.
    Descending,
    /// The order the values first appear in the files read.
    AsInInput,
}

/// What a task states of the lines of the one file it writes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskTest {
    /// The file, by workspace path.
    pub file: String,
    pub order: Order,
    /// Each value once.
    pub each_once: bool,
}

/// The choices, as the model is shown them, and the order each stands for.
/// Each opens with its own word: a choice constrained by a grammar is
/// taken a token at a time, and "sorted smallest…" beside "sorted
/// largest…" left the two to be told apart after a shared first word.
const ORDERS: [(&str, Order); 4] = [
    ("none: no order is stated", Order::Any),
    (
        "ascending: A to Z, alphabetical, smallest, lowest or earliest first",
        Order::Ascending,
    ),
    (
        "descending: Z to A, largest, highest, latest or newest first",
        Order::Descending,
    ),
    ("input: the order they first appear in the input", Order::AsInInput),
];

const SYSTEM: &str =
    "You read a task and say what it states about the lines of the file it writes. Answer from the task's words only.";

/// The test of `file`, the one new file `task` says to write, as the
/// planner's model reads the task; `None` when a reply holds none, the
/// task states neither an order nor each value once, or the model's two
/// readings (the choices shown in two orders) differ: asked once, the 1.5B
/// model read "sorted alphabetically" as Z first, and a wrong test fails
/// right programs.
pub(crate) async fn written(calls: &ModelCalls, task: &str, file: &str) -> Result<Option<TaskTest>, RunError> {
    let forward: Vec<&str> = ORDERS.iter().map(|(said, _)| *said).collect();
    let backward: Vec<&str> = forward.iter().rev().copied().collect();
    let Some(first) = read(&asked(calls, task, file, &forward).await?, file) else {
        return Ok(None);
    };
    if first.order == Order::Any && !first.each_once {
        return Ok(None);
    }
    let second = read(&asked(calls, task, file, &backward).await?, file);
    Ok(second.and_then(|second| {
        let each_once = first.each_once && second.each_once;
        (first.order == second.order && (first.order != Order::Any || each_once))
            .then_some(TaskTest { each_once, ..first })
    }))
}

/// The model's reply to the question of `file`'s order, with `choices`
/// shown in that order.
async fn asked(calls: &ModelCalls, task: &str, file: &str, choices: &[&str]) -> Result<String, RunError> {
    let listed: Vec<String> = choices.iter().map(|choice| format!("- {choice}")).collect();
    let question = format!(
        "Task: {task}\n\nWhat order does the task state for the lines of {file}? One of:\n{}\nAnd does it say to write each value only once (no repeats)?",
        listed.join("\n")
    );
    let mut request = ChatRequest::new(
        Role::Planner,
        "",
        vec![Message::system(SYSTEM.to_string()), Message::user(question)],
    );
    request.max_tokens = Some(60);
    request.response_format = Some(JsonSchemaFormat {
        name: "list_test".to_string(),
        schema: json!({
            "type": "object",
            "properties": {
                "order": {"type": "string", "enum": choices},
                "each_once": {"type": "boolean"}
            },
            "required": ["order", "each_once"],
            "additionalProperties": false
        }),
        strict: true,
    });
    Ok(calls.chat(request).await?.content.unwrap_or_default())
}

/// The test a reply holds, whatever it states (no order, repeats allowed).
fn read(reply: &str, file: &str) -> Option<TaskTest> {
    let answer = crate::json::parse_in_text::<Map<String, Value>>(reply)?;
    let said = answer.get("order")?.as_str()?.trim();
    let order = ORDERS.iter().find(|(choice, _)| *choice == said)?.1;
    let each_once = answer.get("each_once")?.as_bool()?;
    Some(TaskTest {
        file: file.to_string(),
        order,
        each_once,
    })
}

impl TaskTest {
    /// What in `written` (the file's text) breaks the test, said as a
    /// flaw; `inputs`: the texts the program read from, for the order they
    /// first appear in. Nothing when the lines cannot be told apart or
    /// found in one input: no evidence either way.
    pub fn broken_by(&self, written: &str, inputs: &[(&str, &str)]) -> Option<String> {
        let lines: Vec<&str> = written.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        if lines.len() < 2 {
            return None;
        }
        let file = &self.file;
        if self.each_once {
            let mut seen = HashSet::new();
            if let Some(twice) = lines.iter().find(|line| !seen.insert(line.to_lowercase())) {
                return Some(format!(
                    "{file} holds `{twice}` twice, and the task says each value once"
                ));
            }
        }
        let (before, after) = match self.order {
            Order::Any => return None,
            Order::Ascending | Order::Descending => out_of_order(&lines, self.order == Order::Descending)?,
            Order::AsInInput => not_as_in_input(&lines, inputs)?,
        };
        let order = ORDERS
            .iter()
            .find(|(_, o)| *o == self.order)
            .map_or("", |(said, _)| *said);
        Some(format!(
            "in {file} `{before}` comes before `{after}`, and the task states their order: {order}"
        ))
    }
}

/// The first two neighbouring lines out of order: compared by their
/// number when each line holds one number (`ana 42`), else as text in any
/// case where text sorts as the values do (names; ISO dates and times,
/// whose digits stand in the same places in every line). `None` for lines
/// that cannot be compared so (`5 March`, `12 January`): no evidence.
fn out_of_order<'a>(lines: &[&'a str], descending: bool) -> Option<(&'a str, &'a str)> {
    let numbers: Option<Vec<f64>> = lines.iter().map(|line| one_number(line)).collect();
    if numbers.is_none() && !sorts_as_text(lines) {
        return None;
    }
    let wrong = |a: usize, b: usize| match &numbers {
        Some(n) if descending => n[a] < n[b],
        Some(n) => n[a] > n[b],
        None if descending => lines[a].to_lowercase() < lines[b].to_lowercase(),
        None => lines[a].to_lowercase() > lines[b].to_lowercase(),
    };
    (1..lines.len())
        .find(|&i| wrong(i - 1, i))
        .map(|i| (lines[i - 1], lines[i]))
}

/// Whether `lines` sort as text the way their values do: none holds a
/// digit, or each opens with digits and signs of one fixed shape
/// (`2025-01-31`, `09:30`) before anything else.
fn sorts_as_text(lines: &[&str]) -> bool {
    let shape = |line: &str| -> String {
        line.chars()
            .take_while(|c| !c.is_alphabetic() && !c.is_whitespace())
            .map(|c| if c.is_ascii_digit() { '0' } else { c })
            .collect()
    };
    let digits_after = |line: &str| {
        line.chars()
            .skip(shape(line).chars().count())
            .any(|c| c.is_ascii_digit())
    };
    if !lines.iter().any(|line| line.chars().any(|c| c.is_ascii_digit())) {
        return true;
    }
    let first = shape(lines[0]);
    first.contains('0') && lines.iter().all(|line| shape(line) == first && !digits_after(line))
}

/// The one number a line holds (`$1,250.50`, `-3`, `bob 17`), when it
/// holds exactly one run of digits, with its sign, separators and point.
fn one_number(line: &str) -> Option<f64> {
    let mut found = None;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        if found.is_some() {
            return None;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || (matches!(chars[i], ',' | '.') && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let digits: String = chars[start..i].iter().filter(|c| **c != ',').collect();
        let negative = start > 0 && chars[start - 1] == '-';
        let value: f64 = digits.parse().ok()?;
        found = Some(if negative { -value } else { value });
    }
    found
}

/// The first two lines whose order is not the order they first appear in
/// the one input that holds them all (in any case); `None` when none does.
fn not_as_in_input<'a>(lines: &[&'a str], inputs: &[(&str, &str)]) -> Option<(&'a str, &'a str)> {
    let lines_lower: Vec<String> = lines.iter().map(|l| l.to_lowercase()).collect();
    let places = inputs.iter().find_map(|(_, text)| {
        let text = text.to_lowercase();
        lines_lower
            .iter()
            .map(|line| text.find(line.as_str()))
            .collect::<Option<Vec<usize>>>()
    })?;
    (1..lines.len())
        .find(|&i| places[i - 1] > places[i])
        .map(|i| (lines[i - 1], lines[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(order: Order, each_once: bool) -> TaskTest {
        TaskTest {
            file: "out.txt".to_string(),
            order,
            each_once,
        }
    }

    #[test]
    fn a_reply_is_read_as_one_of_the_choices() {
        let reply = format!(r#"{{"order": "{}", "each_once": true}}"#, ORDERS[1].0);
        assert_eq!(read(&reply, "out.txt"), Some(test(Order::Ascending, true)));
        assert_eq!(read(r#"{"order": "by size", "each_once": true}"#, "out.txt"), None);
    }

    #[test]
    fn lines_out_of_the_stated_order_or_repeated_break_the_test() {
        let dates = "2025-03-01\n2025-01-31\n";
        let broken = test(Order::Ascending, false).broken_by(dates, &[]).unwrap();
        assert!(broken.contains("`2025-03-01` comes before `2025-01-31`"), "{broken}");
        assert_eq!(
            test(Order::Ascending, true).broken_by("2025-01-31\n2025-03-01\n", &[]),
            None
        );
        let twice = test(Order::Any, true)
            .broken_by("a@x.org\nb@y.org\nA@x.org\n", &[])
            .unwrap();
        assert!(twice.contains("`A@x.org` twice"), "{twice}");
        // By the one number of each line, not as text: 9 before 10 ascending.
        assert_eq!(test(Order::Ascending, false).broken_by("bo 9\nal 10\n", &[]), None);
        assert!(test(Order::Descending, false).broken_by("bo 9\nal 10\n", &[]).is_some());
        assert_eq!(
            test(Order::Descending, false).broken_by("$1,200.50\n$950\n-3\n", &[]),
            None
        );
        // Dates in words do not sort as text: no evidence.
        assert_eq!(
            test(Order::Ascending, false).broken_by("5 March 2025\n12 January 2025\n", &[]),
            None
        );
        assert!(test(Order::Ascending, false)
            .broken_by("10:30 b\n09:15 a\n", &[])
            .is_some());
    }

    #[test]
    fn the_order_they_first_appear_is_read_from_the_input_that_holds_them_all() {
        let input = [
            ("notes.txt", "x\n"),
            ("signups.txt", "Zoe <Zed@x.org>\nAl <al@y.org>\nZoe <zed@x.org>\n"),
        ];
        let test = test(Order::AsInInput, true);
        let sorted = test.broken_by("al@y.org\nzed@x.org\n", &input).unwrap();
        assert!(sorted.contains("`al@y.org` comes before `zed@x.org`"), "{sorted}");
        assert_eq!(test.broken_by("zed@x.org\nal@y.org\n", &input), None);
        // Lines no one input holds (rewritten): no evidence.
        assert_eq!(test.broken_by("AL AT Y\nzed@x.org\n", &input), None);
    }
}
