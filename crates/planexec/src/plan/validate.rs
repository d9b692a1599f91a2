//! Validation: everything wrong with a plan before anything runs, each problem
//! naming its step (duplicate ids, unknown or cyclic dependencies, references
//! outside `depends_on`, unknown tools, arguments against the tool's schema,
//! plan mode, the step limit).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

use super::links::step_references;
use super::{Plan, Step, StepKind};
use crate::tools::ToolRegistry;

/// Most clarifying questions a planner may ask at once.
pub const MAX_QUESTIONS: usize = 3;

/// Limits a plan must respect.
#[derive(Debug, Clone)]
pub struct PlanLimits {
    pub max_steps: usize,
    /// Only read-only tools may be used (plan mode).
    pub read_only: bool,
    /// Every step must call a tool (ReWOO: the solver does all the reasoning).
    pub tools_only: bool,
    /// The agent profiles an agent step may name.
    pub agents: Vec<String>,
}

impl Default for PlanLimits {
    fn default() -> Self {
        PlanLimits {
            max_steps: 8,
            read_only: false,
            tools_only: false,
            agents: vec![crate::agents::WORKER.to_string()],
        }
    }
}

/// One thing wrong with a plan. Each names the step it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the plan has no steps; an empty plan is only allowed with \"infeasible\" set to the reason the task cannot be done, or with \"questions\" for the user")]
    Empty,
    #[error("the plan asks {count} questions; ask at most {MAX_QUESTIONS}")]
    TooManyQuestions { count: usize },
    #[error(
        "the plan both asks questions and has steps; ask questions with no steps, or plan with stated assumptions"
    )]
    QuestionsWithSteps,
    #[error("nobody can answer questions in this run: plan with stated assumptions instead")]
    QuestionsNotAllowed,
    #[error(
        "the plan has {count} steps, more than the limit of {max} (raise --max-steps or plan fewer, larger steps)"
    )]
    TooManySteps { count: usize, max: usize },
    #[error("step #{index} has an empty id")]
    EmptyId { index: usize },
    #[error("step id `{id}` may only use letters, digits, `_` and `-` (so {{{{{id}}}}} references work)")]
    BadId { id: String },
    #[error("the plan has steps but also says it is infeasible; either plan the steps or leave them out and give the reason")]
    InfeasibleWithSteps,
    #[error("step id `{id}` is used by more than one step")]
    DuplicateId { id: String },
    #[error("step {step} depends on itself")]
    SelfDependency { step: String },
    #[error("step {step} depends on `{dependency}`, which is not a step of this plan")]
    UnknownDependency { step: String, dependency: String },
    #[error("the steps {} form a cycle", cycle.join(" -> "))]
    Cycle { cycle: Vec<String> },
    #[error("step {step} uses {{{{{reference}}}}} in {location}, but `{reference}` is not a step of this plan")]
    UnknownReference {
        step: String,
        reference: String,
        location: String,
    },
    #[error("step {step} uses {{{{{reference}}}}} in {location}, but `{reference}` is not in its depends_on")]
    UndeclaredReference {
        step: String,
        reference: String,
        location: String,
    },
    #[error("step {step} uses tool `{tool}`, which does not exist (available: {})", available.join(", "))]
    UnknownTool {
        step: String,
        tool: String,
        available: Vec<String>,
    },
    #[error("step {step}: arguments for `{tool}` are invalid: {}", problems.join("; "))]
    InvalidArgs {
        step: String,
        tool: String,
        problems: Vec<String>,
    },
    #[error("step {step} uses `{tool}`, which {effect}{}; this run is in plan mode, where only read-only tools may run", because.as_ref().map(|w| format!(" (because {w})")).unwrap_or_default())]
    NotReadOnly {
        step: String,
        tool: String,
        effect: crate::tools::Effect,
        /// Which rule made it not read-only, when the tool says.
        because: Option<String>,
    },
    #[error("step {step} is a reasoning step (tool null) but has arguments; put what it needs in depends_on")]
    ReasoningWithArgs { step: String },
    #[error("step {step} is a reasoning step (tool null), but with the rewoo strategy every step calls a tool; leave the reasoning to the final answer")]
    ReasoningNotAllowed { step: String },
    #[error("step {step} names both tool `{tool}` and agent `{agent}`; a step either calls a tool or hands its subtask to an agent (then \"tool\": null)")]
    ToolAndAgent { step: String, tool: String, agent: String },
    #[error("step {step} hands its work to agent `{agent}`, which does not exist (agents: {})", available.join(", "))]
    UnknownAgent {
        step: String,
        agent: String,
        available: Vec<String>,
    },
    #[error("step {step} is an agent step but has arguments; say what it needs in its description and depends_on")]
    AgentWithArgs { step: String },
    #[error("step {step} is an agent step (agent `{agent}`), but with the rewoo strategy every step calls a tool; leave the judgement to the final answer")]
    AgentNotAllowed { step: String, agent: String },
    #[error("agent step {failed} failed to find out what it was for, and no new step looks again (no agent step, no call of a tool that reads), so the reasoning steps would only guess it; look another way, or leave the steps out and set \"infeasible\" to why it cannot be found")]
    GuessesInsteadOfLooking { failed: String },
    #[error("step {writer} writes `{path}` and step {other} uses it too, but neither depends on the other, so they may run in either order; add {writer} to {other}'s depends_on (or {other} to {writer}'s, if {other} must see the old content)")]
    UnorderedWrite {
        writer: String,
        other: String,
        path: String,
    },
    #[error("step {step} repeats the failed step {failed} unchanged (same tool, same arguments), so it would fail the same way; change its arguments, use another tool, use a reasoning step (\"tool\": null) when the work is counting, sorting, filtering or picking from a text, or leave the steps out and set \"infeasible\" to why it cannot be done")]
    RepeatsFailedStep { step: String, failed: String },
    #[error("the steps to redo ({}) are written unchanged (same tool, same arguments), so they would give the same wrong result again: change the one that went wrong (other arguments, another tool, or a program that computes it another way)", steps.join(", "))]
    RedoUnchanged { steps: Vec<String> },
    #[error("the task asks to write `{path}`, but no step writes it: add a last step that calls write_file with path \"{path}\" and the result as its content ({{{{sN}}}} of the step with it)")]
    OutputNotWritten { path: String },
    #[error("step {step} reads `{value}` as a file, but it is a value the task gives, not a file: use it as it is (in the calculator's expression, or in the description of a reasoning step) and drop the read")]
    ValueReadAsFile { step: String, value: String },
    #[error("step {step} reads `{path}`, which is not in the workspace, no step writes it, and the task does not name it: read only files the workspace listing shows, and use the numbers and text the task gives as they are (in a calculator expression, or in a reasoning step's description)")]
    InventedInput { step: String, path: String },
    #[error("step {step} reads `{path}`, which is not in the workspace; the file there is `{there}`: write its name exactly as the workspace has it")]
    MisnamedInput { step: String, path: String, there: String },
    #[error("the task names `{path}`, which is not in the workspace (in no folder), and no step reads it: do not do the work on another file in its place; if the task cannot be done without it, leave the steps out and set \"infeasible\" to \"{path} does not exist\"")]
    NamedInputMissing { path: String },
    #[error("step {step} waits for {dependency} but does not use its result: write {{{{{dependency}}}}} in its args where that result goes (never type the value yourself), or drop {step} if {dependency} already does the work")]
    UnusedResult { step: String, dependency: String },
    #[error("step {step}: `{expression}` counts the lines of a number: {search} already returns how many lines match (count true), so use {{{{{search}}}}} itself where the count is needed")]
    CountOfACount {
        step: String,
        /// The search that counts.
        search: String,
        expression: String,
    },
    #[error("step {step} reads `{path}`, which is not in the workspace: it is the file the task asks for, not an input; drop the read, compute what the file is to hold from the task's inputs, and add a last step that writes it to `{path}`")]
    OutputRead { step: String, path: String },
    #[error("step {step} reads `{path}`, which is not in the workspace: it is what step {writer} writes later, the task's output, not an input; drop the read and compute the output from the task's inputs")]
    OutputReadBeforeWritten {
        step: String,
        /// The step that writes it.
        writer: String,
        path: String,
    },
    #[error("step {step} writes {{{{{edit}}}}} to `{path}`, but {edit} already changed `{path}` in place and its result is only a report of that change, so this would replace the edited file with the report: drop {step} (the file is edited), or have {step} write a result that holds the file's new text")]
    EditReportWritten {
        step: String,
        /// The step that edited the file in place.
        edit: String,
        path: String,
    },
    #[error("step {step}: search with matches true for the plain text `{text}` returns only that text, once per match: set matches false to get the lines that contain it, or give a regular expression for the parts to extract")]
    PlainTextMatched { step: String, text: String },
    #[error("step {step}: {{{{{reference}}}}} is the text of {path} ({lines} lines), not one number, so it cannot stand in arithmetic: use sum({{{{{reference}}}}}), mean({{{{{reference}}}}}), min, max or count({{{{{reference}}}}}) of it")]
    TextUsedAsNumber {
        step: String,
        reference: String,
        path: String,
        lines: usize,
    },
}

