//! A plan template: the plan of a run that succeeded, with the literals of
//! its task that its steps use (file names, numbers, words an argument is)
//! turned into parameters, so that a task of the same shape with other
//! literals gets the same plan with no planner call.
//!
//! A task's shape is its tokens (runs of letters, digits and `_ . / -`) with
//! the parameters' places left open; two tasks match when every other token
//! is the same word (ignoring case) and every open place holds a literal of
//! the same kind (a number for a number, a path for a path, a word for a word).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::Plan;

/// A stored plan template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanTemplate {
    /// A hash of its shape: a task's template, whatever its literals.
    pub id: String,
    /// The task it was learned from.
    pub task: String,
    /// That task's literals the plan uses, in order: parameter `i` is `params[i]`.
    pub params: Vec<String>,
    /// The plan with parameter `i` written `⟦i⟧` in its strings.
    pub plan: Plan,
    /// The tools its steps call (every one must be available to reuse it).
    pub tools: Vec<String>,
    /// The workspace folder its run's tools worked in, if they had one: a
    /// plan is reused only in the workspace it was made for (its other
    /// literals, paths the task did not name, are that workspace's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The run it was learned from.
    pub run_id: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    /// Runs that reused it and succeeded.
    #[serde(default)]
    pub reused: u32,
    /// Why the last run that reused it did not succeed with it, if one did
    /// not: such a template is not reused until a new plan of its shape succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// What a literal is: only one of the same kind takes its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Path,
    Word,
}

fn kind(token: &str) -> Kind {
    if token.parse::<f64>().is_ok() {
        Kind::Number
    } else if token.contains(['.', '/']) {
        Kind::Path
    } else {
        Kind::Word
    }
}

/// The tokens of `text` with their byte spans: runs of letters, digits and
/// `_ . / -`, without a trailing `.`, `/` or `-` (the end of a sentence).
fn tokens(text: &str) -> Vec<(usize, &str)> {
    let is_part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '-');
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (start, is_part(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let token = text[s..i].trim_end_matches(['.', '/', '-']);
                if !token.is_empty() {
                    out.push((s, token));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// One place of a shape: a word as it must be, or parameter `i`.
#[derive(Debug, Clone, PartialEq)]
enum Place {
    Word(String),
    Param(usize),
}

/// The pieces of `text` a shape is made of, in order: its tokens, and each
/// other mark that is not a space (`*`, `>`, `,`): "6 * 7" and "6 + 7"
/// are not the same task. The marks that end it are left out.
fn pieces(text: &str) -> Vec<(bool, &str)> {
    fn marks<'a>(between: &'a str, out: &mut Vec<(bool, &'a str)>) {
        for (i, c) in between.char_indices().filter(|(_, c)| !c.is_whitespace()) {
            out.push((false, &between[i..i + c.len_utf8()]));
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    for (start, token) in tokens(text) {
        marks(&text[at..start], &mut out);
        out.push((true, token));
        at = start + token.len();
    }
    marks(&text[at..], &mut out);
    // How a task ends ("." or "?" or none) does not change what it asks.
    while out
        .last()
        .is_some_and(|(is_token, p)| !is_token && matches!(*p, "." | "?" | "!"))
    {
        out.pop();
    }
    out
}

/// The shape of `task` with `params` open.
fn shape(task: &str, params: &[String]) -> Vec<Place> {
    pieces(task)
        .into_iter()
        .map(|(is_token, t)| match params.iter().position(|p| is_token && p == t) {
            Some(i) => Place::Param(i),
            None => Place::Word(t.to_lowercase()),
        })
        .collect()
}

/// A shape as text, for its id and for people: `read {0} and {1}`.
fn shape_text(places: &[Place]) -> String {
    let words: Vec<String> = places
        .iter()
        .map(|p| match p {
            Place::Word(w) => w.clone(),
            Place::Param(i) => format!("{{{i}}}"),
        })
        .collect();
    words.join(" ")
}

/// FNV-1a: a stable hash for ids (the standard library's may change between releases).
fn fnv(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash = (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Every string in `value`, depth first.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// `f` applied to every string of the plan people and tools read: its goal,
/// and each step's description, arguments and expectation.
fn map_strings(plan: &Plan, f: &dyn Fn(&str, bool) -> String) -> Plan {
    fn walk(value: &Value, f: &dyn Fn(&str, bool) -> String) -> Value {
        match value {
            Value::String(s) => Value::String(f(s, true)),
            Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, f)).collect()),
            Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), walk(v, f))).collect()),
            other => other.clone(),
        }
    }
    let mut plan = plan.clone();
    plan.goal = f(&plan.goal, false);
    for step in &mut plan.steps {
        step.description = f(&step.description, false);
        step.expected = step.expected.as_deref().map(|e| f(e, false));
        step.args = step.args.iter().map(|(k, v)| (k.clone(), walk(v, f))).collect();
    }
    plan
}

