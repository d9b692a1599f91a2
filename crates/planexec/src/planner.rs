//! The planner role: task in, validated [`Plan`] out.
//!
//! Asks for structured output with the plan schema specialised to this run's
//! tools, and also states the format in the prompt for providers that ignore
//! it. Replies are parsed robustly and validated; an unusable plan is sent back
//! with the exact errors, up to `max_reasks` times. The replanner reuses
//! [`request_plan`] with its own acceptance check.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::context::{ModelCalls, Recording, RunContext, Setting};
use crate::llm::{ChatRequest, JsonSchemaFormat, Message, Role};
use crate::mends::Mend;
use crate::plan::{self, Plan, PlanErrors, PlanStream, Step};
use crate::report::Clarification;
use crate::run::RunError;

/// A plan a planner (or replanner) made, with what the runtime changed in it
/// on the way: calls written twice merged, and the small-model help's mends
/// and worked plan, in the order they acted.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub plan: Plan,
    pub mends: Vec<Mend>,
}

impl From<Plan> for Planned {
    fn from(plan: Plan) -> Planned {
        Planned {
            plan,
            mends: Vec::new(),
        }
    }
}

/// The planning rules that hold for a whole run (the format itself is in the
/// shared system prompt, see [`crate::prompt::PLAN_FORMAT`]; what is left of
/// the budget changes with every call and is added apart).
pub(crate) fn format_rules(setting: &Setting) -> String {
    let mut rules = format!(
        "Reply with one JSON plan object as described under \"How plans are written\", and nothing else. Use at most {} steps.",
        setting.options.max_steps
    );
    if setting.options.strategy.profile().tools_only {
        rules.push_str(" Every step must call a tool: no reasoning steps (\"tool\": null). Pass results on with {{id}}; all reasoning happens when the final answer is written from the results.");
    }
    rules
}

/// The planner's instructions. They are the same on every run with these
/// settings, yet they open the user message rather than close the system
/// message (where a local model would load them evaluated from disk): there
/// the 0.5B model lost the task, planning a reasoning step that "reads" a
/// file the task never named instead of multiplying the numbers it gave.
fn planner_instructions(setting: &Setting, may_ask: bool) -> String {
    let questions = if may_ask {
        "If the task is too ambiguous to plan (no target named, conflicting constraints), reply instead with \"steps\": [] and \"questions\": [at most 3 short questions for the user]. Ask only when a reasonable assumption would not do."
    } else if setting.compact {
        "Nobody can answer questions now: do not ask any."
    } else {
        "Nobody can answer questions now: do not ask any. Where the task is ambiguous, make the most reasonable assumptions, list them in \"assumptions\", and plan."
    };
    // A compact prompt's system message already says the model plans.
    let role = if setting.compact {
        ""
    } else {
        "You are the planner: turn the task into a small plan of steps for the other parts to run; you do not run anything yourself.\n\n"
    };
    format!("{role}{}\n{questions}", format_rules(setting))
}

/// The planner's messages for `task`, and the worked plan shown with it (a
/// record of the help, when the run's help showed one).
fn planner_messages(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    task: &str,
    may_ask: bool,
) -> (Vec<Message>, Option<Mend>) {
    let budget = calls.budget.remaining().map(|b| format!("{b}\n\n")).unwrap_or_default();
    let files = crate::prompt::workspace_files(task, &setting.tools)
        .map(|listing| format!("{listing}\n\n"))
        .unwrap_or_default();
    // Help for a model that gets it (the embedded one, `mend = "auto"`): a
    // hosted model's prompt stays within its token budget, and it reads
    // the file in a step as cheaply.
    let beginnings = setting
        .help
        .as_ref()
        .and_then(|_| crate::prompt::file_beginnings(task, &setting.tools));
    let files = match beginnings {
        Some(beginnings) => format!("{files}{beginnings}\n"),
        None => files,
    };
    let worked = setting
        .help
        .as_ref()
        .and_then(|help| help.worked_plan(task, &setting.tools));
    let example = worked.as_ref().map(|w| w.text.clone()).unwrap_or_default();
    let messages = vec![
        Message::system(setting.planning_system()),
        Message::user(format!(
            "{}\n\n{budget}{example}{files}Task: {task}",
            planner_instructions(setting, may_ask)
        )),
    ];
    let shown = worked.map(|w| {
        recording
            .events
            .emit(crate::events::Event::WorkedPlanShown { task: w.task.clone() });
        Mend::worked_plan(&w.task)
    });
    (messages, shown)
}

