//! A first plan that is one program, for a small model that sees the files.
//!
//! Shown every file of a small workspace whole and asked for one Python
//! program, the 1.5B model did 20 of 32 everyday held-out-14 tasks; planning
//! steps from a listing and six first lines, it did 10. A plan of steps is
//! written before any step has read its input, so its calls are written
//! for a form the files may not have, and each step is one more place to go
//! wrong; a program written with the files in front of it reads them as
//! they are. So for the embedded model the planner first asks for that
//! program: a plan of one `python` step, checked, shown for approval,
//! recorded and run like any other, and checked when it has run. A task
//! the program cannot serve (a tool the program cannot call, no `python`,
//! a plan the checks find fault with) is planned in steps as before.

use super::ProgramPrompt;
use crate::tools::ToolRegistry;

/// The tool the program runs on.
const PYTHON: &str = "python";

/// The tools whose work a program does as well: the file tools, the
/// calculator and text tools, the shell and the program tool itself. A run
/// with any other tool (an MCP server's, one of the user's) plans in steps,
/// where it can call them.
const DONE_BY_A_PROGRAM: [&str; 16] = [
    "read_file",
    "list_dir",
    "glob",
    "search",
    "read_json",
    "read_csv",
    "write_file",
    "set_value",
    "replace_in_file",
    "sort_lines",
    "reverse_text",
    "calculator",
    "http_get",
    "shell",
    "python",
    "ask_user",
];

/// Most bytes of one file shown whole, and the most tokens of all files
/// together, as [`tokens_of`] counts them: within the embedded model's
/// context (12,288 tokens) with room for the program.
const FILE_BYTES: u64 = 8 * 1024;
const ALL_TOKENS: usize = 5 * 1024;
/// Most files listed.
const LISTED: usize = 40;

/// The program's instructions. The standard library is named with what
/// is not there: told "only the standard library", the 1.5B model still
/// imported pandas for 2 of held-out-14's first 4 tasks, and wrote it again
/// when the error said so. The program prints its result so that the
/// answer is written from it: a program that only wrote sum.txt left the
/// 1.5B synthesizer nothing to read, and it answered "15" for 42.
const SYSTEM: &str = "You write one Python 3 program that does the user's task. It runs in the task's folder, where the files shown are, with only the standard library (no pandas or numpy): csv reads .csv files, json .json, configparser .ini, tomllib .toml (change a .toml file's line in its text), and any other file is read as text; re, statistics and datetime help. Write what the task asks to write to the files it names, and print the result (the answer to a question, or what was written). Reply with the program in one ```python block.";

/// The prompt for a program that does `task`, with the files of the
/// workspace of `tools` shown; `None` when the run cannot run one or has a
/// tool a program cannot stand in for.
pub(super) fn prompt(task: &str, tools: &ToolRegistry) -> Option<ProgramPrompt> {
    tools.get(PYTHON)?;
    let workspace = tools.workspace()?;
    if tools
        .names()
        .iter()
        .any(|name| !DONE_BY_A_PROGRAM.contains(&name.as_str()))
    {
        return None;
    }
    if names_a_missing_file(task, tools, workspace) {
        return None;
    }
    let (entries, left_out) = crate::prompt::listing_for(task, workspace, LISTED);
    let files: Vec<(String, u64)> = entries
        .into_iter()
        .filter_map(|(path, size)| size.map(|s| (path, s)))
        .collect();
    Some(ProgramPrompt {
        system: SYSTEM.to_string(),
        user: format!(
            "Task: {task}\n\nThe files in the folder:{}",
            shown(task, &files, left_out, workspace)
        ),
        tool: PYTHON.to_string(),
    })
}

/// About how many tokens `text` takes in a prompt, counted high: a digit
/// is a token of its own in the embedded model's vocabulary, and other
/// text takes about one for three characters. Counted in bytes, two files
/// of 4 and 8 KB of digits (PDFs of held-out-40, spent, padded with `0`)
/// made a prompt of 12,246 tokens, and the run failed before its first call.
fn tokens_of(text: &str) -> usize {
    let digits = text.chars().filter(char::is_ascii_digit).count();
    digits + (text.chars().count() - digits).div_ceil(3)
}

/// Whether `task` names a file that is not in the workspace and that it
/// does not say to make: a refusal's case, which a plan of steps reports
/// (its checks know a missing input); a program does the work on the files
/// that are there (on held-out-14 the June meter reading was taken from
/// May's and July's files, and the run said it had succeeded).
fn names_a_missing_file(task: &str, tools: &ToolRegistry, workspace: &crate::tools::workspace::Workspace) -> bool {
    let to_make = crate::plan::new_outputs(task, tools);
    crate::plan::paths_named_by(task)
        .iter()
        .filter(|path| !to_make.contains(path) && !crate::plan::names_a_kind_of_file(path))
        .any(|path| !workspace.resolve(path).is_ok_and(|full| full.exists()))
}

