//! `react`, the baseline: no plan. One model (the executor role) sees the
//! task and the whole growing history of tool calls and results, and either
//! calls one tool or answers. Each call runs as a step of its own, through the
//! same executor, permissions, ledger and events as a plan's steps. A failed
//! call goes back to the model, counted against the replan bound; after
//! `max_steps` calls the last turn is told to answer.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::Drive;
use crate::calls::{self, Reply};
use crate::context::{ModelCalls, Setting};
use crate::executor;
use crate::llm::{ChatRequest, LlmError, Message, Role, ToolCall, ToolChoice};
use crate::plan::{self, Plan, Step};
use crate::result::StepResult;
use crate::run::{Exit, Run, Start};
use crate::tools::function_name;

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
        let mut history = opening(&run.ctx.setting, &run.task);
        for record in &run.records {
            if let Some(call) = call_of(record) {
                calls::remember(&mut history, call, &result_text(&run.ctx.setting, record));
            }
        }
        let mut calls = run.records.len();
        let mut nudged = false;
        loop {
            let may_call = calls < run.ctx.setting.options.max_steps;
            let turn = Run::guard(
                &run.ctx.control,
                turn(&run.ctx.calls, &run.ctx.setting, &history, calls + 1, may_call),
            )
            .await?
            .map_err(Exit::failed)?;
            let (name, error) = match turn {
                Turn::Answer(answer) if answer.is_empty() => {
                    return Err(Exit::failed("the model ended without an answer"))
                }
                Turn::Answer(answer) => match super::dag::not_done(run, &answer).await? {
                    None => return Ok(answer),
                    Some(missing) if nudged => {
                        return Err(Exit::failed(format!(
                            "the model answered, but the work the task names is not done: {}",
                            missing.what
                        )))
                    }
                    Some(missing) => {
                        // An answer in words is not the file the task asks
                        // for: the model is told so once.
                        nudged = true;
                        history.push(Message::assistant(answer));
                        history.push(Message::user(format!(
                            "That answer is not the work the task asks for: {}. Call the tools that do it now, then answer.",
                            missing.what
                        )));
                        continue;
                    }
                },
                Turn::CallAtTheEnd { tool } => {
                    return Err(Exit::failed(format!(
                    "the model ended with a call of `{tool}` instead of an answer, after the last call this run allows"
                )))
                }
                Turn::Garbled { text, why } => {
                    history.push(Message::assistant(text));
                    history.push(Message::user(format!(
                        "{why}. To call a tool, use the tool-calling format (or write only {{\"name\": \"<tool>\", \"arguments\": {{...}}}}); to finish, answer in plain text."
                    )));
                    calls += 1;
                    ("a garbled call".to_string(), why)
                }
                Turn::Unknown { call } => {
                    let message = format!("there is no tool `{}`", call.name);
                    calls += 1;
                    let name = call.name.clone();
                    calls::remember(&mut history, call, &format!("error: {message}"));
                    (name, message)
                }
                Turn::Call { step, call } if repeats_a_success(&run.records, &step) => {
                    calls += 1;
                    let again = calls::already_made(step.tool.as_deref().unwrap_or_default(), "answer");
                    calls::remember(&mut history, call, &again);
                    continue;
                }
                Turn::Call { step, call } => {
                    calls += 1;
                    let name = call.name.clone();
                    (name, call_tool(run, &mut history, *step, call).await?)
                }
            };
            if !error.is_empty() {
                if !run.may_replan() {
                    return Err(Exit::failed(format!(
                        "turn {calls} ({name}) failed: {error}; the limit of failures a run may recover from ({}) is reached",
                        run.ctx.setting.options.max_replans
                    )));
                }
                run.replans += 1;
            }
        }
    }
}

/// Whether `step` calls a tool with the arguments of a call that already succeeded.
fn repeats_a_success(records: &[StepResult], step: &Step) -> bool {
    let (Some(tool), args) = (step.tool.as_deref(), Value::Object(step.args.clone())) else {
        return false;
    };
    records.iter().any(|r| r.succeeded() && r.is_call_of(tool, &args))
}

