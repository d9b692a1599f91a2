//! The synthesizer role: the final answer from the task and the step results.
//! With the compiler strategy it is also the joiner: it answers, or says what
//! is missing so the plan is revised.

use serde_json::Value;

use crate::context::RunContext;
use crate::llm::{ChatRequest, LlmError, Message, Role};
use crate::plan::{value_as_text, Step};

/// What the joiner decided.
pub(crate) enum Joined {
    Answer(String),
    /// The results do not answer the task; this is what is missing.
    Replan(String),
}

pub(crate) async fn synthesize(ctx: &RunContext, task: &str, results: &[(Step, Value)]) -> Result<String, LlmError> {
    let request = answer_request(ctx, task, results, "");
    let response = ctx.chat(request).await?;
    Ok(response.content.unwrap_or_default().trim().to_string())
}

/// The joiner: answer from the results, or (with `may_replan`) reply
/// `REPLAN: <what is missing>` to have the plan revised.
pub(crate) async fn join(
    ctx: &RunContext,
    task: &str,
    results: &[(Step, Value)],
    may_replan: bool,
) -> Result<Joined, LlmError> {
    let option = if may_replan {
        "\nIf the results are not enough to answer the task, reply instead with only `REPLAN: <what is missing>`."
    } else {
        ""
    };
    let response = ctx.chat(answer_request(ctx, task, results, option)).await?;
    let text = response.content.unwrap_or_default().trim().to_string();
    match text.strip_prefix("REPLAN:") {
        Some(missing) if may_replan => Ok(Joined::Replan(missing.trim().to_string())),
        _ => Ok(Joined::Answer(text)),
    }
}

fn answer_request(ctx: &RunContext, task: &str, results: &[(Step, Value)], option: &str) -> ChatRequest {
    let mut context = format!("Task: {task}\n\nResults of the steps that were run:\n");
    for (step, output) in results {
        let text = crate::text::cut_to_budget(&value_as_text(output), ctx.options.result_budget);
        let text = text.trim();
        // Short results on one line, long ones below their step.
        let sep = if text.contains('\n') || text.len() > 80 {
            "\n"
        } else {
            " "
        };
        context.push_str(&format!("[{}] {}:{sep}{text}\n", step.id, step.description));
    }
    context.push_str("\nNow answer the task.");
    context.push_str(option);
    // The same on every call: part of the prefix a local model keeps evaluated.
    let instructions = "You are the synthesizer: you write the final answer from the step results. Answer the task for the user in a few sentences, using only the results of the steps that were run. Do not list the steps; cite the ones you used by id in brackets, like [s1].";
    ChatRequest::new(
        Role::Synthesizer,
        "",
        vec![Message::system(ctx.system_for(instructions)), Message::user(context)],
    )
}
