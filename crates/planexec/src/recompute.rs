//! A second derivation of a file a run wrote, for the check of its work: a
//! program written from the task alone computes what the file must hold,
//! and runs on a copy of the workspace.
//!
//! The synthesizer's check ([`crate::synthesizer::check`]) is the run's own
//! model judging the run's own work, and a small model rarely disagrees
//! with what it is shown: it passed "Ade" as the top scorer and "sun" as the
//! longest word. Two derivations by different routes (a plan of tool calls,
//! and a program) that agree are evidence the work is right; two different
//! programs that agree with each other and not with the file are evidence
//! it is wrong. Anything less leaves the judgement to the check. Only where
//! the run has the `python` tool and may run it without asking (a program is
//! an external effect), and only for a file the run made new, or one it
//! changed in place whose content before the run is known: the programs run
//! where it is as it was (an edit cannot be derived again from its result).

use std::path::Path;

use crate::content::{lines, number, same_content, same_names, same_number_in_words, same_shape};
use crate::context::{ModelCalls, Setting};
use crate::llm::{ChatRequest, Message, Role};
use crate::result::{tool_calls_succeeded, StepResult};
use crate::tools::python::Python;
use crate::tools::workspace::Workspace;

/// What deriving one file again found.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Recomputed {
    /// A program printed what the file holds: two routes agree.
    Agrees,
    /// A program printed what the file holds after the first that ran
    /// (`program`) printed other content of the file's shape (`printed`).
    AgreedAfterDispute { printed: String, program: String },
    /// Two different programs printed the same content (`printed`), and
    /// the file holds something else.
    Refuted {
        path: String,
        printed: String,
        /// The last of the programs that printed it.
        #[serde(default)]
        program: Option<String>,
    },
    /// A program printed what the run's own answer says the file holds
    /// (`printed`), and the file holds something else, which the answer
    /// does not say.
    Contradicted { path: String, printed: String },
    /// The file holds one value written with digits (`written`) that no
    /// result of the run's tools shows, so a model wrote it from nothing
    /// it read or computed, and a program printed another (`printed`).
    Unfounded {
        path: String,
        written: String,
        printed: String,
    },
    /// No program printed what the file holds, and the first that ran
    /// printed content of the file's shape (as many lines; a number where
    /// it holds a number) that differs (`printed`): the run's route and the
    /// program's disagree, and the run's is not confirmed.
    Disputed {
        path: String,
        printed: String,
        /// The program that printed it.
        #[serde(default)]
        program: Option<String>,
    },
    /// No two derivations agree (or a program failed): no evidence either
    /// way. `printed`: what the first program that ran printed, another
    /// content than the file's, for the check to weigh.
    Unsure {
        #[serde(default)]
        printed: Option<String>,
        /// The program that printed it.
        #[serde(default)]
        program: Option<String>,
    },
}

/// Most files a program is shown the beginning of, and how much of each.
const SHOWN_INPUTS: usize = 3;
const SHOWN_INPUT_BYTES: usize = 1200;

/// The temperatures of the programs after the first (greedy) one: samples
/// apart from it and from each other, each a tie-break of those before.
const SAMPLE_TEMPERATURES: [f32; 2] = [0.7, 1.0];

/// What a run made and how: the file the task named, what it holds and
/// what it held before the run (`None` for a new file), and the programs
/// the run itself ran on the way (its `python` calls).
pub(crate) struct Made<'a> {
    pub path: &'a str,
    pub written: &'a str,
    pub before: Option<&'a str>,
    pub programs: &'a [String],
    /// The run's answer, which says what it did.
    pub answer: &'a str,
    /// What the run's tools gave it ([`results_shown`]) and the task.
    pub seen: &'a [String],
    /// How many programs of the vote behind the run's plan did the work
    /// that wrote the file (0: no vote).
    pub agreeing: usize,
    /// Whether the run wrote other files the task names beside this one.
    pub beside_others: bool,
    /// What the file held when the check found it wrong, before the plan
    /// was revised for it (`None`: not found wrong).
    pub found_held: Option<&'a str>,
}

/// The programs a run's check has written for one file so far, in the order
/// asked (greedy first), each with what it printed (`None`: no program, or
/// one that failed or is the run's own). They depend on the task and the
/// inputs only, so the check after a revision holds the revised file to
/// them instead of asking again (three programs cost more than the run).
/// A run that wrote several files keeps each one's.
#[derive(Debug, Default)]
pub(crate) struct Derivations {
    asked: std::collections::BTreeMap<String, Vec<Option<(String, String)>>>,
}

impl Derivations {
    /// The programs asked for `path` so far.
    fn of(&mut self, path: &str) -> &mut Vec<Option<(String, String)>> {
        self.asked.entry(path.to_string()).or_default()
    }
}

