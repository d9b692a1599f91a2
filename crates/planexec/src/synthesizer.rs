//! The synthesizer role: the final answer from the task and the step results.

use serde_json::Value;

use crate::context::RunContext;
use crate::llm::{ChatRequest, LlmError, Message, Role};
use crate::plan::{value_as_text, Step};

pub(crate) async fn synthesize(ctx: &RunContext, task: &str, results: &[(Step, Value)]) -> Result<String, LlmError> {
    let mut context = format!("Task: {task}\n\nStep results:\n");
    for (step, output) in results {
        context.push_str(&format!(
            "[{}] {} ({}):\n{}\n\n",
            step.id,
            step.description,
            step.tool.as_deref().unwrap_or("reasoning"),
            crate::text::cut_to_budget(&value_as_text(output), ctx.options.result_budget)
        ));
    }
    context.push_str("Write the final answer to the task.");
    let request = ChatRequest::new(
        Role::Synthesizer,
        "",
        vec![
            Message::system(
                "You are the synthesizer of a plan-and-execute agent. Write the final answer to the user's task using only the step results given. Be direct and complete. Refer to the steps you used by their ids in brackets, like [s1].",
            ),
            Message::user(context),
        ],
    );
    let response = ctx.chat(request).await?;
    Ok(response.content.unwrap_or_default().trim().to_string())
}
