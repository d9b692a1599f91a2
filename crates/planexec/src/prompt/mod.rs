//! The text a role's call starts with, in two styles ([`crate::PromptStyle`]):
//!
//! - shared (this file): what the agent is, the run's tools with guidance and
//!   how plans are written, with worked examples, the same on every call of a
//!   run, so a local model's KV cache evaluates it once;
//! - compact ([`compact`]): per role, the plan format once and tools as
//!   one-line signatures for the calls that plan, and no catalogue for those
//!   that do not.
//!
//! Which one a run uses is decided in [`crate::context::Setting`].

pub(crate) mod compact;

use crate::agents::AgentProfile;
use crate::policy::{Mode, RunOptions};
use crate::tools::workspace::Workspace;
use crate::tools::ToolRegistry;

/// The system prompt every role's call starts with: what the agent is and the
/// run's tools. Being identical on every call of a run, it is evaluated once by
/// a local model's KV cache and cached by providers that cache prompt prefixes.
/// A run's calls and [`Agent::prepare`](crate::Agent::prepare) both take it
/// from here, so the prompt prepared is the one the calls start with.
pub(crate) fn system_prompt(tools: &ToolRegistry, options: &RunOptions) -> String {
    let rule = match options.mode {
        Mode::Plan => "This run is in plan mode: only read_only tools may be used; the runtime refuses any other.\n",
        Mode::Ask | Mode::Auto => "",
    };
    format!(
        "You are one part of a plan-and-execute agent. A planner breaks a task into steps that call tools; an executor carries out single steps; a replanner revises a plan after a failure; a synthesizer writes the final answer from the step results. The instructions that follow say which part you are now and what to do.\n\nTools available in this run:\n{}{rule}{}\nHow plans are written (for the planner and replanner):\n{}{}",
        tool_catalog(tools),
        tool_hints(tools),
        PLAN_FORMAT,
        agent_catalog(tools, options.plannable_agents())
    )
}

/// The tools as a prompt sees them: name, description, effect, and an arguments
/// template (or the JSON Schema, for arguments a template cannot show).
pub(crate) fn tool_catalog(tools: &ToolRegistry) -> String {
    let mut out = tool_lines(&tools.entries());
    if out.is_empty() {
        out.push_str("(no tools: every step must be a reasoning step)\n");
    }
    out
}

/// One entry per tool: name, description, effect and arguments template.
pub(crate) fn tool_lines(entries: &[std::sync::Arc<crate::tools::ToolEntry>]) -> String {
    let mut out = String::new();
    for entry in entries {
        let t = &entry.tool;
        let schema = t.parameters();
        let args = args_template(&schema).unwrap_or_else(|| format!("matching the JSON Schema {schema}"));
        out.push_str(&format!(
            "- {}: {} ({})\n  args: {args}\n",
            t.name(),
            t.description(),
            entry.declared_effect().as_str(),
        ));
    }
    out
}

/// Which built-in tool does a common step in one call, for the tools this
/// run has (a small planner otherwise reads a whole file and hands the rest
/// to a reasoning step, or forces it through the calculator). Empty when it
/// has none of them, so other tool sets pay no tokens for it.
fn tool_hints(tools: &ToolRegistry) -> String {
    const HINTS: [(&str, &str); 7] = [
        (
            "search",
            "to count or list the lines of a file that contain a text, use search",
        ),
        ("read_json", "to read one field of a JSON file, use read_json"),
        (
            "glob",
            "to list the files of a kind or name (such as *.csv or *2024*), use glob",
        ),
        ("sort_lines", "to sort lines, use sort_lines"),
        ("reverse_text", "to spell a text backwards, use reverse_text"),
        (
            "set_value",
            "to change one setting in a file, use set_value (not write_file)",
        ),
        (
            "replace_in_file",
            "to replace a word or text in a file, use replace_in_file",
        ),
    ];
    let mut out = String::new();
    let hints: Vec<&str> = HINTS
        .iter()
        .filter(|(tool, _)| tools.get(tool).is_some())
        .map(|(_, hint)| *hint)
        .collect();
    if !hints.is_empty() {
        out.push_str(&format!("Which tool fits: {}.\n", hints.join("; ")));
    }
    if tools.get("calculator").is_some() {
        out.push_str("The calculator does arithmetic, count, sum, mean, min and max of a text's lines, and words(...) counts words.\n");
    }
    // Where a program can do it, a small model's own picking is not trusted
    // with it: a reasoning step reads a text, a program works on it exactly.
    if tools.get("python").is_some() {
        out.push_str("To pick, filter, extract, deduplicate, number, reformat or change lines or values of a file (the longest line, the names that appear twice, the rows with a value, a field of each record, a changed version number), when no tool above does it in one call (a JSON field is read_json's, arithmetic on given numbers the calculator's), use one python step that does the whole of that work: a program that opens the file by its path and prints the result, such as {\"code\": \"lines = open('quotes.txt').read().splitlines()\\nprint(max(lines, key=len))\"}. Each python step is a program of its own: variables do not carry over from one to the next, but the results of the steps in its depends_on are its variables s1, s2, …. A reasoning step is for writing prose about a text, not for working on it.\n");
    } else {
        out.push_str("To filter, extract, change the case of or pick something from a text, use a reasoning step that depends on the step with the text.\n");
    }
    if tools.get("calculator").is_some() {
        out.push_str("With a rate such as \"1 mile = 1.609344 km\", km to miles is {{s1}} / 1.609344 and miles to km is {{s1}} * 1.609344. Round in the same expression: round({{s1}} / 1.609344, 2).\n");
        if tools.get("search").is_some() {
            out.push_str("A part's share of a whole in percent is round(sum({{s2}}) / sum({{s1}}) * 100, 1), where s1 reads the list and s2 searches it for the part's lines.\n");
        }
    }
    out
}