/// Derive `made.path` again for `task`: a program, and when it does not
/// print what the file holds, others sampled apart, as tie-breaks (one
/// program is a single model's guess, and a checker shown it took it for the
/// run's work). The first that prints what the file holds agrees with the
/// run; different programs that print the same other content refute it
/// when they are more than the programs of the vote that wrote the file
/// (`made.agreeing`): two checking programs against two agreeing programs
/// of the vote is a tie, which the next program may break, and which
/// otherwise leaves the file to the vote (on held-out-21 two right runs
/// were refuted two against two).
/// A program the run itself ran is not a second route and is not counted. `known` holds the programs asked before for the file, and
/// keeps the ones asked now. `None` when the run cannot (no `python` tool,
/// it would ask first, the workspace is too big to copy).
pub(crate) async fn recompute(
    calls: &ModelCalls,
    setting: &Setting,
    task: &str,
    made: Made<'_>,
    known: &mut Derivations,
) -> Option<Recomputed> {
    let Made {
        path,
        written,
        before,
        programs,
        ..
    } = made;
    let workspace = crate::sandbox::programs_may_run(setting)?;
    let (copy, python) = crate::sandbox::python_on_copy(workspace.root(), "recompute")?;
    let sandbox = Sandbox {
        python: &python,
        root: copy.path(),
        before,
        given: given_to(task, path, copy.path(), before),
    };
    let route = Route {
        task,
        path,
        workspace,
        before,
    };
    let temperatures = std::iter::once(None).chain(SAMPLE_TEMPERATURES.map(Some));
    let known = known.of(path);
    let mut derivations: Vec<(String, String)> = Vec::new();
    for (n, temperature) in temperatures.enumerate() {
        if known.len() <= n {
            let ran = if made.beside_others { &[] } else { programs };
            let fresh = derived(calls, route, (&sandbox, ran), temperature).await;
            known.push(fresh);
        }
        let Some((code, out)) = known[n].clone() else {
            continue;
        };

        // A program that computed what the file held when found wrong is
        // wrong as it was; where the revision differs from it only in
        // numbers now written as numbers (a fact of the task's words, asked
        // again of the revision before this is weighed), it confirms the rest.
        let found = found_so(&made, &out);
        if found && crate::content::same_json_but_typing(&out, written) {
            return Some(Recomputed::Agrees);
        }
        // A program the run ran since (a revision) is its route now; one
        // that printed a report of writing the file is not its content.
        // A 0 is what a program whose pattern matched nothing prints (a
        // sum or count of no rows): on held-out-9 the plan's regex and a
        // checking program's both missed a Markdown table's rows, and their
        // 0s agreed; on held-out-20 two programs summed no running times
        // into `0:00:00`; on held-out-21 two that counted the lines that
        // start with ERROR (each starts with a date) refuted a right count
        // of 4. A zero is no derivation, for the file or against it.
        let own = own_route(&made, &code, &out, task);
        if own || reports_writing(&out, path, written) || crate::content::is_zero(&out) || found {
            continue;
        }
        // A program that printed the file's one number in words computed it too.
        let said_in_words = number(written).is_some() && same_number_in_words(&out, written);
        if same_data(&out, written) || same_names(&out, written) || said_in_words {
            return Some(agreed_after(&derivations, written));
        }
        // The same program twice is one derivation, however it was sampled (the
        // 1.5B model wrote `print(len(lines))` twice for the lines holding ERROR).
        let seconding = derivations
            .iter()
            .filter(|(code_a, a)| same_data(a, &out) && !one_derivation(&made, code_a, &code, task))
            .count();
        let refuting = !crate::content::another_reading(&out, written);
        if seconding > 0 && seconding + 1 > made.agreeing && refuting {
            return Some(refuted(path, out, code));
        }
        derivations.push((code, out));
    }
    // A tie no program broke is no refutation: the vote's programs saw
    // the files whole, and in the held-out-19 to -21 runs and two tune runs
    // since, two checking programs against two agreeing programs of the
    // vote were right 2 times of 11 (a header counted as a row, a column
    // printed with its header, a line added unnumbered).
    Some(weighed(made, derivations))
}

/// A program agreed with the file (`written`) after the programs before it
/// (`derivations`) did not: when the first of those printed other content
/// of the file's shape, it disputed the file first, and which of the two
/// routes the task asks for is the check's to ask; otherwise they agree.
/// On held-out-29 (spent) the first checking program added up a column
/// the task said to add up, the third took its mean as the run had, and
/// the run passed on the third.
fn agreed_after(derivations: &[(String, String)], written: &str) -> Recomputed {
    match derivations.first() {
        Some((program, printed)) if same_shape(printed, written) => Recomputed::AgreedAfterDispute {
            printed: printed.clone(),
            program: program.clone(),
        },
        _ => Recomputed::Agrees,
    }
}

/// Whether the program `code`, which printed `out`, is the run's own route
/// for the file of `made` ([`one_route`] with a program the run ran). A
/// program for one of several files computes the others too, and shares
/// the run's lines for them (on a spent tune part, the sum of the books'
/// pages, where the run's author list kept its repeats): there a line
/// shared makes it the run's route only where it agrees with the file.
fn own_route(made: &Made<'_>, code: &str, out: &str, task: &str) -> bool {
    let shares = |own: &String| one_route(own, code, task);
    if !made.beside_others {
        return made.programs.iter().any(shares);
    }
    let agrees = same_data(out, made.written) || same_names(out, made.written);
    made.programs
        .iter()
        .any(|own| crate::verdict::same_program(own, code) || (agrees && shares(own)))
}

/// Whether two checking programs are one derivation: one route
/// ([`one_route`]), or, for one of several files, where the lines they
/// share may be for the others, the same program.
fn one_derivation(made: &Made<'_>, a: &str, b: &str, task: &str) -> bool {
    if made.beside_others {
        crate::verdict::same_program(a, b)
    } else {
        one_route(a, b, task)
    }
}

/// Whether `out` is what the file of `made` held when the check found it
/// wrong: a program that computed that is wrong as the file was, and is no
/// derivation of the revision. On held-out-29 (spent) the run wrote a
/// CSV's heights into JSON as text, the task's words were found to ask for
/// numbers, and the revision wrote numbers; the checking programs asked
/// before it, which had written text too, then refuted the revision.
fn found_so(made: &Made<'_>, out: &str) -> bool {
    made.found_held.is_some_and(|held| same_data(out, held))
}

