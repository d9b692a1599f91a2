//! The compact prompts a run sends when nothing keeps a shared prefix
//! evaluated for it: a hosted provider without prompt caching pays every
//! token of every call, and one with caching caches nothing under its
//! minimum prefix (1,024 tokens at OpenAI and Anthropic), which a compact
//! planner prompt stays below. The planner and replanner get the plan format
//! once and each tool as a one-line signature; the calls that do not plan
//! (a reasoning step, a check, the answer) get no tool catalogue at all.
//! The small-model guidance (tool hints, worked examples) is not here: it
//! belongs to the shared prompt of the embedded model ([`super::system_prompt`]).

use serde_json::Value;

use crate::agents::AgentProfile;
use crate::policy::{Mode, RunOptions};
use crate::tools::ToolRegistry;

/// The opening of a call that does not plan.
pub(crate) const INTRO: &str =
    "You are one part of a plan-and-execute agent; the instructions below say which part and what to do.";

/// The system prompt of the planner's and the replanner's calls.
pub(crate) fn planning_system(tools: &ToolRegistry, options: &RunOptions) -> String {
    let mut out = String::from("You are the planner of a plan-and-execute agent: you write a plan of steps; the runtime runs them and a model writes the final answer from their results.\n\nTools (name(args): what it does [effect]):\n");
    out.push_str(&signatures(tools));
    if options.mode == Mode::Plan {
        out.push_str("This run is in plan mode: only read_only tools may be used.\n");
    }
    out.push_str("\nHow plans are written:\n");
    out.push_str(PLAN_FORMAT);
    out.push_str(&agents(tools, options.plannable_agents()));
    out
}

/// One line per tool: `name(arg, flag: boolean, kind: a|b, note?): its
/// summary [effect]`.
pub(crate) fn signatures(tools: &ToolRegistry) -> String {
    let entries = tools.entries();
    if entries.is_empty() {
        return "(none: every step is a reasoning step)\n".to_string();
    }
    let mut out = String::new();
    for entry in entries {
        let tool = &entry.tool;
        out.push_str(&format!(
            "{}({}): {} [{}]\n",
            tool.name(),
            arguments(&tool.parameters()),
            tool.summary(),
            entry.declared_effect().as_str()
        ));
    }
    out
}

/// `path, count: boolean, order: a|b, limit?` for a flat object schema; the
/// schema itself for one a line cannot show.
fn arguments(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required = super::required(schema);
    let mut parts = Vec::new();
    for (name, prop) in props {
        let Some(kind) = kind(prop) else {
            return format!("args matching {schema}");
        };
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        parts.push(match kind.as_str() {
            "string" => format!("{name}{optional}"),
            _ => format!("{name}{optional}: {kind}"),
        });
    }
    parts.join(", ")
}

/// How an argument's value is written: its type, its options (`a|b`), or
/// `[type]` for a list; `None` for a nested object.
fn kind(prop: &Value) -> Option<String> {
    if let Some(options) = prop.get("enum").and_then(Value::as_array) {
        let options: Vec<String> = options
            .iter()
            .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_string))
            .collect();
        return Some(options.join("|"));
    }
    match prop.get("type").and_then(Value::as_str)? {
        "array" => Some(format!("[{}]", kind(prop.get("items")?)?)),
        "object" => None,
        other => Some(other.to_string()),
    }
}

/// The agents a plan may hand a step to, and how; empty when there are none.
fn agents(tools: &ToolRegistry, agents: &[AgentProfile]) -> String {
    if agents.is_empty() {
        return String::new();
    }
    let mut out = String::from("- \"agent\": \"<name>\" in place of \"tool\" and \"args\" hands the step to an agent that looks before it acts with its own tools: for a step whose inputs cannot be known before looking. It sees only the goal, its step and its depends_on results.\nAgents:\n");
    for agent in agents {
        let all = tools.names();
        let names: Vec<&String> = all.iter().filter(|t| agent.allows(t)).collect();
        let names = match names.len() {
            0 => "none".to_string(),
            n if n == all.len() => "all".to_string(),
            _ => names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", "),
        };
        out.push_str(&format!("{}: {} (tools: {names})\n", agent.name, agent.description));
    }
    out
}

/// The plan format, once: the fields, references, parallelism and the
/// two ways a plan may decline.
const PLAN_FORMAT: &str = r#"{"goal": "<the task in one sentence>", "steps": [{"id": "s1", "description": "<what it does>", "tool": "<tool name>", "args": {...}, "depends_on": [], "expected": null}], "infeasible": null}
- "tool": null with "args": {} is a reasoning step: a model does it from its depends_on results.
- "{{s1}}" inside an argument is s1's output ("{{s1.field}}" one field of it); list s1 in depends_on.
- List only real dependencies: independent steps run in parallel.
- Use a tool wherever one fits, with exactly its args; read only files the workspace has.
- Numbers and text the task gives are used as given (in args, in an expression), never read from a file.
- If the task needs a file that does not exist: "steps": [], "infeasible": "<the file> does not exist".
- The last step does the task's last piece of work; the final answer is written separately.
- If the task cannot be done: "steps": [], "infeasible": "<why>". Where it leaves something open, choose and say so in "assumptions": ["..."].
"#;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_signature_shows_types_options_and_optional_arguments() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string"}, "count": {"type": "boolean"},
            "order": {"type": "string", "enum": ["up", "down"]}, "names": {"type": "array", "items": {"type": "string"}}},
            "required": ["path", "count", "order"]});
        assert_eq!(
            arguments(&schema),
            "path, count: boolean, order: up|down, names?: [string]"
        );
        let nested = json!({"type": "object", "properties": {"filter": {"type": "object"}}});
        assert!(arguments(&nested).starts_with("args matching {"));
    }
}
