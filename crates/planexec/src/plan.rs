//! The plan: the typed contract between planner and executor.
//!
//! A [`Plan`] is a goal and a list of [`Step`]s forming a DAG. This module owns
//! the public plan format (users edit these files), its JSON Schema, the
//! `{{sN}}` / `{{sN.field}}` references between steps, robust extraction of a
//! plan from a model's reply, validation with precise errors, and a text
//! rendering. It knows nothing of models, HTTP or terminals.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tools::ToolRegistry;

/// A plan for one task: a DAG of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The task's goal in one sentence.
    pub goal: String,
    /// The steps, in any order; `depends_on` gives the order of execution.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Set (with `steps` empty) when the task cannot be done with the tools at hand: the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infeasible: Option<String>,
    /// Questions for the user when the task is too ambiguous to plan (at most 3; `steps` then empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
    /// What the planner assumed where the task left something open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<String>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Unique id within the plan, e.g. `s1`.
    pub id: String,
    /// What this step does, for people and for the executor model.
    pub description: String,
    /// The tool to call, or `null` for a reasoning step done by the executor model.
    #[serde(default)]
    pub tool: Option<String>,
    /// The tool's arguments. String values may contain `{{sN}}` or `{{sN.field}}`.
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Ids of the steps whose results this step needs.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// What a good result looks like; the executor model checks it when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

impl Plan {
    /// A plan of `steps` toward `goal`, with no questions or assumptions.
    pub fn new(goal: impl Into<String>, steps: Vec<Step>) -> Plan {
        Plan {
            goal: goal.into(),
            steps,
            infeasible: None,
            questions: Vec::new(),
            assumptions: Vec::new(),
        }
    }

    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The plan as pretty JSON, the format users edit.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl Step {
    /// A reasoning step has no tool: the executor model does it.
    pub fn is_reasoning(&self) -> bool {
        self.tool.is_none()
    }
}

// ---------------------------------------------------------------------------
// References between steps: `{{s1}}`, `{{s1.field}}`, `{{s1.items.0.name}}`.
// ---------------------------------------------------------------------------

/// One `{{id.path}}` reference found in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub step: String,
    pub path: Vec<String>,
    /// Byte range of the whole `{{...}}` in the string.
    pub span: (usize, usize),
}

/// Find the `{{...}}` references in `text`. Text that is not a well-formed
/// reference (`{{ }}`, `{{a b}}`) is left alone as literal text.
pub fn find_references(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{") {
        let start = from + open;
        let Some(close) = text[start + 2..].find("}}") else {
            break;
        };
        let end = start + 2 + close + 2;
        let inner = text[start + 2..end - 2].trim();
        let mut parts = inner.split('.');
        let head = parts.next().unwrap_or("");
        let valid_part = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        let path: Vec<String> = parts.map(str::to_string).collect();
        if valid_part(head) && path.iter().all(|p| valid_part(p)) {
            out.push(Reference {
                step: head.to_string(),
                path,
                span: (start, end),
            });
            from = end;
        } else {
            from = start + 2;
        }
    }
    out
}

/// Every reference in a step's arguments, with the JSON path of the argument holding it.
pub fn step_references(step: &Step) -> Vec<(String, Reference)> {
    let mut out = Vec::new();
    for (key, value) in &step.args {
        collect_refs(value, &format!("args.{key}"), &mut out);
    }
    out
}