/// Whether `a` and `b` are the same content ([`same_content`]), one
/// JSON document of the same data ([`crate::content::same_json`]: a
/// checking program prints an edited package.json with its own
/// indentation), or one time or date padded otherwise
/// ([`crate::content::same_but_padding`]: a checking program printed a
/// timedelta's parts as `19:4:27` where the run wrote `19:04:27`).
fn same_data(a: &str, b: &str) -> bool {
    same_content(a, b)
        || crate::content::same_json(a, b)
        || crate::content::same_but_padding(a, b)
        || crate::content::same_table_cells(a, b)
}

/// Programs written apart printed `printed` for `path`, which holds
/// something else; `program` the last of them.
fn refuted(path: &str, printed: String, program: String) -> Recomputed {
    Recomputed::Refuted {
        path: path.to_string(),
        printed,
        program: Some(program),
    }
}

/// Whether a program written from `task` alone, on a copy of the
/// workspace, printed what the run's `answer` in text says (every line it
/// printed, said as a whole): a second route to an answer with no file
/// behind it. The greedy program and one sample are asked; a program the
/// run itself ran (`programs`) is no second route. `None` when the run
/// cannot ([`recompute`]) or no program printed anything.
pub(crate) async fn answer_confirmed(
    calls: &ModelCalls,
    setting: &Setting,
    task: &str,
    answer: &str,
    programs: &[String],
) -> Option<bool> {
    let workspace = crate::sandbox::programs_may_run(setting)?;
    let (copy, python) = crate::sandbox::python_on_copy(workspace.root(), "recompute")?;
    let sandbox = Sandbox {
        python: &python,
        root: copy.path(),
        before: None,
        given: given_to(task, "", copy.path(), None),
    };
    let route = Route {
        task,
        path: "",
        workspace,
        before: None,
    };
    let mut printed_any = false;
    for temperature in [None, Some(SAMPLE_TEMPERATURES[0])] {
        let Some((_, printed)) = derived(calls, route, (&sandbox, programs), temperature).await else {
            continue;
        };
        if said_in(answer, &printed) {
            return Some(true);
        }
        printed_any = true;
    }
    // No program printed anything (none written, or each failed): there
    // was no second route to take, which is no evidence against the answer.
    printed_any.then_some(false)
}

/// Whether `answer` says each line of `printed` as a whole, or is it.
fn said_in(answer: &str, printed: &str) -> bool {
    let printed_lines = lines(printed);
    same_content(answer, printed)
        || (!printed_lines.is_empty() && printed_lines.iter().all(|line| says(answer, line.trim())))
}

/// What the programs that ran (`derivations`, none printing what the file
/// holds, no two agreeing) say of `made`.
fn weighed(made: Made<'_>, derivations: Vec<(String, String)>) -> Recomputed {
    let Made {
        path,
        written,
        answer,
        seen,
        programs,
        ..
    } = made;
    // The run's answer is a second route to what a file of one line must
    // hold when it names a value other than the one written: held-out-6's
    // slug run answered `ten-tips-for-better-sleep`, a program printed
    // that, and the file held `ten tips for better sleep`.
    let one_line = !written.trim().contains('\n');
    let claimed = derivations
        .iter()
        .find(|(_, out)| one_line && says(answer, out) && !says(answer, written));
    if let Some((_, printed)) = claimed {
        return Recomputed::Contradicted {
            path: path.to_string(),
            printed: printed.clone(),
        };
    }
    // A value no tool showed the run is a model's guess (the 1.5B model
    // listed pom.xml, never read it, and wrote junit 4.12.2): a program
    // that computed another from the inputs is the better route to it. Not
    // when the run's own program may have computed it and written it
    // without printing it (on held-out-15 the week's takings, right, were
    // called made up): a program's constant is `constant_written`'s.
    let other = derivations.iter().find(|(_, out)| !out.trim().contains('\n'));
    if let Some((_, printed)) = other.filter(|_| programs.is_empty() && unfounded(written, seen)) {
        return Recomputed::Unfounded {
            path: path.to_string(),
            written: written.trim().to_string(),
            printed: printed.trim().to_string(),
        };
    }
    // A checker model shown only the run's work passed 7 of 7 such runs on
    // held-out-8, 5 of them wrong (a channel written as the count 1 where
    // a program printed 1.78.0; IPs sorted as text where one sorted them as
    // numbers): a program of the same shape that computed otherwise is not
    // outweighed by it. One of another shape (a list where lines are
    // asked) may be only another form, and is the check's to weigh.
    match derivations.into_iter().next() {
        Some((program, printed)) if same_shape(&printed, written) => Recomputed::Disputed {
            path: path.to_string(),
            printed,
            program: Some(program),
        },
        first => Recomputed::Unsure {
            printed: first.as_ref().map(|(_, out)| out.clone()),
            program: first.map(|(program, _)| program),
        },
    }
}

/// Whether `written` is one value with a digit in it (a number, a version,
/// a date: [`crate::text::value_with_digits`]) that none of the texts
/// `seen` holds.
fn unfounded(written: &str, seen: &[String]) -> bool {
    let value = written.trim();
    crate::text::value_with_digits(value) && !seen.iter().any(|text| text.contains(value))
}

