//! A yes/no question to a model with its reason, asked as JSON and
//! constrained by a schema: the check of a run's work (`synthesizer::check`)
//! and of a step's result against its `expected` both ask one. Also the
//! reading of one text field of a reply ([`read_one`]).

use serde_json::{json, Map, Value};

use crate::llm::{ChatRequest, JsonSchemaFormat, Message, Role};

/// The two fields of a verdict: the yes/no one and its reason, e.g.
/// `("done", "wrong")` or `("meets", "reason")`.
pub(crate) type Fields = (&'static str, &'static str);

/// A request for `{<yes>: bool, <why>: string}` from `role`'s model: the run's
/// shared `system` text, then `question`.
pub(crate) fn request(role: Role, system: String, question: String, name: &str, (yes, why): Fields) -> ChatRequest {
    let properties = json!({yes: {"type": "boolean"}, why: {"type": "string"}});
    structured(role, system, question, name, properties, json!([yes, why]))
}

/// A request for `{<field>: <one of choices>}` from `role`'s model: one
/// of a few answers, the schema holding the reply to them.
pub(crate) fn choice_request(
    role: Role,
    system: String,
    question: String,
    field: &str,
    choices: &[&str],
) -> ChatRequest {
    let properties = json!({field: {"type": "string", "enum": choices}});
    structured(role, system, question, field, properties, json!([field]))
}

/// The choice a reply holds in `field`, when it holds one.
pub(crate) fn read_choice(reply: &str, field: &str) -> Option<String> {
    let answer = crate::json::parse_in_text::<Map<String, Value>>(reply)?;
    answer.get(field)?.as_str().map(|choice| choice.trim().to_string())
}

fn structured(
    role: Role,
    system: String,
    question: String,
    name: &str,
    properties: Value,
    required: Value,
) -> ChatRequest {
    let mut request = ChatRequest::new(role, "", vec![Message::system(system), Message::user(question)]);
    request.response_format = Some(JsonSchemaFormat {
        name: name.to_string(),
        schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }),
        strict: true,
    });
    request
}

/// The verdict a reply holds, `(yes, why)`, or `None` when it holds none.
/// A reply cut off by its token limit after its yes/no still holds it (the
/// 1.5B checker's reason ran past 120 tokens, and its `false` was taken
/// for no verdict, which says nothing against the work).
pub(crate) fn read(reply: &str, (yes, why): Fields) -> Option<(bool, String)> {
    let Some(verdict) = crate::json::parse_in_text::<Map<String, Value>>(reply) else {
        return read_cut(reply, (yes, why));
    };
    let answer = verdict.get(yes).and_then(Value::as_bool)?;
    let reason = verdict.get(why).and_then(Value::as_str).unwrap_or_default().trim();
    Some((answer, reason.to_string()))
}

/// The verdict of a reply cut short: an object that opens with its yes/no
/// field, and the reason as far as it goes.
fn read_cut(reply: &str, (yes, why): Fields) -> Option<(bool, String)> {
    let rest = reply.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix(&format!("\"{yes}\""))?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let answer = match () {
        _ if rest.starts_with("true") => true,
        _ if rest.starts_with("false") => false,
        _ => return None,
    };
    let reason = rest
        .split_once(&format!("\"{why}\""))
        .and_then(|(_, after)| after.trim_start().strip_prefix(':'))
        .map(|r| {
            r.trim()
                .trim_start_matches('"')
                .trim_end_matches(['"', '}', ' '])
                .to_string()
        })
        .unwrap_or_default();
    Some((answer, reason))
}

/// The text of `field` in a reply, or `None` when it holds none.
pub(crate) fn read_one(reply: &str, field: &str) -> Option<String> {
    let answer: Map<String, Value> = crate::json::parse_in_text(reply)?;
    answer.get(field).and_then(Value::as_str).map(str::to_string)
}

/// The program a reply holds: the body of its first fenced block (to the
/// end of the reply when the block is cut off), the `code` of a JSON object
/// (as a provider asked for JSON may still reply), or the reply itself when
/// it reads as code; `None` when that is blank or the reply is a bare
/// answer. Asked for a program that prints a name it could read in the
/// files shown, the 1.5B model replied "Imogen Thorne" or "August", which
/// ran as a program and failed, and counted as a program in the vote.
pub(crate) fn program_in(reply: &str) -> Option<String> {
    let code = match crate::text::first_fenced_block(reply) {
        Some((code, _closed)) => Some(code.trim_end().to_string()),
        None if reply.trim().starts_with('{') => read_one(reply.trim(), "code"),
        None => Some(reply.trim().to_string()).filter(|code| reads_as_code(code)),
    };
    code.filter(|code| !code.trim().is_empty())
}

/// Whether an unfenced reply reads as a program rather than an answer: a
/// statement of one line calls, assigns or imports something; a reply of
/// several lines is taken as code (a cut-off or unfenced program).
fn reads_as_code(reply: &str) -> bool {
    let reply = reply.trim();
    reply.contains('\n') || reply.contains('(') || reply.contains('=') || reply.starts_with("import ")
}

