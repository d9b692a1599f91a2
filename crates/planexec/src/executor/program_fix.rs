//! A failed program plan written again, with its error, by the model that
//! wrote it.
//!
//! A program plan ([`crate::help::PlanHelp::program_prompt`]) is one step:
//! a program the model wrote seeing the task's files. When it fails, the
//! model that wrote it is shown the same files, its program and the error,
//! and writes the whole program again, a bounded number of times, before
//! the recovery agent is asked. The agent loop sees a step, not the files,
//! and on held-out-14 spent the step's two minutes on a failed program
//! (a `Mon 8412` line read as a number) without looking at the file; the
//! model shown the file and the error fixes the line that failed. Each
//! program written again is one of the step's inner calls (`s1.1`, …),
//! recorded and shown as an agent step's are.

use serde_json::{json, Value};

use super::agent_step::{execute, InnerCall};
use super::tally::Tally;
use crate::context::RunContext;
use crate::events::Event;
use crate::llm::{ChatRequest, Message, Role};
use crate::plan::{Plan, Step};
use crate::result::inner_call_id;
use crate::tools::ToolEntry;

/// The temperatures a failed program is written again at, one time each:
/// greedy first (the fix the error names), then sampled (greedy, the 1.5B
/// model wrote `import pandas` again after being told it is not there).
const FIXES: [Option<f32>; 2] = [None, Some(0.7)];

/// Most tokens of a program written again.
const PROGRAM_TOKENS: u32 = 1024;

/// The output of `step`'s program written again until it runs, when
/// `plan` is a program plan (one step, the help's program tool, with the
/// whole task as its goal) whose call with `args` failed with `error`;
/// `None` when it is not one, or no program written again ran.
pub(super) async fn program_again(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    entry: &ToolEntry,
    (args, error): (&Value, &str),
    tally: &mut Tally,
) -> Option<Value> {
    let help = ctx.setting.help.as_ref()?;
    if plan.steps.len() != 1 || !step.depends_on.is_empty() {
        return None;
    }
    let asked = help
        .program_prompt(&plan.goal, &ctx.setting.tools)
        .filter(|asked| asked.tool == entry.tool.name())?;
    let mut code = args.get("code")?.as_str()?.to_string();
    let mut error = error.to_string();
    ctx.recording.events.emit(Event::StepRecovering {
        step_id: step.id.clone(),
        tool: asked.tool.clone(),
        error: error.clone(),
    });
    for temperature in FIXES {
        let messages = asked.messages_again(&code, &format!("failed:\n{error}"));
        let written = written_again(ctx, step, messages, temperature, tally).await?;
        if written == code {
            continue;
        }
        let (output, failed) = run(ctx, step, entry, &written, tally).await?;
        match failed {
            None => return Some(output.unwrap_or_else(|| Value::String(String::new()))),
            Some(why) => (code, error) = (written, why),
        }
    }
    None
}

/// The program the model writes again from `messages`.
async fn written_again(
    ctx: &RunContext,
    step: &Step,
    messages: Vec<Message>,
    temperature: Option<f32>,
    tally: &mut Tally,
) -> Option<String> {
    let mut request = ChatRequest::new(Role::Executor, "", messages);
    if temperature.is_some() {
        request.temperature = temperature;
    }
    request.max_tokens = Some(PROGRAM_TOKENS);
    request.step_id = Some(step.id.clone());
    tally.model_calls += 1;
    let reply = ctx.calls.chat(request).await.ok()?.content.unwrap_or_default();
    crate::verdict::program_in(&reply)
}

/// Run `code` as the step's next inner call: its output, or why it failed.
async fn run(
    ctx: &RunContext,
    step: &Step,
    entry: &ToolEntry,
    code: &str,
    tally: &mut Tally,
) -> Option<(Option<Value>, Option<String>)> {
    let call_id = inner_call_id(&step.id, tally.calls.len() + 1);
    ctx.calls.budget.check_step(&call_id).ok()?;
    let args = json!({ "code": code });
    let tool = entry.tool.name();
    let record = match ctx.recording.journal.replay(&step.id, tool, &args) {
        Some(recorded) => crate::result::StepResult {
            id: call_id.clone(),
            ..recorded
        },
        None => {
            let call = InnerCall {
                id: &call_id,
                entry,
                args: args.clone(),
                inputs: &Vec::new(),
            };
            execute(&ctx.setting, &ctx.recording, &ctx.control, step, call, tally)
                .await
                .ok()?
        }
    };
    let failed = record.error.clone().filter(|_| !record.succeeded());
    let output = record.output.clone();
    tally.args = Some(args);
    tally.calls.push(record);
    Some((output, failed))
}