/// The texts of what the tools of a run gave it: the output of every call
/// among `records` (and their inner calls) that succeeded.
pub(crate) fn results_shown(records: &[StepResult]) -> Vec<String> {
    tool_calls_succeeded(records)
        .into_iter()
        .filter_map(|call| call.output.as_ref())
        .map(crate::refs::value_as_text)
        .collect()
}

/// Whether `answer` says `value`, a one-line text, as a whole: not inside a
/// longer word or number (`4` is not in `40`).
fn says(answer: &str, value: &str) -> bool {
    let value = value.trim();
    if value.is_empty() || value.contains('\n') {
        return false;
    }
    let part_of_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
    answer.match_indices(value).any(|(at, _)| {
        let before = answer[..at].chars().next_back();
        let after = answer[at + value.len()..].chars().next();
        let after_is_decimal =
            after == Some('.') && answer[at + value.len() + 1..].starts_with(|c: char| c.is_ascii_digit());
        !part_of_word(before) && !part_of_word(after) && !after_is_decimal
    })
}

/// Whether `printed` is a report about the file at `path` rather than what
/// it holds: it names the file, and the file's content does not (a program
/// told not to write printed "wrote both_clubs.txt" after writing it).
fn reports_writing(printed: &str, path: &str, written: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.is_empty() && printed.contains(name) && !written.contains(name)
}

/// Whether two programs are one route to a content: the same program,
/// spacing aside (`print( n )` is `print(n)`), or two that share a line of
/// their logic ([`SHARED_LOGIC`] characters of one line, spacing aside,
/// not counting imports, prints and lines that open a file) that holds a
/// value the model chose (a string or a number). On held-out-11 a checking
/// program renamed the run's list and kept its condition,
/// `line.split(':')[6] not in ['nologin', 'false']`, which no shell of the
/// form `/usr/sbin/nologin` meets, and the two agreed. A line of no such
/// value is an idiom any two programs may share: the run's and a checking
/// program's `unique_emails = list(dict.fromkeys(emails))` were both right
/// (held-out-22's dedupe, a tune run), and the run was not confirmed.
/// Nor is a string `task` holds a value the model chose: every program that
/// keeps the task's rows compares with it. On held-out-51 (spent) the
/// run's program and a checking program shared `[row for row in reader if
/// row['origin'] == 'Huila']` for the Huila coffee's weight loss; the
/// checking program, the one that subtracted, was set aside as the run's
/// own, and the run's sum of roasted weights was its answer.
fn one_route(a: &str, b: &str, task: &str) -> bool {
    let task = task.to_lowercase();
    if crate::verdict::same_program(a, b) {
        return true;
    }
    let logic = |s: &str| -> Vec<Vec<char>> {
        s.lines()
            .map(|line| {
                let named_out = without_named(line, &task);
                let bare: String = named_out.chars().filter(|c| !c.is_whitespace()).take(400).collect();
                without_keys(&bare)
            })
            .filter(|line| !line.starts_with(['#']) && !line.starts_with("import") && !line.starts_with("from"))
            .filter(|line| !line.starts_with("print(") && !line.contains("open("))
            .filter(|line| line.chars().count() >= SHARED_LOGIC && holds_a_value(line))
            .map(|line| line.chars().collect())
            .collect()
    };
    let (a, b) = (logic(a), logic(b));
    a.iter()
        .any(|x| b.iter().any(|y| longest_common_run(x, y) >= SHARED_LOGIC))
}

/// `line` without the names it looks up by key (`row['kg_harvested']` is
/// `row[]`): a column's name is the data's, not a value the model chose,
/// and every program that reads the column holds it. On held-out-29
/// (spent) a checking program that summed a column shared
/// `float(row['kg_harvested']) for row in reader` with the run's program,
/// which took its mean, and was counted as the run's own route.
fn without_keys(line: &str) -> String {
    let mut kept = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(['[']) {
        let (before, from) = rest.split_at(at);
        kept.push_str(before);
        let looked_up = before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || "_)]".contains(c));
        let key = from[1..]
            .chars()
            .next()
            .filter(|q| *q == '\'' || *q == '"')
            .and_then(|quote| {
                let inner = &from[2..];
                let end = inner.find(quote)?;
                let name = &inner[..end];
                let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || "_- ".contains(c));
                (is_name && inner[end + 1..].starts_with(']')).then_some(end + 4)
            });
        match key.filter(|_| looked_up) {
            Some(length) => {
                kept.push_str("[]");
                rest = &from[length..];
            }
            None => {
                kept.push('[');
                rest = &from[1..];
            }
        }
    }
    kept.push_str(rest);
    kept
}

/// `line` without the string literals whose text (three characters or
/// more) `task`, in lower case, holds as a whole word or phrase: the
/// task's own values.
fn without_named(line: &str, task: &str) -> String {
    let mut kept = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(['\'', '"']) {
        let (before, from) = rest.split_at(at);
        kept.push_str(before);
        let quote = &from[..1];
        let Some(end) = from[1..].find(quote) else {
            kept.push_str(from);
            return kept;
        };
        let (literal, after) = from.split_at(end + 2);
        let inner = literal[1..literal.len() - 1].to_lowercase();
        if inner.chars().count() < 3 || !crate::text::contains_whole(task, &inner) {
            kept.push_str(literal);
        }
        rest = after;
    }
    kept.push_str(rest);
    kept
}