impl PlanError {
    /// The step a problem is found at, when it is about one step.
    pub fn step(&self) -> Option<&str> {
        use PlanError::*;
        match self {
            SelfDependency { step }
            | UnknownDependency { step, .. }
            | UnknownReference { step, .. }
            | UndeclaredReference { step, .. }
            | UnknownTool { step, .. }
            | InvalidArgs { step, .. }
            | NotReadOnly { step, .. }
            | ReasoningWithArgs { step }
            | ReasoningNotAllowed { step }
            | ToolAndAgent { step, .. }
            | UnknownAgent { step, .. }
            | AgentWithArgs { step }
            | AgentNotAllowed { step, .. }
            | RepeatsFailedStep { step, .. }
            | ValueReadAsFile { step, .. }
            | InventedInput { step, .. }
            | MisnamedInput { step, .. }
            | UnusedResult { step, .. }
            | CountOfACount { step, .. }
            | PlainTextMatched { step, .. }
            | EditReportWritten { step, .. }
            | OutputReadBeforeWritten { step, .. }
            | OutputRead { step, .. }
            | TextUsedAsNumber { step, .. } => Some(step),
            UnorderedWrite { writer, .. } => Some(writer),
            DuplicateId { id } | BadId { id } => Some(id),
            _ => None,
        }
    }
}

