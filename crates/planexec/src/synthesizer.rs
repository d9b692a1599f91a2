//! The synthesizer role: the final answer from the task and the step results.
//! With the compiler strategy it is also the joiner: it answers, or says what
//! is missing so the plan is revised. Before a run says `succeeded` it also
//! checks what the run produced (the files its task names, the answer)
//! against the task ([`check`]).

use serde_json::Value;

use crate::context::{ModelCalls, Setting};
use crate::llm::{ChatRequest, LlmError, Message, Role};
use crate::plan::{value_as_text, Step};
use crate::verdict;

/// What the joiner decided.
pub(crate) enum Joined {
    Answer(String),
    /// The results do not answer the task; this is what is missing.
    Replan(String),
}

/// What an answer is written from: the results of the steps that ran, and
/// the files the task names that the run wrote (path and what it holds).
pub(crate) type Done<'a> = (&'a [(Step, Value)], &'a [(String, String)]);

/// The answer to `task` from what the run did.
pub(crate) async fn synthesize(
    calls: &ModelCalls,
    setting: &Setting,
    task: &str,
    done: Done<'_>,
) -> Result<String, LlmError> {
    let request = answer_request(setting, task, done, "");
    let response = calls.chat(request).await?;
    let answer = response.content.unwrap_or_default().trim().to_string();
    // A value hidden behind its citation matters where the answer is the
    // work; where the run wrote a file, the file holds it.
    let answered_in_text = if done.1.is_empty() { done.0 } else { &[] };
    if !says_nothing(&answer) && !hides_a_value(&answer, answered_in_text) {
        return Ok(answer);
    }
    let request = answer_request(setting, task, done, IN_WORDS);
    let response = calls.chat(request).await?;
    let answer = response.content.unwrap_or_default().trim().to_string();
    Ok(with_values_said(&answer, answered_in_text))
}

/// `answer` with each value it cites and does not say put before its
/// citation (`is [s1]` → `is 1922523 [s1]`): asked again, the 1.5B model
/// wrote the same `[s1]` (held-out-23), and a user is better told the
/// value than an id.
fn with_values_said(answer: &str, results: &[(Step, Value)]) -> String {
    let mut answer = answer.to_string();
    for (step, output) in results {
        let (said, ids) = crate::text::citations(&answer);
        if ids.contains(&step.id) && is_hidden(&said, output) {
            let cited = format!("[{}]", step.id);
            answer = answer.replace(&cited, &format!("{} {cited}", value_as_text(output).trim()));
        }
    }
    answer
}

/// Asked again of an answer that says nothing but the ids of steps, or
/// cites a value it does not say.
const IN_WORDS: &str = "\nThe user sees none of the results above: write the answer itself in words, with the values it gives, not only the ids of the steps.";

/// Whether `answer` cites a result that is a value (a string or number of
/// one line, two words at most, not a sentence; not a tool's record such
/// as `{"path": …, "bytes": 2}`) without saying it: asked which city of a CSV is the
/// most populous, the 1.5B synthesizer answered `The city … is [s1].`, and
/// the user was never told what s1 found (held-out-23).
fn hides_a_value(answer: &str, results: &[(Step, Value)]) -> bool {
    let (said, ids) = crate::text::citations(answer);
    results
        .iter()
        .any(|(step, output)| ids.contains(&step.id) && is_hidden(&said, output))
}

/// Whether `output` is a value (a string or number of one line, two words
/// at most, not a sentence) that `said` (an answer without its citations)
/// does not hold whole.
fn is_hidden(said: &str, output: &Value) -> bool {
    if !matches!(output, Value::String(_) | Value::Number(_)) {
        return false;
    }
    let value = value_as_text(output);
    let value = value.trim();
    let a_value = !value.is_empty()
        && !value.contains('\n')
        && value.split_whitespace().count() <= 2
        && !value.ends_with(['.', '!', '?']);
    a_value && !crate::text::contains_whole(said, value)
}

/// Whether `answer` holds no word beside its citations of steps (`[s1]`,
/// `[s1, s2]`): such an answer tells the user nothing.
fn says_nothing(answer: &str) -> bool {
    let (words, _) = crate::text::citations(answer);
    !words.chars().any(char::is_alphanumeric)
}

