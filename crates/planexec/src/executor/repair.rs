//! Repairing a failed tool call: the executor model is shown the error and
//! calls the tool again with corrected arguments, within a few turns.

use serde_json::Value;

use super::{call_checked, dep_output, resolve_for, step_context, Tally, EXECUTOR_ROLE};
use crate::context::RunContext;
use crate::llm::{ChatRequest, Message, Role, ToolCall, ToolChoice, ToolSpec};
use crate::plan::{Plan, Step};
use crate::schedule::DependencyOutputs;
use crate::tools::{ToolEntry, ToolError};

/// A tool call failed in a way a model could fix: show the model the error and
/// let it call the tool again, for at most `executor_max_turns` turns.
pub(super) async fn fix_with_model(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    entry: &ToolEntry,
    deps: &DependencyOutputs,
    first_error: ToolError,
    tally: &mut Tally,
) -> Result<Value, String> {
    let tool = &entry.tool;
    let mut messages = vec![
        Message::system(ctx.system()),
        Message::user(format!(
            "{EXECUTOR_ROLE}\n\n{}\nThe plan called `{}` with {} and it failed: {}\nCall `{}` again with corrected arguments.",
            step_context(ctx, plan, step, deps),
            tool.name(),
            Value::Object(step.args.clone()),
            first_error.message,
            tool.name()
        )),
    ];
    // An MCP tool (`server.tool`) is offered under an alias OpenAI accepts.
    let alias = crate::tools::function_name(tool.name());
    let spec = ToolSpec {
        name: alias.clone(),
        description: tool.description().to_string(),
        parameters: tool.parameters(),
    };
    let mut last_error = first_error.message;
    // Arguments already tried: a model that writes them again is stuck (a
    // small one asks for the same missing file four times), and another
    // turn costs seconds on a local model for the same error.
    let mut tried = vec![Value::Object(step.args.clone())];
    for _ in 0..ctx.options.executor_max_turns {
        let mut request = ChatRequest::new(Role::Executor, "", messages.clone());
        request.tools = vec![spec.clone()];
        request.tool_choice = ToolChoice::Required;
        request.step_id = Some(step.id.clone());
        tally.model_calls += 1;
        // The tool's error is what the run must show; the model's is why it stayed.
        let response = ctx
            .chat(request)
            .await
            .map_err(|e| format!("{last_error} (asking the executor model to repair the call failed: {e})"))?;
        let call = match response.tool_calls.first() {
            Some(call) => call.clone(),
            None => match tool_call_in_text(response.content.as_deref().unwrap_or(""), tool.name()) {
                Some(call) => call,
                None => {
                    return Err(format!(
                        "{last_error} (the executor model did not call `{}` again: {})",
                        tool.name(),
                        crate::text::one_line(response.content.as_deref().unwrap_or(""), 120)
                    ))
                }
            },
        };
        if tried.contains(&call.arguments) {
            return Err(format!(
                "{last_error} (the executor model called `{}` again with the same arguments)",
                tool.name()
            ));
        }
        tried.push(call.arguments.clone());
        if call.name != tool.name() && call.name != alias {
            last_error = format!("`{}` is not the tool of this step; call `{}`", call.name, tool.name());
        } else {
            let resolved = match call.arguments.as_object() {
                Some(args) => resolve_for(entry, args, &|id| dep_output(deps, id)).map(Value::Object),
                None => Ok(call.arguments.clone()),
            };
            let attempt = match resolved {
                Ok(args) => {
                    tally.args = Some(args.clone());
                    call_checked(ctx, step, entry, args, tally).await
                }
                Err(e) => Err(ToolError::invalid_args(e.to_string())),
            };
            match attempt {
                Ok(v) => return Ok(v),
                Err(e) if e.model_fixable() => last_error = e.message,
                Err(e) => return Err(e.message),
            }
        }
        messages.push(Message::Assistant {
            content: response.content.clone(),
            tool_calls: vec![call.clone()],
        });
        messages.push(Message::Tool {
            tool_call_id: call.id.clone(),
            content: format!("error: {last_error}"),
        });
    }
    Err(format!(
        "{last_error} (still failing after {} executor model turns)",
        ctx.options.executor_max_turns
    ))
}

/// Local models often write a tool call as JSON in their text: accept
/// `{"name": ..., "arguments": {...}}` or a bare arguments object.
fn tool_call_in_text(text: &str, tool: &str) -> Option<ToolCall> {
    let value: Value = crate::json::parse_in_text(text)?;
    let (name, arguments) = match (value.get("name").and_then(Value::as_str), value.get("arguments")) {
        (Some(name), Some(args)) => (name.to_string(), args.clone()),
        _ if value.is_object() => (tool.to_string(), value),
        _ => return None,
    };
    Some(ToolCall {
        id: "call_text".to_string(),
        name,
        arguments,
    })
}