/// The files, each whole (`--- name ---` and its text) while the budget
/// lasts, the ones the task names first; the rest by name and size.
fn shown(
    task: &str,
    files: &[(String, u64)],
    left_out: usize,
    workspace: &crate::tools::workspace::Workspace,
) -> String {
    if files.is_empty() {
        return "\n(the folder is empty)".to_string();
    }
    let named = |path: &str| crate::prompt::names_file_alone(task, path);
    let mut order: Vec<&(String, u64)> = files.iter().collect();
    order.sort_by_key(|(path, _)| !named(path));
    let mut budget = ALL_TOKENS;
    let mut whole = Vec::new();
    let mut tables = Vec::new();
    let mut forms = Vec::new();
    let mut settings = Vec::new();
    let mut by_name = Vec::new();
    for (path, size) in order {
        let bytes = (*size <= FILE_BYTES)
            .then(|| workspace.resolve(path).ok())
            .flatten()
            .and_then(|full| std::fs::read(full).ok());
        if let Some(kind) = bytes.as_deref().and_then(crate::tools::output::binary_kind) {
            by_name.push(format!("{path} ({size} bytes, {kind}, not shown)"));
            continue;
        }
        let text = bytes
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(|text| (tokens_of(&text), text))
            .filter(|(tokens, _)| *tokens <= budget);
        match text {
            Some((tokens, text)) => {
                budget -= tokens;
                tables.extend(crate::file_shape::layout_note(path, &text));
                forms.extend(crate::value_forms::forms_note(path, &text));
                settings.extend(crate::settings_shape::settings_note(path, &text));
                whole.push(format!("\n--- {path} ---\n{text}"));
            }
            None => by_name.push(format!("{path} ({size} bytes, not shown)")),
        }
    }
    let mut out = whole.concat();
    if !tables.is_empty() {
        out.push_str(&format!(
            "\n\nHow the tables and lines above are to be read:\n{}",
            tables.join("\n")
        ));
    }
    if !settings.is_empty() {
        out.push_str(&format!(
            "\n\n{}\n{}",
            crate::settings_shape::SETTINGS_HEADING,
            settings.join("\n")
        ));
    }
    if !forms.is_empty() {
        let heading = crate::value_forms::FORMS_HEADING;
        out.push_str(&format!("\n\n{heading}\n{}", forms.join("\n")));
    }
    let readers = crate::tools::python::readers_for(files.iter().map(|(path, _)| path.as_str()));
    if !readers.is_empty() {
        out.push_str(&format!("\n\n{readers}"));
    }
    if !by_name.is_empty() || left_out > 0 {
        let more = if left_out > 0 {
            format!(", and {left_out} more")
        } else {
            String::new()
        };
        out.push_str(&format!("\n\nAlso in the folder: {}{more}", by_name.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn registry(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolRegistry) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let workspace = crate::tools::workspace::Workspace::new(dir.path()).unwrap();
        let mut tools = crate::tools::builtin::registry(workspace.clone());
        let python = crate::tools::python::Python::find(Arc::new(workspace), Default::default(), "python3");
        tools.register(Arc::new(python.expect("python3 runs here"))).unwrap();
        (dir, tools)
    }

    #[test]
    fn the_program_sees_the_files_whole_and_named_ones_first() {
        let big = "x".repeat(9 * 1024);
        let (_dir, tools) = registry(&[
            ("a.txt", "alpha\n"),
            ("sales.csv", "region,amount\nnorth,3\n"),
            ("big.log", &big),
        ]);
        let asked = prompt("Total the amount column of sales.csv into total.txt", &tools).unwrap();
        assert_eq!(asked.tool, "python");
        let user = &asked.user;
        assert!(user.starts_with("Task: Total the amount"), "{user}");
        let sales = user.find("--- sales.csv ---\nregion,amount\nnorth,3\n").expect(user);
        let alpha = user.find("--- a.txt ---\nalpha").expect(user);
        assert!(sales < alpha, "{user}");
        assert!(user.contains("big.log (9216 bytes, not shown)"), "{user}");
    }

    #[test]
    fn values_written_in_several_forms_are_said_below_the_files() {
        let (_dir, tools) = registry(&[(
            "loans.csv",
            "id,due,returned\nL1,2024-03-01,2024-02-27\nL2,2024-03-04,\nL3,2024-03-05,2024-03-09\n",
        )]);
        let asked = prompt("Which loans are overdue? Write their ids to overdue.txt", &tools).unwrap();
        let heading = asked.user.find(crate::value_forms::FORMS_HEADING).expect(&asked.user);
        let said = asked
            .user
            .find("loans.csv: column `returned` is empty in 1 of 3 rows")
            .expect(&asked.user);
        assert!(asked.user.find("--- loans.csv ---").unwrap() < heading && heading < said);
        let (_dir, tools) = registry(&[("sales.csv", "region,amount\nnorth,3\nsouth,4\n")]);
        let asked = prompt("Total the amount column of sales.csv into total.txt", &tools).unwrap();
        assert!(
            !asked.user.contains(crate::value_forms::FORMS_HEADING),
            "{}",
            asked.user
        );
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Words {
        text: String,
    }

    #[test]
    fn no_program_without_python_or_beside_a_tool_it_cannot_call() {
        let (_dir, mut tools) = registry(&[("a.txt", "alpha")]);
        assert!(prompt("count the words in a.txt", &tools).is_some());
        let words = crate::tools::TypedTool::new(
            "word_count",
            "Count words",
            crate::tools::Effect::ReadOnly,
            |a: Words| async move { Ok::<_, crate::tools::ToolError>(a.text.split_whitespace().count()) },
        );
        tools.register(Arc::new(words)).unwrap();
        assert!(prompt("count the words in a.txt", &tools).is_none());
        tools.remove("word_count");
        assert!(prompt("Write the number of words in a.txt to n.txt", &tools).is_some());
        assert!(
            prompt("Count the words of b.txt and write the count to n.txt", &tools).is_none(),
            "b.txt is missing"
        );
        let refusal = "Subtract the first reading from the last one in b.txt and write the result to n.txt";
        assert!(prompt(refusal, &tools).is_none());
        tools.remove("python");
        assert!(prompt("count the words in a.txt", &tools).is_none());
    }
}