/// The joiner: answer from the results, or (with `may_replan`) reply
/// `REPLAN: <what is missing>` to have the plan revised.
pub(crate) async fn join(
    calls: &ModelCalls,
    setting: &Setting,
    task: &str,
    done: Done<'_>,
    may_replan: bool,
) -> Result<Joined, LlmError> {
    let option = if may_replan {
        "\nIf the results are not enough to answer the task, reply instead with only `REPLAN: <what is missing>`."
    } else {
        ""
    };
    let response = calls.chat(answer_request(setting, task, done, option)).await?;
    let text = response.content.unwrap_or_default().trim().to_string();
    match text.strip_prefix("REPLAN:") {
        Some(missing) if may_replan => Ok(Joined::Replan(missing.trim().to_string())),
        _ => Ok(Joined::Answer(text)),
    }
}

/// What the synthesizer found when it checked a run's work against its task.
pub(crate) struct Verdict {
    pub done: bool,
    /// What is wrong, when it is not done.
    pub wrong: String,
}

/// Whether `produced` (the files the task names as they are now, inputs
/// and outputs, and the answer) does what `task` asks. A model's verdict: a run whose work
/// plainly does not fit its task (a listing where a count is asked, text
/// spelled backwards where lower case is) is not reported as a success.
/// `temperature`: `None` for the greedy verdict, else a sample of another.
pub(crate) async fn check(
    calls: &ModelCalls,
    setting: &Setting,
    (task, produced): (&str, &str),
    temperature: Option<f32>,
) -> Result<Verdict, LlmError> {
    let instructions = "You are the checker: a run says it has done the task below. Look at what it produced and say whether it does exactly what the task asks: the right content (check it against the files the run was given, when they are shown), in the form the task asks for. Reply with only a JSON object: {\"done\": true, \"wrong\": \"\"} when it does, or {\"done\": false, \"wrong\": \"<what is wrong, in one sentence>\"} when it does not.";
    let question = format!("{instructions}\n\nTask: {task}\n\n{produced}");
    let mut request = verdict::request(
        Role::Synthesizer,
        setting.system(),
        question,
        "verdict",
        ("done", "wrong"),
    );
    request.max_tokens = Some(120);
    request.temperature = temperature;
    let response = calls.chat(request).await?;
    let text = response.content.unwrap_or_default();
    // A reply that is no verdict says nothing against the work.
    let (done, wrong) = verdict::read(&text, ("done", "wrong")).unwrap_or((true, String::new()));
    Ok(Verdict { done, wrong })
}

/// Whether `task` asks, in its own words, for what `fact` (a fact of the
/// form of a file the run wrote: numbers held as text, lines cut short)
/// says the file is not: the task's words that do, when it does. One
/// narrow question, not the whole check: shown the file and the task, the
/// 1.5B checker passed JSON whose numbers were text where the task said
/// "JSON numbers, not strings", in five held-out parts. The words must be
/// the task's own (a reply that quotes words the task does not hold is no
/// finding), so a model that answers yes to every question finds nothing.
pub(crate) async fn against(
    calls: &ModelCalls,
    setting: &Setting,
    (task, fact): (&str, &str),
) -> Result<Option<String>, LlmError> {
    let instructions = "You are the checker: a run has done the task below, and the fact below is true of a file it wrote. Does the task, in its own words, ask for the file to be otherwise than the fact says? Reply with only a JSON object: {\"otherwise\": true, \"words\": \"<the words of the task that ask for it, quoted exactly>\"} when it does, or {\"otherwise\": false, \"words\": \"\"} when the task does not say.";
    let question = format!("{instructions}\n\nTask: {task}\n\nFact: {}", fact.trim());
    let mut request = verdict::request(
        Role::Synthesizer,
        setting.system(),
        question,
        "against",
        ("otherwise", "words"),
    );
    request.max_tokens = Some(80);
    let response = calls.chat(request.clone()).await?;
    let text = response.content.unwrap_or_default();
    let words = match verdict::read(&text, ("otherwise", "words")) {
        Some((true, words)) => words,
        _ => return Ok(None),
    };
    if let Some(found) = quoted_about(task, fact, &words) {
        return Ok(Some(found));
    }
    // Asked whether badges written A to Z went against "in the order they
    // first appear", the 1.5B model said yes and quoted the task's first
    // sentence, and told so, it took the yes back (two spent tune runs).
    // Which words are about the fact is the narrower question; its quote is
    // held to the same test.
    request.messages.push(Message::assistant(text));
    request.messages.push(Message::user(format!(
        "The words \"{}\" do not speak of what the fact says. Which words of the task do? Reply with only a JSON object: {{\"otherwise\": true, \"words\": \"<those words of the task, quoted exactly>\"}}, or {{\"otherwise\": false, \"words\": \"\"}} when no words of the task do.",
        words.trim()
    )));
    let again = calls.chat(request).await?.content.unwrap_or_default();
    Ok(match verdict::read(&again, ("otherwise", "words")) {
        Some((true, words)) => quoted_about(task, fact, &words),
        _ => None,
    })
}

