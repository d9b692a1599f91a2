//! The files a task says to write, and whether a plan writes them.
//!
//! Small planners often stop one step short: they compute the answer and
//! leave out the step that saves it, and the run ends with an answer but no
//! file. The task says what it wants written in plain words ("write the sum
//! to sum.txt"), so the planner's plan is checked for a step that names each
//! such file, and a plan that misses one is sent back with the reason.

use super::{Plan, PlanError};
use serde_json::Value;

/// Verbs that make the file after them an output: the ways a task says to
/// write, copy or make a file.
const WRITE_VERBS: [&str; 17] = [
    "write", "save", "store", "put", "append", "record", "output", "copy", "create", "make", "join", "combine",
    "merge", "export", "produce", "generate", "dump",
];
/// Words that may stand right before an output file.
const BEFORE_OUTPUT: [&str; 7] = ["to", "into", "in", "as", "named", "called", "file"];
/// Verbs whose direct object is the file they bring about ("make
/// unique.txt with …", "create hello.txt"); the object of "copy" or
/// "append" is what is read.
const CREATE_VERBS: [&str; 4] = ["make", "create", "generate", "produce"];

/// `word` as it is written in a sentence, without the quotes, brackets and
/// punctuation around it or a full stop after it (`(sum.txt).` is
/// `sum.txt`).
pub(crate) fn word_itself(word: &str) -> &str {
    let word = word.trim_matches(|c: char| "`'\"()[]{}<>,;:!?".contains(c));
    word.strip_suffix('.').unwrap_or(word)
}

/// A word that looks like a file path: `sum.txt`, `out/report.md`.
///
/// An extension starts with a letter (`3.5kg` is no file), one of a single
/// letter needs a longer name (`e.g` is none either), and a name may be
/// only an extension when it is a dotfile (`.env`).
fn as_path(word: &str) -> Option<&str> {
    let word = word_itself(word);
    let (stem, ext) = word.rsplit_once('.')?;
    let path_chars = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    let ext_ok = (1..=5).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.starts_with(|c: char| c.is_ascii_alphabetic());
    let name = stem.rsplit('/').next().unwrap_or(stem);
    let name_ok = match name.len() {
        0 => ext.len() >= 2 && ext.chars().all(|c| c.is_ascii_alphabetic()),
        1 => ext.len() >= 2 || stem.contains('/'),
        _ => true,
    };
    (path_chars(stem) && ext_ok && name_ok).then_some(word)
}

/// A word that is the name of a file with no extension that is there
/// (`VERSION`, `Makefile`): a path too, though it does not look like one.
fn as_bare_file<'w>(word: &'w str, is_file: &dyn Fn(&str) -> bool) -> Option<&'w str> {
    let word = word_itself(word);
    let bare = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    (bare && is_file(word)).then_some(word)
}

/// The files `task` says to write: a path right after "to", "into", "in" or
/// "as", with a writing verb earlier in the same sentence; right after
/// "into" whatever the verb ("collect the addresses into emails.txt": a
/// file something goes into is where it ends up); or right after a verb of
/// making ("make unique.txt with …").
pub fn outputs_named_by(task: &str) -> Vec<String> {
    outputs_named_in(task, &|_| false)
}

/// [`outputs_named_by`], where a word that names a file `is_file` says is
/// there counts as a path too, extension or not ("save it in VERSION").
pub fn outputs_named_in(task: &str, is_file: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut outputs: Vec<String> = Vec::new();
    let mut verb_seen = false;
    let mut previous = "";
    let mut after_create = false;
    for word in task.split_whitespace() {
        let is_verb = |verbs: &[&str]| is_one_of(word, verbs);
        if is_verb(&WRITE_VERBS) {
            verb_seen = true;
        }
        let path = as_path(word).or_else(|| as_bare_file(word, is_file));
        if let Some(path) = path {
            let destination = (verb_seen && BEFORE_OUTPUT.contains(&previous)) || previous == "into" || after_create;
            if destination && !outputs.iter().any(|o| o == path) {
                outputs.push(path.to_string());
            }
        }
        after_create = is_verb(&CREATE_VERBS);
        if ends_a_sentence(word, path.is_some()) {
            verb_seen = false;
        }
        previous = before_output(word);
    }
    outputs
}

