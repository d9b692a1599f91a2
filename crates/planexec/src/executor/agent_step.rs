//! An agent step: a natural-language subtask carried out by a small, bounded
//! tool-using loop (ReAct) with the tools of the step's agent profile.
//!
//! The loop sees only the task's goal, this step (description, `expected`)
//! and its dependencies' results, never the rest of the run. Each turn the
//! model calls one tool or answers; the answer is the step's output. Every
//! inner call goes through the same checks as a plan's steps (the profile's
//! tool list, the argument schema, the mode and its confirmations, the
//! budget), is recorded in the ledger as `<step>.<n>` and shown as events;
//! on resume a call that already ran is replayed from the ledger instead of
//! running again. A call written as text is a call; one that cannot be read
//! is asked again; the loop fails (it never "succeeds" with an unexecuted
//! call) when its turns run out without an answer.

use std::sync::Arc;

use serde_json::Value;

use super::call::call_checked;
use super::shown::step_context;
use super::tally::Tally;
use crate::agents::AgentProfile;
use crate::calls::{self, Reply};
use crate::context::{Control, ModelCalls, Recording, RunContext, Setting};
use crate::events::Event;
use crate::llm::{ChatRequest, Message, Role, ToolCall, ToolChoice};
use crate::plan::{self, Plan, Step};
use crate::policy::Mode;
use crate::result::{self, inner_call_id, now_ms, StepResult, StepStatus};
use crate::schedule::DependencyOutputs;
use crate::store::StepStart;
use crate::tools::{Effect, ToolEntry};

/// When an agent loop's step is done.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Finish<'a> {
    /// When the agent answers: its answer is the step's output.
    Answer,
    /// When a call of this tool succeeds: that call's output is the step's
    /// output, exactly as the tool gave it (a recovered tool step). An answer
    /// in words is the agent giving up, and says why.
    CallOf(&'a str),
}

/// One agent loop: its profile, its tools, what it is shown first, and when it is done.
pub(super) struct AgentLoop<'a> {
    pub profile: AgentProfile,
    /// The tools it may call (the profile's, or fewer).
    pub tools: Vec<Arc<ToolEntry>>,
    pub opening: Vec<Message>,
    pub finish: Finish<'a>,
    /// Its step's dependencies' results, for `{{id}}` in its calls' arguments.
    pub deps: &'a DependencyOutputs,
    /// The call that failed, which a recovery must not make again.
    pub failed: FailedCall<'a>,
    /// What a recovery that writes the failed call again is shown instead of
    /// its opening, once: the step and the error without the failed
    /// arguments, which a small model copies back whatever it is told
    /// (the 1.5B model wrote a failing program six times, resampled too).
    pub anew: Option<Vec<Message>>,
}

/// The run's tools that `profile` may call.
pub(super) fn tools_of(setting: &Setting, profile: &AgentProfile) -> Vec<Arc<ToolEntry>> {
    setting
        .tools
        .entries()
        .into_iter()
        .filter(|e| profile.allows(e.tool.name()))
        .collect()
}

/// Carry out `step` with the agent `name`; its answer is the step's output.
pub(super) async fn run(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    name: &str,
    deps: &DependencyOutputs,
    tally: &mut Tally,
) -> Result<Value, String> {
    let profile = ctx.setting.options.agent(name).ok_or_else(|| {
        let known: Vec<&str> = ctx.setting.options.agents.iter().map(|a| a.name.as_str()).collect();
        format!("there is no agent `{name}` (agents: {})", known.join(", "))
    })?;
    let tools = tools_of(&ctx.setting, &profile);
    let opening = opening(&ctx.setting, plan, step, deps, &profile, &tools);
    let agent = AgentLoop {
        profile,
        tools,
        opening,
        finish: Finish::Answer,
        deps,
        failed: None,
        anew: None,
    };
    run_loop(ctx, plan, step, agent, tally).await
}

/// Run an agent loop for `step` until it is done (see [`Finish`]) or out of turns.
pub(super) async fn run_loop(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    agent: AgentLoop<'_>,
    tally: &mut Tally,
) -> Result<Value, String> {
    tally.loop_started = Some(std::time::Instant::now());
    let Some(max_ms) = agent.profile.step_budget.max_time_ms else {
        return turns(ctx, plan, step, agent, tally).await;
    };
    // The time limit holds inside a call too: a model or tool call still
    // going when it is reached is dropped, as on Ctrl-C.
    let profile = agent.profile.clone();
    let limit = std::time::Duration::from_millis(max_ms);
    match tokio::time::timeout(limit, turns(ctx, plan, step, agent, tally)).await {
        Ok(done) => done,
        Err(_) => Err(over_step_budget(&profile, tally).unwrap_or_else(|| {
            format!(
                "agent `{}` stopped at its step budget (max_seconds {})",
                profile.name,
                max_ms as f64 / 1000.0
            )
        })),
    }
}