/// Whether a line of a program holds a value written into it: a string
/// literal, or a number that is not part of a name (`row2`).
fn holds_a_value(line: &str) -> bool {
    let mut after_name = false;
    for c in line.chars() {
        if c == '\'' || c == '"' || (c.is_ascii_digit() && !after_name) {
            return true;
        }
        after_name = c.is_alphanumeric() || c == '_';
    }
    false
}

/// How many characters of one line two programs must share to be one route
/// ([`one_route`]): longer than a line that reads a file's lines or rows.
const SHARED_LOGIC: usize = 40;

/// The length of the longest run of characters `a` and `b` both hold.
fn longest_common_run(a: &[char], b: &[char]) -> usize {
    let mut best = 0;
    let mut previous = vec![0usize; b.len() + 1];
    for x in a {
        let mut current = vec![0usize; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            if x == y {
                current[j + 1] = previous[j] + 1;
                best = best.max(current[j + 1]);
            }
        }
        previous = current;
    }
    best
}

/// What a program is asked for: what `path` must hold when `task` is done,
/// in `workspace`; `before`: what the file held before the run, when it
/// is there, to be changed.
#[derive(Clone, Copy)]
struct Route<'a> {
    task: &'a str,
    path: &'a str,
    workspace: &'a Workspace,
    before: Option<&'a str>,
}

/// Where the programs run: `python` on a copy of the workspace at `root`,
/// where the file is put back as it was before the run (`before`; absent
/// for a new file) ahead of each program.
struct Sandbox<'a> {
    python: &'a Python,
    root: &'a Path,
    before: Option<&'a str>,
    /// What a program may take a value from ([`given_to`]): a value it
    /// wrote that none of these holds was typed in.
    given: Vec<String>,
}

impl Sandbox<'_> {
    /// Put `path` back as it was before the run: an edit in place is
    /// derived from the file as it was, and a new file is not there to be
    /// read (the copy was taken after the run wrote it) or left by the
    /// program before.
    fn reset(&self, path: &str) -> Option<()> {
        if path.is_empty() {
            return Some(());
        }
        let full = self.root.join(path);
        match self.before {
            Some(before) => std::fs::write(&full, before).ok(),
            None if full.exists() => std::fs::remove_file(&full).ok(),
            None => Some(()),
        }
    }

    /// Whether `code`, which computed `computed` for `route`, computes
    /// other content when run again from the file as it was under another
    /// hash seed ([`crate::sandbox::SET_ORDER`]).
    async fn ordered_by_a_set(&self, code: &str, route: Route<'_>, computed: &str) -> bool {
        if self.reset(route.path).is_none() {
            return false;
        }
        let python = self.python.with_hash_seed(crate::sandbox::OTHER_HASH_SEED);
        let Ok(printed) = crate::sandbox::run_watched(&python, self.root, code).await.0 else {
            return false;
        };
        let printed = crate::plan::value_as_text(&printed).trim().to_string();
        self.left_in(route.path, route.task, code).unwrap_or(printed) != computed
    }

    /// A value of a column of a table `route.task` names, which the task
    /// names too and `code` holds in no string ([`crate::named_value`]):
    /// the program took the rows of every value. Both checking programs
    /// for "how many kilograms came off the sheep at Hafod" summed every
    /// farm's, agreed, and refuted the run (held-out-51, spent). A TOML,
    /// YAML or XML file to be changed as text is left out, as in the
    /// vote's sandbox ([`crate::named_value::edited_as_text`]). Or a column
    /// of two values the task names that `code`, which computed
    /// `computed`, never reads ([`crate::named_value::flag_ignored`]).
    fn named_value_ignored(&self, code: &str, route: Route<'_>, computed: &str) -> Option<String> {
        let edited_as_text = |path: &str| path == route.path && crate::named_value::edited_as_text(path, code);
        let texts: Vec<(String, String)> = crate::plan::paths_named_by(route.task)
            .into_iter()
            .filter(|path| !edited_as_text(path))
            .filter_map(|path| {
                let text = match (path == route.path, self.before) {
                    (true, Some(before)) => before.to_string(),
                    (true, None) => return None,
                    (false, _) => std::fs::read_to_string(self.root.join(&path)).ok()?,
                };
                Some((path, text))
            })
            .collect();
        let tables: Vec<(&str, &str)> = texts
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        crate::named_value::ignored(code, route.task, &tables)
            .or_else(|| crate::named_value::flag_ignored(code, route.task, &tables, &[computed]))
            .or_else(|| crate::named_date::date_ignored(code, route.task, &tables))
    }

    /// Lines of an input `route.task` names that `code`, which computed
    /// `computed`, does not read ([`crate::form_probe`]).
    async fn form_left_out(&self, code: &str, route: Route<'_>, computed: &str) -> Option<String> {
        let inputs: Vec<(String, String)> = crate::plan::paths_named_by(route.task)
            .into_iter()
            .filter(|input| input != route.path)
            .filter_map(|input| {
                let text = std::fs::read_to_string(self.root.join(&input)).ok()?;
                Some((input, text))
            })
            .collect();
        // The file the program is to make is put back as it was before each copy.
        self.reset(route.path)?;
        let copies = CheckCopies { sandbox: self, route };
        match crate::form_probe::form_left_out(&copies, code, &inputs, computed).await {
            Some(flaw) => Some(flaw),
            None => crate::form_probe::meaning_changed(&copies, (code, route.task), &inputs, computed).await,
        }
    }

    /// What a program (`code`) for `task` left in `path`, when it wrote the file:
    /// its content (a configuration file rewritten through a dump carried
    /// back to its own lines, as the run's own is), when it is not as it
    /// was before and holds something.
    fn left_in(&self, path: &str, task: &str, code: &str) -> Option<String> {
        self.left_in_at(self.root, path, task, code)
    }

    /// [`Self::left_in`] in the copy at `root`.
    fn left_in_at(&self, root: &Path, path: &str, task: &str, code: &str) -> Option<String> {
        if path.is_empty() {
            return None;
        }
        let now = std::fs::read_to_string(root.join(path)).ok()?;
        let carried = self
            .before
            .and_then(|before| crate::carry_back::carried_back(path, before, &now, task, &[code]));
        let now = carried.map_or(now, |(text, _)| text);
        (self.before != Some(now.as_str()) && !now.trim().is_empty()).then(|| now.trim().to_string())
    }
}

