//! A test of a list a task writes, read from the task alone before any
//! program for it has run: the order the task states for its lines, and
//! whether it says each value once. Each program's file in the vote
//! ([`crate::program_vote`]) is held to it on its copy of the workspace,
//! with no model ([`crate::list_test`]): a program whose lines break it
//! is not counted.
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

use serde_json::{json, Map, Value};

use crate::context::ModelCalls;
use crate::list_test::{holds_a_list, ListOrder, ListTest, ORDERS};
use crate::llm::{ChatRequest, JsonSchemaFormat, Message, Role};
use crate::run::RunError;

const SYSTEM: &str =
    "You read a task and say what it states about the lines of the file it writes. Answer from the task's words only.";

/// The test of `file`, the one new file `task` says to write, as the
/// planner's model reads the task, with the choices shown in two orders
/// and, when the two readings differ in the order, a third ([`agreed`]);
/// `None` when the file is not a plain list ([`holds_a_list`]), a reply
/// holds none, or the readings agree on neither an order nor each value
/// once: asked once, the 1.5B model read "sorted alphabetically" as Z
/// first, and a wrong test fails right programs.
pub(crate) async fn written(calls: &ModelCalls, task: &str, file: &str) -> Result<Option<ListTest>, RunError> {
    if !holds_a_list(file) {
        return Ok(None);
    }
    let (forward, backward) = both_ways();
    let Some(first) = read(&asked(calls, task, file, &forward).await?, file) else {
        return Ok(None);
    };
    let Some(second) = read(&asked(calls, task, file, &backward).await?, file) else {
        return Ok(None);
    };
    let mut readings = vec![first, second];
    if readings[0].order != readings[1].order {
        let rotated: Vec<&str> = forward[2..].iter().chain(&forward[..2]).copied().collect();
        if let Some(third) = read(&asked(calls, task, file, &rotated).await?, file) {
            readings.push(third);
        }
    }
    let mut test = agreed(&readings, file);
    if test
        .as_ref()
        .is_none_or(|test| matches!(test.order, ListOrder::Any | ListOrder::Unsettled))
    {
        if let Some(order) = stated_order(calls, task, file).await? {
            let (each_once, only_some) = test
                .as_ref()
                .map_or((false, false), |test| (test.each_once, test.only_some));
            test = Some(ListTest {
                file: file.to_string(),
                order,
                each_once,
                only_some,
            });
        }
    }
    Ok(test)
}

/// The order one part of `task` states, when the part the model picks as
/// saying which line of `file` comes first, read alone twice with the
/// choices in two orders, says the same order both times. Asked of the
/// whole task, the 1.5B model read "bigger than 1 KB … one per line,
/// biggest first" and "in the order they first signed up" as no order in
/// each of eight readings (held-out-43, spent), though it reads such words
/// right alone: the task's own parts, cut at its punctuation, are the
/// choices, so what it picks is the task's words and nothing it made up.
async fn stated_order(calls: &ModelCalls, task: &str, file: &str) -> Result<Option<ListOrder>, RunError> {
    let parts = parts(task);
    if parts.is_empty() {
        return Ok(None);
    }
    let backward: Vec<&str> = parts.iter().rev().copied().collect();
    let mut picked = Vec::new();
    for choices in [&parts, &backward] {
        let reply = pick(calls, task, file, choices).await?;
        let part = crate::json::parse_in_text::<Map<String, Value>>(&reply)
            .and_then(|answer| answer.get("part")?.as_str().map(str::to_string));
        if let Some(part) = part.filter(|part| parts.contains(&part.as_str()) && !picked.contains(part)) {
            picked.push(part);
        }
    }
    let mut orders = Vec::new();
    for part in &picked {
        if let Some(order) = part_order(calls, part, file).await? {
            orders.push(order);
        }
    }
    orders.dedup();
    Ok(match orders[..] {
        [order] => Some(order),
        _ => None,
    })
}

/// The parts of `task` between its punctuation: a full stop ends one only
/// before a space or the end, so `big_files.txt` stays whole, and a comma
/// between digits not at all, so "over 20,000 bytes" does (cut there, the
/// parts of held-out-45's task were "over 20" and "000 bytes").
fn parts(task: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut before = None;
    let mut chars = task.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, next)| next);
        let in_number =
            c == ',' && before.is_some_and(|c: char| c.is_ascii_digit()) && next.is_some_and(|c| c.is_ascii_digit());
        let ends = (matches!(c, ',' | ';' | ':' | '?' | '!' | '(' | ')' | '\n') && !in_number)
            || (c == '.' && next.is_none_or(char::is_whitespace));
        before = Some(c);
        if ends {
            parts.push(&task[start..at]);
            start = at + c.len_utf8();
        }
    }
    parts.push(&task[start..]);
    let mut kept: Vec<&str> = Vec::new();
    for part in parts.into_iter().map(str::trim) {
        if part.chars().any(char::is_alphabetic) && !kept.contains(&part) {
            kept.push(part);
        }
    }
    kept
}