/// Which of two ways a file could be (`ways`, such as `sorted A to Z` and
/// `in the order in which they first appear in badges.txt`) the task asks
/// for, by the model asked twice, the ways in both orders: `Some(i)` when
/// both answers name way `i`. A small model leans to an answer by where it
/// stands; asked to quote the task's words about an order, the 1.5B model
/// quoted the fact back or took its yes back (held-out-29's dates, a tune
/// run of badges), where a choice held by a schema asks no quote.
pub(crate) async fn which_asked(
    calls: &ModelCalls,
    setting: &Setting,
    (task, what): (&str, &str),
    ways: [&str; 2],
) -> Result<Option<usize>, LlmError> {
    let mut chosen = Vec::new();
    for order in [[0, 1], [1, 0]] {
        let question = format!(
            "Task: {task}\n\nWhich does the task ask for, in its own words: {what}\nA: {}\nB: {}\nneither: the task does not say.\n\nReply with only a JSON object: {{\"asks\": \"A\"}}, {{\"asks\": \"B\"}} or {{\"asks\": \"neither\"}}.",
            ways[order[0]], ways[order[1]]
        );
        let mut request = verdict::choice_request(
            Role::Synthesizer,
            setting.system(),
            question,
            "asks",
            &["A", "B", "neither"],
        );
        request.max_tokens = Some(20);
        let reply = calls.chat(request).await?.content.unwrap_or_default();
        let way = match verdict::read_choice(&reply, "asks").as_deref() {
            Some("A") => order[0],
            Some("B") => order[1],
            _ => return Ok(None),
        };
        chosen.push(way);
    }
    Ok((chosen[0] == chosen[1]).then_some(chosen[0]))
}

/// `words`, when they are the task's own words about what `fact` says: a
/// run of at least two of the task's words, in its order (case, quotes and
/// punctuation aside), that shares a word of what the fact claims. Asked
/// whether a task that never named numbers asked for JSON numbers, the
/// 1.5B model said yes and quoted the whole task (`convert plants.csv to
/// plants.json: a JSON array …`): words that are no more than the file's
/// name and kind, or the words of a sentence, do not make a finding.
fn quoted_about(task: &str, fact: &str, words: &str) -> Option<String> {
    let quoted = words_of(words);
    let said = words_of(task);
    let in_task = quoted.len() >= 2 && said.windows(quoted.len()).any(|window| window == quoted.as_slice());
    // A quote of (nearly) the whole task names no words by itself: asked
    // about TODO texts cut from their lines, as the task asked, the 1.5B
    // model quoted the task from its first word to its last (a spent
    // held-out-40 run). Asked whether JSON numbers written as text went
    // against "packets and price_each must be numbers, not strings", it
    // quoted the whole task too, twice (held-out-42, spent): the one
    // sentence of it that speaks of the claim in two words or more is
    // then the words.
    let whole_task = quoted.len() * 10 >= said.len() * 9;
    let claimed = claim_words(fact);
    if in_task && whole_task {
        return sentence_about(task, &claimed);
    }
    let about = quoted.iter().any(|word| claimed.contains(word));
    (in_task && about).then(|| words.trim().trim_matches(['"', '\'', '`']).to_string())
}

/// The first sentence of `task` ([`crate::plan::sentences_of`]), or
/// clause of one after a colon, that holds two of the `claimed` words or
/// more, without its closing stop.
fn sentence_about(task: &str, claimed: &[String]) -> Option<String> {
    let sentences = crate::plan::sentences_of(task);
    let clauses = sentences.iter().flat_map(|sentence| sentence.split(": "));
    clauses
        .map(|clause| clause.trim().trim_end_matches(['.', '!', '?', ';']))
        .find_map(|sentence| {
            let mut shared: Vec<String> = words_of(sentence).into_iter().filter(|w| claimed.contains(w)).collect();
            shared.sort();
            shared.dedup();
            (shared.len() >= 2).then(|| sentence.to_string())
        })
}

/// The words of `text`, lower case, as a quote is compared: a file's name
/// (`plants.json`) is one word.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '.' && c != '_')
        .map(|word| word.trim_matches('.').to_lowercase())
        .filter(|word| !word.is_empty())
        .collect()
}