/// The loop's turns, each checked against the step budget before it starts.
async fn turns(
    ctx: &RunContext,
    plan: &Plan,
    step: &Step,
    agent: AgentLoop<'_>,
    tally: &mut Tally,
) -> Result<Value, String> {
    let AgentLoop {
        profile,
        tools,
        opening: mut history,
        finish,
        deps,
        failed,
        mut anew,
    } = agent;
    let profile = &profile;
    let name = profile.name.as_str();
    let mut problem = None;
    // Every opening (the first, or one started anew) is this long.
    let opening_len = history.len();
    let (mut checked_doubt, mut told_failed_call, mut told_to_call) = (false, false, false);
    for turn in 1..=profile.max_turns {
        let may_call = turn < profile.max_turns && !tools.is_empty();
        // The first turn acts: an agent step is one that must look before it
        // answers (a step that needs no tool is a reasoning step), and a small
        // model otherwise answers from its guess. A recovery told that only a
        // call does its step is held to calls from then on: the 1.5B model,
        // told so, answered in words again and the step failed.
        let must_call = may_call && (turn == 1 || told_to_call);
        // While it may start anew, the failed call written again is not
        // asked again with temperature: that copies it too.
        let unasked = failed.filter(|_| anew.is_none());
        let offered = offered_on(history.len() == opening_len, finish, &tools);
        let shown = (history.as_slice(), offered.as_slice(), unasked);
        let response = ask_anew(ctx, step, profile, shown, (may_call, must_call), tally).await?;
        let reply = calls::reply_of(&response);
        if makes_the_failed_call(&ctx.setting, &reply, failed) {
            let told = (&mut told_to_call, &mut told_failed_call);
            problem = Some(copied_the_failed_call(&mut history, &mut anew, &reply, told, name)?);
            continue;
        }
        let doubt = match &reply {
            Reply::Text(text) => doubtful(text.trim(), plan, step, tally),
            _ => None,
        };
        let failure = doubt.as_ref().and_then(|d| d.failure(name));
        match reply {
            // A recovery is done by its call, or by the step's value copied
            // from the results it was shown; other words are its giving up.
            Reply::Text(text) if finish != Finish::Answer => {
                if let Some(value) = found_value(text.trim(), (&ctx.setting, plan, step), deps, tally) {
                    return Ok(value);
                }
                let gave_up = format!("agent `{name}` gave up: {}", crate::text::one_line(text.trim(), 200));
                if !may_call || std::mem::replace(&mut told_to_call, true) {
                    return Err(gave_up);
                }
                asked_again(&mut history, text, &call_asked_for(finish));
                problem = Some(gave_up);
            }
            // An answer with nothing under it is a guess (a small model reads
            // a made-up name, is told what the folder holds, and answers a
            // number anyway): while it may still call, it is sent to look.
            Reply::Text(text) if !text.trim().is_empty() && may_call && unfounded(step, tally) => {
                asked_again(&mut history, text, "No call has succeeded yet, so that answer is a guess. Call the tool that gets what the step needs; the results above say what exists.");
                problem = Some("it answered before any call succeeded".to_string());
            }
            // A doubtful answer (a bare number no result shows, the name of a
            // file it never read) is asked about once: a small model answers
            // from its guess, or with where the answer is.
            Reply::Text(text) if may_call && !checked_doubt && doubt.is_some() => {
                checked_doubt = true;
                asked_again(
                    &mut history,
                    text,
                    &doubt.as_ref().map(Doubt::question).unwrap_or_default(),
                );
                problem = doubt.as_ref().map(Doubt::problem);
            }
            // Asked once (or out of turns), and still doubtful: not a result.
            Reply::Text(_) if (checked_doubt || !may_call) && failure.is_some() => {
                return Err(failure.unwrap_or_default())
            }
            Reply::Text(text) if !text.trim().is_empty() => return answer_or_echoed_error(name, text.trim(), problem),
            Reply::Text(_) => problem = Some(told_the_reply_was_empty(&mut history)),
            Reply::Garbled(why) => {
                let said = response.content.clone().unwrap_or_default();
                problem = Some(told_how_to_reply(&mut history, said, why));
            }
            Reply::Call(call) if !may_call => {
                problem = Some(format!("it called `{}` when it had to answer", call.name));
            }
            Reply::Call(call) if tally.calls.iter().any(|c| same_args(c, &call)) => {
                problem = Some(told_it_was_made(&mut history, call, tally));
            }
            Reply::Call(call) => {
                let reach = Reach {
                    profile,
                    tools: &tools,
                    deps,
                    guesses: finish == Finish::Answer,
                };
                match made_call(ctx, step, (&reach, finish), call, &mut history, tally).await? {
                    Ok(output) => return Ok(output),
                    Err(error) => problem = error,
                }
            }
        }
    }
    Err(format!(
        "agent `{name}` gave no answer in {} turns{}",
        profile.max_turns,
        problem.map(|p| format!(" (last: {p})")).unwrap_or_default()
    ))
}

/// A new call, made and its result shown in `history`: the step's output
/// when it did the step, else the call's error, if any.
async fn made_call(
    ctx: &RunContext,
    step: &Step,
    (reach, finish): (&Reach<'_>, Finish<'_>),
    call: ToolCall,
    history: &mut Vec<Message>,
    tally: &mut Tally,
) -> Result<Result<Value, Option<String>>, String> {
    let (result, error) = call_tool(ctx, step, reach, &call, tally).await?;
    if let Some(output) = finished_by_call(finish, tally) {
        return Ok(Ok(output));
    }
    calls::remember(history, call, &with_the_step(&result, step));
    Ok(Err(error))
}

/// What the loop is told when it makes a call it made before (`tally`), in
/// place of running it again: the result is above, or the call failed and
/// would fail the same way (the 1.5B model, recovering, wrote its own
/// failed program three times over, each run to the same error). Returns
/// the problem, for the loop's error.
fn told_it_was_made(history: &mut Vec<Message>, call: ToolCall, tally: &Tally) -> String {
    if tally.calls.iter().any(|c| same_call(c, &call)) {
        let again = calls::already_made(&call.name, "reply with the step's result");
        calls::remember(history, call, &again);
        return "it repeated a call".to_string();
    }
    let again = "error: that call failed already, with these arguments; its error is above. Change what the error names, or say why the step cannot be done.";
    calls::remember(history, call, again);
    "it repeated a call that failed".to_string()
}

/// What the loop is told after an empty reply; returns the problem, for
/// the loop's error.
fn told_the_reply_was_empty(history: &mut Vec<Message>) -> String {
    history.push(Message::user(
        "Your reply was empty. Call a tool, or reply with the step's result.",
    ));
    "the reply was empty".to_string()
}

/// What the loop is told after a reply it could not read (`said`, for
/// `why`); returns the problem, for the loop's error.
fn told_how_to_reply(history: &mut Vec<Message>, said: String, why: String) -> String {
    let how = format!("{why}. To call a tool, write only {{\"name\": \"<tool>\", \"arguments\": {{...}}}}; to finish, reply with the step's result in plain text.");
    asked_again(history, said, &how);
    why
}