/// Plan `task`, putting the planner's clarifying questions to the approver
/// while it can answer them; the answers are added to the task (and to
/// `clarifications`, which the ledger records).
pub(crate) async fn plan_with_questions(
    ctx: &RunContext,
    task: &str,
    clarifications: &mut Vec<Clarification>,
) -> Result<Planned, RunError> {
    let mut task = task.to_string();
    let mut rounds = 0;
    loop {
        let may_ask = ctx.control.approver.can_answer_questions() && rounds < ctx.setting.options.max_question_rounds;
        let planned = plan(&ctx.calls, &ctx.setting, &ctx.recording, &task, may_ask).await?;
        let plan = &planned.plan;
        if plan.questions.is_empty() {
            return Ok(planned);
        }
        rounds += 1;
        ctx.recording.events.emit(crate::events::Event::QuestionsAsked {
            questions: plan.questions.clone(),
        });
        match ctx.control.approver.answer_questions(&plan.questions).await {
            Some(answers) => {
                task.push_str(if clarifications.is_empty() {
                    "\n\nClarifications:"
                } else {
                    ""
                });
                for (question, answer) in plan.questions.iter().zip(answers) {
                    task.push_str(&format!("\n- Q: {question}\n  A: {answer}"));
                    clarifications.push(Clarification {
                        question: question.clone(),
                        answer,
                    });
                }
                ctx.recording.ledger.clarifications(clarifications).await;
            }
            None => rounds = ctx.setting.options.max_question_rounds,
        }
    }
}

/// Plan a task. With `may_ask`, the planner may answer with clarifying questions
/// instead of steps; without, it must plan and state its assumptions. A
/// run whose help offers a program plan ([`program_plan`]) tries that first.
pub(crate) async fn plan(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    task: &str,
    may_ask: bool,
) -> Result<Planned, RunError> {
    let limits = setting.options.plan_limits();
    let program_sent_back = AtomicBool::new(false);
    let accept_program = |p: Plan| checked(p, setting, task, may_ask, &limits, &program_sent_back);
    if let Some(planned) = program_plan(calls, setting, recording, task, &accept_program).await? {
        return Ok(planned);
    }
    let (messages, worked) = planner_messages(calls, setting, recording, task, may_ask);
    let invented_sent_back = AtomicBool::new(false);
    let accept = |p: Plan| checked(p, setting, task, may_ask, &limits, &invented_sent_back);
    let mut planned = request_plan(calls, setting, recording, Role::Planner, messages, task, &accept).await?;
    planned.mends.splice(0..0, worked);
    Ok(planned)
}

/// The planner's check of a reply's plan: `Err` when it is no valid plan,
/// else the plan (its goal filled in) with its findings.
fn checked(
    p: Plan,
    setting: &Setting,
    task: &str,
    may_ask: bool,
    limits: &plan::PlanLimits,
    invented_sent_back: &AtomicBool,
) -> Result<(Plan, Vec<plan::PlanError>), PlanErrors> {
    let mut p = with_goal(p, task);
    if !may_ask && !p.questions.is_empty() {
        return Err(PlanErrors(vec![plan::PlanError::QuestionsNotAllowed]));
    }
    let mut found = plan::validate_leaving_args(&p, &setting.tools, limits, &Default::default())?;
    found.extend(plan::findings(&p, &setting.tools));
    found.extend(invented_inputs_once(&mut p, task, setting, invented_sent_back));
    found.extend(plan::missing_inputs(&p, task, &setting.tools));
    // Only a run that can write files is held to the task's outputs.
    if setting.tools.get("write_file").is_some() {
        found.extend(plan::unwritten_outputs(&p, task, &setting.tools, &Default::default()));
        found.extend(plan::outputs_read(&p, task, &setting.tools));
    }
    Ok((p, found))
}