/// All the problems found in a plan, in a stable order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanErrors(pub Vec<PlanError>);

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "- {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PlanErrors {}

/// Check a plan before anything runs. Returns every problem found, not just the first.
pub fn validate(plan: &Plan, tools: &ToolRegistry, limits: &PlanLimits) -> Result<(), PlanErrors> {
    validate_with_done(plan, tools, limits, &HashSet::new())
}

/// Like [`validate_with_done`], for a planner's (or replanner's) reply:
/// arguments a tool refuses ([`PlanError::InvalidArgs`]) are returned as
/// findings, not errors, when nothing else is wrong. The reply is then sent
/// back with them as before, but on the last attempt (or when the same plan
/// comes back after being told) it is taken with that step as it is: when it runs, its call fails with the tool's message
/// and is recovered (an agent step that sees its dependencies' results) or
/// replanned, as any failed call is. Before, a plan whose one calculator
/// expression named a file (`sum(scores)`) three times running ended the
/// run with no plan at all.
pub fn validate_leaving_args(
    plan: &Plan,
    tools: &ToolRegistry,
    limits: &PlanLimits,
    done: &HashSet<String>,
) -> Result<Vec<PlanError>, PlanErrors> {
    match validate_with_done(plan, tools, limits, done) {
        Ok(()) => Ok(Vec::new()),
        Err(errors) if errors.0.iter().all(|e| matches!(e, PlanError::InvalidArgs { .. })) => Ok(errors.0),
        Err(errors) => Err(errors),
    }
}