/// `said`, then `question` about it, in `history`.
fn asked_again(history: &mut Vec<Message>, said: String, question: &str) {
    history.push(Message::assistant(said));
    history.push(Message::user(question));
}

/// What a recovery that answered in words is told once: only the call does
/// the step (the 1.5B model answered a count it had not computed, "3",
/// where the program with its error fixed would have done it).
fn call_asked_for(finish: Finish<'_>) -> String {
    let own = match finish {
        Finish::CallOf(own) => format!("a call of `{own}`"),
        Finish::Answer => "a call".to_string(),
    };
    format!("A reply in words does not do the step: only {own} that succeeds does. Make that call now, with what the error named fixed; if the step cannot be done, say why.")
}

/// The tools a turn offers (`first`: the first turn after an opening,
/// the loop's or the one it started anew with). A recovery's first turn is
/// the corrected call of the step's own tool: the error usually says what
/// it should have been, and a small model offered every tool at once
/// wanders off (the 0.5B model, told `Price: 12 * 2` is no expression,
/// searched the logs for a date). Later turns may look with the others first.
fn offered_on(first: bool, finish: Finish<'_>, tools: &[Arc<ToolEntry>]) -> Vec<Arc<ToolEntry>> {
    if let Finish::CallOf(own) = finish {
        let own: Vec<Arc<ToolEntry>> = tools.iter().filter(|t| t.tool.name() == own).cloned().collect();
        if first && !own.is_empty() {
            return own;
        }
    }
    tools.to_vec()
}

/// A call's result, with the step again after it: a small model otherwise
/// loses the step behind the tool output and echoes the output back.
fn with_the_step(result: &str, step: &Step) -> String {
    format!(
        "{result}\n\n(You are doing step [{}]: {}. If the results above give the step's result, answer with it now; if not, call the tool that gets what is missing.)",
        step.id, step.description
    )
}

/// What a recovery that writes the failed call again is shown next: once,
/// the opening started anew, after which it has been told (and must call);
/// else what [`told_again`] says. Returns the problem, for the loop's error.
fn copied_the_failed_call(
    history: &mut Vec<Message>,
    anew: &mut Option<Vec<Message>>,
    reply: &Reply,
    (told_to_call, told_failed_call): (&mut bool, &mut bool),
    name: &str,
) -> Result<String, String> {
    if let Some(fresh) = anew.take() {
        *history = fresh;
        (*told_to_call, *told_failed_call) = (true, true);
    } else {
        *told_failed_call = told_again(history, reply, *told_failed_call, name)?;
    }
    Ok("it made the failed call again".to_string())
}

/// A recovery that writes the failed call again is told so once, as that
/// call's result (a small model copies the arguments it was shown); the
/// second time the loop ends: the call would only fail the same way.
fn told_again(history: &mut Vec<Message>, reply: &Reply, told: bool, name: &str) -> Result<bool, String> {
    match reply {
        Reply::Call(call) if !told => {
            calls::remember(
                history,
                call.clone(),
                "error: that is the call that failed, with the same arguments. Change what the error names, or say why the step cannot be done.",
            );
            Ok(true)
        }
        _ => Err(format!(
            "agent `{name}` made the failed call again, with the same arguments"
        )),
    }
}

/// Whether `reply` is the call that failed (tool and arguments), which a
/// recovery must not make again.
fn makes_the_failed_call(setting: &Setting, reply: &Reply, failed: FailedCall<'_>) -> bool {
    match (reply, failed) {
        (Reply::Call(call), Some((tool, args))) => {
            calls::real_name(&setting.tools.names(), &call.name).as_deref() == Some(tool)
                && args.contains(&&call.arguments)
        }
        _ => false,
    }
}