/// A first plan of one program, when the run's help offers a prompt for
/// one ([`crate::help::PlanHelp::program_prompt`]): the model writes the
/// program seeing the task's files, and the plan is its one step, taken
/// if the planner's check finds nothing in it (a missing input, an output
/// it does not write). `None` when there is no such prompt or the plan is
/// not taken: the task is then planned in steps.
async fn program_plan(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    task: &str,
    accept: Accept<'_>,
) -> Result<Option<Planned>, RunError> {
    let Some(asked) = setting
        .help
        .as_ref()
        .and_then(|help| help.program_prompt(task, &setting.tools))
    else {
        return Ok(None);
    };
    let test = crate::program_vote::list_test(calls, setting, task).await?;
    let messages = asked.messages();
    let Some(first) =
        crate::program_vote::program_step(calls, Role::Planner, messages, None, (&asked.tool, "s1"), task).await?
    else {
        return Ok(None);
    };
    let (step, vote, others) = crate::program_vote::chosen(calls, setting, &asked, (first, test), task).await?;
    // The whole task is the goal: a failed program is written again from it
    // (`executor::program_fix`).
    match accept(Plan::new(task, vec![step.clone()])) {
        Ok((plan, found)) if found.is_empty() => {
            let planned = Planned {
                plan,
                mends: vec![
                    Mend::program_plan(&step, vote.as_ref().map(|v| (v.said(), v.agreement())))
                        .with_others(others)
                        .with_kept_flaw(vote.as_ref().and_then(|v| v.kept_flaw.clone()))
                        .with_list_test(vote.and_then(|v| v.list_test)),
                ],
            };
            Ok(Some(taken(setting, recording, planned)))
        }
        Ok((_, found)) => {
            tracing::info!("the program plan is left for a plan of steps: {}", PlanErrors(found));
            Ok(None)
        }
        Err(errors) => {
            tracing::info!("the program plan is left for a plan of steps: {errors}");
            Ok(None)
        }
    }
}

/// The made-up inputs of `plan` ([`plan::invented_inputs`]), as findings the
/// first time (`sent_back` then holds): a planner that keeps one after that
/// has them left to fail when they run (where recovery and the replanner
/// look again), rather than the run end with no plan at all.
pub(crate) fn invented_inputs_once(
    plan: &mut Plan,
    task: &str,
    setting: &Setting,
    sent_back: &AtomicBool,
) -> Vec<plan::PlanError> {
    let invented = plan::invented_inputs(plan, task, &setting.tools);
    if invented.is_empty() || !sent_back.swap(true, Ordering::Relaxed) {
        return invented;
    }
    Vec::new()
}

/// `plan` with the task as its goal when the reply gave none.
fn with_goal(mut plan: Plan, task: &str) -> Plan {
    if plan.goal.trim().is_empty() {
        plan.goal = task.lines().next().unwrap_or_default().trim().to_string();
    }
    plan
}

/// What one streamed planner call produced.
pub(crate) struct StreamedPlan {
    /// The whole reply as a valid plan, or what is wrong with it.
    pub plan: Result<Plan, String>,
    /// The steps handed out while the reply streamed, in order.
    pub dispatched: Vec<Step>,
    pub goal: Option<String>,
}

/// The compiler strategy's planner: one streamed call. Each step is handed to
/// `on_step` as soon as its JSON is complete, if the plan up to and including
/// it validates; after the first step that does not, nothing more is handed out
/// while streaming (the whole reply is validated at the end).
pub(crate) async fn plan_streaming(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    task: &str,
    on_step: &(dyn Fn(Step) + Send + Sync),
) -> Result<StreamedPlan, RunError> {
    struct Progress {
        stream: PlanStream,
        accepted: Vec<Step>,
        blocked: bool,
    }
    let progress = Mutex::new(Progress {
        stream: PlanStream::new(),
        accepted: Vec::new(),
        blocked: false,
    });
    let limits = setting.options.plan_limits();
    let request = plan_request(
        setting,
        Role::Planner,
        planner_messages(calls, setting, recording, task, false).0,
    );
    let on_text = |delta: &str| {
        let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
        for step in p.stream.push(delta) {
            if p.blocked {
                continue;
            }
            let mut prefix = Plan::new(p.stream.goal().unwrap_or(task), p.accepted.clone());
            prefix.steps.push(step.clone());
            match plan::validate(&prefix, &setting.tools, &limits) {
                Ok(()) => {
                    p.accepted.push(step.clone());
                    on_step(step);
                }
                Err(_) => p.blocked = true,
            }
        }
    };
    let response = calls.chat_streaming(request, &on_text).await?;
    let p = progress.into_inner().unwrap_or_else(|e| e.into_inner());
    let reply = match (p.stream.text().trim().is_empty(), response.tool_calls.first()) {
        (true, Some(call)) => call.arguments.to_string(),
        _ => p.stream.text().to_string(),
    };
    let plan = match plan::parse_plan_reply(&reply).map(|p| with_goal(p, task)) {
        Ok(whole) => match plan::validate(&whole, &setting.tools, &limits) {
            Ok(()) if !whole.questions.is_empty() => Err(plan::PlanError::QuestionsNotAllowed.to_string()),
            Ok(()) => Ok(whole),
            Err(errors) => Err(errors.to_string()),
        },
        Err(e) => Err(format!("- {e}")),
    };
    // A dispatched step must be the step the whole plan has under its id.
    let plan = plan.and_then(
        |whole| match p.accepted.iter().find(|s| whole.step(&s.id) != Some(*s)) {
            Some(s) => Err(format!(
                "- step {} changed between the stream and the whole reply",
                s.id
            )),
            None => Ok(whole),
        },
    );
    Ok(StreamedPlan {
        plan,
        dispatched: p.accepted,
        goal: p.stream.goal().map(str::to_string),
    })
}

