//! The ReAct baseline's model turn: one model sees the task and the whole
//! growing history of tool calls and results, and either calls one tool or
//! answers. The loop itself is in [`crate::agent`], where every call runs
//! through the same executor, permissions, ledger and events as a plan's steps.

use serde_json::{Map, Value};

use crate::context::RunContext;
use crate::llm::{ChatRequest, LlmError, Message, Role, ToolCall, ToolChoice, ToolSpec};
use crate::plan::{self, Step};
use crate::result::StepResult;
use crate::tools::{function_name, ToolRegistry};

/// What the model did with its turn.
pub(crate) enum Turn {
    /// Call `step.tool` with `step.args`; `call` goes into the history.
    Call {
        step: Step,
        call: ToolCall,
    },
    /// A call of a tool that does not exist: the error goes back to the model.
    Unknown {
        call: ToolCall,
    },
    Answer(String),
}

/// The system prompt and the task. The tools go as native function tools,
/// so the system prompt does not list them again.
pub(crate) fn opening(ctx: &RunContext, task: &str) -> Vec<Message> {
    let mode = match ctx.options.mode {
        crate::policy::Mode::Plan => " This run is in plan mode: only read_only tools may be used.",
        _ => "",
    };
    vec![
        Message::system(format!(
            "You are an agent that solves a task with tools. Call one tool at a time; you will see its result, then decide the next call. When you can answer, reply with the answer in a few sentences and no tool call.{mode}"
        )),
        Message::user(format!("Task: {task}")),
    ]
}

/// Add one finished call and its result to the history.
pub(crate) fn remember(history: &mut Vec<Message>, call: ToolCall, result: &str) {
    let id = call.id.clone();
    history.push(Message::Assistant {
        content: None,
        tool_calls: vec![call],
    });
    history.push(Message::Tool {
        tool_call_id: id,
        content: result.to_string(),
    });
}

/// What the model is shown of a finished step: its output, or its error.
pub(crate) fn result_text(ctx: &RunContext, record: &StepResult) -> String {
    match (&record.error, &record.output) {
        (Some(error), _) if !record.succeeded() => format!("error: {error}"),
        (_, Some(output)) => crate::text::cut_to_budget(&plan::value_as_text(output), ctx.options.dependency_budget),
        _ => String::new(),
    }
}

/// A finished step as the call the model made (to rebuild the history on resume).
pub(crate) fn call_of(record: &StepResult) -> Option<ToolCall> {
    Some(ToolCall {
        id: record.id.clone(),
        name: function_name(record.tool.as_deref()?),
        arguments: record.args.clone().unwrap_or(Value::Object(Map::new())),
    })
}

/// One model turn. With `may_call` false the model must answer.
pub(crate) async fn turn(
    ctx: &RunContext,
    history: &[Message],
    number: usize,
    may_call: bool,
) -> Result<Turn, LlmError> {
    let mut messages = history.to_vec();
    if !may_call {
        messages.push(Message::user(format!(
            "That was the last tool call this run allows ({}). Answer the task now from the results above, in plain text.",
            number - 1
        )));
    }
    let mut request = ChatRequest::new(Role::Executor, "", messages);
    request.tools = specs(&ctx.tools);
    request.tool_choice = if may_call { ToolChoice::Auto } else { ToolChoice::None };
    let response = ctx.chat(request).await?;
    let text = response.content.clone().unwrap_or_default();
    // Local models write a call as JSON in their text.
    let call = response
        .tool_calls
        .first()
        .cloned()
        .or_else(|| call_in_text(&text, &ctx.tools));
    let Some(mut call) = call.filter(|_| may_call) else {
        return Ok(Turn::Answer(text.trim().to_string()));
    };
    let id = format!("r{number}");
    call.id = id.clone();
    let Some(tool) = real_name(&ctx.tools, &call.name) else {
        return Ok(Turn::Unknown { call });
    };
    let args = call.arguments.as_object().cloned().unwrap_or_default();
    Ok(Turn::Call {
        step: Step {
            id,
            description: format!("call {tool} (turn {number})"),
            tool: Some(tool),
            args,
            depends_on: Vec::new(),
            expected: None,
        },
        call,
    })
}

fn specs(tools: &ToolRegistry) -> Vec<ToolSpec> {
    tools
        .entries()
        .iter()
        .map(|e| ToolSpec {
            name: function_name(e.tool.name()),
            description: e.tool.description().to_string(),
            parameters: e.tool.parameters(),
        })
        .collect()
}

fn real_name(tools: &ToolRegistry, called: &str) -> Option<String> {
    tools
        .names()
        .into_iter()
        .find(|n| n == called || function_name(n) == called)
}

/// `{"name": "<a tool>", "arguments": {...}}` in a reply's text.
fn call_in_text(text: &str, tools: &ToolRegistry) -> Option<ToolCall> {
    let json = plan::extract_json_object(text)?;
    let value: Value = serde_json::from_str(json)
        .or_else(|_| serde_json::from_str(&plan::repair_json(json)))
        .ok()?;
    let name = value.get("name")?.as_str()?;
    real_name(tools, name)?;
    Some(ToolCall {
        id: String::new(),
        name: name.to_string(),
        arguments: value.get("arguments").cloned().unwrap_or(Value::Object(Map::new())),
    })
}