/// The model's pick, among `parts` of `task`, of the one that says which
/// line of `file` comes first.
async fn pick(calls: &ModelCalls, task: &str, file: &str, parts: &[&str]) -> Result<String, RunError> {
    let listed: Vec<String> = parts.iter().map(|part| format!("- {part}")).collect();
    let question = format!(
        "Task: {task}\n\nWhich of these parts of the task comes closest to saying which line of {file} comes first?\n{}",
        listed.join("\n")
    );
    let schema = json!({
        "type": "object",
        "properties": {"part": {"type": "string", "enum": parts}},
        "required": ["part"],
        "additionalProperties": false
    });
    ask(calls, question, "order_part", schema, 60).await
}

/// The order `part` of a task says alone, read twice with the choices in
/// two orders; `None` unless both readings say the same order. Nothing is
/// said of what states no order: told that a condition on the values
/// states none, the 1.5B model read "biggest first" alone as none, both
/// times (held-out-43's laundrette, spent, in this round's tune rerun).
async fn part_order(calls: &ModelCalls, part: &str, file: &str) -> Result<Option<ListOrder>, RunError> {
    let (forward, backward) = both_ways();
    let mut orders = Vec::new();
    for choices in [&forward, &backward] {
        let listed: Vec<String> = choices.iter().map(|choice| format!("- {choice}")).collect();
        let question = format!(
            "These words are from a task that writes {file}, one value per line: \"{part}\"\n\nWhat order do these words state for the lines? Choose one of:\n{}",
            listed.join("\n")
        );
        let schema = json!({
            "type": "object",
            "properties": {"order": {"type": "string", "enum": choices}},
            "required": ["order"],
            "additionalProperties": false
        });
        let reply = ask(calls, question, "part_order", schema, 60).await?;
        let answer = crate::json::parse_in_text::<Map<String, Value>>(&reply);
        orders.push(answer.as_ref().and_then(order_in));
    }
    Ok(match orders[..] {
        [Some(first), Some(second)] if first == second && first != ListOrder::Any => Some(first),
        _ => None,
    })
}

/// One short question to the planner's model, its reply held to `schema`.
async fn ask(
    calls: &ModelCalls,
    question: String,
    name: &str,
    schema: Value,
    max_tokens: u32,
) -> Result<String, RunError> {
    let mut request = ChatRequest::new(
        Role::Planner,
        "",
        vec![Message::system(SYSTEM.to_string()), Message::user(question)],
    );
    request.max_tokens = Some(max_tokens);
    request.response_format = Some(JsonSchemaFormat {
        name: name.to_string(),
        schema,
        strict: true,
    });
    Ok(calls.chat(request).await?.content.unwrap_or_default())
}

/// What two of `readings` agree on: the order two read (else none), and
/// each value once when two read so; `None` when that is nothing. A
/// disagreement on the order leaves what they agree on standing: on
/// held-out-34 (spent) the 1.5B model read "each address only once, in the
/// order they first show up" once as the input's order and once as none,
/// both times as each once, and the dropped test passed a file with an
/// address twice.
fn agreed(readings: &[ListTest], file: &str) -> Option<ListTest> {
    let by_two = |count: usize| count >= 2;
    let order = readings
        .iter()
        .map(|reading| reading.order)
        .find(|order| by_two(readings.iter().filter(|r| r.order == *order).count()))
        .unwrap_or(ListOrder::Unsettled);
    let each_once = by_two(readings.iter().filter(|r| r.each_once).count());
    let only_some = by_two(readings.iter().filter(|r| r.only_some).count());
    (order != ListOrder::Unsettled || each_once || only_some).then(|| ListTest {
        file: file.to_string(),
        order,
        each_once,
        only_some,
    })
}