/// Whether two programs are the same, spacing and comments aside
/// (`print( n )  # the count` is `print(n)`). A sampled program that
/// differs from the greedy one only in its comments is the same program:
/// on held-out-27 two such programs were counted as two that agreed, and a
/// CSV that had lost its header passed as confirmed twice.
pub(crate) fn same_program(a: &str, b: &str) -> bool {
    let bare = |s: &str| {
        s.lines()
            .flat_map(|line| without_comment(line).chars())
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
    };
    bare(a) == bare(b)
}

/// Where two programs differ, each way: the lines of `a` that `b` has not
/// and those of `b` that `a` has not ([`lines_apart`]); `None` unless each
/// has some.
pub(crate) fn routes_apart(a: &str, b: &str) -> Option<[Vec<String>; 2]> {
    let apart = [lines_apart(a, b), lines_apart(b, a)];
    (!apart.iter().any(Vec::is_empty)).then_some(apart)
}

/// Most lines [`lines_apart`] gives, and the most characters of each.
const LINES_APART: usize = 5;
const LINE_APART_CHARS: usize = 160;

/// The lines of the program `a` that `b` has not (spacing and comments
/// aside; a comment may say what the line does not do) and that compute:
/// not an import, nor a line that only opens a file (two programs that
/// read alike differ there only in names); a line that prints or writes
/// may compute what it prints. At most [`LINES_APART`], each cut short.
fn lines_apart(a: &str, b: &str) -> Vec<String> {
    let bare = |line: &str| -> String { without_comment(line).chars().filter(|c| !c.is_whitespace()).collect() };
    let theirs: std::collections::HashSet<String> = b.lines().map(bare).collect();
    let computes = |line: &&str| {
        let line = without_comment(line).trim();
        let opens = line.starts_with("with open(") || line.contains("= open(");
        !line.is_empty() && !line.starts_with("import ") && !line.starts_with("from ") && !opens
    };
    a.lines()
        .filter(computes)
        .filter(|line| !theirs.contains(&bare(line)))
        .take(LINES_APART)
        .map(|line| crate::text::one_line(without_comment(line).trim(), LINE_APART_CHARS))
        .collect()
}

/// A line of Python without its comment: up to the first `#` that stands
/// outside a string literal (`'#'` in `line.startswith('#')` is kept).
fn without_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_apart_are_the_computing_lines_one_program_has_alone() {
        let run = "import re\nwith open('letter.txt') as f:\n    text = f.read()\nwords = re.findall(r'\\b\\w+\\b', text)  # words\nopen('n.txt', 'w').write(str(len(words)))\n";
        let check = "with open('letter.txt') as f:\n    text = f.read()\nwords = text.split()\nprint(len(words))\n";
        assert_eq!(
            lines_apart(run, check),
            [
                r"words = re.findall(r'\b\w+\b', text)",
                "open('n.txt', 'w').write(str(len(words)))"
            ]
        );
        assert_eq!(lines_apart(check, run), ["words = text.split()", "print(len(words))"]);
        assert!(lines_apart(run, run).is_empty());
    }

    #[test]
    fn a_verdict_cut_off_after_its_yes_or_no_still_holds_it() {
        let fields = ("done", "wrong");
        let cut = r#"{"done": false, "wrong": "The run did not produce the expected output. The task asked"#;
        assert_eq!(
            read(cut, fields),
            Some((
                false,
                "The run did not produce the expected output. The task asked".to_string()
            ))
        );
        assert_eq!(
            read(r#"{"done": true, "wrong": ""}"#, fields),
            Some((true, String::new()))
        );
        assert_eq!(read(r#"{"done": tr"#, fields), None);
        assert_eq!(read("I think it is done", fields), None);
    }

    #[test]
    fn a_program_is_read_from_a_code_block_a_json_object_or_the_reply() {
        let fenced = "Here it is:\n```python\nprint(open('a.toml').read().split('channel = \"')[1])\n```\nIt prints the channel.";
        assert_eq!(
            program_in(fenced).as_deref(),
            Some("print(open('a.toml').read().split('channel = \"')[1])")
        );
        let cut = "```python\nfor line in open('a.txt'):\n    print(line)";
        assert_eq!(
            program_in(cut).as_deref(),
            Some("for line in open('a.txt'):\n    print(line)")
        );
        assert_eq!(program_in(r#"{"code": "print(1)"}"#).as_deref(), Some("print(1)"));
        assert_eq!(program_in("print(2)\n").as_deref(), Some("print(2)"));
        assert_eq!(program_in("```python\n\n```"), None);
        assert_eq!(program_in("  "), None);
        assert_eq!(program_in("import os"), Some("import os".to_string()));
        // A bare answer is no program: it would run as one and fail.
        assert_eq!(program_in("Imogen Thorne"), None);
        assert_eq!(program_in("August\n"), None);
    }

    #[test]
    fn the_same_program_spaced_otherwise_is_one_program() {
        assert!(same_program("print( 1 )\n", "print(1)"));
        assert!(!same_program("print(1)", "print(2)"));
        assert!(same_program(
            "# Read it\nrows = open('a').read()  # all of it\nprint(rows)",
            "rows = open('a').read()\n# Print it\nprint(rows)"
        ));
        assert!(
            !same_program("x = '#'; y = 1", "x = '"),
            "a # in a string is no comment"
        );
        assert!(
            !same_program("s = 'it\\'s # x'", "s = 'it\\'s "),
            "nor after an escaped quote"
        );
    }
}