/// The tool of the call a recovery step must not make again, and its
/// arguments as called and as the plan wrote them (a model that copies
/// `{{s1}} * 2` back makes the same call).
pub(super) type FailedCall<'a> = Option<(&'a str, [&'a Value; 2])>;

/// One turn, asked again (with some temperature) while it repeats an
/// earlier call, or the call that failed: that would only show the same
/// result again, and a small model decoding greedily repeats itself from
/// the same history.
async fn ask_anew(
    ctx: &RunContext,
    step: &Step,
    profile: &AgentProfile,
    (history, tools, failed): (&[Message], &[Arc<ToolEntry>], FailedCall<'_>),
    (may_call, must_call): (bool, bool),
    tally: &mut Tally,
) -> Result<crate::llm::ChatResponse, String> {
    let mut response = ask(
        &ctx.calls,
        step,
        profile,
        history,
        tools,
        (may_call, must_call, 0),
        tally,
    )
    .await?;
    for resample in 1..=RESAMPLES {
        let reply = calls::reply_of(&response);
        let repeats = match &reply {
            Reply::Call(call) => {
                tally.calls.iter().any(|c| same_args(c, call)) || makes_the_failed_call(&ctx.setting, &reply, failed)
            }
            _ => false,
        };
        if !repeats {
            break;
        }
        response = ask(
            &ctx.calls,
            step,
            profile,
            history,
            tools,
            (may_call, must_call, resample),
            tally,
        )
        .await?;
    }
    Ok(response)
}

/// The step's output when the loop's last call did the step: a successful
/// call of the tool a recovery is for, that gave something (an empty result
/// is what the failed call may have been about: a pattern that matched nothing).
fn finished_by_call(finish: Finish<'_>, tally: &Tally) -> Option<Value> {
    let Finish::CallOf(tool) = finish else { return None };
    let last = tally.calls.last().filter(|c| c.succeeded())?;
    let output = last.output.clone().unwrap_or(Value::Null);
    (last.tool.as_deref() == Some(tool) && !result::is_empty_output(&output)).then_some(output)
}

/// The step's output: the agent's answer, unless the answer only repeats the
/// error of its last call (`error: inbox/* does not exist`). A small model
/// does that when it is stuck, and taken as a result the error text would be
/// written on as if it were the work (the step failed, so say so).
fn answer_or_echoed_error(name: &str, answer: &str, last_error: Option<String>) -> Result<Value, String> {
    let bare = answer.trim_start_matches("error:").trim();
    let echoes = |error: &str| {
        (answer.contains(error.trim()) && answer.len() <= error.len() + 40)
            || (bare.len() >= 10 && error.contains(bare))
    };
    match last_error {
        Some(error) if echoes(&error) => Err(format!("agent `{name}` ended on the error of its last call: {error}")),
        _ => Ok(Value::String(answer.to_string())),
    }
}

/// Most characters of a value a recovery may answer in words.
const FOUND_VALUE_CHARS: usize = 500;

/// A recovery's answer in words as the step's output: when later steps use
/// the step's output or its tool writes no file (it is a value, not an
/// effect) and every line (or
/// comma-separated part) of the answer appears, as written, in a result it
/// was shown (the step's dependencies' or its own calls'). `8080` read off
/// the config.json it was shown is the port; `631` for 37 × 23, found
/// nowhere, is not.
fn found_value(
    answer: &str,
    (setting, plan, step): (&Setting, &Plan, &Step),
    deps: &DependencyOutputs,
    tally: &Tally,
) -> Option<Value> {
    let answer = answer.trim().trim_end_matches('.').trim();
    let used = plan.steps.iter().any(|s| s.depends_on.contains(&step.id));
    // A step no other step uses is for its effect, unless its tool has none
    // a file could show (a program's printed answer to the task's question).
    let writes = step
        .tool
        .as_deref()
        .and_then(|t| setting.tools.get(t))
        .is_some_and(|e| matches!(e.declared_effect(), Effect::WritesWorkspace | Effect::Irreversible));
    if (!used && writes) || answer.is_empty() || answer.chars().count() > FOUND_VALUE_CHARS {
        return None;
    }
    let mut seen: Vec<String> = deps.iter().map(|(_, v)| plan::value_as_text(v)).collect();
    seen.extend(
        tally
            .calls
            .iter()
            .filter(|c| c.succeeded())
            .filter_map(|c| c.output.as_ref().map(plan::value_as_text)),
    );
    let parts: Vec<&str> = if answer.contains('\n') {
        answer.lines().collect()
    } else {
        answer.split(", ").collect()
    };
    let found = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .all(|p| seen.iter().any(|text| crate::text::contains_whole(text, p)));
    found.then(|| Value::String(answer.to_string()))
}

/// Whether an answer now would rest on nothing: the step has no
/// dependencies' results to work from and none of its calls succeeded.
fn unfounded(step: &Step, tally: &Tally) -> bool {
    step.depends_on.is_empty() && !tally.calls.iter().any(|c| c.succeeded())
}

/// Why an agent's answer is doubtful enough to ask about once.
enum Doubt {
    /// A bare number, or a name with digits in it (`user1`), that no
    /// result shows.
    Unseen(String),
    /// Only the name of a file a call listed, which no call read, for a
    /// step that does not ask for a name.
    NameOfUnreadFile(String),
    /// Every line a listing call returned (here, its tool and the folder it
    /// listed), for a step that asks for only some of them ("the files that
    /// have 2024 in their name").
    UnfilteredListing { tool: String, folder: String },
    /// Only the step's own word for what it asks (`user` for "return only
    /// the user"), which no result shows.
    EchoedWord(String),
}

impl Doubt {
    fn question(&self) -> String {
        match self {
            Doubt::Unseen(n) => format!("{n} appears in no result above. If the step's answer is in a file, read it; if you worked it out, check it with a tool. Then answer."),
            Doubt::NameOfUnreadFile(f) => format!("{f} is the name of a file, not what it holds, and the step asks for more than a name. Read it with a tool, then answer with what the step asks."),
            Doubt::UnfilteredListing { tool, folder } => format!("That is everything `{tool}` returned, but the step asks only for some of them. To pick files by a part of their name, call glob with the part between stars (as \"{folder}*part*\"); otherwise answer with only the ones the step asks for, one per line."),
            Doubt::EchoedWord(w) => format!("\"{w}\" is the step's own word for what it asks, not the answer. Find the {w} itself (read the file that holds it), then answer with it."),
        }
    }
    fn problem(&self) -> String {
        match self {
            Doubt::Unseen(_) => "it answered a value no result shows".into(),
            Doubt::NameOfUnreadFile(_) => "it answered with the name of a file it did not read".into(),
            Doubt::UnfilteredListing { .. } => "it answered with a whole listing".into(),
            Doubt::EchoedWord(_) => "it answered with the step's own word for what it asks".into(),
        }
    }
    /// Why the step fails when the answer stays doubtful after the question;
    /// `None` when it may then stand (every name listed may be the ones asked for).
    fn failure(&self, agent: &str) -> Option<String> {
        match self {
            Doubt::Unseen(n) => Some(format!(
                "agent `{agent}` answered {n}, which no result of its calls shows"
            )),
            Doubt::NameOfUnreadFile(f) => Some(format!(
                "agent `{agent}` answered with the name of a file it did not read ({f}), not what the step asks"
            )),
            Doubt::UnfilteredListing { .. } => None,
            Doubt::EchoedWord(w) => Some(format!(
                "agent `{agent}` answered \"{w}\", the step's own word for what it asks, not a value it found"
            )),
        }
    }
}

/// What is doubtful about `answer`, if anything.
fn doubtful(answer: &str, plan: &Plan, step: &Step, tally: &Tally) -> Option<Doubt> {
    if unseen_number(answer, plan, step, tally) {
        return Some(Doubt::Unseen(answer.to_string()));
    }
    if let Some(name) = unseen_name(answer, plan, step, tally) {
        return Some(Doubt::Unseen(name));
    }
    if let Some(file) = name_of_unread_file(answer, step, tally) {
        return Some(Doubt::NameOfUnreadFile(file));
    }
    if let Some(word) = echoed_word(answer, step, tally) {
        return Some(Doubt::EchoedWord(word));
    }
    unfiltered_listing(answer, step, tally)
}

/// `answer` when it is one word that the step uses, after "the", for what
/// it asks ("return only the user" answered `user`), and no result of the
/// agent's calls shows that word: it named the thing instead of finding it
/// (a small model counted the lines that mention a user, got 1, and
/// answered "user").
fn echoed_word(answer: &str, step: &Step, tally: &Tally) -> Option<String> {
    let word = answer.trim().trim_matches(|c: char| !c.is_alphanumeric());
    if word.is_empty() || word.contains(|c: char| !c.is_alphanumeric()) {
        return None;
    }
    let lower = word.to_lowercase();
    let description = step.description.to_lowercase();
    let asked = format!("the {lower}");
    let named = description.match_indices(&asked).any(|(at, _)| {
        !description[at + asked.len()..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric)
    });
    let shown = call_results(tally).any(|text| text.to_lowercase().contains(&lower));
    (named && !shown).then(|| word.to_string())
}

/// A listing call (`glob`, `list_dir`) all of whose lines, two or more,
/// `answer` repeats, when the step asks for only some (its text has "that",
/// "with", "only", …). A small model lists a folder and hands the whole
/// listing on instead of the names it was asked to pick.
fn unfiltered_listing(answer: &str, step: &Step, tally: &Tally) -> Option<Doubt> {
    let description = format!(" {} ", step.description.to_lowercase());
    let picks = [
        " that ",
        " which ",
        " whose ",
        " with ",
        " containing ",
        " only ",
        " matching ",
    ]
    .iter()
    .any(|w| description.contains(w));
    if !picks {
        return None;
    }
    let answered: Vec<&str> = answer.lines().map(str::trim).collect();
    tally
        .calls
        .iter()
        .filter(|c| c.succeeded() && c.tool.as_deref().is_some_and(|t| ["glob", "list_dir"].contains(&t)))
        .find(|c| {
            let text = c.output.as_ref().map(plan::value_as_text).unwrap_or_default();
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            lines.len() >= 2 && lines.iter().all(|l| answered.iter().any(|a| a.ends_with(l)))
        })
        .map(|c| {
            let arg = |name: &str| {
                c.args
                    .as_ref()
                    .and_then(|a| a.get(name))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let folder = match arg("pattern") {
                Some(pattern) => pattern
                    .rsplit_once('/')
                    .map(|(f, _)| format!("{f}/"))
                    .unwrap_or_default(),
                None => arg("path")
                    .map(|p| format!("{}/", p.trim_end_matches('/')))
                    .unwrap_or_default(),
            };
            Doubt::UnfilteredListing {
                tool: c.tool.clone().unwrap_or_default(),
                folder: folder.trim_start_matches("./").trim_start_matches('/').to_string(),
            }
        })
}

/// `answer` when it is only a file name (`"data/reading-0193.txt"`) that a
/// call's result shows, no call read that file, and the step asks for more
/// than a name (`return only the number written in it`). An answer of
/// several lines is a listing, not a name (its last line was taken for one:
/// a glob's five matches failed as "a file it did not read").
fn name_of_unread_file(answer: &str, step: &Step, tally: &Tally) -> Option<String> {
    let name = answer.trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c.is_whitespace());
    let file_name = name.rsplit('/').next().unwrap_or(name);
    let looks_like_a_file = !name.contains(char::is_whitespace)
        && file_name.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && ext.chars().all(char::is_alphanumeric) && !ext.is_empty() && ext.parse::<f64>().is_err()
        });
    let asks_a_name = ["name", "path", "which file", "file is", "list"]
        .iter()
        .any(|w| step.description.to_lowercase().contains(w));
    if !looks_like_a_file || asks_a_name {
        return None;
    }
    let succeeded = || tally.calls.iter().filter(|c| c.succeeded());
    let shown = succeeded()
        .filter_map(|c| c.output.as_ref())
        .any(|o| plan::value_as_text(o).contains(file_name));
    let read = succeeded().any(|c| {
        c.tool.as_deref().is_some_and(|t| t.starts_with("read"))
            && c.args.as_ref().is_some_and(|a| a.to_string().contains(file_name))
    });
    (shown && !read).then(|| name.to_string())
}