/// Like [`validate`], for a revised plan: steps in `done` have already run and are
/// not counted against `max_steps`.
pub fn validate_with_done(
    plan: &Plan,
    tools: &ToolRegistry,
    limits: &PlanLimits,
    done: &HashSet<String>,
) -> Result<(), PlanErrors> {
    let mut errors = Vec::new();
    if plan.questions.len() > MAX_QUESTIONS {
        errors.push(PlanError::TooManyQuestions {
            count: plan.questions.len(),
        });
    }
    if plan.steps.is_empty() {
        if plan.infeasible.is_none() && plan.questions.is_empty() {
            errors.push(PlanError::Empty);
        }
        return if errors.is_empty() {
            Ok(())
        } else {
            Err(PlanErrors(errors))
        };
    }
    if !plan.questions.is_empty() {
        errors.push(PlanError::QuestionsWithSteps);
    }
    // A revision may find the rest infeasible after steps that already ran.
    if plan.infeasible.is_some() && plan.steps.iter().any(|s| !done.contains(&s.id)) {
        errors.push(PlanError::InfeasibleWithSteps);
    }
    let new_steps = plan.steps.iter().filter(|s| !done.contains(&s.id)).count();
    if new_steps > limits.max_steps {
        errors.push(PlanError::TooManySteps {
            count: new_steps,
            max: limits.max_steps,
        });
    }

    check_ids(plan, &mut errors);
    let ids: HashSet<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    for step in &plan.steps {
        check_links(step, &ids, &mut errors);
        check_tool(step, tools, limits, done.contains(&step.id), &mut errors);
    }

    match find_cycle(plan) {
        Some(cycle) => errors.push(PlanError::Cycle { cycle }),
        // A step that has run can no longer race one that has not.
        None => errors.extend(
            super::hazards::unordered_writes(plan, tools)
                .into_iter()
                .filter(|w| !done.contains(&w.writer) && !done.contains(&w.other))
                .map(|w| PlanError::UnorderedWrite {
                    writer: w.writer,
                    other: w.other,
                    path: w.path,
                }),
        ),
    }

    if errors.is_empty() {
        Ok(())
    } else {
        Err(PlanErrors(errors))
    }
}

/// Ids: present, usable in references, unique.
fn check_ids(plan: &Plan, errors: &mut Vec<PlanError>) {
    let mut seen = HashSet::new();
    for (index, step) in plan.steps.iter().enumerate() {
        if step.id.trim().is_empty() {
            errors.push(PlanError::EmptyId { index: index + 1 });
        } else if !step.id.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            errors.push(PlanError::BadId { id: step.id.clone() });
        } else if !seen.insert(step.id.as_str()) {
            let e = PlanError::DuplicateId { id: step.id.clone() };
            if !errors.contains(&e) {
                errors.push(e);
            }
        }
    }
}

/// A step's dependencies and `{{id}}` references name steps of the plan, and
/// every reference is a declared dependency.
fn check_links(step: &Step, ids: &HashSet<&str>, errors: &mut Vec<PlanError>) {
    for dep in &step.depends_on {
        if dep == &step.id {
            errors.push(PlanError::SelfDependency { step: step.id.clone() });
        } else if !ids.contains(dep.as_str()) {
            errors.push(PlanError::UnknownDependency {
                step: step.id.clone(),
                dependency: dep.clone(),
            });
        }
    }
    for (location, r) in step_references(step) {
        if !ids.contains(r.step.as_str()) {
            errors.push(PlanError::UnknownReference {
                step: step.id.clone(),
                reference: r.step,
                location,
            });
        } else if !step.depends_on.contains(&r.step) {
            errors.push(PlanError::UndeclaredReference {
                step: step.id.clone(),
                reference: r.step,
                location,
            });
        }
    }
}