/// Whether `word`, case and punctuation aside, is one of `verbs` (or one
/// with an `s`: "writes").
fn is_one_of(word: &str, verbs: &[&str]) -> bool {
    let lower = word.to_lowercase();
    let bare = lower.trim_matches(|c: char| !c.is_alphanumeric());
    verbs.iter().any(|v| bare == *v || bare.strip_suffix('s') == Some(v))
}

/// Whether `word` ends a sentence of a task: it ends in `?`, `!` or `;`, or
/// in a full stop that is not a path's own dot (`sum.txt.` ends one only
/// where the text ends, and `names_a_path` says the word is a path).
pub fn ends_a_sentence(word: &str, names_a_path: bool) -> bool {
    (word.ends_with('.') && !names_a_path) || word.ends_with(['?', '!', ';'])
}

/// `word` when it is one of the words that may stand before an output file
/// ([`BEFORE_OUTPUT`]), case and punctuation aside; `""` otherwise.
fn before_output(word: &str) -> &'static str {
    let bare = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    BEFORE_OUTPUT.iter().find(|w| **w == bare).copied().unwrap_or("")
}

/// The file `task` ends by putting something in, whatever its verb: its
/// last path, when it stands right after "to", "in", "into", "as", … ("I
/// need that tag, with its v, in newest_tag.txt"; "the month's name goes in
/// best_month.txt"). An input can stand there too ("how many lines are in
/// log.txt?"): only the workspace tells them apart ([`new_outputs`]).
fn last_destination(task: &str) -> Option<String> {
    let mut last = None;
    let mut previous = "";
    for word in task.split_whitespace().filter(|w| !w.contains("://")) {
        if let Some(path) = as_path(word) {
            last = BEFORE_OUTPUT.contains(&previous).then(|| path.to_string());
        }
        previous = before_output(word);
    }
    last
}

/// The files `task` works in: a path that opens a sentence as "In
/// lighting.ini, set …", where the sentence has no verb of writing. The
/// sentence changes or reads what the file holds, so it is to be there: a
/// run that makes it when it is not there made up its input (on held-out-19 a
/// program wrote a new `lighting.ini` holding the one setting, and the run
/// said `succeeded`). A destination comes after what is put in it ("the
/// tag goes in tag.txt"), not before.
pub fn worked_in(task: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for sentence in sentences(task) {
        let writes = sentence.iter().any(|w| is_one_of(w, &WRITE_VERBS));
        if let Some(path) = opening_place(&sentence).filter(|p| !writes && !found.iter().any(|f| f == p)) {
            found.push(path.to_string());
        }
    }
    found
}

/// The sentences of `task`, each its words joined by a space
/// ([`ends_a_sentence`]).
pub fn sentences_of(task: &str) -> Vec<String> {
    sentences(task).iter().map(|words| words.join(" ")).collect()
}

/// The sentences of `task`, each as its words ([`ends_a_sentence`]).
fn sentences(task: &str) -> Vec<Vec<&str>> {
    let mut all = Vec::new();
    let mut sentence = Vec::new();
    for word in task.split_whitespace() {
        sentence.push(word);
        if ends_a_sentence(word, as_path(word).is_some()) {
            all.push(std::mem::take(&mut sentence));
        }
    }
    if !sentence.is_empty() {
        all.push(sentence);
    }
    all
}

/// The path a sentence opens with as the place it works in: "In
/// lighting.ini, …".
fn opening_place<'w>(sentence: &[&'w str]) -> Option<&'w str> {
    let [opening, place, ..] = sentence[..] else {
        return None;
    };
    as_path(place).filter(|_| opening.eq_ignore_ascii_case("in") && place.ends_with(','))
}