/// `text` with each whole token equal to a parameter's value written `⟦i⟧`.
/// In an argument a word is a parameter only when it is the whole argument:
/// inside one (`sum({{s1}})`) it is more likely the tool's own syntax.
fn mark(text: &str, params: &[String], is_arg: bool) -> String {
    if let Some(i) = params.iter().position(|p| p == text.trim()) {
        return text.replacen(text.trim(), &format!("⟦{i}⟧"), 1);
    }
    let mut out = String::new();
    let mut at = 0;
    for (start, token) in tokens(text) {
        let Some(i) = params.iter().position(|p| p == token) else {
            continue;
        };
        if is_arg && kind(token) == Kind::Word {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&format!("⟦{i}⟧"));
        at = start + token.len();
    }
    out.push_str(&text[at..]);
    out
}

impl PlanTemplate {
    /// The template of `plan`, the plan run `run_id` succeeded with for
    /// `task`: its parameters are the task's literals that the plan's
    /// arguments use (numbers and paths anywhere in an argument, words when
    /// they are a whole argument).
    pub fn learn(task: &str, plan: &Plan, run_id: &str) -> PlanTemplate {
        let mut args = Vec::new();
        for step in &plan.steps {
            step.args.values().for_each(|v| strings(v, &mut args));
        }
        let mut params: Vec<String> = Vec::new();
        for (_, token) in tokens(task) {
            let used = match kind(token) {
                Kind::Word => args.iter().any(|a| a.trim() == token),
                _ => args.iter().any(|a| tokens(a).iter().any(|(_, t)| *t == token)),
            };
            if used && !params.iter().any(|p| p == token) {
                params.push(token.to_string());
            }
        }
        let marked = map_strings(plan, &|s, is_arg| mark(s, &params, is_arg));
        let mut tools: Vec<String> = plan.steps.iter().filter_map(|s| s.tool.clone()).collect();
        tools.sort();
        tools.dedup();
        PlanTemplate {
            id: fnv(&shape_text(&shape(task, &params))),
            task: task.to_string(),
            params,
            plan: marked,
            tools,
            workspace: None,
            run_id: run_id.to_string(),
            created_at: crate::result::now_ms(),
            reused: 0,
            failed: None,
        }
    }

    /// The template bound to the workspace folder `workspace`: reused there
    /// only, with an id of its own (one template per shape and workspace).
    pub fn in_workspace(self, workspace: Option<String>) -> PlanTemplate {
        let key = format!("{}\n{}", self.shape(), workspace.as_deref().unwrap_or_default());
        PlanTemplate {
            id: fnv(&key),
            workspace,
            ..self
        }
    }

    /// The shape as people read it: the task with its parameters open, `{0}`.
    pub fn shape(&self) -> String {
        shape_text(&shape(&self.task, &self.params))
    }

    /// The values `task` gives the parameters, when it has this template's
    /// shape; `None` when it does not.
    pub fn match_task(&self, task: &str) -> Option<Vec<String>> {
        let places = shape(&self.task, &self.params);
        let given = pieces(task);
        if given.len() != places.len() {
            return None;
        }
        let mut values: Vec<Option<String>> = vec![None; self.params.len()];
        for (place, (is_token, token)) in places.iter().zip(given) {
            match place {
                Place::Word(word) if *word == token.to_lowercase() => {}
                Place::Word(_) => return None,
                Place::Param(i) => {
                    if !is_token || kind(token) != kind(&self.params[*i]) {
                        return None;
                    }
                    match &values[*i] {
                        Some(v) if v != token => return None,
                        Some(_) => {}
                        None => values[*i] = Some(token.to_string()),
                    }
                }
            }
        }
        values.into_iter().collect()
    }