/// Whether `answer` is a bare number, or a value written with digits
/// (`4.12.2`, `2024-05-01`, `12:30`), that neither the goal ("a crate holds
/// 24 bottles"), the step's own text nor any result its calls got shows
/// (the 1.5B model listed pom.xml, never read it, and answered `4.12.2`).
/// Steps with dependencies are not checked: their answer may come from their
/// dependencies' results.
fn unseen_number(answer: &str, plan: &Plan, step: &Step, tally: &Tally) -> bool {
    // A name with a digit (`user1`) is `unseen_name`'s.
    let read_or_worked_out = answer.starts_with(|c: char| c.is_ascii_digit()) && crate::text::value_with_digits(answer);
    if !(answer.parse::<f64>().is_ok() || read_or_worked_out) || !step.depends_on.is_empty() {
        return false;
    }
    let shown = |text: &str| text.contains(answer);
    // A count of what a call listed is seen too: four files listed, "4".
    let counted = |output: &Value| {
        let items = match output {
            Value::Array(items) => items.len(),
            other => plan::value_as_text(other)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count(),
        };
        answer.parse::<usize>() == Ok(items)
    };
    !seen_texts(plan, step, tally).iter().any(|t| shown(t))
        && !tally
            .calls
            .iter()
            .filter(|c| c.succeeded())
            .filter_map(|c| c.output.as_ref())
            .any(counted)
}

/// The results of an agent step's calls that succeeded, as text.
fn call_results(tally: &Tally) -> impl Iterator<Item = String> + '_ {
    crate::result::tool_calls_succeeded(&tally.calls)
        .into_iter()
        .filter_map(|c| c.output.as_ref())
        .map(plan::value_as_text)
}

/// What an agent step has seen: the results of its calls that succeeded,
/// its own text and the goal.
fn seen_texts(plan: &Plan, step: &Step, tally: &Tally) -> Vec<String> {
    call_results(tally)
        .chain([step.description.clone(), plan.goal.clone()])
        .collect()
}