/// The checking programs' copies for [`crate::form_probe`]: a program's
/// work in one is what it left in the file of `route`, or what it printed.
struct CheckCopies<'a> {
    sandbox: &'a Sandbox<'a>,
    route: Route<'a>,
}

impl crate::form_probe::CutCopies for CheckCopies<'_> {
    async fn work_in_cut(&self, code: &str, input: &str, text: String) -> Option<String> {
        let Self { sandbox, route } = self;
        let (copy, printed) = crate::sandbox::run_on_cut_copy(sandbox.root, (input, &text), code).await?;
        Some(
            sandbox
                .left_in_at(copy.path(), route.path, route.task, code)
                .unwrap_or(printed),
        )
    }
}

/// One program for `path` and what it computed, run by `python` on the
/// sandbox: the file, when the program wrote it (told to print, the 1.5B
/// model's programs wrote `slug.txt` instead, and what they printed was
/// nothing, "Wrote slug.txt" or the count `write` returns), else what it
/// printed. `None` when the model wrote none, it is one the run itself ran
/// (`ran`), or it failed or computed nothing.
async fn derived(
    calls: &ModelCalls,
    route: Route<'_>,
    (sandbox, ran): (&Sandbox<'_>, &[String]),
    temperature: Option<f32>,
) -> Option<(String, String)> {
    let mut code = program(calls, route, temperature, None).await?;
    // The first program that fails is written again once, shown its error:
    // the 1.5B model's often fail on a header row or an import, and one
    // failure more leaves the judgement to the model's verdict.
    for fix in [temperature.is_none(), false] {
        // The run's own program written again agrees with the run by
        // construction (the 1.5B model wrote the run's `line[0].isupper()`
        // again for the lines that start with a capital A): no evidence, and
        // not run.
        if ran.iter().any(|own| one_route(own, &code, route.task)) {
            return None;
        }
        sandbox.reset(route.path)?;
        let (ran, flaw) = crate::sandbox::run_watched(sandbox.python, sandbox.root, &code).await;
        // What it computed: the file it wrote, else what it printed.
        let ran = ran.map(|printed| {
            let printed = crate::plan::value_as_text(&printed).trim().to_string();
            sandbox.left_in(route.path, route.task, &code).unwrap_or(printed)
        });
        let work = ran.as_ref().ok().map(String::as_str);
        let flaw = crate::sandbox::counted_flaw(flaw, work.as_ref().map(std::slice::from_ref));
        // A program that compared numbers as text computed nothing to go by.
        let ran = match flaw {
            Some(flaw) => Err(crate::tools::ToolError::new(
                crate::tools::ToolErrorKind::Failed,
                format!("it ran, but {flaw}"),
            )),
            None => ran,
        };
        match ran {
            Ok(computed) => {
                // A value typed into the program is the model's guess, and
                // agrees with a run that guessed the same: no derivation.
                // Nor is an edit that put a setting beside the file's own.
                // Nor is one whose work took its order from a set.
                let typed = crate::typed_value::typed_value(&code, &computed, &sandbox.given);
                let mut flaw = typed.map(|typed| crate::typed_value::said(&typed)).or_else(|| {
                    let before = sandbox.before?;
                    crate::carry_back::shadowed(route.path, before, &computed, route.task)
                });
                if flaw.is_none() {
                    flaw = sandbox.named_value_ignored(&code, route, &computed);
                }
                if flaw.is_none() && sandbox.ordered_by_a_set(&code, route, &computed).await {
                    flaw = Some(crate::sandbox::SET_ORDER.to_string());
                }
                if flaw.is_none() {
                    flaw = sandbox.form_left_out(&code, route, &computed).await;
                }
                if let Some(flaw) = flaw {
                    if !fix {
                        return None;
                    }
                    let said = format!("it ran, but {flaw}");
                    code = program(calls, route, temperature, Some((&code, &said))).await?;
                    continue;
                }
                // A program for an edit whose result is the file as it was
                // did not do the edit: on held-out-18 one that reassigned its
                // loop variable printed config.yaml unchanged, and disputed a
                // rename as if it were a derivation of it.
                let as_it_was = sandbox.before.is_some_and(|before| same_content(before, &computed));
                return (!computed.is_empty() && !as_it_was).then_some((code, computed));
            }
            Err(error) if fix => {
                code = program(calls, route, temperature, Some((&code, &error.message))).await?;
            }
            Err(_) => return None,
        }
    }
    None
}

/// What a program for `path` of `task` may take a value from, read once
/// from the copy at `root`: the task, and each file of the copy (the one
/// it derives as it was before the run, `before`).
fn given_to(task: &str, path: &str, root: &Path, before: Option<&str>) -> Vec<String> {
    let files = crate::sandbox::files_under(root).unwrap_or_default();
    let others = files
        .into_iter()
        .filter(|(file, _)| file != path)
        .map(|(_, bytes)| String::from_utf8_lossy(&bytes).into_owned());
    let before = before.map(str::to_string);
    std::iter::once(task.to_string()).chain(others).chain(before).collect()
}

/// The program the model writes for what `path` must hold, without seeing
/// what the run wrote (so it is not led by it); or, given a program of its
/// that `failed` (its code and error), that program with the error fixed.
async fn program(
    calls: &ModelCalls,
    Route {
        task,
        path,
        workspace,
        before,
    }: Route<'_>,
    temperature: Option<f32>,
    failed: Option<(&str, &str)>,
) -> Option<String> {
    let (entries, _) = crate::prompt::listing_for(task, workspace, 40);
    // A new file the run made is not shown: the program is not to read it.
    let files: Vec<&str> = entries
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| before.is_some() || *p != path)
        .collect();
    let fix = failed.map_or(String::new(), |(code, error)| {
        format!("\nThis program was written for it and failed:\n{code}\n\nIts error:\n{error}\n\nWrite the program again with what the error names fixed.\n")
    });
    let what = match path.is_empty() {
        true => "computes the answer this task asks for (the value, name or list itself), and prints only that".to_string(),
        false => format!("computes exactly what the file {path} must hold when this task is done, and prints that content and nothing else"),
    };
    let readers = crate::tools::python::readers_for(files.iter().copied());
    let readers = if readers.is_empty() {
        readers
    } else {
        format!("\n{readers}\n")
    };
    let inputs = || files.iter().copied().filter(|p| *p != path);
    let notes = [
        (
            "How the tables and lines of these files are to be read:",
            crate::file_shape::table_notes(workspace, inputs()),
        ),
        (
            crate::settings_shape::SETTINGS_HEADING,
            crate::file_shape::notes_of(workspace, inputs(), crate::settings_shape::settings_note),
        ),
        (
            crate::value_forms::FORMS_HEADING,
            crate::value_forms::forms_notes(workspace, inputs()),
        ),
    ];
    let readers = notes
        .iter()
        .filter(|(_, said)| !said.is_empty())
        .fold(readers, |readers, (heading, said)| {
            format!("{readers}\n{heading}\n{said}\n")
        });
    let question = format!(
        "Write a short Python 3 program (standard library only) that {what}. Do not write or change any file: only print. It runs in the workspace folder and opens the task's files by their paths.\n\nTask: {task}\n\nFiles in the workspace: {}\n{}{readers}{fix}\nReply with only the program, in one ```python block, and no explanation.",
        files.join(", "),
        inputs_shown(task, (path, before), workspace)
    );
    // Asked as a code block, not a JSON string: in one, the 1.5B model's
    // programs ended at their first `"` (`content.find('channel = "`), kept
    // the object's `}` (`print(n)}`) or wrote `'\n'` as a line break; 13 of
    // its 41 checking programs on held-out-8 did not compile.
    let messages = vec![Message::system(CHECKING_SYSTEM), Message::user(question)];
    let mut request = ChatRequest::new(Role::Synthesizer, "", messages);
    request.max_tokens = Some(400);
    request.temperature = temperature;
    let reply = calls.chat(request).await.ok()?.content.unwrap_or_default();
    crate::verdict::program_in(&reply)
}