/// A request for a plan: structured output with the plan schema specialised
/// to the run's tools.
fn plan_request(setting: &Setting, role: Role, messages: Vec<Message>) -> ChatRequest {
    let agents: Vec<String> = setting
        .options
        .plannable_agents()
        .iter()
        .map(|a| a.name.clone())
        .collect();
    let (schema, strict) = plan::plan_schema_for(&setting.tools, &agents, setting.options.max_steps);
    let mut request = ChatRequest::new(role, "", messages);
    request.response_format = Some(JsonSchemaFormat {
        name: "plan".to_string(),
        schema,
        strict,
    });
    request
}

/// How a planner's (or replanner's) reply is checked: `Err` with what makes
/// it unusable (it fails validation), or the plan as it would be adopted
/// with its findings (empty when it is taken as it is).
pub(crate) type Accept<'a> = &'a (dyn Fn(Plan) -> Result<(Plan, Vec<plan::PlanError>), PlanErrors> + Sync);

/// What the run's small-model help made of a plan's findings.
enum Mended {
    /// A plan with nothing left to find: taken at once.
    Clean(Planned),
    /// A valid plan with findings no rule mends: taken on a last chance
    /// (rather than the unmended plan), otherwise the planner is asked again.
    WithFindings(Planned),
    /// No help, no rule applied, or what they made is still no valid plan.
    Not,
}

/// The plan with the edits its findings call for, by the run's small-model
/// help ([`crate::mends`]), with what was done. Tried before a re-ask: a
/// small model asked again (sampling, so that it may change) as often writes
/// a worse plan as a fixed one, and the edits are the ones the findings
/// would ask for. The mends' events are sent only when the plan is taken
/// ([`taken`]).
fn mend(setting: &Setting, accept: Accept<'_>, candidate: Plan, errors: &PlanErrors, task: &str) -> Mended {
    let Some(help) = setting.help.as_ref() else {
        return Mended::Not;
    };
    // A mended plan is checked again, and may then show findings the first
    // check stopped before (a plan that failed validation was never checked
    // for the task's outputs): those are mended too, a few rounds at most.
    let mut plan = candidate;
    let mut errors = errors.clone();
    let mut mends = Vec::new();
    let mut valid = None;
    for _ in 0..MEND_ROUNDS {
        let Some((mended, done)) = help.mend(&plan, &errors.0, task, &setting.tools) else {
            break;
        };
        plan = mended;
        mends.extend(done);
        match accept(plan.clone()) {
            Ok((accepted, found)) if found.is_empty() => {
                return Mended::Clean(Planned { plan: accepted, mends });
            }
            Ok((accepted, found)) => {
                valid = Some(accepted);
                errors = PlanErrors(found);
            }
            Err(more) => errors = more,
        }
    }
    match valid {
        Some(plan) => Mended::WithFindings(Planned { plan, mends }),
        None => Mended::Not,
    }
}

/// `planned` as the plan a role gives: its mends told as events, its calls
/// written twice merged.
pub(crate) fn taken(setting: &Setting, recording: &Recording, planned: Planned) -> Planned {
    for m in &planned.mends {
        recording.events.emit(crate::events::Event::PlanMended {
            rule: m.rule.clone(),
            step: m.step.clone(),
            before: m.before.clone(),
            after: m.after.clone(),
        });
    }
    merged(setting, recording, planned)
}

/// Most rounds of mending a plan before the planner is asked again.
const MEND_ROUNDS: usize = 3;