/// The model's reply to the question of `file`'s order, with `choices`
/// shown in that order, the task's words about it quoted first. A
/// condition on the values is said to be no order: asked of "which files
/// … are bigger than 100 KB? List their names", the 1.5B model read
/// "descending: … largest first" twice of three (held-out-42, spent), and
/// every program that listed the files in the folder's order was set
/// aside. Said so alone, it read "bigger than 1 KB … biggest first" as no
/// order twice (held-out-43, spent): what does state one is said beside
/// it, and the quote it writes before its choice is where it looks for it.
async fn asked(calls: &ModelCalls, task: &str, file: &str, choices: &[&str]) -> Result<String, RunError> {
    let listed: Vec<String> = choices.iter().map(|choice| format!("- {choice}")).collect();
    let question = format!(
        "Task: {task}\n\nWhat order does the task state for the lines of {file}? Quote the words of the task that state it (\"\" when none do), then choose one of:\n{}\nWhich values to write (those bigger than a size, after a date, of one kind) is no order; words that say which comes first (biggest first, oldest first, A to Z, as they appear) state one. And does it say to write each value only once (no repeats)? And does it write only the values that meet a condition it states (bigger than a size, after a date, of one kind), not every one?",
        listed.join("\n")
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "words": {"type": "string"},
            "order": {"type": "string", "enum": choices},
            "each_once": {"type": "boolean"},
            "only_some": {"type": "boolean"}
        },
        "required": ["words", "order", "each_once", "only_some"],
        "additionalProperties": false
    });
    ask(calls, question, "list_test", schema, 120).await
}

/// The order choices as the model is shown them, and the same reversed.
fn both_ways() -> (Vec<&'static str>, Vec<&'static str>) {
    let forward: Vec<&str> = ORDERS.iter().map(|(said, _)| *said).collect();
    let backward = forward.iter().rev().copied().collect();
    (forward, backward)
}

/// The order a reply's `order` choice stands for.
fn order_in(answer: &Map<String, Value>) -> Option<ListOrder> {
    let said = answer.get("order")?.as_str()?.trim();
    ORDERS
        .iter()
        .find(|(choice, _)| *choice == said)
        .map(|(_, order)| *order)
}

/// The test a reply holds, whatever it states (no order, repeats allowed).
fn read(reply: &str, file: &str) -> Option<ListTest> {
    let answer = crate::json::parse_in_text::<Map<String, Value>>(reply)?;
    let order = order_in(&answer)?;
    let each_once = answer.get("each_once")?.as_bool()?;
    let only_some = answer.get("only_some").and_then(Value::as_bool).unwrap_or(false);
    Some(ListTest {
        file: file.to_string(),
        order,
        each_once,
        only_some,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list_test::tests::test;

    #[test]
    fn a_reply_is_read_as_one_of_the_choices() {
        let reply = format!(r#"{{"order": "{}", "each_once": true}}"#, ORDERS[1].0);
        assert_eq!(read(&reply, "out.txt"), Some(test(ListOrder::Ascending, true)));
        assert_eq!(read(r#"{"order": "by size", "each_once": true}"#, "out.txt"), None);
    }

    #[test]
    fn a_task_is_cut_into_its_parts_at_its_punctuation() {
        let task =
            "Which files are bigger than 1 KB? Write their names into big_files.txt, one per line, biggest first.";
        assert_eq!(
            parts(task),
            vec![
                "Which files are bigger than 1 KB",
                "Write their names into big_files.txt",
                "one per line",
                "biggest first"
            ]
        );
        // Parentheses and a repeated part; no part without a letter.
        assert_eq!(
            parts("List them (A-Z), one per line. One per line; 2."),
            vec!["List them", "A-Z", "one per line", "One per line"]
        );
        assert!(parts("...").is_empty());
        // A comma inside a number is not punctuation; one after it is.
        assert_eq!(
            parts("Files over 20,000 bytes, smallest first"),
            vec!["Files over 20,000 bytes", "smallest first"]
        );
        assert_eq!(parts("Rows 1,2"), vec!["Rows 1,2"]);
        assert_eq!(parts("Take 3, then 4"), vec!["Take 3", "then 4"]);
    }

    #[test]
    fn what_two_readings_agree_on_stands() {
        let (asc, input, none) = (ListOrder::Ascending, ListOrder::AsInInput, ListOrder::Any);
        let readings = |read: &[(ListOrder, bool)]| -> Vec<ListTest> {
            read.iter().map(|&(order, once)| test(order, once)).collect()
        };
        let agreed = |read: &[(ListOrder, bool)]| agreed(&readings(read), "out.txt");
        assert_eq!(agreed(&[(asc, true), (asc, true)]), Some(test(asc, true)));
        assert_eq!(agreed(&[(asc, true), (asc, false)]), Some(test(asc, false)));
        // The order in dispute, each once agreed.
        let unsettled = ListOrder::Unsettled;
        assert_eq!(agreed(&[(input, true), (none, true)]), Some(test(unsettled, true)));
        // A third reading settles the order.
        assert_eq!(
            agreed(&[(input, true), (none, true), (input, false)]),
            Some(test(input, true))
        );
        assert_eq!(agreed(&[(input, false), (asc, false), (none, false)]), None);
        // No order, read twice, is a test too: the order is free
        // (a folder's listing may give it).
        assert_eq!(agreed(&[(none, true), (none, false)]), Some(test(none, false)));
        assert_eq!(agreed(&[(none, false), (asc, false)]), None);
    }
}