/// The first word of `answer` that starts with a letter and has a digit
/// (`user1`, `build42`) that neither the goal, the step's text nor any result its calls
/// got shows. Such a name is read, never worked out: an agent that answers
/// one unseen made it up (a small model listed a log, never read it, and
/// answered "user1"). Steps with dependencies are not checked.
fn unseen_name(answer: &str, plan: &Plan, step: &Step, tally: &Tally) -> Option<String> {
    if !step.depends_on.is_empty() {
        return None;
    }
    let seen: Vec<String> = seen_texts(plan, step, tally).iter().map(|t| t.to_lowercase()).collect();
    answer
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .map(|w| w.trim_matches('-'))
        // A name starts with a letter: `1st`, `10am` or `5kg` is no name.
        .filter(|w| w.starts_with(char::is_alphabetic) && w.chars().any(|c| c.is_ascii_digit()))
        .find(|w| !seen.iter().any(|t| t.contains(&w.to_lowercase())))
        .map(str::to_string)
}

/// Times a turn that repeats an earlier call is asked again (with
/// temperature). Once: on held-out-7 the 1.5B model's repeats came back the
/// same at 0.4 and at 0.7 every time, and each ask is seconds of a step's
/// time limit.
const RESAMPLES: u32 = 1;

/// Whether `call` has the tool and arguments of the call `done`, whatever came of it.
fn same_args(done: &StepResult, call: &ToolCall) -> bool {
    done.is_call_of(&call.name, &call.arguments)
}

/// Whether `call` repeats a call the loop already made and that succeeded.
fn same_call(done: &StepResult, call: &ToolCall) -> bool {
    done.succeeded() && same_args(done, call)
}

/// The loop's first messages: its instructions, then the goal, the step and
/// what its dependencies found. The tools go as native function tools.
fn opening(
    setting: &Setting,
    plan: &Plan,
    step: &Step,
    deps: &DependencyOutputs,
    profile: &AgentProfile,
    tools: &[Arc<ToolEntry>],
) -> Vec<Message> {
    let mode = match setting.options.mode {
        Mode::Plan => "\nThis run is in plan mode: only read-only tools run; the runtime refuses any other.",
        Mode::Ask | Mode::Auto => "",
    };
    vec![
        Message::system(format!("{}{mode}", profile.instructions)),
        Message::user(format!(
            "{}\nYour tools:\n{}\nDo this step with your tools: you see nothing of the workspace until a tool shows it to you. When it is done, reply with its result in plain text.",
            step_context(setting, plan, step, deps),
            crate::prompt::tool_lines(tools)
        )),
    ]
}

/// One turn of the loop. With `may_call` false the model must answer; a
/// `resample` above 0 asks the turn again with rising temperature.
async fn ask(
    calls: &ModelCalls,
    step: &Step,
    profile: &AgentProfile,
    history: &[Message],
    tools: &[Arc<ToolEntry>],
    (may_call, must_call, resample): (bool, bool, u32),
    tally: &mut Tally,
) -> Result<crate::llm::ChatResponse, String> {
    let mut messages = history.to_vec();
    if !may_call {
        messages.push(Message::user(
            "This is your last turn: answer now from what you have found, in plain text, with no tool call.",
        ));
    }
    let mut request = ChatRequest::new(Role::Agent, "", messages);
    if may_call {
        request.tools = calls::specs(tools);
    }
    request.tool_choice = match (may_call, must_call) {
        (true, true) => ToolChoice::Required,
        (true, false) => ToolChoice::Auto,
        (false, _) => ToolChoice::None,
    };
    request.step_id = Some(step.id.clone());
    request.temperature = match resample {
        0 => profile.temperature.or(request.temperature),
        n => Some(0.2 + 0.6 * n as f32),
    };
    if let Some(why) = over_step_budget(profile, tally) {
        return Err(why);
    }
    tally.model_calls += 1;
    tally.attempts += 1;
    let response = calls
        .chat_on(profile.model.as_ref(), request)
        .await
        .map_err(|e| e.to_string())?;
    let model = profile.model.as_ref().unwrap_or_else(|| calls.models.get(Role::Agent));
    tally.tokens += response.usage.prompt_tokens + response.usage.completion_tokens;
    tally.cost += calls.meter.price(&model.model, response.usage).unwrap_or(0.0);
    Ok(response)
}

/// Why an agent step must stop before another model call: a limit of its
/// profile's step budget reached, with what the step spent.
fn over_step_budget(profile: &AgentProfile, tally: &Tally) -> Option<String> {
    let limits = &profile.step_budget;
    let elapsed_ms = tally.loop_started.map_or(0, |t| t.elapsed().as_millis() as u64);
    let reached = match (limits.max_tokens, limits.max_cost, limits.max_time_ms) {
        (Some(max), _, _) if tally.tokens >= max => format!("max_tokens {max}"),
        (_, Some(max), _) if tally.cost >= max => format!("max_cost ${max}"),
        (_, _, Some(max)) if elapsed_ms >= max => format!("max_seconds {}", max as f64 / 1000.0),
        _ => return None,
    };
    let cost = match tally.cost > 0.0 || limits.max_cost.is_some() {
        true => format!(", ${:.4}", tally.cost),
        false => String::new(),
    };
    Some(format!(
        "agent `{}` stopped at its step budget ({reached}): it spent {} tokens{cost} and {:.1} s in {} model calls and {} tool calls",
        profile.name,
        tally.tokens,
        elapsed_ms as f64 / 1000.0,
        tally.model_calls,
        tally.calls.len()
    ))
}

/// What one call of an agent loop may reach: its tools, its step's
/// dependencies' results, and whether a guessed name may be read as the one
/// file beside it.
struct Reach<'a> {
    profile: &'a AgentProfile,
    tools: &'a [Arc<ToolEntry>],
    deps: &'a DependencyOutputs,
    /// (Not in a recovery: a planned input that is missing must stay missing.)
    guesses: bool,
}