fn collect_refs(value: &Value, at: &str, out: &mut Vec<(String, Reference)>) {
    match value {
        Value::String(s) => out.extend(find_references(s).into_iter().map(|r| (at.to_string(), r))),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_refs(v, &format!("{at}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                collect_refs(v, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// Why a reference could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveError(pub String);

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Looks up a finished step's output by id.
pub type OutputLookup<'a> = &'a dyn Fn(&str) -> Option<Value>;

/// Replace references in `args` with the outputs of earlier steps.
///
/// A string that is exactly one reference becomes that output's JSON value (so
/// `"{{s1.count}}"` can feed a number argument); a reference inside longer text
/// is spliced in as text. See [`resolve_args_as_text`] for the all-text form.
pub fn resolve_args(args: &Map<String, Value>, outputs: OutputLookup<'_>) -> Result<Map<String, Value>, ResolveError> {
    resolve_map(args, outputs, true)
}

/// Like [`resolve_args`], but every reference becomes text, even a whole-string
/// one: for a tool whose schema wants a string where the output is a number.
pub fn resolve_args_as_text(
    args: &Map<String, Value>,
    outputs: OutputLookup<'_>,
) -> Result<Map<String, Value>, ResolveError> {
    resolve_map(args, outputs, false)
}

fn resolve_map(
    args: &Map<String, Value>,
    outputs: OutputLookup<'_>,
    keep_types: bool,
) -> Result<Map<String, Value>, ResolveError> {
    let mut out = Map::new();
    for (k, v) in args {
        out.insert(k.clone(), resolve_value(v, outputs, keep_types)?);
    }
    Ok(out)
}

fn resolve_value(value: &Value, outputs: OutputLookup<'_>, keep_types: bool) -> Result<Value, ResolveError> {
    match value {
        Value::String(s) => {
            let refs = find_references(s);
            if refs.is_empty() {
                return Ok(value.clone());
            }
            if keep_types && refs.len() == 1 && refs[0].span == (0, s.len()) {
                return lookup(&refs[0], outputs);
            }
            let mut text = String::with_capacity(s.len());
            let mut last = 0;
            for r in &refs {
                text.push_str(&s[last..r.span.0]);
                text.push_str(&value_as_text(&lookup(r, outputs)?));
                last = r.span.1;
            }
            text.push_str(&s[last..]);
            Ok(Value::String(text))
        }
        Value::Array(items) => items
            .iter()
            .map(|v| resolve_value(v, outputs, keep_types))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), resolve_value(v, outputs, keep_types)?);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn lookup(r: &Reference, outputs: OutputLookup<'_>) -> Result<Value, ResolveError> {
    let output = outputs(&r.step)
        .ok_or_else(|| ResolveError(format!("step {} has no result to use for {{{{{}}}}}", r.step, r.step)))?;
    if r.path.is_empty() {
        return Ok(output);
    }
    // A text output that holds JSON can still be indexed into.
    let mut current = match &output {
        Value::String(s) => serde_json::from_str::<Value>(s.trim()).unwrap_or(output.clone()),
        _ => output.clone(),
    };
    for (i, field) in r.path.iter().enumerate() {
        let next = match &current {
            Value::Object(map) => map.get(field).cloned(),
            Value::Array(items) => field.parse::<usize>().ok().and_then(|n| items.get(n).cloned()),
            _ => None,
        };
        current = next.ok_or_else(|| {
            let so_far = std::iter::once(r.step.as_str())
                .chain(r.path[..i].iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(".");
            ResolveError(format!(
                "{{{{{}.{}}}}}: the output of {so_far} has no field `{field}` (it is: {})",
                r.step,
                r.path.join("."),
                crate::text::truncate_chars(&current.to_string(), 200)
            ))
        })?;
    }
    Ok(current)
}

/// A JSON value as the text a tool or a prompt should see: strings bare, the rest as JSON.
pub fn value_as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Validation.
// ---------------------------------------------------------------------------

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
}

impl Default for PlanLimits {
    fn default() -> Self {
        PlanLimits {
            max_steps: 8,
            read_only: false,
            tools_only: false,
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
    #[error("step {step} uses `{tool}`, which {effect}; this run is in plan mode, where only read-only tools may run")]
    NotReadOnly {
        step: String,
        tool: String,
        effect: crate::tools::Effect,
    },
    #[error("step {step} is a reasoning step (tool null) but has arguments; put what it needs in depends_on")]
    ReasoningWithArgs { step: String },
    #[error("step {step} is a reasoning step (tool null), but with the rewoo strategy every step calls a tool; leave the reasoning to the final answer")]
    ReasoningNotAllowed { step: String },
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
    if plan.infeasible.is_some() {
        errors.push(PlanError::InfeasibleWithSteps);
    }
    let new_steps = plan.steps.iter().filter(|s| !done.contains(&s.id)).count();
    if new_steps > limits.max_steps {
        errors.push(PlanError::TooManySteps {
            count: new_steps,
            max: limits.max_steps,
        });
    }

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
    let ids: HashSet<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();

    for step in &plan.steps {
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
        match &step.tool {
            None => {
                if !step.args.is_empty() {
                    errors.push(PlanError::ReasoningWithArgs { step: step.id.clone() });
                }
                if limits.tools_only && !done.contains(&step.id) {
                    errors.push(PlanError::ReasoningNotAllowed { step: step.id.clone() });
                }
            }
            Some(name) => match tools.get(name) {
                None => errors.push(PlanError::UnknownTool {
                    step: step.id.clone(),
                    tool: name.clone(),
                    available: tools.names(),
                }),
                Some(entry) => {
                    let args = Value::Object(step.args.clone());
                    let effect = entry.effect(&args);
                    if limits.read_only && effect.has_side_effects() && !done.contains(&step.id) {
                        errors.push(PlanError::NotReadOnly {
                            step: step.id.clone(),
                            tool: name.clone(),
                            effect,
                        });
                    }
                    // Arguments still holding references are checked again once resolved.
                    let problems = entry.check_args(&args, true);
                    if !problems.is_empty() {
                        errors.push(PlanError::InvalidArgs {
                            step: step.id.clone(),
                            tool: name.clone(),
                            problems,
                        });
                    }
                }
            },
        }
    }

    if let Some(cycle) = find_cycle(plan) {
        errors.push(PlanError::Cycle { cycle });
    }

    if errors.is_empty() {
        Ok(())
    } else {
        Err(PlanErrors(errors))
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

// ---------------------------------------------------------------------------
// Reading plans from model replies and files.
// ---------------------------------------------------------------------------

/// Why a text could not be read as a plan.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ParseError {
    #[error("no JSON object found in the reply")]
    NoJson,
    #[error("the JSON is malformed at line {line}, column {column}: {message}")]
    Malformed {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the JSON is not a plan: {0}")]
    NotAPlan(String),
}

/// Read a plan from a model's reply: strips code fences and prose around the JSON,
/// repairs light damage (trailing commas, single quotes, comments), then parses.
pub fn parse_plan_reply(reply: &str) -> Result<Plan, ParseError> {
    let candidate = extract_json_object(reply).ok_or(ParseError::NoJson)?;
    let value = match serde_json::from_str::<Value>(candidate) {
        Ok(v) => v,
        Err(first) => serde_json::from_str::<Value>(&repair_json(candidate)).map_err(|_| ParseError::Malformed {
            line: first.line(),
            column: first.column(),
            message: strip_serde_position(&first.to_string()),
        })?,
    };
    plan_from_value(value)
}

/// Read a plan from a file's text: strict JSON, with positions for malformed input.
pub fn parse_plan_file(text: &str) -> Result<Plan, ParseError> {
    let value = serde_json::from_str::<Value>(text).map_err(|e| ParseError::Malformed {
        line: e.line(),
        column: e.column(),
        message: strip_serde_position(&e.to_string()),
    })?;
    plan_from_value(value)
}

fn plan_from_value(mut value: Value) -> Result<Plan, ParseError> {
    // Some models wrap the plan: {"plan": {...}}.
    if value.get("steps").is_none() && value.get("goal").is_none() {
        if let Some(inner) = value.get("plan").cloned() {
            value = inner;
        }
    }
    let mut plan = serde_json::from_value::<Plan>(value).map_err(|e| ParseError::NotAPlan(e.to_string()))?;
    // Strict structured output makes models fill optional fields with "": that means unset.
    if plan.infeasible.as_deref().is_some_and(|r| r.trim().is_empty()) {
        plan.infeasible = None;
    }
    plan.questions.retain(|q| !q.trim().is_empty());
    plan.assumptions.retain(|a| !a.trim().is_empty());
    for step in &mut plan.steps {
        if step.expected.as_deref().is_some_and(|e| e.trim().is_empty()) {
            step.expected = None;
        }
    }
    Ok(plan)
}

fn strip_serde_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Reads a plan while a model is still writing it (LLMCompiler-style
/// dispatch): feed the reply's text as it arrives, and each step comes back as
/// soon as its JSON object inside `"steps": [...]` is complete. The finished
/// reply is still parsed and validated as a whole with [`parse_plan_reply`].
#[derive(Debug, Default)]
pub struct PlanStream {
    text: String,
    emitted: usize,
    goal: Option<String>,
}

impl PlanStream {
    pub fn new() -> PlanStream {
        PlanStream::default()
    }

    /// Add the next piece of the reply; returns the steps completed by it.
    pub fn push(&mut self, delta: &str) -> Vec<Step> {
        self.text.push_str(delta);
        let (goal, objects) = scan_plan_prefix(&self.text);
        if self.goal.is_none() {
            self.goal = goal;
        }
        let mut steps = Vec::new();
        for object in objects.into_iter().skip(self.emitted) {
            self.emitted += 1;
            let parsed =
                serde_json::from_str::<Step>(object).or_else(|_| serde_json::from_str::<Step>(&repair_json(object)));
            // An unreadable step is left to the whole-reply parse, which reports it.
            if let Ok(step) = parsed {
                steps.push(step);
            }
        }
        steps
    }

    /// The plan's goal, once its value has been written.
    pub fn goal(&self) -> Option<&str> {
        self.goal.as_deref()
    }

    /// Everything received so far.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The `goal` string and the complete step objects in a plan's JSON prefix.
fn scan_plan_prefix(text: &str) -> (Option<String>, Vec<&str>) {
    let Some(start) = text.find('{') else {
        return (None, Vec::new());
    };
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0;
    // The last string at depth 1 followed by `:` (a key of the plan object).
    let mut key: Option<&str> = None;
    let mut last_string: Option<&str> = None;
    let mut steps_depth: Option<usize> = None;
    let mut object_start = 0;
    let mut goal = None;
    let mut objects = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                let s = &text[string_start..=i];
                if depth == 1 && key == Some("goal") && goal.is_none() {
                    goal = serde_json::from_str::<String>(s).ok();
                }
                last_string = Some(s);
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i;
            }
            b':' if depth == 1 => key = last_string.map(|s| s.trim_matches('"')),
            b',' if depth == 1 => key = None,
            b'[' if depth == 1 && key == Some("steps") => {
                depth += 1;
                steps_depth = Some(depth);
            }
            b'{' | b'[' => {
                if b == b'{' && steps_depth == Some(depth) {
                    object_start = i;
                }
                depth += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if b == b'}' && steps_depth == Some(depth) {
                    objects.push(&text[object_start..=i]);
                }
                if b == b']' && steps_depth == Some(depth + 1) {
                    steps_depth = None;
                }
            }
            _ => {}
        }
    }
    (goal, objects)
}

/// The first balanced `{...}` in `text`, preferring the content of a ```json fence.
pub fn extract_json_object(text: &str) -> Option<&str> {
    let search_in = fenced_block(text).unwrap_or(text);
    let start = search_in.find('{')?;
    let bytes = search_in.as_bytes();
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == q {
                quote = None;
            }
            continue;
        }
        match b {
            b'"' | b'\'' => quote = Some(b),
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&search_in[start..=i]);
                }
            }
            _ => {}
        }
    }
    // Unbalanced (cut off): hand back the rest and let the parser report where.
    Some(&search_in[start..])
}

fn fenced_block(text: &str) -> Option<&str> {
    let open = text.find("```")?;
    let after = &text[open + 3..];
    let body_start = after.find('\n')? + 1;
    let body = &after[body_start..];
    let close = body.find("```")?;
    let inner = &body[..close];
    inner.contains('{').then_some(inner)
}

/// Repair light damage in almost-JSON: single-quoted strings, trailing commas,
/// `//` and `/* */` comments, and Python's `True`/`False`/`None`.
pub fn repair_json(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' => {
                // Copy a string, re-quoting single-quoted ones.
                out.push('"');
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        if c == '\'' && chars[i + 1] == '\'' {
                            out.push('\'');
                        } else {
                            out.push('\\');
                            out.push(chars[i + 1]);
                        }
                        i += 2;
                        continue;
                    }
                    if c == '\'' && chars[i] == '"' {
                        out.push_str("\\\"");
                    } else if chars[i] == '\n' {
                        out.push_str("\\n");
                    } else {
                        out.push(chars[i]);
                    }
                    i += 1;
                }
                out.push('"');
                i += 1;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            ',' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                if !matches!(chars.get(j), Some('}') | Some(']')) {
                    out.push(',');
                }
                i += 1;
            }
            c if c.is_alphabetic() => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                out.push_str(match word.as_str() {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    _ => &word,
                });
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Schema.
// ---------------------------------------------------------------------------