/// Verbs that change what a file holds, where it is: a sentence that opens
/// with one ([`edited_in`]) says to change the files it names.
const EDIT_VERBS: [&str; 40] = [
    "change",
    "set",
    "update",
    "bump",
    "increase",
    "decrease",
    "raise",
    "lower",
    "rename",
    "replace",
    "remove",
    "delete",
    "drop",
    "add",
    "insert",
    "fix",
    "correct",
    "sort",
    "reorder",
    "edit",
    "modify",
    "uppercase",
    "lowercase",
    "capitalize",
    "capitalise",
    "swap",
    "switch",
    "enable",
    "disable",
    "comment",
    "uncomment",
    "turn",
    "move",
    "strip",
    "trim",
    "deduplicate",
    "dedupe",
    "mark",
    "increment",
    "decrement",
];
/// Words a command may open with before its verb ("Please bump …").
const BEFORE_VERB: [&str; 7] = ["please", "now", "then", "also", "and", "next", "finally"];
/// Verbs that ask for an answer: a sentence with one asks about the file
/// ("sort the names in names.txt and tell me the first") more than it
/// changes it. (Not "list" or "report", which are nouns as often.)
const ANSWER_WORDS: [&str; 2] = ["tell", "say"];
/// Verbs that add to a file only with "to" or "into" before it ("add a row
/// to stock.csv"); without, they sum ("add the numbers in a.txt").
const ADDING_VERBS: [&str; 2] = ["add", "insert"];

/// The files `task` says to change in place: in a sentence that is no
/// question, asks for no answer and opens with a verb of changing (after
/// "In printer.ini," or "please" too), each path it names that `is_file`
/// says is there, when it names no path that is not there (a sentence that
/// makes a new file, "sort names.txt into sorted.txt", reads the one that
/// is there). A task may say to change a file with any verb ("Bump the
/// minor version in manifest.json", "In printer.ini, change the dpi to
/// 300"), and a run that read it and answered "done" did not do the work
/// (on held-out-20 the react runs did, and said `succeeded`). "Add" and
/// "insert" change a file only with "to" or "into" in the sentence ("add
/// up" and "add the numbers in a.txt" sum).
pub fn edited_in(task: &str, is_file: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for sentence in sentences(task) {
        let asks = sentence.iter().any(|w| is_one_of(w, &ANSWER_WORDS));
        if asks || sentence.last().is_some_and(|w| w.ends_with('?')) {
            continue;
        }
        let skip = if opening_place(&sentence).is_some() { 2 } else { 0 };
        let mut words = sentence[skip..].iter().skip_while(|w| is_one_of(w, &BEFORE_VERB));
        let Some(verb) = words.next() else { continue };
        let adds_to = || sentence.iter().any(|w| is_one_of(w, &["to", "into"]));
        if !is_one_of(verb, &EDIT_VERBS) || (is_one_of(verb, &ADDING_VERBS) && !adds_to()) {
            continue;
        }
        let paths: Vec<String> = sentence.iter().filter_map(|w| as_path(w)).map(String::from).collect();
        if paths.iter().all(|p| is_file(p)) {
            found = joined(found, paths);
        }
    }
    found
}

/// The files `task` works in ([`worked_in`]) that are not in the
/// workspace of `tools` now (when a run begins): missing inputs.
pub fn absent_worked_in(task: &str, tools: &crate::tools::ToolRegistry) -> Vec<String> {
    worked_in(task)
        .into_iter()
        .filter(|path| presence(tools, path) == Some(false))
        .collect()
}

/// Every file path `task` names, wherever it stands (`a.txt`,
/// `out/report.md`), in order, once each; not a URL.
pub fn paths_named_by(task: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for word in task.split_whitespace().filter(|w| !w.contains("://")) {
        if let Some(path) = as_path(word) {
            if !paths.iter().any(|p| p == path) {
                paths.push(path.to_string());
            }
        }
    }
    paths
}

/// Whether `value` holds `path` in one of its strings.
pub fn mentions(value: &Value, path: &str) -> bool {
    match value {
        Value::String(s) => s.contains(path),
        Value::Array(items) => items.iter().any(|v| mentions(v, path)),
        Value::Object(map) => map.values().any(|v| mentions(v, path)),
        _ => false,
    }
}