    /// The plan with `values` in its parameters' places.
    pub fn fill(&self, values: &[String]) -> Plan {
        map_strings(&self.plan, &|s, _| {
            let mut out = s.to_string();
            for (i, v) in values.iter().enumerate() {
                out = out.replace(&format!("⟦{i}⟧"), v);
            }
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sum_plan() -> Plan {
        serde_json::from_value(json!({"goal": "Add a.txt and b.txt into sum.txt", "steps": [
            {"id": "s1", "description": "read a.txt", "tool": "read_file", "args": {"path": "a.txt"}, "depends_on": []},
            {"id": "s2", "description": "read b.txt", "tool": "read_file", "args": {"path": "b.txt"}, "depends_on": []},
            {"id": "s3", "description": "add", "tool": "calculator", "args": {"expression": "sum({{s1}}) + {{s2}} * 1.5"}, "depends_on": ["s1", "s2"]},
            {"id": "s4", "description": "save the sum to sum.txt", "tool": "write_file", "args": {"path": "sum.txt", "content": "{{s3}}"}, "depends_on": ["s3"]}
        ]}))
        .unwrap()
    }

    const TASK: &str = "Read a.txt and b.txt, add the sum of a to b times 1.5, and write the sum to sum.txt.";

    #[test]
    fn the_literals_its_arguments_use_become_parameters() {
        let t = PlanTemplate::learn(TASK, &sum_plan(), "run-1");
        // "sum" is inside an expression, not a whole argument: the calculator's syntax.
        assert_eq!(t.params, ["a.txt", "b.txt", "1.5", "sum.txt"]);
        assert_eq!(t.plan.steps[2].args["expression"], json!("sum({{s1}}) + {{s2}} * ⟦2⟧"));
        assert_eq!(t.plan.steps[3].description, "save the sum to ⟦3⟧");
        assert_eq!(t.tools, ["calculator", "read_file", "write_file"]);
        assert_eq!(
            t.shape(),
            "read {0} and {1} , add the sum of a to b times {2} , and write the sum to {3}"
        );
    }

    #[test]
    fn a_task_of_the_same_shape_fills_the_plan_with_its_literals() {
        let t = PlanTemplate::learn(TASK, &sum_plan(), "run-1");
        let other = "read x.txt and y.txt, add the sum of a to b times 2, and write the sum to out/total.txt";
        let values = t.match_task(other).unwrap();
        assert_eq!(values, ["x.txt", "y.txt", "2", "out/total.txt"]);
        let plan = t.fill(&values);
        assert_eq!(plan.steps[0].args["path"], json!("x.txt"));
        assert_eq!(plan.steps[2].args["expression"], json!("sum({{s1}}) + {{s2}} * 2"));
        assert_eq!(plan.steps[3].args["path"], json!("out/total.txt"));
        assert_eq!(plan.goal, "Add x.txt and y.txt into out/total.txt");
        // The same id: one template per shape.
        assert_eq!(PlanTemplate::learn(other, &plan, "run-2").id, t.id);
    }

    #[test]
    fn other_words_or_a_literal_of_another_kind_do_not_match() {
        let t = PlanTemplate::learn(TASK, &sum_plan(), "run-1");
        assert!(t.match_task(&TASK.replace("write", "print")).is_none());
        assert!(
            t.match_task(&TASK.replace("1.5", "many")).is_none(),
            "a word for a number"
        );
        assert!(t.match_task(&TASK.replace("b.txt", "b")).is_none(), "a word for a path");
        assert!(t.match_task(&format!("{TASK} Then stop.")).is_none());
    }

    #[test]
    fn an_operator_or_a_mark_is_part_of_the_shape() {
        let plan: Plan = serde_json::from_value(json!({"goal": "6 * 7", "steps": [
            {"id": "s1", "description": "multiply", "tool": "calculator", "args": {"expression": "6 * 7"}, "depends_on": []}]}))
        .unwrap();
        let t = PlanTemplate::learn("What is 6 * 7?", &plan, "r");
        assert_eq!(t.params, ["6", "7"]);
        assert_eq!(t.match_task("what is 8 * 9?").unwrap(), ["8", "9"]);
        assert!(t.match_task("What is 6 + 7?").is_none(), "another operator");
        assert_eq!(
            t.match_task("What is 6 * 7").unwrap(),
            ["6", "7"],
            "how it ends does not matter"
        );
        assert!(t.match_task("What is (6 * 7)?").is_none(), "not the same marks");
    }

    #[test]
    fn a_word_that_is_a_whole_argument_is_a_parameter() {
        let plan: Plan = serde_json::from_value(json!({"goal": "count", "steps": [
            {"id": "s1", "description": "find error lines", "tool": "search",
             "args": {"path": "app.log", "text": "error", "count": true}, "depends_on": []}]}))
        .unwrap();
        let t = PlanTemplate::learn("How many lines of app.log contain error?", &plan, "r");
        assert_eq!(t.params, ["app.log", "error"]);
        let values = t.match_task("How many lines of web.log contain timeout?").unwrap();
        assert_eq!(t.fill(&values).steps[0].args["text"], json!("timeout"));
        assert_eq!(t.fill(&values).steps[0].description, "find timeout lines");
    }
}