/// Whether `plan` refuses the task with a reason copied from `sent_back`,
/// the errors its last reply was sent back with: asked again, the 0.5B
/// planner "refused" a listing with a sentence of the error about its
/// made-up read.
fn repeats_the_error(plan: &Plan, sent_back: &str) -> bool {
    const COPIED: usize = 40;
    let Some(reason) = plan.infeasible.as_deref() else {
        return false;
    };
    // A missing input is a refusal however it is worded.
    if reason.contains("does not exist") {
        return false;
    }
    // Every run of COPIED characters, as byte ranges of `reason`.
    let reason = reason.trim();
    let starts: Vec<usize> = reason.char_indices().map(|(i, _)| i).chain([reason.len()]).collect();
    starts
        .windows(COPIED + 1)
        .any(|w| sent_back.contains(&reason[w[0]..w[COPIED]]))
}

/// What a planner is told of a reply that is no plan. "EOF while parsing a
/// string" says nothing a small model can act on when its reply wrote the
/// same words over and over until it was cut off, so such a reply is told that.
fn unreadable(reply: &str, error: impl std::fmt::Display) -> String {
    match crate::text::cut_at_loop(reply) {
        Some((_, block)) => format!(
            "- the reply wrote `{}` over and over until it was cut off: write each step once, with short arguments (a calculator expression is one formula over numbers and {{{{sN}}}}, such as count({{{{s1}}}}) or {{{{s1}}}} * 2)",
            crate::text::one_line(block.trim(), 60)
        ),
        None => format!("- {error}"),
    }
}

/// The temperature of the second, third, … attempt at a plan.
const REASK_TEMPERATURES: [f32; 2] = [0.5, 0.9];

/// Ask `role` for a plan until `accept` takes one, re-asking with the
/// errors (after the run's help had its chance to mend them). On the last
/// attempt a plan that is valid but has findings is taken as it is (or, when
/// the last reply is no such plan, the last one that was): what a
/// finding foresees (a read that will fail, a text that is no number) is
/// met when the step runs, where a recovery or the replanner deals with it,
/// rather than the run end with no plan. The plan taken has its calls
/// written twice merged ([`plan::merge_same_calls`]).
pub(crate) async fn request_plan(
    calls: &ModelCalls,
    setting: &Setting,
    recording: &Recording,
    role: Role,
    mut messages: Vec<Message>,
    task: &str,
    accept: Accept<'_>,
) -> Result<Planned, RunError> {
    let attempts = setting.options.max_reasks + 1;
    let mut last_reply = String::new();
    let mut last_problem = String::new();
    let mut last_plan: Option<Plan> = None;
    let mut last_findings_only = false;
    // The last plan that could be taken with findings: a later reply that
    // is worse (the 0.5B planner, told its read was made up, "refused" the
    // task with a copy of the message) does not throw it away.
    let mut best: Option<Planned> = None;
    for attempt in 1..=attempts {
        let mut request = plan_request(setting, role, messages.clone());
        if attempt > 1 {
            // Greedy decoding writes the plan it wrote before, whatever the
            // errors say (small local models most): a re-ask samples, and
            // hotter each time (at 0.5 the 1.5B model wrote the same
            // calculator expression over a file name three times running).
            request.temperature = Some(REASK_TEMPERATURES[(attempt as usize - 2).min(REASK_TEMPERATURES.len() - 1)]);
        }
        let response = calls.chat(request).await?;
        // A model may answer through a tool call instead of text; take its arguments.
        let reply = match (&response.content, response.tool_calls.first()) {
            (Some(text), _) if !text.trim().is_empty() => text.clone(),
            (_, Some(call)) => call.arguments.to_string(),
            _ => String::new(),
        };
        let parsed = plan::parse_plan_reply(&reply);
        // The same steps again, after being told what is wrong with them:
        // asking a third time would go round in a circle. A plan that only
        // had findings is taken as it is (as on the last attempt); a
        // revision that cannot be used stops here, and the run's loop
        // protection takes over.
        let repeated = matches!((&parsed, &last_plan), (Ok(c), Some(last)) if c.steps == last.steps);
        if repeated && role == Role::Replanner && !last_findings_only {
            return Err(RunError::Repeated {
                role,
                attempt,
                errors: last_problem,
            });
        }
        let last_chance = attempt == attempts || (repeated && last_findings_only);
        last_plan = parsed.as_ref().ok().cloned();
        last_findings_only = false;
        let problem = match parsed {
            Ok(candidate) if repeats_the_error(&candidate, &last_problem) => format!(
                "- \"infeasible\" only repeats the error above ({}); that is no reason the task cannot be done: plan it",
                crate::text::one_line(candidate.infeasible.as_deref().unwrap_or_default(), 80)
            ),
            Ok(candidate) => match accept(candidate.clone()) {
                Ok((accepted, found)) if found.is_empty() => return Ok(merged(setting, recording, accepted.into())),
                Ok((accepted, found)) => match mend(setting, accept, candidate, &PlanErrors(found.clone()), task) {
                    Mended::Clean(mended) => return Ok(taken(setting, recording, mended)),
                    Mended::WithFindings(mended) if last_chance => return Ok(taken_with_findings(setting, recording, mended)),
                    Mended::Not if last_chance => return Ok(taken_with_findings(setting, recording, accepted.into())),
                    Mended::WithFindings(mended) => {
                        (last_findings_only, best) = (true, Some(mended));
                        PlanErrors(found).to_string()
                    }
                    Mended::Not => {
                        (last_findings_only, best) = (true, Some(accepted.into()));
                        PlanErrors(found).to_string()
                    }
                },
                Err(errors) => match mend(setting, accept, candidate, &errors, task) {
                    Mended::Clean(mended) => return Ok(taken(setting, recording, mended)),
                    Mended::WithFindings(mended) if last_chance => return Ok(taken_with_findings(setting, recording, mended)),
                    // Mended into a plan that would be taken with findings:
                    // the same reply again is taken so (as a plan with
                    // only findings is), not asked about a third time.
                    Mended::WithFindings(mended) => {
                        (last_findings_only, best) = (true, Some(mended));
                        errors.to_string()
                    }
                    Mended::Not => errors.to_string(),
                },
            },
            Err(e) => unreadable(&reply, e),
        };
        recording.events.emit(crate::events::Event::PlanRejectedByValidation {
            attempt,
            errors: problem.clone(),
        });
        // A reply that looped goes back with one copy of its loop: all of it
        // would fill the context with the loop and invite it again.
        let shown = crate::text::cut_at_loop(&reply).map_or(reply.clone(), |(kept, _)| format!("{kept}…"));
        messages.push(Message::assistant(shown));
        messages.push(Message::user(format!(
            "That plan cannot be used:\n{problem}\nReply with the corrected complete plan as one JSON object."
        )));
        last_reply = reply;
        last_problem = problem;
    }
    if let Some(best) = best {
        return Ok(taken_with_findings(setting, recording, best));
    }
    Err(RunError::Planning {
        role,
        attempts,
        errors: last_problem,
        last_reply,
    })
}