/// The plan's JSON Schema as derived from the Rust types (free-form `args`).
pub fn plan_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Plan)).unwrap_or(Value::Null)
}

/// The plan schema specialised to one run's tools, for structured output.
///
/// Each step is one of: a reasoning step (`tool: null`, empty `args`) or a call
/// of one named tool with that tool's own argument schema. Every object closes
/// its properties and lists them all as required, so the schema is usable in
/// OpenAI's strict mode when every tool's schema is too; `strict` says whether
/// that holds (else the caller should send it non-strict, still validating after).
pub fn plan_schema_for_tools(tools: &ToolRegistry, max_steps: usize) -> (Value, bool) {
    let base = plan_schema();
    let described = |name: &str, fallback: &str| -> Value {
        let desc = base
            .pointer(&format!("/$defs/Step/properties/{name}/description"))
            .and_then(Value::as_str)
            .unwrap_or(fallback);
        Value::String(desc.to_string())
    };
    let mut strict = true;
    let step_variant = |tool: Value, args: Value| -> Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": described("id", "unique step id")},
                "description": {"type": "string", "description": described("description", "what the step does")},
                "tool": tool,
                "args": args,
                "depends_on": {"type": "array", "items": {"type": "string"}, "description": described("depends_on", "ids this step needs")},
                "expected": {"type": ["string", "null"], "description": described("expected", "what a good result looks like")}
            },
            "required": ["id", "description", "tool", "args", "depends_on", "expected"],
            "additionalProperties": false
        })
    };
    let mut variants = vec![step_variant(
        serde_json::json!({"type": "null"}),
        serde_json::json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
    )];
    for entry in tools.entries() {
        let schema = entry.tool.parameters();
        if !is_strict_compatible(&schema) {
            strict = false;
        }
        variants.push(step_variant(
            serde_json::json!({"type": "string", "enum": [entry.tool.name()]}),
            schema,
        ));
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "the task's goal in one sentence"},
            "steps": {"type": "array", "items": {"anyOf": variants}, "maxItems": max_steps},
            "infeasible": {"type": ["string", "null"], "description": "only when no plan can do the task: why (steps then empty)"},
            "questions": {"type": "array", "items": {"type": "string"}, "description": "only when the task is too ambiguous to plan: at most 3 questions (steps then empty)"},
            "assumptions": {"type": "array", "items": {"type": "string"}, "description": "what you assumed where the task left something open"}
        },
        "required": ["goal", "steps", "infeasible", "questions", "assumptions"],
        "additionalProperties": false
    });
    (schema, strict)
}