/// An error for each file `task` says to write ([`outputs_named_by`], and
/// the [`new_outputs`] in the workspace of `tools`) that no step of `plan`
/// names in its arguments. An agent step may write anything, so a plan with
/// one still to run (not in `done`) passes; one that has run and left a
/// file not there did not write it (on held-out-10 a worker step that found
/// an ssh Host block stood for the write through two revisions, and the
/// file was never written). A refusal or a plan of questions has nothing
/// to check.
pub fn unwritten_outputs(
    plan: &Plan,
    task: &str,
    tools: &crate::tools::ToolRegistry,
    done: &std::collections::HashSet<String>,
) -> Vec<PlanError> {
    let agents = || plan.steps.iter().filter(|s| s.agent.is_some());
    if plan.steps.is_empty() || agents().any(|s| !done.contains(&s.id)) {
        return Vec::new();
    }
    let agents_ran = agents().next().is_some();
    let absent = |path: &String| presence(tools, path) == Some(false);
    joined(outputs_named_by(task), new_outputs(task, tools))
        .into_iter()
        .filter(|path| !plan.steps.iter().any(|s| s.args.values().any(|v| mentions(v, path))))
        .filter(|path| !agents_ran || absent(path))
        .map(|path| PlanError::OutputNotWritten { path })
        .collect()
}

/// The files `task` says to write that are not in the workspace of `tools`
/// now (when a run begins): the ones it names with a verb of writing
/// ([`outputs_named_by`]), or, when it names none so, the file it ends by
/// putting something in ([`last_destination`]): one that is not there is to
/// be made, whatever the verb. (One the run then reads was a missing input:
/// [`crate::run::outputs`] does not hold the run to it.)
pub fn new_outputs(task: &str, tools: &crate::tools::ToolRegistry) -> Vec<String> {
    if tools.workspace().is_none() {
        return Vec::new();
    }
    let mut named = asked_outputs(task, tools);
    if outputs_named_by(task).is_empty() {
        named = joined(last_destination(task).into_iter().collect(), named);
    }
    // A dotfile that is not there is more likely a kind of file (`.jpg
    // files`) than one to write; a file the task works in is to be there.
    let worked_in = worked_in(task);
    named
        .into_iter()
        .filter(|path| !path.rsplit('/').next().unwrap_or(path).starts_with('.'))
        .filter(|path| !worked_in.contains(path))
        .filter(|path| presence(tools, path) == Some(false))
        .collect()
}

/// Whether `path` is there in the workspace of `tools`: `None` when there
/// is no workspace or the path is outside it (neither there nor to be made).
fn presence(tools: &crate::tools::ToolRegistry, path: &str) -> Option<bool> {
    let full = tools.workspace()?.resolve(path).ok()?;
    Some(full.exists())
}

/// The files `task` asks for by how it names them: with a verb of writing
/// ([`outputs_named_by`]), right after "write" or "save"
/// ([`written_objects`]), or as the subject of a sentence
/// ([`subject_outputs`]); there or not.
fn asked_outputs(task: &str, tools: &crate::tools::ToolRegistry) -> Vec<String> {
    let there = |path: &str| presence(tools, path) == Some(true);
    let named = joined(outputs_named_by(task), written_objects(task));
    joined(named, subject_outputs(task, &there))
}

/// The one named path that is not there (`there` says), when it opens a
/// sentence and another named path is there: what the sentence says of it
/// is what it is to hold ("vpn_clients.txt should list their host names",
/// "meetup_dates.txt: one date per month", on held-out-10, where the plans
/// read the file as an input). A task naming only missing files names no
/// output so: it may be an input that is not there.
fn subject_outputs(task: &str, there: &dyn Fn(&str) -> bool) -> Vec<String> {
    let named = paths_named_by(task);
    let absent: Vec<&String> = named.iter().filter(|p| !there(p)).collect();
    let [output] = absent.as_slice() else { return Vec::new() };
    if named.len() < 2 {
        return Vec::new();
    }
    let mut opens = true;
    for word in task.split_whitespace() {
        let path = as_path(word);
        if opens && path == Some(output.as_str()) {
            return vec![output.to_string()];
        }
        opens = ends_a_sentence(word, path.is_some());
    }
    Vec::new()
}