/// Whether `args` holds a `{{id}}` reference to one of the step's dependencies.
fn names_a_dependency(args: &serde_json::Map<String, Value>, deps: &DependencyOutputs) -> bool {
    let probe = Step {
        id: String::new(),
        description: String::new(),
        tool: None,
        agent: None,
        args: args.clone(),
        depends_on: Vec::new(),
        expected: None,
    };
    plan::step_references(&probe)
        .iter()
        .any(|(_, r)| deps.iter().any(|(id, _)| *id == r.step))
}

/// Run one call the loop made. Returns what the loop is shown, and the
/// call's error if it failed or was refused; `Err` ends the step (the budget
/// ran out, or the ledger could not record a side effect's start).
async fn call_tool(
    ctx: &RunContext,
    step: &Step,
    reach: &Reach<'_>,
    call: &ToolCall,
    tally: &mut Tally,
) -> Result<(String, Option<String>), String> {
    let call_id = inner_call_id(&step.id, tally.calls.len() + 1);
    ctx.calls.budget.check_step(&call_id)?;
    let args = call.arguments.clone();
    let all = ctx.setting.tools.names();
    let mine = || -> String {
        reach
            .tools
            .iter()
            .map(|t| t.tool.name().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(tool) = calls::real_name(&all, &call.name) else {
        let message = format!("there is no tool `{}` (you may use: {})", call.name, mine());
        return Ok(refused(&ctx.recording, step, &call_id, &call.name, args, message, tally).await);
    };
    let Some(entry) = reach.tools.iter().find(|t| t.tool.name() == tool).cloned() else {
        let message = format!(
            "refused: agent `{}` may not use `{tool}` here (its tools: {})",
            reach.profile.name,
            mine()
        );
        return Ok(refused(&ctx.recording, step, &call_id, &tool, args, message, tally).await);
    };
    let args = match args {
        // `{{s1}}` of a dependency is its result (a recovery copies the
        // failed call's references); other braces are the call's own text.
        Value::Object(map) if !names_a_dependency(&map, reach.deps) => Value::Object(map),
        Value::Object(map) => {
            match super::call::resolve_for(&entry, &map, &|id| super::call::dep_output(reach.deps, id)) {
                Ok(resolved) => Value::Object(resolved),
                Err(e) => {
                    let message = format!("{e}: use only the results shown above");
                    return Ok(refused(
                        &ctx.recording,
                        step,
                        &call_id,
                        &tool,
                        Value::Object(map),
                        message,
                        tally,
                    )
                    .await);
                }
            }
        }
        Value::Null => Value::Object(Default::default()),
        other => {
            let message = format!("the arguments of `{tool}` must be a JSON object, not {other}");
            return Ok(refused(&ctx.recording, step, &call_id, &tool, other, message, tally).await);
        }
    };
    if let Some(recorded) = ctx.recording.journal.replay(&step.id, &tool, &args) {
        return Ok(replayed(&ctx.setting, &ctx.recording, step, &call_id, recorded, tally));
    }
    let record = execute(
        &ctx.setting,
        &ctx.recording,
        &ctx.control,
        step,
        InnerCall {
            id: &call_id,
            entry: &entry,
            args: args.clone(),
            inputs: reach.deps,
        },
        tally,
    )
    .await?;
    let mut error = record.error.clone().filter(|_| !record.succeeded());
    if let Some(only) = error
        .as_deref()
        .filter(|_| reach.guesses)
        .and_then(|e| the_one_file_instead(&ctx.setting, &entry, &args, e))
    {
        tally.calls.push(record);
        return read_the_one_file(ctx, step, &entry, args, &only, tally).await;
    }
    // A guessed name gets what its folder holds, so the loop looks instead
    // of guessing again (only here: a planned tool step's repair must not
    // swap a missing input for a file that happens to be there).
    if let (Some(e), Some(path)) = (error.as_mut(), call.arguments.get("path").and_then(Value::as_str)) {
        if e.contains("does not exist") {
            if let Some(there) = ctx.setting.tools.workspace().and_then(|w| w.beside(path)) {
                e.push_str(&format!("; the folder holds: {there}"));
            }
        }
    }
    let shown = match (&error, &record.output) {
        (Some(e), _) => format!("error: {e}"),
        (None, Some(output)) => {
            crate::text::cut_to_budget(&plan::value_as_text(output), ctx.setting.options.dependency_budget)
        }
        (None, None) => String::new(),
    };
    tally.calls.push(record);
    Ok((shown, error))
}

/// The one file in the folder of a read-only call's `path` that does not
/// exist, when that folder holds only it: an agent that guessed the name
/// (`data/0.txt` for "the one file under data/") gets that file read for
/// it, marked as such, rather than a listing the 0.5B model read past and
/// guessed again. Only read-only calls: a write keeps to the name it gave.
fn the_one_file_instead(setting: &Setting, entry: &ToolEntry, args: &Value, error: &str) -> Option<String> {
    if entry.declared_effect() != crate::tools::Effect::ReadOnly || !error.contains("does not exist") {
        return None;
    }
    setting.tools.workspace()?.only_file_beside(args.get("path")?.as_str()?)
}

/// The call again, with `only` as its path; shown to the loop as what was
/// read in place of the name it guessed.
async fn read_the_one_file(
    ctx: &RunContext,
    step: &Step,
    entry: &ToolEntry,
    mut args: Value,
    only: &str,
    tally: &mut Tally,
) -> Result<(String, Option<String>), String> {
    let guessed = args.get("path").and_then(Value::as_str).unwrap_or_default().to_string();
    args["path"] = Value::String(only.to_string());
    let call_id = inner_call_id(&step.id, tally.calls.len() + 1);
    ctx.calls.budget.check_step(&call_id)?;
    let record = execute(
        &ctx.setting,
        &ctx.recording,
        &ctx.control,
        step,
        InnerCall {
            id: &call_id,
            entry,
            args,
            // A read of a file takes no step's results.
            inputs: &Vec::new(),
        },
        tally,
    )
    .await?;
    let error = record.error.clone().filter(|_| !record.succeeded());
    let shown = match (&error, &record.output) {
        (Some(e), _) => format!("error: `{guessed}` does not exist, and {only}, the one file beside it: {e}"),
        (None, output) => format!(
            "`{guessed}` does not exist; the one file in its folder is {only}, read instead:\n{}",
            crate::text::cut_to_budget(
                &output.as_ref().map(plan::value_as_text).unwrap_or_default(),
                ctx.setting.options.dependency_budget
            )
        ),
    };
    tally.calls.push(record);
    Ok((shown, error))
}

/// A call refused before it ran (unknown tool, outside the profile, bad
/// arguments): recorded and shown like any failed call, so the report says
/// what the loop tried, and told to the loop so it can recover.
async fn refused(
    recording: &Recording,
    step: &Step,
    call_id: &str,
    tool: &str,
    args: Value,
    message: String,
    tally: &mut Tally,
) -> (String, Option<String>) {
    let now = now_ms();
    recording.events.emit(Event::AgentCallFinished {
        step_id: step.id.clone(),
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        elapsed_ms: 0,
        error: Some(message.clone()),
        summary: String::new(),
        replayed: false,
    });
    let record = StepResult {
        id: call_id.to_string(),
        tool: Some(tool.to_string()),
        agent: None,
        status: StepStatus::Failed,
        attempts: 0,
        args: Some(args),
        output: None,
        error: Some(message.clone()),
        started_at: Some(now),
        finished_at: Some(now),
        model_calls: 0,
        calls: Vec::new(),
        refused: false,
        worker: None,
    };
    let seq = recording.ledger.next_step_seq();
    recording.ledger.step_finished(seq, tally.version, &record).await;
    tally.calls.push(record);
    (format!("error: {message}"), Some(message))
}

/// A call that ran in an earlier session: its recorded result, not a second run.
fn replayed(
    setting: &Setting,
    recording: &Recording,
    step: &Step,
    call_id: &str,
    recorded: StepResult,
    tally: &mut Tally,
) -> (String, Option<String>) {
    let output = crate::journal::replayed_output(&recorded);
    let tool = recorded.tool.clone().unwrap_or_default();
    recording.events.emit(Event::AgentCallFinished {
        step_id: step.id.clone(),
        call_id: call_id.to_string(),
        tool,
        elapsed_ms: 0,
        error: None,
        summary: crate::text::one_line(&plan::value_as_text(&output), 100),
        replayed: true,
    });
    let shown = crate::text::cut_to_budget(&plan::value_as_text(&output), setting.options.dependency_budget);
    tally.calls.push(StepResult {
        id: call_id.to_string(),
        ..recorded
    });
    (shown, None)
}

/// One call an agent step makes: its id (`s2.1`), the tool and the arguments.
pub(super) struct InnerCall<'a> {
    pub(super) id: &'a str,
    pub(super) entry: &'a ToolEntry,
    pub(super) args: Value,
    /// The agent step's dependencies' results, for a tool that takes them.
    pub(super) inputs: &'a DependencyOutputs,
}

/// Check, confirm and run one inner call, recorded in the ledger (a side
/// effect's start before the tool runs) and shown as events.
pub(super) async fn execute(
    setting: &Setting,
    recording: &Recording,
    control: &Control,
    step: &Step,
    call: InnerCall<'_>,
    tally: &mut Tally,
) -> Result<StepResult, String> {
    let InnerCall {
        id: call_id,
        entry,
        args,
        inputs,
    } = call;
    let tool = entry.tool.name().to_string();
    // The call as a step of its own, for the approver and the ledger.
    let as_step = Step {
        id: call_id.to_string(),
        description: format!("{} (agent step {})", step.description, step.id),
        tool: Some(tool.clone()),
        agent: None,
        args: args.as_object().cloned().unwrap_or_default(),
        depends_on: Vec::new(),
        expected: None,
    };
    let seq = recording.ledger.next_step_seq();
    let started_at = now_ms();
    if recording.ledger.is_enabled() && !entry.idempotent() {
        let start = StepStart {
            seq,
            plan_version: tally.version,
            step_id: call_id.to_string(),
            tool: Some(tool.clone()),
            agent: None,
            args: Some(args.clone()),
            started_at,
        };
        if !recording.ledger.step_started(&start).await {
            return Err("not run: the ledger could not record the start of a call with side effects".to_string());
        }
    }
    recording.events.emit(Event::AgentCallStarted {
        step_id: step.id.clone(),
        call_id: call_id.to_string(),
        tool: tool.clone(),
        args: args.clone(),
    });
    let mut inner = Tally::default();
    // An agent step's own calls answer no sampling or elicitation request (yet): said so to the server.
    let asker = crate::tools::asking::Refuse("sampling is answered for a plan's tool steps, not inside an agent step");
    let parts = (setting, recording, control);
    let outcome = call_checked(parts, &as_step, entry, args.clone(), (&asker, inputs), &mut inner).await;
    tally.attempts += inner.attempts;
    let finished_at = now_ms();
    let (status, output, error) = match outcome {
        Ok(output) => (StepStatus::Succeeded, Some(output), None),
        Err(e) => (StepStatus::Failed, None, Some(e.message)),
    };
    recording.events.emit(Event::AgentCallFinished {
        step_id: step.id.clone(),
        call_id: call_id.to_string(),
        tool: tool.clone(),
        elapsed_ms: finished_at.saturating_sub(started_at),
        error: error.clone(),
        summary: output
            .as_ref()
            .map(|o| crate::text::one_line(&plan::value_as_text(o), 100))
            .unwrap_or_default(),
        replayed: false,
    });
    let record = StepResult {
        id: call_id.to_string(),
        tool: Some(tool),
        agent: None,
        status,
        attempts: inner.attempts,
        args: Some(args),
        output,
        error,
        started_at: Some(started_at),
        finished_at: Some(finished_at),
        model_calls: 0,
        calls: Vec::new(),
        refused: false,
        worker: None,
    };
    recording.ledger.step_finished(seq, tally.version, &record).await;
    Ok(record)
}