/// A step's tool exists, may run in this mode, and gets arguments its schema
/// accepts; an agent step names a known agent; reasoning and agent steps have
/// no arguments. A step already done (`done`) is not held to the run's mode
/// or strategy any more.
fn check_tool(step: &Step, tools: &ToolRegistry, limits: &PlanLimits, done: bool, errors: &mut Vec<PlanError>) {
    let id = || step.id.clone();
    match step.kind() {
        StepKind::Reasoning => {
            if !step.args.is_empty() {
                errors.push(PlanError::ReasoningWithArgs { step: id() });
            }
            if limits.tools_only && !done {
                errors.push(PlanError::ReasoningNotAllowed { step: id() });
            }
        }
        StepKind::Agent(agent) => {
            if !limits.agents.iter().any(|a| a == agent) {
                errors.push(PlanError::UnknownAgent {
                    step: id(),
                    agent: agent.to_string(),
                    available: limits.agents.clone(),
                });
            }
            if !step.args.is_empty() {
                errors.push(PlanError::AgentWithArgs { step: id() });
            }
            if limits.tools_only && !done {
                errors.push(PlanError::AgentNotAllowed {
                    step: id(),
                    agent: agent.to_string(),
                });
            }
        }
        StepKind::Tool(name) => {
            if let Some(agent) = &step.agent {
                errors.push(PlanError::ToolAndAgent {
                    step: id(),
                    tool: name.to_string(),
                    agent: agent.clone(),
                });
            }
            check_call(step, name, tools, limits, done, errors);
        }
    }
}

/// A tool step's tool exists, may run in this mode, and its schema accepts the arguments.
fn check_call(
    step: &Step,
    name: &str,
    tools: &ToolRegistry,
    limits: &PlanLimits,
    done: bool,
    errors: &mut Vec<PlanError>,
) {
    let Some(entry) = tools.get(name) else {
        errors.push(PlanError::UnknownTool {
            step: step.id.clone(),
            tool: name.to_string(),
            available: tools.names(),
        });
        return;
    };
    let args = Value::Object(step.args.clone());
    let effect = entry.effect(&args);
    if limits.read_only && effect.has_side_effects() && !done {
        errors.push(PlanError::NotReadOnly {
            step: step.id.clone(),
            tool: name.to_string(),
            effect,
            because: entry.tool.why_not_read_only(&args),
        });
    }
    // Arguments still holding references are checked again once resolved.
    let mut problems = entry.check_args(&args, true);
    problems.extend(entry.tool.plan_check(&args));
    if !problems.is_empty() {
        errors.push(PlanError::InvalidArgs {
            step: step.id.clone(),
            tool: name.to_string(),
            problems,
        });
    }
}

/// A cycle among the steps (ignoring unknown and self dependencies, reported elsewhere),
/// as the ids along it with the first repeated at the end.
pub fn find_cycle(plan: &Plan) -> Option<Vec<String>> {
    let index: HashMap<&str, usize> = plan.steps.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    // 0 = unvisited, 1 = on the current path, 2 = finished.
    let mut color = vec![0u8; plan.steps.len()];
    for start in 0..plan.steps.len() {
        if color[start] != 0 {
            continue;
        }
        // Iterative DFS: (node, next dependency to look at).
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        color[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let deps = &plan.steps[node].depends_on;
            if *next < deps.len() {
                let dep = &deps[*next];
                *next += 1;
                let Some(&d) = index.get(dep.as_str()) else { continue };
                if d == node {
                    continue;
                }
                match color[d] {
                    0 => {
                        color[d] = 1;
                        stack.push((d, 0));
                    }
                    1 => {
                        let pos = stack.iter().position(|&(n, _)| n == d).unwrap_or(0);
                        // The path runs dependent -> dependency; show it in execution order.
                        let mut cycle: Vec<String> =
                            stack[pos..].iter().map(|&(n, _)| plan.steps[n].id.clone()).collect();
                        cycle.reverse();
                        cycle.push(cycle[0].clone());
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                color[node] = 2;
                stack.pop();
            }
        }
    }
    None
}
