//! `react`, the baseline: no plan. One model (the executor role) sees the
//! task and the whole growing history of tool calls and results, and either
//! calls one tool or answers. Each call runs as a step of its own, through the
//! same executor, permissions, ledger and events as a plan's steps. A failed
//! call goes back to the model, counted against the replan bound; after
//! `max_steps` calls the last turn is told to answer.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::Drive;
use crate::context::RunContext;
use crate::executor;
use crate::llm::{ChatRequest, LlmError, Message, Role, ToolCall, ToolChoice, ToolSpec};
use crate::plan::{self, Plan, Step};
use crate::result::StepResult;
use crate::run::{Exit, Run, Start};
use crate::tools::{function_name, ToolRegistry};

pub(crate) struct React;

#[async_trait]
impl Drive for React {
    async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit> {
        if let Start::New(Some(given)) = start {
            run.plan = Some(given);
            return Err(Exit::failed(
                "the react strategy makes no plan, so it cannot run a given one; run the plan with another strategy (e.g. plan-execute)",
            ));
        }
        // The calls made so far are the steps of a plan written as it goes.
        run.plan = Some(Plan::new(run.task.clone(), Vec::new()));
        let mut history = opening(&run.ctx, &run.task);
        for record in &run.records {
            if let Some(call) = call_of(record) {
                remember(&mut history, call, &result_text(&run.ctx, record));
            }
        }
        let mut calls = run.records.len();
        loop {
            let may_call = calls < run.ctx.options.max_steps;
            let turn = Run::guard(&run.ctx, turn(&run.ctx, &history, calls + 1, may_call))
                .await?
                .map_err(Exit::failed)?;
            let (step, call, error) = match turn {
                Turn::Answer(answer) if answer.is_empty() => {
                    return Err(Exit::failed("the model ended without an answer"))
                }
                Turn::Answer(answer) => return Ok(answer),
                Turn::Unknown { call } => {
                    let message = format!("there is no tool `{}`", call.name);
                    (None, call, message)
                }
                Turn::Call { step, call } => (Some(step), call, String::new()),
            };
            calls += 1;
            let error = match step {
                Some(step) => call_tool(run, &mut history, step, call.clone()).await?,
                None => {
                    remember(&mut history, call.clone(), &format!("error: {error}"));
                    error
                }
            };
            if !error.is_empty() {
                if !run.may_replan() {
                    return Err(Exit::failed(format!(
                        "turn {calls} ({}) failed: {error}; the limit of failures a run may recover from ({}) is reached",
                        call.name, run.ctx.options.max_replans
                    )));
                }
                run.replans += 1;
            }
        }
    }
}

/// Run the model's call as a step and add it to the history. Returns the
/// call's error, or nothing when it succeeded.
async fn call_tool(run: &mut Run, history: &mut Vec<Message>, step: Step, call: ToolCall) -> Result<String, Exit> {
    let plan = run.plan.as_mut().expect("a react run has its plan of calls");
    plan.steps.push(step.clone());
    let result = Run::guard(&run.ctx, executor::run_step(&run.ctx, run.plan(), 0, step, Vec::new())).await?;
    let mut error = String::new();
    if result.succeeded() {
        run.done
            .insert(result.id.clone(), result.output.clone().unwrap_or(Value::Null));
    } else {
        error = result.error.clone().unwrap_or_else(|| "failed".to_string());
    }
    remember(history, call, &result_text(&run.ctx, &result));
    run.records.push(result);
    Ok(error)
}

/// What the model did with its turn.
enum Turn {
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
fn opening(ctx: &RunContext, task: &str) -> Vec<Message> {
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
fn remember(history: &mut Vec<Message>, call: ToolCall, result: &str) {
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
fn result_text(ctx: &RunContext, record: &StepResult) -> String {
    match (&record.error, &record.output) {
        (Some(error), _) if !record.succeeded() => format!("error: {error}"),
        (_, Some(output)) => crate::text::cut_to_budget(&plan::value_as_text(output), ctx.options.dependency_budget),
        _ => String::new(),
    }
}

/// A finished step as the call the model made (to rebuild the history on resume).
fn call_of(record: &StepResult) -> Option<ToolCall> {
    Some(ToolCall {
        id: record.id.clone(),
        name: function_name(record.tool.as_deref()?),
        arguments: record.args.clone().unwrap_or(Value::Object(Map::new())),
    })
}

/// One model turn. With `may_call` false the model must answer.
async fn turn(ctx: &RunContext, history: &[Message], number: usize, may_call: bool) -> Result<Turn, LlmError> {
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
    let value: Value = crate::json::parse_in_text(text)?;
    let name = value.get("name")?.as_str()?;
    real_name(tools, name)?;
    Some(ToolCall {
        id: String::new(),
        name: name.to_string(),
        arguments: value.get("arguments").cloned().unwrap_or(Value::Object(Map::new())),
    })
}