/// Run the model's call as a step and add it to the history. Returns the
/// call's error, or nothing when it succeeded.
async fn call_tool(run: &mut Run, history: &mut Vec<Message>, step: Step, call: ToolCall) -> Result<String, Exit> {
    let plan = run.plan.as_mut().expect("a react run has its plan of calls");
    plan.steps.push(step.clone());
    let result = Run::guard(
        &run.ctx.control,
        executor::run_step(&run.ctx, run.plan(), 0, step, Vec::new()),
    )
    .await?;
    let mut error = String::new();
    if result.succeeded() {
        run.done
            .insert(result.id.clone(), result.output.clone().unwrap_or(Value::Null));
    } else {
        error = result.error.clone().unwrap_or_else(|| "failed".to_string());
    }
    calls::remember(history, call, &result_text(&run.ctx.setting, &result));
    run.records.push(result);
    Ok(error)
}

/// What the model did with its turn.
enum Turn {
    /// Call `step.tool` with `step.args`; `call` goes into the history.
    Call {
        step: Box<Step>,
        call: ToolCall,
    },
    /// A call of a tool that does not exist: the error goes back to the model.
    Unknown {
        call: ToolCall,
    },
    /// Something that looks like a call but cannot be read: asked again.
    Garbled {
        text: String,
        why: String,
    },
    /// A call when the model had to answer: the run has no answer.
    CallAtTheEnd {
        tool: String,
    },
    Answer(String),
}

/// The system prompt and the task. The tools go as native function tools,
/// so the system prompt does not list them again.
fn opening(setting: &Setting, task: &str) -> Vec<Message> {
    let mode = match setting.options.mode {
        crate::policy::Mode::Plan => " This run is in plan mode: only read_only tools may be used.",
        _ => "",
    };
    vec![
        Message::system(format!(
            "You are an agent that solves a task with tools. Call one tool at a time; you will see its result, then decide the next call. When you can answer, reply with the answer in a few sentences and no tool call.{mode}"
        )),
        Message::user(match crate::prompt::workspace_files(task, &setting.tools) {
            Some(files) => format!("Task: {task}\n\n{files}"),
            None => format!("Task: {task}"),
        }),
    ]
}

/// What the model is shown of a finished step: its output, or its error.
fn result_text(setting: &Setting, record: &StepResult) -> String {
    match (&record.error, &record.output) {
        (Some(error), _) if !record.succeeded() => format!("error: {error}"),
        (_, Some(output)) => {
            crate::text::cut_to_budget(&plan::value_as_text(output), setting.options.dependency_budget)
        }
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
async fn turn(
    calls: &ModelCalls,
    setting: &Setting,
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
    request.tools = calls::specs(&setting.tools.entries());
    request.tool_choice = if may_call { ToolChoice::Auto } else { ToolChoice::None };
    let response = calls.chat(request).await?;
    // A call written as text is a call (local models write them so), never the answer.
    let mut call = match calls::reply_of(&response) {
        Reply::Text(text) => return Ok(Turn::Answer(text.trim().to_string())),
        Reply::Garbled(why) => {
            let text = response.content.unwrap_or_default();
            return Ok(Turn::Garbled { text, why });
        }
        Reply::Call(call) if !may_call => return Ok(Turn::CallAtTheEnd { tool: call.name }),
        Reply::Call(call) => call,
    };
    let id = format!("r{number}");
    call.id = id.clone();
    let Some(tool) = calls::real_name(&setting.tools.names(), &call.name) else {
        return Ok(Turn::Unknown { call });
    };
    let args = call.arguments.as_object().cloned().unwrap_or_default();
    Ok(Turn::Call {
        step: Box::new(Step {
            id,
            description: format!("call {tool} (turn {number})"),
            tool: Some(tool),
            agent: None,
            args,
            depends_on: Vec::new(),
            expected: None,
        }),
        call,
    })
}
