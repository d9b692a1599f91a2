//! A program's variable name, or a constant it was told, written where a
//! value it read or computed was meant.
//!
//! A small model's plan passes a name between steps as text: on held-out-11
//! the 1.5B model's program built `user_rss`, a later step sorted the text
//! `"user_rss"`, and the file the task asked for held `user_rss`; its answer
//! named the right user, and its checker passed the file. A file of one
//! word that a program of the run assigns as a name, and that no file of
//! the workspace or the task holds, is that name, not a value the run
//! found.

use regex::Regex;

use super::Run;
use crate::tools::workspace::Workspace;

/// Most bytes of a workspace file looked through for the word.
const LOOKED_THROUGH: u64 = 256 * 1024;

/// Most workspace files looked through.
const FILES: usize = 40;

/// The one new file the run's task names, when it holds a name a program
/// of the run assigns and nothing else holds: its path and a line saying
/// so. `None` otherwise.
pub(crate) fn name_written(run: &Run) -> Option<(String, String)> {
    let (workspace, path, held) = the_one_new_output(run)?;
    let word = held.trim();
    if !is_identifier(word) || whole_word_in(&run.task, word) {
        return None;
    }
    if !programs(run).any(|code| assigns(code, word)) || in_workspace(workspace, path, word) {
        return None;
    }
    let what = format!(
        "{path} holds `{word}`, the name of a variable of the run's program, not its value: write what the program computed (print it, or pass {{{{sN}}}} of the step that printed it)"
    );
    Some((path.to_string(), what))
}

/// The one new file the run's task names, when it holds one value that a
/// program of the run wrote or printed as a constant (`f.write(str(10000))`)
/// and that neither the task nor any other file of the workspace holds: a
/// value the program was told or made up, not one it read or computed. On
/// held-out-14 a checker of the 1.5B model claimed a timeout of 10000
/// (the file held 25, which was right), and the program written again wrote
/// its claim as a constant. `None` otherwise.
pub(crate) fn constant_written(run: &Run) -> Option<(String, String)> {
    let (workspace, path, held) = the_one_new_output(run)?;
    let value = held.trim();
    if value.is_empty() || value.contains(char::is_whitespace) || whole_word_in(&run.task, value) {
        return None;
    }
    if !programs(run).any(|code| writes_constant(code, value)) || in_workspace(workspace, path, value) {
        return None;
    }
    let what = format!(
        "{path} holds {value}, which the run's program wrote as a constant and no file of the task holds: read or compute the value from the files"
    );
    Some((path.to_string(), what))
}

/// The run's workspace, the one new file its task names, and what that
/// file holds now.
fn the_one_new_output(run: &Run) -> Option<(&Workspace, &String, String)> {
    let [path] = run.new_outputs.as_slice() else {
        return None;
    };
    let workspace = run.ctx.setting.tools.workspace()?;
    let held = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
    Some((workspace, path, held))
}

/// Whether `code` writes or prints `value` as written in it: `write(str(10000))`,
/// `write("25")`, `print(10000)`.
fn writes_constant(code: &str, value: &str) -> bool {
    let value = regex::escape(value);
    let pattern = format!(r#"\b(write|print)\(\s*(str\(\s*)?['"]?{value}['"]?\s*\)"#);
    Regex::new(&pattern).is_ok_and(|re| re.is_match(code))
}

/// The code of every `python` call the run made, its steps' and their
/// inner calls', whether it ran or not.
fn programs(run: &Run) -> impl Iterator<Item = &str> {
    super::outputs::calls_of(run)
        .filter(|r| r.tool.as_deref() == Some("python"))
        .filter_map(|r| r.args.as_ref()?.get("code")?.as_str())
}

/// A Python name with a `_` in it, or with a capital after the first
/// letter (`user_rss`, `topUser`): a plain word may be a value.
fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let compound = word.contains('_') || word.chars().skip(1).any(|c| c.is_ascii_uppercase());
    first_ok && rest_ok && compound
}

/// Whether `code` assigns `name`: `name = …`, `name += …`, `for name in`,
/// `def name(`.
fn assigns(code: &str, name: &str) -> bool {
    let name = regex::escape(name);
    let pattern = format!(r"(?m)(^|[^\w.]){name}\s*(\+|-)?=[^=]|\bfor\s+{name}\s+in\b|\bdef\s+{name}\s*\(");
    Regex::new(&pattern).is_ok_and(|re| re.is_match(code))
}

/// Whether `text` holds `word` with no word character on either side.
fn whole_word_in(text: &str, word: &str) -> bool {
    Regex::new(&format!(r"(^|\W){}(\W|$)", regex::escape(word))).is_ok_and(|re| re.is_match(text))
}

/// Whether a workspace file other than `output` (of the first [`FILES`])
/// holds `word` as a word.
fn in_workspace(workspace: &Workspace, output: &str, word: &str) -> bool {
    let (entries, _) = workspace.listing(FILES);
    entries
        .iter()
        .filter(|(path, size)| path != output && size.is_some_and(|s| s <= LOOKED_THROUGH))
        .filter_map(|(path, _)| std::fs::read_to_string(workspace.resolve(path).ok()?).ok())
        .any(|text| whole_word_in(&text, word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_a_program_assigns_is_told_from_a_value() {
        assert!(is_identifier("user_rss") && is_identifier("topUser"));
        assert!(!is_identifier("postgres") && !is_identifier("3_days") && !is_identifier("a b"));
        let code = "user_rss = {}\nfor line in rows:\n    user_rss[line[0]] = 1\nprint(user_rss)";
        assert!(assigns(code, "user_rss"));
        assert!(!assigns("if x == user_rss: pass", "user_rss"));
        assert!(!assigns("self.user_rss = 1", "user_rss"));
        assert!(assigns("for top_user in names:\n    pass", "top_user"));
        assert!(whole_word_in("ps shows www_data here", "www_data"));
        assert!(!whole_word_in("ps shows www_data2", "www_data"));
    }

    #[test]
    fn a_value_a_program_writes_as_a_constant_is_told_from_one_it_computed() {
        assert!(writes_constant(
            "with open('t.txt', 'w') as f:\n    f.write(str(10000))",
            "10000"
        ));
        assert!(writes_constant("f.write('25')", "25"));
        assert!(writes_constant("print(4.5)", "4.5"));
        assert!(!writes_constant("f.write(str(total))", "10000"));
        assert!(!writes_constant("f.write(str(round(t, 2)))", "2"));
        assert!(!writes_constant("f.write(str(100000))", "10000"));
    }
}