/// Whether a schema meets OpenAI strict mode's rules: every object closes its
/// properties and requires them all.
pub fn is_strict_compatible(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            let is_object = map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties");
            if is_object {
                if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return false;
                }
                let props: Vec<&String> = map
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().collect())
                    .unwrap_or_default();
                let required: HashSet<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if props.iter().any(|p| !required.contains(p.as_str())) {
                    return false;
                }
            }
            map.values().all(is_strict_compatible)
        }
        Value::Array(items) => items.iter().all(is_strict_compatible),
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Rendering.
// ---------------------------------------------------------------------------

/// Steps grouped into waves: every step of a wave depends only on earlier waves,
/// so the steps of one wave can run in parallel. Steps in a cycle are left out.
pub fn waves(plan: &Plan) -> Vec<Vec<&Step>> {
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    let mut remaining: Vec<&Step> = plan.steps.iter().collect();
    let mut progressed = true;
    while !remaining.is_empty() && progressed {
        progressed = false;
        remaining.retain(|s| {
            let deps: Option<Vec<usize>> = s
                .depends_on
                .iter()
                .filter(|d| plan.step(d).is_some())
                .map(|d| level.get(d.as_str()).copied())
                .collect();
            match deps {
                Some(levels) => {
                    level.insert(s.id.as_str(), levels.into_iter().max().map_or(0, |m| m + 1));
                    progressed = true;
                    false
                }
                None => true,
            }
        });
    }
    let depth = level.values().copied().max().map_or(0, |m| m + 1);
    let mut out = vec![Vec::new(); depth];
    for s in &plan.steps {
        if let Some(&l) = level.get(s.id.as_str()) {
            out[l].push(s);
        }
    }
    out
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    #[test]
    fn steps_come_out_as_soon_as_their_object_is_complete() {
        let reply = r#"{"goal": "sum \"two\" files", "steps": [
 {"id": "s1", "description": "read {a}", "tool": "read_file", "args": {"path": "a.txt", "n": [1, {"x": 2}]}, "depends_on": []},
 {"id": "s2", "description": "]} tricky", "tool": null, "args": {}, "depends_on": ["s1"]}
], "infeasible": null}"#;
        let mut stream = PlanStream::new();
        let mut seen = Vec::new();
        // Byte by byte is the worst case of a streamed reply.
        for (i, c) in reply.char_indices() {
            for step in stream.push(&c.to_string()) {
                seen.push((step.id.clone(), i));
            }
        }
        let ids: Vec<&str> = seen.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["s1", "s2"]);
        // s1 was complete before s2 was even started.
        assert!(seen[0].1 < reply.find("\"id\": \"s2\"").unwrap());
        assert_eq!(stream.goal(), Some("sum \"two\" files"));
        assert_eq!(stream.text(), reply);
        let whole = parse_plan_reply(stream.text()).unwrap();
        assert_eq!(whole.steps.len(), 2);
    }

    #[test]
    fn nothing_is_emitted_outside_the_steps_array() {
        let mut stream = PlanStream::new();
        assert!(stream
            .push(r#"{"assumptions": [{"id": "x", "description": "not a step"}], "goal": "g", "steps": ["#)
            .is_empty());
        let steps = stream.push(r#"{"id": "a", "description": "d", "tool": "t", "args": {}, "depends_on": []}]}"#);
        assert_eq!(steps.len(), 1);
        assert!(stream.push("").is_empty());
    }
}