/// `planned`, taken with findings its planner did not fix: what they
/// foresee is met when the step runs.
fn taken_with_findings(setting: &Setting, recording: &Recording, planned: Planned) -> Planned {
    tracing::warn!("the plan is taken with findings the planner did not fix");
    taken(setting, recording, planned)
}

/// `planned` with the calls it writes twice merged into one, each merge
/// recorded and told as a mend (rule `same-call`), for every provider.
fn merged(setting: &Setting, recording: &Recording, mut planned: Planned) -> Planned {
    let (plan, merges) = plan::merge_same_calls(&planned.plan, &setting.tools);
    for m in &merges {
        recording.events.emit(crate::events::Event::PlanMended {
            rule: m.rule.clone(),
            step: m.step.clone(),
            before: m.before.clone(),
            after: m.after.clone(),
        });
    }
    planned.plan = plan;
    planned.mends.extend(merges);
    planned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_that_loops_is_told_so_instead_of_where_its_json_broke() {
        let looping = format!(
            "{{\"steps\": [{{\"args\": {{\"expression\": \"count(a.txt){}",
            " | words(a.txt)".repeat(30)
        );
        let told = unreadable(&looping, "EOF while parsing a string");
        assert!(told.contains("wrote `| words(a.txt)` over and over"), "{told}");
        assert_eq!(unreadable("{\"steps\": [", "EOF"), "- EOF");
    }

    #[test]
    fn a_refusal_that_copies_the_error_it_was_sent_back_with_is_no_refusal() {
        let sent_back = "- step s1 reads `folder_path`, which is not in the workspace, no step writes it, and the task does not name it: read only files the workspace listing shows";
        let refusing = |reason: &str| {
            plan::parse_plan_reply(&serde_json::json!({"goal": "g", "steps": [], "infeasible": reason}).to_string())
                .unwrap()
        };
        let copied = refusing("the task does not name it: read only files the workspace listing shows");
        assert!(repeats_the_error(&copied, sent_back));
        assert!(!repeats_the_error(&refusing("there is no folder to list"), sent_back));
        assert!(!repeats_the_error(
            &refusing("`folder_path`, which is not in the workspace, does not exist"),
            sent_back
        ));
        assert!(!repeats_the_error(&copied, ""));
    }
}
