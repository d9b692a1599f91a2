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
    Ok(response.content.unwrap_or_default().trim().to_string())
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

/// `text` trimmed, after a space when short, on the lines below when long.
fn below_if_long(text: &str) -> String {
    let text = text.trim();
    match text.contains('\n') || text.len() > 80 {
        true => format!("\n{text}"),
        false => format!(" {text}"),
    }
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
            below_if_long(&text)
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
        context.push_str(&format!("{path}:{}\n", below_if_long(&text)));
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
}
