//! The synthesizer role: the final answer from the task and the step results.

use serde_json::Value;

use crate::context::RunContext;
use crate::llm::{ChatRequest, LlmError, Message, Role};
use crate::plan::{value_as_text, Step};

pub(crate) async fn synthesize(ctx: &RunContext, task: &str, results: &[(Step, Value)]) -> Result<String, LlmError> {
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
    context.push_str(
        "\nNow answer the task for the user in a few sentences, using only these results. Do not list the steps; cite the ones you used by id in brackets, like [s1].",
    );
    let instructions = "You are the synthesizer: you write the final answer from the step results.";
    let request = ChatRequest::new(
        Role::Synthesizer,
        "",
        vec![
            Message::system(ctx.system()),
            Message::user(format!("{instructions}\n\n{context}")),
        ],
    );
    let response = ctx.chat(request).await?;
    Ok(response.content.unwrap_or_default().trim().to_string())
}