/// The agent steps a plan may use, and the agents it may name with the tools
/// each may call; empty when the run has no agents.
pub(crate) fn agent_catalog(tools: &ToolRegistry, agents: &[AgentProfile]) -> String {
    if agents.is_empty() {
        return String::new();
    }
    let mut out = String::from(AGENT_STEPS);
    out.push_str("\nAgents:\n");
    for agent in agents {
        let names: Vec<String> = tools.names().into_iter().filter(|t| agent.allows(t)).collect();
        out.push_str(&format!(
            "- {}: {} (tools: {})\n",
            agent.name,
            agent.description,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    out
}

/// How agent steps are written and when to choose one.
const AGENT_STEPS: &str = r#"
- "agent": "<agent name>" instead of "tool" (and no "args") hands the step to an agent, which does it with its own tools, looking before acting. Use one when the step's inputs cannot be known before looking (which file mentions something, what a listing holds); use a tool when one call with known args does it. The agent sees only the goal, its step and its depends_on results: say in the description what it must do and return.

Example 3. Task: "Which file in reports/ names the supplier? Save the name to supplier.txt."
{"goal": "Save the supplier named in reports/ to supplier.txt", "steps": [
 {"id": "s1", "description": "find the file under reports/ that names the supplier; return only the name", "agent": "worker", "depends_on": []},
 {"id": "s2", "description": "save the name to supplier.txt", "tool": "write_file", "args": {"path": "supplier.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
], "infeasible": null}"#;

/// Most workspace entries the planner is shown.
const LISTED_FILES: usize = 40;

/// What the workspace holds, for the planner: paths and sizes, not contents
/// (so the plan reads files that exist, and only those), and a data file's
/// shape ([`crate::file_shape`]). `None` when the run's
/// tools have no workspace.
pub(crate) fn workspace_files(task: &str, tools: &ToolRegistry) -> Option<String> {
    let workspace = tools.workspace()?;
    let (entries, left_out) = listing_for(task, workspace, LISTED_FILES);
    if entries.is_empty() {
        return Some("The workspace is empty: there is no file to read.".to_string());
    }
    let mut out = String::from("Files in the workspace (their contents are not shown; read a file to see it):\n");
    for (path, size) in entries {
        match size {
            // Written so a small model does not take the size for the content.
            Some(bytes) => {
                let shape = workspace
                    .resolve(&path)
                    .ok()
                    .and_then(|p| crate::file_shape::shape_of(&p, bytes));
                let shape = shape.map(|s| format!("; {s}")).unwrap_or_default();
                out.push_str(&format!("{path} (size {bytes} bytes{shape})\n"));
            }
            None => out.push_str(&format!("{path}\n")),
        }
    }
    if left_out > 0 {
        out.push_str(&format!("({left_out} more not shown; list_dir shows a folder)\n"));
    }
    Some(out.trim_end().to_string())
}

/// Most files whose beginning the planner is shown, how many lines of each
/// and how much of a line.
const BEGUN_FILES: usize = 3;
const BEGUN_LINES: usize = 6;
const BEGUN_LINE_CHARS: usize = 120;

/// The first lines of the files in the workspace of `tools` that `task`
/// names by their file name, for the planner: a plan's program is written
/// before any step has read its input, and the 1.5B planner's were written
/// for a form the input did not have (a shell `nologin` where passwd holds
/// `/usr/sbin/nologin`, `March 2026` searched in a QIF file whose dates are
/// `03/01'26`, on held-out-11). Only the first lines, so that the plan still
/// reads the file for its values. `None` when the task names no such file.
pub(crate) fn file_beginnings(task: &str, tools: &ToolRegistry) -> Option<String> {
    let workspace = tools.workspace()?;
    let (entries, _) = listing_for(task, workspace, LISTED_FILES);
    let mut out = String::new();
    let named = entries
        .iter()
        .filter(|(path, size)| size.is_some_and(|s| s <= 64 * 1024) && names_file_alone(task, path));
    for (path, _) in named.take(BEGUN_FILES) {
        let Some(text) = workspace
            .resolve(path)
            .ok()
            .and_then(|p| std::fs::read_to_string(p).ok())
        else {
            continue;
        };
        let lines: Vec<String> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .take(BEGUN_LINES)
            .map(|line| crate::text::one_line(line, BEGUN_LINE_CHARS))
            .collect();
        if !lines.is_empty() {
            out.push_str(&format!("{path} begins:\n{}\n", lines.join("\n")));
        }
    }
    (!out.is_empty()).then(|| {
        format!("How the files the task names begin (their first lines only, to show their form; a step must still read a file for its values):\n{out}")
    })
}

/// What the workspace holds for `task` ([`Workspace::listing`], at most
/// `max` entries and how many were left out), and the hidden files at its
/// root the task names by their name ([`Workspace::hidden_files`]: "the
/// .env file").
pub(crate) fn listing_for(task: &str, workspace: &Workspace, max: usize) -> (Vec<(String, Option<u64>)>, usize) {
    let (mut entries, left_out) = workspace.listing(max);
    entries.extend(workspace.hidden_files(|name| names_file_alone(task, name)));
    (entries, left_out)
}

/// Whether `task` names the file at `path` by its file name, as a word of
/// its own (`passwd`, `_redirects`; not `passwd` in `passwd.bak`).
pub(crate) fn names_file_alone(task: &str, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    word_in(task, path) || word_in(task, name)
}

/// Whether `task` holds `word` with no character of a path on either side
/// (a sentence's full stop after it is not one).
fn word_in(task: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let in_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
    task.match_indices(word).any(|(at, _)| {
        let before = task[..at].chars().next_back();
        let rest = &task[at + word.len()..];
        let mut after = rest.chars();
        let ends = match after.next() {
            None => true,
            Some('.') => !after.next().is_some_and(|c| c.is_alphanumeric()),
            Some(c) => !in_name(c),
        };
        !before.is_some_and(in_name) && ends
    })
}

/// The names a JSON Schema's `required` lists.
pub(crate) fn required(schema: &serde_json::Value) -> Vec<&str> {
    use serde_json::Value;
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `{"path": "<file path>", "n": <number>}` for a flat object schema; `None` otherwise.
fn args_template(schema: &serde_json::Value) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    let required = required(schema);
    let mut parts = Vec::new();
    for (name, prop) in props {
        let value = value_template(name, prop)?;
        let optional = match (required.contains(&name.as_str()), prop.get("default")) {
            (true, _) => String::new(),
            (false, Some(default)) => format!(" (optional, default {default})"),
            (false, None) => " (optional)".to_string(),
        };
        parts.push(format!("\"{name}\"{optional}: {value}"));
    }
    Some(format!("{{{}}}", parts.join(", ")))
}

/// How one argument is written: `"<path>"`, `<count: integer>`, `one of
/// "a", "b"`, `["<item>", ...]`; `None` for what a template cannot show
/// (a nested object).
fn value_template(name: &str, prop: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let hint = prop.get("description").and_then(Value::as_str).unwrap_or(name);
    if let Some(options) = prop.get("enum").and_then(Value::as_array) {
        let options: Vec<String> = options.iter().map(Value::to_string).collect();
        return Some(format!("one of {}", options.join(", ")));
    }
    Some(match prop.get("type").and_then(Value::as_str)? {
        "string" => format!("\"<{hint}>\""),
        "integer" => format!("<{hint}: integer>"),
        "number" => format!("<{hint}: number>"),
        "boolean" => format!("<{hint}: true or false>"),
        "array" => {
            let item = value_template(name, prop.get("items")?)?;
            format!("[{item}, ...]")
        }
        _ => return None,
    })
}

/// How plans are written: part of the system prompt every call of a run shares,
/// so a local model's KV cache and providers' prompt caches hold it once.
pub(crate) const PLAN_FORMAT: &str = r#"A plan is one JSON object:
{"goal": "<the task in one sentence>", "steps": [<step>, ...], "infeasible": null}
where each step is
{"id": "s1", "description": "<what it does>", "tool": "<tool name>" or null, "args": {...}, "depends_on": ["<ids>"], "expected": "<what a good result looks like>" or null}
Rules:
- Use a tool whenever one fits, and give it exactly the args it lists. Do arithmetic with a calculator tool when there is one, never in a reasoning step.
- Read only files the workspace listing shows. Numbers and text given in the task are used as they are (in args, in a calculator expression), never read from a file.
- If the task needs a file that does not exist, reply with "steps": [] and "infeasible": "<the file> does not exist".
- "tool": null is a reasoning step: a model does it from the results of the steps in its depends_on. Give it "args": {}.
- To pass an earlier step's output into an argument, write {{s1}} inside the string (or {{s1.field}} for a field of a JSON output), and list s1 in depends_on.
- Steps that do not depend on each other run in parallel: list only real dependencies.
- The last step is the last piece of work the task asks for; the final answer to the user is written separately. Keep ids short and unique.
- If the task cannot be done with the tools, reply with "steps": [] and "infeasible": "<why>".
- Where the task leaves something open, choose sensibly and say so in "assumptions": ["..."].

Example 1. Task: "Summarise notes.txt."
{"goal": "Summarise notes.txt", "steps": [
 {"id": "s1", "description": "read notes.txt", "tool": "read_file", "args": {"path": "notes.txt"}, "depends_on": []},
 {"id": "s2", "description": "summarise the notes in three sentences", "tool": null, "args": {}, "depends_on": ["s1"]}
], "infeasible": null}

Example 2. Task: "Save the difference between the numbers in big.txt and small.txt to diff.txt."
{"goal": "Save the difference between the numbers in big.txt and small.txt to diff.txt", "steps": [
 {"id": "s1", "description": "read big.txt", "tool": "read_file", "args": {"path": "big.txt"}, "depends_on": []},
 {"id": "s2", "description": "read small.txt", "tool": "read_file", "args": {"path": "small.txt"}, "depends_on": []},
 {"id": "s3", "description": "subtract the numbers", "tool": "calculator", "args": {"expression": "{{s1}} - {{s2}}"}, "depends_on": ["s1", "s2"]},
 {"id": "s4", "description": "save the difference to diff.txt", "tool": "write_file", "args": {"path": "diff.txt", "content": "{{s3}}"}, "depends_on": ["s3"]}
], "infeasible": null}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planner_sees_how_the_files_the_task_names_begin() {
        let dir = tempfile::tempdir().unwrap();
        let passwd: String = (0..9)
            .map(|n| format!("user{n}:x:{n}:{n}::/home/u{n}:/usr/sbin/nologin\n\n"))
            .collect();
        std::fs::write(dir.path().join("passwd"), passwd).unwrap();
        std::fs::write(dir.path().join("passwd.bak"), "old\n").unwrap();
        std::fs::write(dir.path().join("_redirects"), "/a /b 301\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not named\n").unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let task = "Which users in passwd have a shell? Follow _redirects. Write users.txt.";
        let shown = file_beginnings(task, &tools).unwrap();
        assert!(
            shown.contains("passwd begins:\nuser0:x:0:0::/home/u0:/usr/sbin/nologin\nuser1:"),
            "{shown}"
        );
        assert!(
            shown.contains("user5:") && !shown.contains("user6:"),
            "six lines, blank ones aside: {shown}"
        );
        assert!(shown.contains("_redirects begins:\n/a /b 301"), "{shown}");
        assert!(!shown.contains("old") && !shown.contains("not named"), "{shown}");
        assert_eq!(file_beginnings("Add 2 and 3.", &tools), None);
    }

    #[test]
    fn a_hidden_file_the_task_names_is_listed_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".env"), "MAIL_FROM=a@b.c\n").unwrap();
        std::fs::write(dir.path().join(".npmrc"), "x=1\n").unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let task = "Our settings are in the .env file. Copy the From address into from.txt.";
        let listed = workspace_files(task, &tools).unwrap();
        assert!(listed.contains(".env (size 16 bytes"), "{listed}");
        assert!(!listed.contains(".npmrc") && !listed.contains(".git"), "{listed}");
        let shown = file_beginnings(task, &tools).unwrap();
        assert!(shown.contains(".env begins:\nMAIL_FROM=a@b.c"), "{shown}");
        assert_eq!(
            workspace_files("Sum the numbers.", &tools).as_deref(),
            Some("The workspace is empty: there is no file to read.")
        );
    }

    #[test]
    fn a_file_is_named_alone_not_inside_a_longer_name() {
        assert!(names_file_alone("Read passwd.", "passwd"));
        assert!(names_file_alone("Read etc/passwd, then", "etc/passwd"));
        assert!(!names_file_alone("Read passwd.bak now", "passwd"));
        assert!(!names_file_alone("the my_passwd file", "passwd"));
        assert!(names_file_alone("sales.csv: sum it", "sales.csv"));
    }
}