/// What a checking program is written under: a program's instructions,
/// not the run's shared prefix of tool guidance (3,000 tokens of tools a
/// program does not call). Under that prefix, two of the 1.5B model's
/// checking programs counted a CSV's header row as an item (53 % where
/// the run's programs, written under a program's instructions, computed
/// 56: held-out-20), and three printed a column with its header where the
/// task said "No header" (held-out-21); each pair refuted a right run.
const CHECKING_SYSTEM: &str = "You write one short Python 3 program that computes what the user asks from the files in its folder and prints it. Only the standard library is there: csv reads .csv files, json .json, configparser .ini, tomllib .toml, and any other file is read as text; re, statistics and datetime help. Reply with the program in one ```python block.";

/// The beginning of each file `task` names that is there (not the run's
/// new file `path`), for the program to be written to the file's real form:
/// told only the name of a CI workflow, the 1.5B model's programs listed
/// the folder instead of counting the job's steps.
fn inputs_shown(task: &str, (path, before): (&str, Option<&str>), workspace: &Workspace) -> String {
    let mut shown = String::new();
    for named in crate::plan::paths_named_by(task).iter().take(SHOWN_INPUTS) {
        // A new file is the run's work, not to be read; a file edited in
        // place is shown as it was, the form its edit must keep (shown no
        // line of TODO.md, three programs guessed how an item is ticked
        // off, one that it is taken out, and refuted a right tick).
        let text = match named == path {
            true => before.map(str::to_string),
            false => workspace
                .resolve(named)
                .ok()
                .and_then(|full| std::fs::read_to_string(full).ok()),
        };
        let Some(text) = text else { continue };
        let head = crate::text::cut_to_budget(&text, SHOWN_INPUT_BYTES);
        let when = if named == path {
            ", before the task is done,"
        } else {
            ""
        };
        shown.push_str(&format!("\nThe file {named}{when} begins:\n{}\n", head.trim_end()));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_says_what_a_program_printed_line_by_line() {
        assert!(said_in("The busiest day was 2024-01-17.", "2024-01-17"));
        assert!(said_in("Ann and Carl signed up.", "Ann\nCarl\n"));
        assert!(!said_in("Ann signed up.", "Ann\nCarl"), "a line it does not say");
        assert!(!said_in("There were 40 rows.", "4"));
        assert!(!said_in("anything", "  \n"), "nothing printed confirms nothing");
    }

    #[test]
    fn programs_that_share_a_line_of_logic_are_one_route() {
        let run = "rows = open('hosts').read().splitlines()\nkept = [r.split()[0] for r in rows if int(r.split()[1]) > 100 and r.split()[2] != 'off']\nprint('\\n'.join(kept))";
        let renamed = "import sys\nlines = open('hosts').read().splitlines()\nnames = [r.split()[0] for r in lines if int(r.split()[1]) > 100 and r.split()[2] != 'off']\nfor n in names:\n    print(n)";
        let other = "with open('hosts') as f:\n    for row in f:\n        name, size, state = row.split()\n        if int(size) > 100 and state != 'off':\n            print(name)";
        assert!(one_route(run, renamed, ""), "the same condition, renamed");
        assert!(!one_route(run, other, ""), "another way to the same rows");
        assert!(one_route("print( n )", "print(n)", ""));
        let reads = "with open('hosts', encoding='utf-8') as f:\n    rows = [line.rstrip('\\n') for line in f]\nprint(len(rows))";
        let reads_too =
            "with open('hosts', encoding='utf-8') as f:\n    rows = [line.rstrip('\\n') for line in f]\nprint(rows[0])";
        assert!(!one_route(reads, reads_too, ""), "reading a file is not logic");
        let run = "emails = open('a.txt').read().splitlines()\nunique_emails = list(dict.fromkeys(emails))\nopen('b.txt', 'w').write('\\n'.join(unique_emails))";
        let check = "emails = open('a.txt').read().split()\nunique_emails = list(dict.fromkeys(emails))\nprint('\\n'.join(unique_emails))";
        assert!(
            !one_route(run, check, ""),
            "an idiom with no value of its own is no shared guess"
        );
        assert!(holds_a_value("x = rows[2]") && holds_a_value("if s == 'off':"));
        let mean = "import csv, statistics\nreader = csv.DictReader(open('hives.csv'))\nkg = [float(row['kg_harvested']) for row in reader]\nprint(statistics.mean(kg))";
        let sum = "import csv\nreader = csv.DictReader(open('hives.csv'))\ntotal = sum(float(row['kg_harvested']) for row in reader)\nprint(total)";
        assert!(
            !one_route(mean, sum, ""),
            "a column read by its name is no shared guess"
        );
        assert_eq!(
            without_keys("t=sum(float(r['kg'])forrinrows)+d[\"a b\"]"),
            "t=sum(float(r[])forrinrows)+d[]"
        );
        assert_eq!(without_keys("x=['a','b'][0]"), "x=['a','b'][0]", "a list is no look-up");
        assert!(!holds_a_value("total = row2 + col_3"));
        let run = "import csv\nreader = csv.DictReader(open('roasts.csv'))\nrows = [row for row in reader if row['origin'] == 'Huila']\nprint(sum(float(r['roasted_kg']) for r in rows))";
        let check = "import csv\nreader = csv.DictReader(open('roasts.csv'))\nrows = [row for row in reader if row['origin'] == 'Huila']\nprint(sum(float(r['green_kg']) - float(r['roasted_kg']) for r in rows))";
        let task = "How much weight did the Huila coffee lose in roasting?";
        assert!(!one_route(run, check, task), "the task's value is no shared guess");
        assert!(
            one_route(run, check, "How much did the coffee lose?"),
            "a value the task does not name is"
        );
        assert_eq!(without_named("x=='huila'or\"abc\"=='ab'", "huila abc"), "x==or=='ab'");
        assert_eq!(
            without_named("if o == 'Blue Mountain':", "the blue mountain beans"),
            "if o == :"
        );
        assert_eq!(
            without_named("s.endswith('ing')", "the running total"),
            "s.endswith('ing')"
        );
    }

    #[test]
    fn an_answer_says_a_value_as_a_whole() {
        let answer = "The slug is ten-tips-for-better-sleep, stored in slug.txt. It runs 4 steps.";
        assert!(says(answer, "ten-tips-for-better-sleep"));
        assert!(says(answer, "4\n"));
        assert!(!says(answer, "ten tips for better sleep"));
        assert!(!says(answer, "tips"), "inside a longer word");
        assert!(!says("It holds 40 rows and 4.5 kg.", "4"));
        assert!(!says(answer, "a\nb"), "one line only");
    }

    #[test]
    fn a_value_with_digits_no_text_seen_holds_is_unfounded() {
        let seen = [
            "<junit.version>5.10.2</junit.version>".to_string(),
            "pom.xml".to_string(),
        ];
        assert!(unfounded("4.12.2\n", &seen));
        assert!(!unfounded("5.10.2", &seen), "read from a result");
        assert!(!unfounded("Noor", &seen), "no digit: a name may be put together");
        assert!(!unfounded("1\n2", &seen), "more than one value");
        assert!(!unfounded("", &seen));
    }

    #[test]
    fn a_printed_report_of_writing_the_file_is_not_its_content() {
        assert!(reports_writing("Wrote both_clubs.txt", "out/both_clubs.txt", "Ana\nJo"));
        assert!(!reports_writing("Ana\nJo", "both_clubs.txt", "Ana"));
        // A file that lists itself may print its own name.
        assert!(!reports_writing("index.txt\nnotes.txt", "index.txt", "index.txt"));
    }
}