/// A step that reads a file the task asks for (one of [`new_outputs`] it
/// names with a verb of writing or as a sentence's subject, not only by
/// where it stands: "read the file wrong.txt") and that no step writes:
/// the task's output read as an input, which fails, and stops the run as a
/// missing input.
pub fn outputs_read(plan: &Plan, task: &str, tools: &crate::tools::ToolRegistry) -> Vec<PlanError> {
    use crate::tools::Effect::{ReadOnly, WritesWorkspace};
    if tools.workspace().is_none() {
        return Vec::new();
    }
    let outputs: Vec<String> = asked_outputs(task, tools)
        .into_iter()
        .filter(|path| presence(tools, path) != Some(true))
        .collect();
    let path_with = |s: &super::Step, effect| super::hazards::path_with(tools, s, effect);
    plan.steps
        .iter()
        .filter_map(|step| {
            let path = path_with(step, ReadOnly).filter(|p| outputs.contains(p))?;
            let written = plan
                .steps
                .iter()
                .any(|w| path_with(w, WritesWorkspace).as_ref() == Some(&path));
            (!written).then(|| PlanError::OutputRead {
                step: step.id.clone(),
                path,
            })
        })
        .collect()
}

/// The paths that stand right after "write" or "save" ("Write
/// dept_headcount.txt with a line per department"): the file the verb
/// brings about when it is not there yet ([`new_outputs`] keeps only
/// those); one that is there is what is saved (an edit).
fn written_objects(task: &str) -> Vec<String> {
    let words: Vec<&str> = task.split_whitespace().collect();
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let verb = pair[0].trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        if !["write", "save"].contains(&verb.as_str()) {
            continue;
        }
        if let Some(path) = as_path(pair[1]) {
            found.push(path.to_string());
        }
    }
    found
}

/// The paths of `first`, then those of `then` not among them.
fn joined(mut first: Vec<String>, then: Vec<String>) -> Vec<String> {
    for path in then {
        if !first.contains(&path) {
            first.push(path);
        }
    }
    first
}