/// The words of what `fact` claims that a quote about it may share: of
/// four letters or more, outside its excerpts in backticks (what a file
/// holds), and none of the names of the files it is about, their stems
/// and their kinds, nor a word of grammar.
fn claim_words(fact: &str) -> Vec<String> {
    let claim: String = fact.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    let words = words_of(&claim);
    let named: Vec<&str> = words
        .iter()
        .filter(|word| word.contains('.'))
        .flat_map(|path| path.split('.'))
        .collect();
    words
        .iter()
        .filter(|word| word.chars().count() >= 4 && !word.contains('.'))
        .filter(|word| !named.contains(&word.as_str()) && !GRAMMAR.contains(&word.as_str()))
        .cloned()
        .collect()
}

/// Words of grammar a fact's sentence holds that say nothing of its claim.
const GRAMMAR: &[&str] = &[
    "each", "from", "into", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those", "were",
    "what", "when", "where", "which", "while", "with", "such", "have", "been",
];

fn answer_request(setting: &Setting, task: &str, (results, files): Done<'_>, option: &str) -> ChatRequest {
    let mut context = format!("Task: {task}\n\nResults of the steps that were run:\n");
    let budget = setting.options.result_budget;
    let mut shown = Vec::new();
    for (step, output) in results {
        let text = crate::text::cut_to_budget(&value_as_text(output), budget);
        context.push_str(&format!(
            "[{}] {}:{}\n",
            step.id,
            step.description,
            crate::text::below_if_long(&text)
        ));
        shown.push(text);
    }
    // What a step wrote is the work even where it printed nothing of it;
    // a file that holds what a result above already says, whole, is not
    // shown twice (a sum written to total.txt is its calculation's
    // result). Said by a result, not by the task: a file that holds what
    // the task wrote is shown (the task does not say what the run did).
    let said = |held: &str| shown.iter().any(|text| crate::text::contains_whole(text, held));
    let unseen: Vec<&(String, String)> = files
        .iter()
        .filter(|(_, held)| held.trim().is_empty() || !said(held.trim()))
        .collect();
    if !unseen.is_empty() {
        context.push_str("\nFiles the run wrote, as they are now:\n");
    }
    for (path, held) in unseen {
        let text = crate::text::cut_to_budget(held, budget);
        context.push_str(&format!("{path}:{}\n", crate::text::below_if_long(&text)));
    }
    context.push_str("\nNow answer the task.");
    context.push_str(option);
    // The same on every call: part of the prefix a local model keeps evaluated.
    let instructions = "You are the synthesizer: you write the final answer from the step results. Answer the task for the user in a few sentences, using only the results of the steps that were run. Do not list the steps; cite the ones you used by id in brackets, like [s1].";
    ChatRequest::new(
        Role::Synthesizer,
        "",
        vec![
            Message::system(setting.system_for(instructions)),
            Message::user(context),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(results: &[(Step, Value)], files: &[(String, String)], task: &str) -> String {
        let setting = Setting {
            tools: std::sync::Arc::new(crate::tools::ToolRegistry::new()),
            options: crate::RunOptions::default(),
            help: None,
            compact: true,
            engine: None,
            task: String::new(),
        };
        let request = answer_request(&setting, task, (results, files), "");
        match request.messages.last() {
            Some(Message::User { content }) => content.clone(),
            other => panic!("the context is the last message: {other:?}"),
        }
    }

    fn result(id: &str, output: &str) -> (Step, Value) {
        let step: Step = serde_json::from_value(serde_json::json!({"id": id, "description": "compute"})).unwrap();
        (step, Value::String(output.to_string()))
    }

    /// A written file is shown unless a step result already says what it
    /// holds, whole: not when only the task says it, or a result holds it
    /// inside a longer number.
    #[test]
    fn a_written_file_is_shown_unless_a_result_says_it() {
        let file = |held: &str| vec![("total.txt".to_string(), held.to_string())];
        let said = shown(&[result("s1", "The sum is 42.")], &file("42"), "Add the numbers.");
        assert!(!said.contains("Files the run wrote"), "{said}");
        let in_task = shown(
            &[result("s1", "wrote total.txt")],
            &file("42"),
            "Write 42 to total.txt.",
        );
        assert!(
            in_task.contains("total.txt:") && in_task.contains("Files the run wrote"),
            "{in_task}"
        );
        let inside = shown(&[result("s1", "The sum is 420.")], &file("42"), "Add the numbers.");
        assert!(inside.contains("Files the run wrote"), "{inside}");
    }

    #[test]
    fn an_answer_of_citations_alone_says_nothing() {
        assert!(says_nothing("[s1]"));
        assert!(says_nothing(" [s1, s2]. "));
        assert!(says_nothing(""), "an empty answer says nothing too");
        assert!(!says_nothing("Tijuana [s1]"));
        assert!(!says_nothing("[note]"), "not a citation");
    }

    #[test]
    fn an_answer_that_cites_a_value_without_saying_it_hides_it() {
        let results = [
            result("s1", "8336817"),
            result("s2", "wrote the list of cities to big.txt"),
        ];
        assert!(hides_a_value("The most populous city is [s1].", &results));
        assert!(!hides_a_value("It has 8336817 people [s1].", &results));
        assert!(
            !hides_a_value("The list is written [s2].", &results),
            "a message is no value"
        );
        assert!(
            !hides_a_value("The most populous city is Tijuana.", &results),
            "cites none"
        );
    }

    #[test]
    fn a_value_cited_and_not_said_is_put_before_its_citation() {
        let results = [
            result("s1", "1922523"),
            result("s2", "wrote the list of cities to big.txt"),
        ];
        assert_eq!(
            with_values_said("The city is [s1], listed [s2].", &results),
            "The city is 1922523 [s1], listed [s2]."
        );
        assert_eq!(with_values_said("It is 1922523 [s1].", &results), "It is 1922523 [s1].");
    }

    /// Words a reply quotes count only when the task holds them, in order,
    /// and they share a word of the fact's claim beyond its files' names.
    #[test]
    fn quoted_words_must_be_the_tasks_own_about_the_fact() {
        let fact =
            "In planets.json, the values of \"moons\" are numbers written as text (such as \"2\"), not JSON numbers.";
        let task = "Convert planets.csv to planets.json. Numeric columns should be JSON numbers, not strings.";
        assert_eq!(
            quoted_about(task, fact, "\"numeric columns should be JSON numbers\"").as_deref(),
            Some("numeric columns should be JSON numbers")
        );
        assert_eq!(
            quoted_about(task, fact, "values must be numbers"),
            None,
            "not the task's"
        );
        assert_eq!(quoted_about(task, fact, "numbers"), None, "one word is no quote");
        assert_eq!(quoted_about(task, fact, "strings not numbers"), None, "out of order");
        let plain = "Convert plants.csv to plants.json: a JSON array with one object per row.";
        assert_eq!(
            quoted_about(plain, fact, plain),
            None,
            "names and kinds are not the claim"
        );
        let todos = "Gather all the TODOs from notes.md into todos.txt - one per line, just the text after \"TODO:\", in the order they appear.";
        let cut_todos = "In todos.txt, no line is a whole line of notes.md: each is a part of one, with the rest cut off (`fix the gate` is cut from `- TODO: fix the gate`, without `- TODO: …`).";
        assert_eq!(
            quoted_about(todos, cut_todos, todos),
            None,
            "the whole task points at no words"
        );
        let seeds = "Convert seeds.csv into seeds.json: a list with one object per row, using the column names as keys. packets and price_each must be numbers, not strings.";
        let text_numbers = "In seeds.json, the values of \"packets\", \"price_each\" are numbers written as text (such as \"4\"), not JSON numbers.";
        assert_eq!(
            quoted_about(seeds, text_numbers, seeds).as_deref(),
            Some("packets and price_each must be numbers, not strings"),
            "the whole task points at its sentence about the claim"
        );
        assert!(
            quoted_about(todos, cut_todos, "into todos.txt - one per line").is_some(),
            "a part of the task still points"
        );
        let cut = "In errors.txt, no line is a whole line of app.log: each is a part of one, with the rest cut off (`Disk full` is cut from `09:00 ERROR Disk full`, without `09:00 ERROR …`).";
        let task = "Please pull every ERROR line out of app.log and write them to errors.txt.";
        assert!(quoted_about(task, cut, "pull every ERROR line out of app.log").is_some());
        assert_eq!(quoted_about(task, cut, "write them to errors.txt"), None);
        let sorted = "The items of unique.txt are `sorted A to Z`, not in the order in which they first appear in names.txt (there `Zoe` is before `Adam`).";
        let first_seen = "Write each name once to unique.txt, in the order they first appear.";
        assert!(quoted_about(first_seen, sorted, "in the order they first appear").is_some());
        let asked_sorted = "Write each name once to unique.txt, sorted alphabetically, one per line.";
        assert_eq!(
            quoted_about(asked_sorted, sorted, "sorted alphabetically, one per line"),
            None,
            "a sorted list is what the fact says the file is"
        );
    }
}