/// The files `task` says to write that are in the workspace of `tools` now
/// (when a run begins): files to change, or inputs named in a sentence that
/// also writes something ("write the name in name.txt to upper.txt"); and
/// the files it says to change in place ([`edited_in`]).
pub fn existing_outputs(task: &str, tools: &crate::tools::ToolRegistry) -> Vec<String> {
    let Some(workspace) = tools.workspace() else {
        return Vec::new();
    };
    let is_file = |path: &str| workspace.resolve(path).is_ok_and(|full| full.is_file());
    let named = outputs_named_in(task, &is_file)
        .into_iter()
        .filter(|path| is_file(path))
        .collect();
    joined(named, edited_in(task, &is_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_the_files_a_sentence_says_to_write() {
        assert_eq!(
            outputs_named_by("Read a.txt and b.txt, add the two numbers, and write the sum to sum.txt."),
            ["sum.txt"]
        );
        assert_eq!(
            outputs_named_by("How many lines of log.txt contain ERROR? Write the number to errors.txt."),
            ["errors.txt"]
        );
        assert_eq!(outputs_named_by("Save the names into `out/names.md`"), ["out/names.md"]);
        assert_eq!(
            outputs_named_by("Join a.txt and then b.txt into one file, all.txt."),
            ["all.txt"]
        );
        assert_eq!(
            outputs_named_by("Make a copy of config.ini named config.backup.ini."),
            ["config.backup.ini"]
        );
        assert_eq!(
            outputs_named_by(
                "contacts.txt mixes names and addresses. Collect every address into emails.txt, one per line."
            ),
            ["emails.txt"]
        );
        assert_eq!(
            outputs_named_by("Make unique.txt with each address once, keeping their order."),
            ["unique.txt"]
        );
        assert_eq!(outputs_named_by("Create hello.txt holding one line."), ["hello.txt"]);
        // Inputs, and files named where nothing is written, are not outputs.
        assert!(outputs_named_by("Copy notes.txt somewhere safe.").is_empty());
        assert!(outputs_named_by("Make sure data.csv has a header.").is_empty());
        assert!(outputs_named_by("In config.json, set level to 4.").is_empty());
        assert!(outputs_named_by("Summarise notes.txt. Then count to 3.").is_empty());
        assert!(outputs_named_by("Write a haiku. Then read poem.txt to me.").is_empty());
        assert!(outputs_named_by("What is 2.5 times 4? Write it to 4.2").is_empty());
    }

    #[test]
    fn a_file_with_no_extension_is_an_output_when_it_is_there() {
        let task = "VERSION holds our release number. Bump it and save the new version in VERSION.";
        assert!(outputs_named_by(task).is_empty());
        let there = |p: &str| p == "VERSION";
        assert_eq!(outputs_named_in(task, &there), ["VERSION"]);
        // A word that names no file is no path.
        assert!(outputs_named_in("Save it in memory.", &there).is_empty());
    }

    #[test]
    fn a_plan_that_leaves_out_the_write_is_sent_back() {
        let plan: Plan = serde_json::from_value(serde_json::json!({"goal": "g", "steps": [
            {"id": "s1", "description": "count", "tool": "search", "args": {"path": "log.txt", "text": "ERROR", "count": true}, "depends_on": []}
        ]}))
        .unwrap();
        let task = "How many lines of log.txt contain ERROR? Write the number to errors.txt.";
        let dir = tempfile::tempdir().unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let errors = unwritten_outputs(&plan, task, &tools, &Default::default());
        assert_eq!(
            errors,
            [PlanError::OutputNotWritten {
                path: "errors.txt".into()
            }]
        );
        assert!(errors[0].to_string().contains("no step writes it"), "{}", errors[0]);

        let mut written = plan.clone();
        written.steps.push(
            serde_json::from_value(serde_json::json!({"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "errors.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}))
                .unwrap(),
        );
        assert!(unwritten_outputs(&written, task, &tools, &Default::default()).is_empty());
        let refused = Plan {
            steps: Vec::new(),
            infeasible: Some("log.txt does not exist".into()),
            ..plan.clone()
        };
        assert!(unwritten_outputs(&refused, task, &tools, &Default::default()).is_empty());
        // An agent step still to run may write it; one that ran and left
        // it not there did not.
        let mut looked = plan.clone();
        looked.steps.push(
            serde_json::from_value(serde_json::json!({"id": "s2", "description": "look", "tool": null, "agent": "worker", "args": {}, "depends_on": []}))
                .unwrap(),
        );
        assert!(unwritten_outputs(&looked, task, &tools, &Default::default()).is_empty());
        let ran = std::collections::HashSet::from(["s1".to_string(), "s2".to_string()]);
        assert_eq!(unwritten_outputs(&looked, task, &tools, &ran).len(), 1);
        std::fs::write(dir.path().join("errors.txt"), "3").unwrap();
        assert!(
            unwritten_outputs(&looked, task, &tools, &ran).is_empty(),
            "it may have written it"
        );
    }
}

#[cfg(test)]
mod destination_tests {
    use super::*;

    /// A file a sentence opens with ("In lighting.ini, set …") is the one
    /// it works in: an input, not a file to make, when it is not there; a
    /// sentence that writes may name its output so ("In notes.txt, write …").
    #[test]
    fn a_file_a_sentence_opens_with_is_worked_in_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let edit = "In lighting.ini, set key_light to 80 in the [levels] section.";
        assert_eq!(worked_in(edit), ["lighting.ini"]);
        assert!(new_outputs(edit, &tools).is_empty(), "a missing input, not an output");
        let later = "The studio has two lamps. in conf/lamps.toml, raise fill to 40";
        assert_eq!(worked_in(later), ["conf/lamps.toml"]);
        for not_worked_in in [
            "In notes.txt, write the date of the meeting.",
            "Put the tag in tag.txt, please.",
            "In the data folder, count the .csv files and store the count in n.txt.",
        ] {
            assert!(worked_in(not_worked_in).is_empty(), "{not_worked_in}");
        }
        assert_eq!(new_outputs("Put the tag in tag.txt, please.", &tools), ["tag.txt"]);
    }

    /// A sentence that opens with a verb of changing, whatever the verb,
    /// says to change the files it names that are there; a question, a
    /// sum ("add up") or a sentence that makes a new file does not.
    #[test]
    fn a_file_a_command_changes_is_edited_in_place() {
        let there = |path: &str| ["printer.ini", "manifest.json", "names.txt", "a.txt"].contains(&path);
        for (task, edited) in [
            ("In printer.ini, change the dpi to 300.", vec!["printer.ini"]),
            (
                "Bump the minor version of the app in manifest.json.",
                vec!["manifest.json"],
            ),
            (
                "The list is long. Please sort names.txt by surname; keep the rest.",
                vec!["names.txt"],
            ),
            ("Add up the numbers in a.txt and tell me the total.", vec![]),
            ("Add the numbers in a.txt and names.txt.", vec![]),
            ("Add a line with Zoe to names.txt.", vec!["names.txt"]),
            ("Sort the names in names.txt and tell me which comes first.", vec![]),
            (
                "Remove Bo from names.txt and leave the rest of the list as it is.",
                vec!["names.txt"],
            ),
            ("Should I change the dpi in printer.ini?", vec![]),
            ("Sort the names in names.txt and save them to sorted.txt.", vec![]),
            ("Tell me what manifest.json says the version is.", vec![]),
        ] {
            let edited: Vec<String> = edited.into_iter().map(String::from).collect();
            assert_eq!(edited_in(task, &there), edited, "{task}");
        }
    }

    /// The file a task ends by putting something in, when it is not there,
    /// is to be written, whatever the verb; one that is there is an input.
    #[test]
    fn a_file_the_task_puts_something_in_that_is_not_there_is_an_output() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tags.txt"), "v1.2.0\nv1.10.0\n").unwrap();
        let tools = crate::tools::builtin::registry(crate::tools::workspace::Workspace::new(dir.path()).unwrap());
        let task =
            "tags.txt lists our release tags. Which is the highest? I need that tag, with its v, in newest_tag.txt.";
        assert!(outputs_named_by(task).is_empty(), "no verb of writing");
        assert_eq!(new_outputs(task, &tools), ["newest_tag.txt"]);
        let reads_only: Plan = serde_json::from_value(serde_json::json!({"goal": "g", "steps": [
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "tags.txt"}, "depends_on": []}
        ]}))
        .unwrap();
        assert_eq!(
            unwritten_outputs(&reads_only, task, &tools, &Default::default()),
            [PlanError::OutputNotWritten {
                path: "newest_tag.txt".into()
            }]
        );
        // The file right after "write" that is not there is brought about
        // by it; one that is there is an input saved again.
        let direct = "Count the tags in tags.txt. Write tag_count.txt with the number, and save tags.txt sorted.";
        assert_eq!(new_outputs(direct, &tools), ["tag_count.txt"]);
        // A missing path that opens a sentence, beside one that is there.
        let subject = "Which tags in tags.txt are betas? betas.txt: one per line.";
        assert_eq!(new_outputs(subject, &tools), ["betas.txt"]);
        let read_it: Plan = serde_json::from_value(serde_json::json!({"goal": "g", "steps": [
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "betas.txt"}, "depends_on": []}
        ]}))
        .unwrap();
        assert_eq!(
            outputs_read(&read_it, subject, &tools),
            [PlanError::OutputRead {
                step: "s1".into(),
                path: "betas.txt".into()
            }]
        );
        let only_missing = "betas.txt: what does it hold?";
        assert!(new_outputs(only_missing, &tools).is_empty(), "maybe an input not there");
        let from_there = "Which tag in tags.txt is the highest? Answer in the chat.";
        assert!(
            new_outputs(from_there, &tools).is_empty(),
            "tags.txt is there: an input"
        );
        // Only the last file named, and only when no file is named with a verb of writing.
        let inputs_first = "Report the total of the numbers in a.txt, b.txt or c.txt.";
        assert!(new_outputs(inputs_first, &tools).is_empty());
        let written = "Add the numbers in a.txt and b.txt and write the sum to sum.txt.";
        assert_eq!(new_outputs(written, &tools), ["sum.txt"]);
    }
}

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn paths_are_files_named_anywhere_and_not_abbreviations_numbers_or_urls() {
        assert_eq!(
            paths_named_by("Join a.txt and then b.txt into one file, all.txt. Set DEBUG in .env (e.g. to 1.5kg), see https://example.org/a.html"),
            ["a.txt", "b.txt", "all.txt", ".env"]
        );
        assert_eq!(
            paths_named_by("Compile main.c and data/x.h, version 1.2, i.e. now."),
            ["main.c", "data/x.h"]
        );
    }
}
