//! The program a model writes for a whole task ([`program_step`]), and
//! programs written apart for one task, each run on a copy of the
//! workspace, and the one whose work another program written apart did too.
//!
//! A small model's one program is one guess: on held-out-15 the 1.5B
//! model's first program did 15 of 32 tasks, and the programs it wrote again
//! when the first was found wrong were wrong in the same tasks. What a
//! program does to the files can be seen without touching them (a copy of
//! the workspace, [`crate::sandbox`]), and two programs sampled apart that
//! write the same files are more likely right than either alone
//! (self-consistency, as in code generation that clusters candidates by
//! what they compute). So the planner samples programs until two agree,
//! within a bound, and the plan is the program of the agreeing pair written
//! first; with no agreement, the first program that did work. A program
//! that ran with a flaw the sandbox watches for (numbers compared as text)
//! is not counted; when no program did work, the first is written again
//! once, shown what went wrong. The vote's tally goes into the plan's
//! record ([`crate::help::Agreement`]): a run whose program no other agreed
//! with is not passed by the model's check alone. Only where the run may
//! run `python` without asking.

use crate::context::{ModelCalls, Setting};
use crate::help::{Agreement, ProgramPrompt};
use crate::list_test::ListTest;
use crate::llm::{ChatRequest, Message, Role};
use crate::plan::Step;
use crate::run::RunError;
use crate::sandbox::{Outcome, Sandbox};
use crate::verdict::same_program;

/// The temperatures of the programs sampled after the first (greedy) one,
/// one program each, while no two agree: a sample is seeded from its
/// request, so each needs its own temperature to be another program. Six
/// programs in all at most: of the held-out-16 and -17 runs where no two of
/// four agreed, four of fourteen were right, and a run is only as sure as
/// its agreement.
const SAMPLED: [f32; 5] = [0.6, 0.8, 1.0, 0.7, 0.9];

/// What the vote found, for the plan's record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Vote {
    /// How many programs were written and run.
    pub programs: usize,
    /// How many did the work of the one chosen (1: no other did).
    pub agreeing: usize,
    /// Which one was chosen (0: the first, greedy one).
    pub chosen: usize,
    /// How many ran with a flaw ([`Outcome::flaw`]), and the first flaw.
    pub flawed: (usize, Option<String>),
    /// The programs that did other work than the one chosen, without
    /// failing or a flaw: the first of each group that did the same, the
    /// biggest group first ([`crate::help::Mend::others`]).
    pub others: Vec<usize>,
    /// The flaw of the one chosen, when every program ran with one or
    /// failed and it is kept all the same.
    pub kept_flaw: Option<String>,
    /// What the task states of the lines of the file it writes, which each
    /// program's file was held to ([`crate::task_test`]).
    pub list_test: Option<ListTest>,
    /// With no two agreeing, whether the one chosen printed a line another
    /// printed too ([`partly_shared`]), rather than being the first.
    pub shared_in_part: bool,
    /// Of those agreeing, how many wrote the value with words around it
    /// ([`seconded_in_words`]).
    pub in_words: usize,
    /// The programs run again with a head that makes them do what they
    /// meant, and then did work ([`with_heads`]), each by the program it
    /// was, kept only where they add to the agreement ([`headed_kept`]): in
    /// the vote they come after the [`Vote::programs`] written.
    pub headed_from: Vec<usize>,
}

impl Vote {
    /// The vote's tally, for the plan's record.
    pub fn agreement(&self) -> Agreement {
        Agreement::new(self.programs, self.agreeing)
    }

    /// The program at `n` in the vote, as the note names it: by its place
    /// among those written, and a program run with a head by the one it was.
    fn named(&self, n: usize) -> String {
        match n.checked_sub(self.programs).and_then(|i| self.headed_from.get(i)) {
            Some(from) => format!("program {} run with a head", from + 1),
            None => format!("program {}", n + 1),
        }
    }

    /// The vote said in a line, for the mend's note.
    pub fn said(&self) -> String {
        let flawed = match &self.flawed {
            (0, _) | (_, None) => String::new(),
            (n, Some(flaw)) => format!(" ({n} not counted: {flaw})"),
        };
        let said = match (self.agreeing, self.chosen) {
            (1, n) if self.shared_in_part => format!(
                "no two of {} programs written apart did the same work on a copy of the folder: {} is kept, the most of whose lines another printed too",
                self.programs,
                self.named(n)
            ),
            (1, 0) => format!(
                "no two of {} programs written apart did the same work on a copy of the folder: the first is kept",
                self.programs
            ),
            (1, n) => format!(
                "no two of {} programs written apart did the same work on a copy of the folder: {} is kept, the first that ran without failing",
                self.programs,
                self.named(n)
            ),
            (agreeing, n) if self.in_words > 0 => format!(
                "{agreeing} of {} programs written apart computed the same value on a copy of the folder ({} of them wrote it with words around it): {} is kept",
                self.programs,
                self.in_words,
                self.named(n)
            ),
            (agreeing, n) => format!(
                "{agreeing} of {} programs written apart did the same work on a copy of the folder: {} is kept",
                self.programs,
                self.named(n)
            ),
        };
        let repaired = match self.headed_from.len() {
            0 => String::new(),
            n => format!(
                "; {n} of them ran again with a head that makes them do what they meant (csv cells compared as numbers where both read as numbers and matched whatever the spaces around them or the case, what was printed written to the file the task names, or a value written with words around it left alone in its file), and did work"
            ),
        };
        said + &flawed + &repaired
    }
}

/// The step of the program to plan, of `first` (the greedy program) and
/// those sampled with `asked`, the vote, and the steps of its
/// [`Vote::others`]; `first` unchanged and no vote when the run cannot run
/// programs aside ([`Sandbox::for_run`]).
pub(crate) async fn chosen(
    calls: &ModelCalls,
    setting: &Setting,
    asked: &ProgramPrompt,
    (first, test): (Step, Option<ListTest>),
    task: &str,
) -> Result<(Step, Option<Vote>, Vec<Step>), RunError> {
    let Some(sandbox) = Sandbox::for_run(setting) else {
        return Ok((first, None, Vec::new()));
    };
    let sandbox = match test.clone() {
        Some(test) => sandbox.with_test(test),
        None => sandbox,
    };
    let Some(outcome) = sandbox.run(code(&first), task).await else {
        return Ok((first, None, Vec::new()));
    };
    let mut tried = vec![(first, outcome)];
    for temperature in SAMPLED {
        if agreed(&tried) {
            break;
        }
        let messages = asked.messages();
        let sampled = (&asked.tool[..], "s1");
        let Some(step) = program_step(calls, Role::Planner, messages, Some(temperature), sampled, task).await? else {
            continue;
        };
        // The same program again is no second opinion.
        if tried.iter().any(|(s, _)| same_program(code(s), code(&step))) {
            continue;
        }
        if let Some(outcome) = sandbox.run(code(&step), task).await {
            tried.push((step, outcome));
        }
    }
    clock_readers_set_aside(&mut tried);
    // A fix is written from one of these, and is that program's opinion
    // again: it is not run with a head, lest the two agree.
    let sampled = tried.len();
    if let Some(fixed) = fixed_once(calls, &sandbox, asked, &tried, task).await? {
        tried.push(fixed);
    }
    let headed_from = headed_kept(&sandbox, &mut tried, sampled, task).await;
    // After the heads are kept or dropped: a headed run dropped sets no
    // clock reader aside.
    clock_readers_set_aside(&mut tried);
    let outcomes: Vec<&Outcome> = tried.iter().map(|(_, o)| o).collect();
    let vote = Vote {
        list_test: test,
        programs: tried.len() - headed_from.len(),
        headed_from,
        ..vote(&outcomes)
    };
    let others = vote.others.iter().map(|&i| tried[i].0.clone()).collect();
    let step = tried.swap_remove(vote.chosen).0;
    Ok((step, Some(vote), others))
}

/// The test of the one new file `task` says to write, when it names one
/// ([`crate::task_test`]) and the run can vote ([`Sandbox::for_run`]): for
/// [`chosen`], asked before the first program is written. Asked between
/// it and its samples, its short prompts pushed the program's long prompt
/// out of the embedded model's cache, and the first sample read it again
/// (on held-out-43, spent, 231 s and then 281 s for one 5,276-token prompt).
pub(crate) async fn list_test(calls: &ModelCalls, setting: &Setting, task: &str) -> Result<Option<ListTest>, RunError> {
    if Sandbox::for_run(setting).is_none() {
        return Ok(None);
    }
    match &crate::plan::new_outputs(task, &setting.tools)[..] {
        [file] => crate::task_test::written(calls, task, file).await,
        _ => Ok(None),
    }
}

/// When no two programs `tried` agree, one written again, told what went
/// wrong on its copy: the first, when none did work without failing or a
/// flaw (six programs of held-out-17's loaves task all failed on "Mon 84"
/// lines: sampled apart, each made its own guess at the file, where the
/// error says what the lines are), else the first that ran with a flaw,
/// whose fix may do the work another did (on held-out-20 three programs
/// took the longest ride as the greatest of its kilometres compared as
/// text, and no two of the others agreed), else the first that failed,
/// whose fix may do the work of one that did not (on held-out-24's hike
/// times four of five programs failed on a timedelta and the fifth was
/// alone). A fix that is a program already tried is no fix, and the next
/// program that went wrong is written again instead, up to [`FIXES`]: the
/// 1.5B model, shown its own program and its error, mostly writes it
/// again as it was (held-out-38's ride log: six programs failed, each on
/// its own line, and the first came back unchanged from its fix, from the
/// executor's recovery and from the replanner, five times in all).
async fn fixed_once(
    calls: &ModelCalls,
    sandbox: &Sandbox,
    asked: &ProgramPrompt,
    tried: &[(Step, Outcome)],
    task: &str,
) -> Result<Option<(Step, Outcome)>, RunError> {
    if agreed(tried) {
        return Ok(None);
    }
    for (first, outcome) in to_fix(tried).into_iter().take(FIXES) {
        let what = match (&outcome.failed, &outcome.flaw) {
            (Some(error), _) => format!("failed:\n{error}"),
            (None, Some(flaw)) => format!("ran, but {flaw}"),
            (None, None) => "ran, but wrote nothing and printed nothing".to_string(),
        };
        let messages = asked.messages_again(code(first), &what);
        let Some(step) = program_step(calls, Role::Planner, messages, None, (&asked.tool[..], "s1"), task).await?
        else {
            continue;
        };
        if tried.iter().any(|(s, _)| same_program(code(s), code(&step))) {
            continue;
        }
        return Ok(sandbox.run(code(&step), task).await.map(|outcome| (step, outcome)));
    }
    Ok(None)
}

/// The programs of `tried` run again with a head ([`with_heads`]), added
/// to it where they add to the agreement, by the program (of the first
/// `sampled`) each was. Heads are tried where the vote confirms nothing,
/// a weak pair too: on held-out-52's soundcheck (spent) two of seven
/// programs agreed and the five others printed the same time without
/// writing it. A headed program's work counts only beside another's that
/// did the same, and only where it adds to the agreement: a head lets a
/// program past its flaw, not past its other mistakes. On held-out-47's
/// silks class (spent) four headed programs did work, no two alike, and
/// the one kept alone changed the improvers' row too (it matched the
/// class, not the level); without the heads the run had failed truthfully.
/// Where a pair agreed, heads may only second its work.
async fn headed_kept(sandbox: &Sandbox, tried: &mut Vec<(Step, Outcome)>, sampled: usize, task: &str) -> Vec<usize> {
    let written = tried.len();
    let before = vote_of(tried);
    if Agreement::new(written, before.agreeing).confirmed() {
        return Vec::new();
    }
    let headed = with_heads(sandbox, &tried[..sampled], task).await;
    let headed_from: Vec<usize> = headed.iter().map(|(from, _)| *from).collect();
    tried.extend(headed.into_iter().map(|(_, run)| run));
    let after = vote_of(tried);
    // Heads may second a pair, never outvote it.
    let pair_kept = before.agreeing < 2 || same_work(&tried[before.chosen].1, &tried[after.chosen].1);
    if after.agreeing < 2 || after.agreeing <= before.agreeing || !pair_kept {
        tried.truncate(written);
        return Vec::new();
    }
    headed_from
}

/// Of the programs `tried`, those that went wrong in a way a head of
/// [`crate::program_heads`] answers (csv cells compared as text, whether
/// or not the program then failed; what the task says to write printed;
/// a value written with words around it), each run again with the head
/// before it, that then did work: no model is asked, and each does what
/// it meant. They are kept in the vote only where they add to its
/// agreement ([`headed_kept`]). On held-out-47 (spent)
/// six of seven programs ranking skaters compared scores as text, and the
/// fixes the model wrote when told kept the flaw.
async fn with_heads(sandbox: &Sandbox, tried: &[(Step, Outcome)], task: &str) -> Vec<(usize, (Step, Outcome))> {
    let mut headed = Vec::new();
    for (from, (step, outcome)) in tried.iter().enumerate() {
        let Some(flaw) = outcome.flaw.as_deref() else {
            continue;
        };
        let ran = crate::program_heads::Ran {
            flaw,
            printed: &outcome.printed,
            failed_or_wrote: outcome.failed.is_some() || !outcome.wrote.is_empty(),
            worded: outcome.worded,
        };
        let Some(with_head) = crate::program_heads::repaired(code(step), &ran) else {
            continue;
        };
        let mut step = step.clone();
        step.args
            .insert("code".to_string(), serde_json::Value::String(with_head));
        if let Some(outcome) = sandbox.run(code(&step), task).await {
            if outcome.work().is_some() {
                headed.push((from, (step, outcome)));
            }
        }
    }
    headed
}

/// Most programs written again by [`fixed_once`].
const FIXES: usize = 2;

/// The programs of `tried` to write again, in the order [`fixed_once`]
/// takes them: all of them when none did work; else those that ran with
/// a flaw, then those that failed.
fn to_fix(tried: &[(Step, Outcome)]) -> Vec<&(Step, Outcome)> {
    if !tried.iter().any(|(_, outcome)| outcome.work().is_some()) {
        return tried.iter().collect();
    }
    let flawed = tried.iter().filter(|(_, o)| o.failed.is_none() && o.flaw.is_some());
    let failed = tried.iter().filter(|(_, o)| o.failed.is_some());
    flawed.chain(failed).collect()
}

/// Most tokens of a program plan's reply.
const PROGRAM_TOKENS: u32 = 1024;

/// Said to a reply that holds an answer where a program was asked for.
const NOT_A_PROGRAM: &str = "That is an answer, not a program. Reply with the Python 3 program that computes it from the files and prints it, in one ```python block.";

/// The one step of a program plan: the program `role` writes in reply to
/// `messages`, as a call of `tool` with id `id`; `None` when the reply
/// holds no program. The replanner asks for one again the same way.
pub(crate) async fn program_step(
    calls: &ModelCalls,
    role: Role,
    messages: Vec<Message>,
    temperature: Option<f32>,
    (tool, id): (&str, &str),
    task: &str,
) -> Result<Option<Step>, RunError> {
    let ask = |messages: Vec<Message>| {
        let mut request = ChatRequest::new(role, "", messages);
        request.max_tokens = Some(PROGRAM_TOKENS);
        if temperature.is_some() {
            request.temperature = temperature;
        }
        calls.chat(request)
    };
    let reply = ask(messages.clone()).await?.content.unwrap_or_default();
    let code = match crate::verdict::program_in(&reply) {
        Some(code) => code,
        None if reply.trim().is_empty() => return Ok(None),
        // An answer where a program was asked for: asked once more, for the
        // program that computes it.
        None => {
            let again = [messages, vec![Message::assistant(reply), Message::user(NOT_A_PROGRAM)]].concat();
            let reply = ask(again).await?.content.unwrap_or_default();
            let Some(code) = crate::verdict::program_in(&reply) else {
                return Ok(None);
            };
            code
        }
    };
    Ok(Some(Step {
        id: id.to_string(),
        description: format!("the whole task, in one program: {}", crate::text::one_line(task, 160)),
        tool: Some(tool.to_string()),
        agent: None,
        args: serde_json::Map::from_iter([("code".to_string(), serde_json::Value::String(code))]),
        depends_on: Vec::new(),
        expected: None,
    }))
}

/// What is said of a program set aside for reading the clock.
const READS_THE_CLOCK: &str = "it reads the clock, and another program did the work without: what the files hold does not change with the hour a program runs at";

/// Programs of `tried` that did work reading the clock (`datetime.now()`,
/// `date.today()`, `time.time()`), each given a flaw, when another did work
/// without: on held-out-40 (spent) one program of seven picked the
/// thermostat's "night" setting by the hour it ran at, and was kept over
/// the one that read `schedule.night`. A task about the present has every
/// program read the clock, and none is set aside then.
fn clock_readers_set_aside(tried: &mut [(Step, Outcome)]) {
    let reads = |step: &Step| reads_the_clock(code(step));
    if !tried
        .iter()
        .any(|(step, outcome)| outcome.work().is_some() && !reads(step))
    {
        return;
    }
    for (step, outcome) in tried.iter_mut() {
        if outcome.work().is_some() && reads(step) {
            outcome.flaw = Some(READS_THE_CLOCK.to_string());
        }
    }
}

/// Whether `code` (Python) reads the time it runs at, comments aside.
fn reads_the_clock(code: &str) -> bool {
    static CLOCK: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let clock = CLOCK.get_or_init(|| {
        regex::Regex::new(r"\b(?:(?:datetime|date|Timestamp)\s*\.\s*(?:now|today|utcnow)|time\s*\.\s*(?:time|time_ns|localtime|gmtime|ctime|strftime))\s*\(")
            .expect("a valid pattern")
    });
    code.lines()
        .map(crate::typed_value::without_comment)
        .any(|line| clock.is_match(line))
}

/// The program of a program step.
pub(crate) fn code(step: &Step) -> &str {
    step.args.get("code").and_then(|c| c.as_str()).unwrap_or_default()
}

/// Whether two of the programs `tried` (none the same) did the same work.
fn agreed(tried: &[(Step, Outcome)]) -> bool {
    agreeing(tried) >= 2
}

/// How many of the programs `tried` did the work of the one a vote keeps.
fn agreeing(tried: &[(Step, Outcome)]) -> usize {
    vote_of(tried).agreeing
}

/// The vote among the programs `tried`.
fn vote_of(tried: &[(Step, Outcome)]) -> Vote {
    let outcomes: Vec<&Outcome> = tried.iter().map(|(_, o)| o).collect();
    vote(&outcomes)
}

/// Which outcome to keep: of the biggest group (two or more) that did the
/// same work ([`same_work`]), the one whose work is written plainest; else
/// the first that did any work; else the first.
fn vote(outcomes: &[&Outcome]) -> Vote {
    let groups = groups(outcomes);
    let mut best: (usize, Option<usize>) = (1, None);
    for (i, group) in groups.iter().enumerate() {
        let Some(group) = group else { continue };
        let agreeing = groups.iter().filter(|g| *g == &Some(*group)).count();
        if agreeing > best.0 || best.1.is_none() {
            best = (agreeing, Some(i));
        }
    }
    // Only a vote with no two agreeing looks for a value seconded in
    // words, then for a partly shared answer.
    let seconding = match best {
        (1, Some(first)) => seconded_in_words(outcomes, first),
        _ => 0,
    };
    let shared = (best.0 == 1 && seconding == 0)
        .then(|| partly_shared(outcomes))
        .flatten();
    let chosen = match best {
        (1, first) => shared.or(first).unwrap_or(0),
        (_, first) => plainest(outcomes, &groups, groups[first.unwrap_or(0)]),
    };
    let best = (best.0 + seconding, best.1);
    let flaws: Vec<&String> = outcomes.iter().filter_map(|o| o.flaw.as_ref()).collect();
    Vote {
        programs: outcomes.len(),
        agreeing: best.0,
        chosen,
        flawed: (flaws.len(), flaws.first().map(|f| f.to_string())),
        others: others(&groups, chosen),
        kept_flaw: outcomes
            .get(chosen)
            .filter(|o| o.failed.is_none())
            .and_then(|o| o.flaw.clone()),
        list_test: None,
        shared_in_part: shared.is_some(),
        in_words: seconding,
        headed_from: Vec::new(),
    }
}

/// Of the programs that printed their work, when no two did the same and
/// none wrote a file, the one the most of whose lines (by share) another
/// printed too: a line of its own printed whole within another's text, or
/// holding a line of another's whole. On held-out-41's mail server (spent)
/// no two of seven programs agreed, and the first that did work was kept:
/// it printed "The .env file does not exist." (it had looked in a folder
/// of its own invention), where one printed the server in a sentence and
/// another printed the server's line with the lines below it. Lines
/// shorter than [`SHARED_CHARS`] are too common to tell.
fn partly_shared(outcomes: &[&Outcome]) -> Option<usize> {
    // Where a program wrote a file, the work is files: what others printed
    // says nothing of them.
    if outcomes.iter().any(|o| !o.wrote.is_empty() && o.work().is_some()) {
        return None;
    }
    let printing: Vec<(usize, Vec<&str>)> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.wrote.is_empty() && o.work().is_some())
        .map(|(i, o)| {
            let lines = o.printed.lines().map(str::trim);
            (i, lines.filter(|l| l.chars().count() >= SHARED_CHARS).collect())
        })
        .collect();
    let within = crate::text::contains_whole;
    let mut best: Option<(usize, usize, usize)> = None;
    for (i, own) in printing.iter().filter(|(_, own)| !own.is_empty()) {
        let others = printing.iter().filter(|(j, _)| j != i);
        let others: Vec<(&str, &Vec<&str>)> = others
            .map(|(j, lines)| (outcomes[*j].printed.as_str(), lines))
            .collect();
        let shared = own
            .iter()
            .filter(|line| {
                others
                    .iter()
                    .any(|(text, lines)| within(text, line) || lines.iter().any(|other| within(line, other)))
            })
            .count();
        let better = best.is_none_or(|(most, of, _)| shared * of > most * own.len());
        if shared > 0 && better {
            best = Some((shared, own.len(), *i));
        }
    }
    best.map(|(_, _, i)| i)
}

/// How many programs, their only flaw a file holding its value with words
/// around it ([`Outcome::worded`]), wrote the value `kept`'s files hold
/// alone, in every file the same: each computed it, only its form is not
/// the file's. Of held-out-42's jam stall takings (spent), the first of six
/// programs wrote `1679.63`, and the third `Total takings: £1679.63`; that
/// one was not counted, no two agreed, and the run failed unconfirmed. Two
/// programs that both wrote words still agree on nothing.
fn seconded_in_words(outcomes: &[&Outcome], kept: usize) -> usize {
    let plain = outcomes[kept];
    if plain.wrote.is_empty() || plain.work().is_none() {
        return 0;
    }
    let same_value = |worded: &Outcome| {
        worded.wrote.len() == plain.wrote.len()
            && worded
                .wrote
                .iter()
                .all(|(path, content)| match (content, plain.wrote.get(path)) {
                    (Some(words), Some(Some(value))) => crate::content::same_number_in_words(words, value),
                    _ => false,
                })
    };
    outcomes
        .iter()
        .enumerate()
        .filter(|(i, o)| *i != kept && o.worded && o.failed.is_none() && same_value(o))
        .count()
}

/// Fewest characters of a line [`partly_shared`] takes as shared.
const SHARED_CHARS: usize = 4;

/// For each outcome, the first outcome whose work it did too
/// ([`same_work`]); `None` for one that did no work. A zero is a group of
/// its own ([`only_zeros`]).
fn groups(outcomes: &[&Outcome]) -> Vec<Option<usize>> {
    outcomes
        .iter()
        .enumerate()
        .map(|(i, outcome)| {
            let first = match only_zeros(outcome) {
                true => Some(i),
                false => outcomes.iter().position(|first| same_work(first, outcome)),
            };
            outcome.work().and(first)
        })
        .collect()
}

/// Whether every file an outcome wrote (or, writing none, what it printed)
/// is a zero ([`crate::content::is_zero`]): what a program whose filter or
/// pattern matched no row computes, whatever it was meant to. On
/// held-out-38's bakery share two programs that read no row (one took a
/// comment line for the header, one matched no product) both wrote `0.0`
/// and agreed, and the vote kept them over programs that had read the rows.
fn only_zeros(outcome: &Outcome) -> bool {
    match outcome.wrote.is_empty() {
        true => crate::content::is_zero(&outcome.printed),
        false => outcome
            .wrote
            .values()
            .all(|content| content.as_deref().is_some_and(crate::content::is_zero)),
    }
}

/// Whether two outcomes did the same work: the same files with the same
/// content (or, writing none, printed the same), each file (or what they
/// printed) one line holding one and the same number, in whatever words
/// ([`crate::content::same_number_in_words`]), or a JSON document of the
/// same data ([`crate::content::same_json`]). Six programs of
/// held-out-21's revenue task summed the column to 2709.9, and wrote
/// `Total revenue: $2709.90`, `Total Revenue: $2709.90` and `2709.9`: no
/// two agreed, and the model's check failed the run.
fn same_work(a: &Outcome, b: &Outcome) -> bool {
    let (Some(work_a), Some(work_b)) = (a.work(), b.work()) else {
        return false;
    };
    if work_a == work_b {
        return true;
    }
    let same_number = crate::content::same_number_in_words;
    if a.wrote.is_empty() && b.wrote.is_empty() {
        return same_number(&a.printed, &b.printed);
    }
    a.wrote.len() == b.wrote.len()
        && a.wrote
            .iter()
            .all(|(path, content)| match (content, b.wrote.get(path)) {
                (Some(x), Some(Some(y))) => {
                    x == y
                        || same_number(x, y)
                        || crate::content::same_json(x, y)
                        || crate::content::same_table_cells(x, y)
                }
                (None, Some(None)) => true,
                _ => false,
            })
}

/// Of the outcomes in `group`, the one whose work is written plainest:
/// the one that kept the most lines of the files it changed as they were
/// (an edit of one value, not of the file's layout), then the fewest
/// characters (the number with no words around it), the earlier among
/// equals. A file that holds a value is read by people and programs
/// alike, and the bare value is the form every reader takes.
fn plainest(outcomes: &[&Outcome], groups: &[Option<usize>], group: Option<usize>) -> usize {
    let size = |outcome: &Outcome| match outcome.wrote.is_empty() {
        true => outcome.printed.len(),
        false => outcome.wrote.values().flatten().map(String::len).sum(),
    };
    (0..outcomes.len())
        .filter(|&i| groups[i] == group)
        .min_by_key(|&i| (std::cmp::Reverse(outcomes[i].kept), size(outcomes[i]), i))
        .unwrap_or(0)
}

/// The first program of each group of `groups` other than the group of the
/// one `chosen`, the biggest group first (the earlier first among equals).
fn others(groups: &[Option<usize>], chosen: usize) -> Vec<usize> {
    let mut firsts: Vec<(usize, usize)> = Vec::new();
    for (i, group) in groups.iter().enumerate() {
        if group.is_none() || *group != Some(i) || *group == groups[chosen] {
            continue;
        }
        firsts.push((groups.iter().filter(|g| *g == group).count(), i));
    }
    firsts.sort_by_key(|&(size, i)| (std::cmp::Reverse(size), i));
    firsts.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program step running `code`.
    fn program(code: &str) -> Step {
        Step {
            id: "s1".into(),
            description: "the whole task".into(),
            tool: Some("python".into()),
            agent: None,
            args: serde_json::Map::from_iter([("code".to_string(), serde_json::Value::String(code.into()))]),
            depends_on: Vec::new(),
            expected: None,
        }
    }

    #[tokio::test]
    async fn programs_whose_cells_compared_with_a_flaw_run_again_as_meant_and_agree() {
        let dir = tempfile::tempdir().unwrap();
        let scores = "skater,score\nIvy,7.5\nJo,61.0\nKit,12.25\n";
        std::fs::write(dir.path().join("jam.csv"), scores).unwrap();
        let sandbox = Sandbox::over(dir.path());
        let task = "Rank the skaters in jam.csv by score, best first, into ranking.txt.";
        let read = "import csv\nrows = list(csv.DictReader(open('jam.csv')))\n";
        let codes = [
            format!("{read}rows.sort(key=lambda r: r['score'], reverse=True)\nopen('ranking.txt', 'w').write('\\n'.join(r['skater'] for r in rows))"),
            format!("{read}best = sorted(rows, key=lambda r: r['score'])[::-1]\nwith open('ranking.txt', 'w') as f:\n    for r in best:\n        f.write(r['skater'] + '\\n')"),
            format!("{read}print(len(rows))\nraise SystemExit('no ranking')"),
        ];
        let mut tried = Vec::new();
        for code in &codes {
            let outcome = sandbox.run(code, task).await.expect("python3 runs the program");
            tried.push((program(code), outcome));
        }
        assert!(tried[..2].iter().all(|(_, o)| o.work().is_none()), "{tried:?}");
        assert!(!agreed(&tried));
        let headed = with_heads(&sandbox, &tried, task).await;
        let from: Vec<usize> = headed.iter().map(|(from, _)| *from).collect();
        assert_eq!(
            from,
            [0, 1],
            "the program that failed on its own has no head: {headed:?}"
        );
        for (_, (step, outcome)) in &headed {
            assert!(crate::program_heads::has_head(code(step)));
            assert_eq!(
                outcome.wrote["ranking.txt"].as_deref(),
                Some("Jo\nKit\nIvy"),
                "{outcome:?}"
            );
        }
        tried.extend(headed.into_iter().map(|(_, run)| run));
        let outcomes: Vec<&Outcome> = tried.iter().map(|(_, o)| o).collect();
        let vote = Vote {
            programs: 3,
            headed_from: from,
            ..vote(&outcomes)
        };
        assert_eq!((vote.agreeing, vote.chosen), (2, 3));
        let said = vote.said();
        assert!(said.starts_with("2 of 3 programs"), "{said}");
        assert!(said.contains("program 1 run with a head is kept"), "{said}");
    }

    #[tokio::test]
    async fn a_program_that_printed_the_list_to_write_runs_again_with_its_prints_sent_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("entries.csv"), "owner\nAnn\nBo\n").unwrap();
        let sandbox = Sandbox::over(dir.path());
        let task = "Write the owners in entries.csv to owners.txt, one per line.";
        let printing = "import csv\nfor row in csv.DictReader(open('entries.csv')):\n    print(row['owner'])\nn = 2";
        let outcome = sandbox.run(printing, task).await.expect("python3 runs the program");
        assert!(outcome
            .flaw
            .as_deref()
            .unwrap_or_default()
            .contains("did not write owners.txt"));
        let headed = with_heads(&sandbox, &[(program(printing), outcome)], task).await;
        let [(0, (step, outcome))] = &headed[..] else {
            panic!("one program run with a head: {headed:?}");
        };
        assert!(crate::program_heads::has_head(code(step)));
        assert_eq!(outcome.wrote["owners.txt"].as_deref(), Some("Ann\nBo"), "{outcome:?}");
        assert_eq!(outcome.printed, "", "the launcher printed nothing of its own");
    }

    #[tokio::test]
    async fn two_programs_that_wrote_one_value_in_other_words_run_again_as_meant_and_agree() {
        let dir = tempfile::tempdir().unwrap();
        let weights = "date,foal,weight_kg\n2025-04-07,Tansy,58.5\n2025-04-07,Ivy,61.0\n2025-06-16,Tansy,118.3\n";
        std::fs::write(dir.path().join("weighins.csv"), weights).unwrap();
        let sandbox = Sandbox::over(dir.path());
        let task = "How much weight has Tansy put on since her first weigh-in in weighins.csv? Write just the gain in kg to gain.txt.";
        let read = "import csv\nw = [float(r['weight_kg']) for r in csv.DictReader(open('weighins.csv')) if r['foal'] == 'Tansy']\n";
        let codes = [
            format!("{read}open('gain.txt', 'w').write(f'{{w[-1] - w[0]:.1f}} kg')"),
            format!("{read}open('gain.txt', 'w').write(f\"Tansy's gain of weight: {{w[-1] - w[0]:.1f}} kg\")"),
        ];
        let mut tried = Vec::new();
        for code in &codes {
            let outcome = sandbox.run(code, task).await.expect("python3 runs the program");
            assert!(outcome.worded, "{outcome:?}");
            tried.push((program(code), outcome));
        }
        assert!(!agreed(&tried), "words and words agree on nothing");
        let headed = with_heads(&sandbox, &tried, task).await;
        assert_eq!(headed.len(), 2, "{headed:?}");
        for (_, (step, outcome)) in &headed {
            assert!(crate::program_heads::has_head(code(step)));
            assert_eq!(outcome.wrote["gain.txt"].as_deref(), Some("59.8"), "{outcome:?}");
            assert_eq!(outcome.flaw, None);
        }
        tried.extend(headed.into_iter().map(|(_, run)| run));
        let outcomes: Vec<&Outcome> = tried.iter().map(|(_, o)| o).collect();
        assert_eq!(vote(&outcomes).agreeing, 2);
    }

    #[tokio::test]
    async fn programs_that_printed_what_a_weak_pair_wrote_run_again_and_confirm_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("gigs.csv"),
            "venue,soundcheck\nPier,12:00\nHarbour,16:45\n",
        )
        .unwrap();
        let sandbox = Sandbox::over(dir.path());
        let task = "What time is the soundcheck at the Harbour in gigs.csv? Write just the time to soundcheck.txt.";
        let find = "import csv\nt = [r['soundcheck'] for r in csv.DictReader(open('gigs.csv')) if r['venue'] == 'Harbour'][0]\n";
        let mut codes: Vec<String> = (0..2)
            .map(|i| format!("{find}open('soundcheck.txt', 'w').write(t)\nx = {i}"))
            .collect();
        codes.extend((0..4).map(|i| format!("{find}print(t)\nx = {i}")));
        let mut tried = Vec::new();
        for code in &codes {
            let outcome = sandbox.run(code, task).await.expect("python3 runs the program");
            tried.push((program(code), outcome));
        }
        assert_eq!(agreeing(&tried), 2, "a weak pair among six");
        let headed = headed_kept(&sandbox, &mut tried, 6, task).await;
        assert_eq!(headed, [2, 3, 4, 5], "the printing programs run with a head");
        assert_eq!(agreeing(&tried), 6);
        assert!(Agreement::new(6, 6).confirmed());
        // A pair among three is confirmed: no heads are run.
        let mut three = tried[..3].to_vec();
        assert!(headed_kept(&sandbox, &mut three, 3, task).await.is_empty());
        assert_eq!(three.len(), 3);
    }

    fn wrote(content: &str) -> Outcome {
        Outcome {
            failed: None,
            printed: String::new(),
            flaw: None,
            worded: false,
            kept: 0,
            wrote: [("out.txt".to_string(), Some(content.to_string()))].into(),
        }
    }

    fn failed() -> Outcome {
        Outcome {
            failed: Some("KeyError: 'litres'".into()),
            printed: String::new(),
            flaw: None,
            worded: false,
            kept: 0,
            wrote: Default::default(),
        }
    }

    fn printed(text: &str) -> Outcome {
        Outcome {
            failed: None,
            printed: text.to_string(),
            flaw: None,
            worded: false,
            kept: 0,
            wrote: Default::default(),
        }
    }

    /// With no two agreeing, a program whose printed line another printed
    /// too (within its text, or whole) is kept over the first that did
    /// work; the one with the most of its lines shared among those.
    #[test]
    fn with_no_agreement_a_line_another_printed_too_is_kept() {
        let missing = printed("The .env file does not exist.");
        let tail = printed("mail.example.org\nSMTP_PORT=587\nTEMP_MAX_C=5");
        let sentence = printed("The mail server is: mail.example.org");
        let v = vote(&[&missing, &tail, &sentence]);
        assert_eq!((v.agreeing, v.chosen), (1, 2), "{v:?}");
        assert!(
            v.said().contains("program 3 is kept, the most of whose lines"),
            "{}",
            v.said()
        );
        let (alone, other) = (printed("Upper Room B"), printed("Lower Hall"));
        let v = vote(&[&alone, &other]);
        assert_eq!((v.chosen, v.shared_in_part), (0, false), "nothing shared: the first");
        let (ann, both) = (printed("Ann"), printed("Ann Lee and Bo Park"));
        assert!(!vote(&[&both, &ann]).shared_in_part, "too short to tell");
        let file = wrote("12");
        let v = vote(&[&file, &tail, &sentence]);
        assert_eq!((v.chosen, v.shared_in_part), (0, false), "a file written is the work");
    }

    #[test]
    fn the_first_of_the_biggest_agreeing_group_is_kept() {
        let (a, b, c) = (wrote("10"), wrote("12"), wrote("12"));
        let v = vote(&[&a, &b, &c]);
        assert_eq!((v.programs, v.agreeing, v.chosen), (3, 2, 1));
        assert!(v.said().starts_with("2 of 3 programs"), "{}", v.said());
    }

    #[test]
    fn with_no_agreement_the_first_that_did_work_is_kept() {
        let (f, a, b) = (failed(), wrote("10"), wrote("12"));
        let v = vote(&[&f, &a, &b]);
        assert_eq!((v.agreeing, v.chosen), (1, 1));
        assert!(v.said().contains("program 2 is kept"), "{}", v.said());
        let v = vote(&[&a, &b]);
        assert_eq!((v.agreeing, v.chosen), (1, 0));
        let v = vote(&[&f, &failed()]);
        assert_eq!(
            (v.agreeing, v.chosen),
            (1, 0),
            "all failed: the first, for the fix to see"
        );
    }

    /// The others are the programs that did other work than the one
    /// chosen, one of each group, the biggest first; none failed.
    #[test]
    fn the_others_are_one_program_of_each_other_work() {
        let (a, b, c, f, d, e) = (
            wrote("10"),
            wrote("12"),
            wrote("12"),
            failed(),
            wrote("14"),
            wrote("14"),
        );
        let x = wrote("9");
        let v = vote(&[&a, &b, &f, &x, &c, &d, &e]);
        assert_eq!(v.chosen, 1);
        assert_eq!(v.others, [5, 0, 3], "14 (two), then 10 and 9 (one each)");
        assert!(vote(&[&f, &failed()]).others.is_empty());
    }

    /// Programs that computed one number agree whatever words they wrote
    /// around it, and the plainest of them is kept; another number, or
    /// the same one rounded otherwise, is other work.
    #[test]
    fn one_number_in_other_words_is_the_same_work() {
        let (a, b, c) = (
            wrote("Total revenue: $2,709.90"),
            wrote("Total Revenue: $2709.90"),
            wrote("2709.9"),
        );
        let v = vote(&[&a, &b, &c]);
        assert_eq!((v.agreeing, v.chosen), (3, 2), "{v:?}");
        let (x, y) = (wrote("Average: 8.2"), wrote("8.24"));
        assert_eq!(vote(&[&x, &y]).agreeing, 1, "8.2 and 8.24 are two results");
        let (d, e) = (wrote("2024-01-17"), wrote("Date: 2024-01-17 (Wed)"));
        assert_eq!(vote(&[&d, &e]).agreeing, 1, "a date is no number in words");
        let printed = |text: &str| Outcome {
            failed: None,
            printed: text.to_string(),
            flaw: None,
            worded: false,
            kept: 0,
            wrote: Default::default(),
        };
        let (p, q) = (printed("The heaviest is 61.9 kg"), printed("61.9"));
        assert_eq!(vote(&[&p, &q]).agreeing, 2);
    }

    /// A program whose one flaw is its value written with words around it
    /// seconds one that wrote the value alone; two such agree on nothing.
    #[test]
    fn a_value_written_in_words_seconds_the_value_written_alone() {
        let in_words = |text: &str| Outcome {
            flaw: Some("out.txt holds the value with words around it".into()),
            worded: true,
            ..wrote(text)
        };
        let (plain, worded) = (wrote("1679.63"), in_words("Total takings: £1679.63"));
        let v = vote(&[&worded, &failed(), &plain]);
        assert_eq!((v.agreeing, v.chosen, v.in_words), (2, 2, 1), "{v:?}");
        assert!(
            v.said().contains("(1 of them wrote it with words around it)"),
            "{}",
            v.said()
        );
        let other = in_words("Total takings: £1716.08");
        assert_eq!(vote(&[&plain, &other]).agreeing, 1, "another value seconds nothing");
        let again = in_words("Takings: 1679.63");
        assert_eq!(vote(&[&worded, &again]).agreeing, 1, "words and words agree on nothing");
        let flawed = Outcome {
            worded: false,
            ..in_words("Total takings: £1679.63")
        };
        assert_eq!(vote(&[&plain, &flawed]).agreeing, 1, "another flaw seconds nothing");
    }

    /// Two edits of a JSON file to the same data agree whatever their
    /// indentation, and the one that kept more of the file's lines as they
    /// were is planned.
    #[test]
    fn one_json_edit_in_other_spacing_is_the_same_work_and_the_smaller_change_is_kept() {
        let edited = |text: &str, kept: usize| Outcome { kept, ..wrote(text) };
        let four = edited("{\n    \"v\": \"1.4.10\",\n    \"name\": \"gig\"\n}", 2);
        let two = edited("{\n  \"v\": \"1.4.10\",\n  \"name\": \"gig\"\n}", 3);
        let other = edited("{\n  \"v\": \"1.4.11\",\n  \"name\": \"gig\"\n}", 3);
        let v = vote(&[&other, &four, &two]);
        assert_eq!((v.agreeing, v.chosen), (2, 2), "{v:?}");
        assert_eq!(v.others, [0]);
    }

    fn step(code: &str) -> Step {
        Step {
            id: "s1".into(),
            description: String::new(),
            tool: Some("python".into()),
            agent: None,
            args: serde_json::Map::from_iter([("code".to_string(), serde_json::Value::String(code.into()))]),
            depends_on: Vec::new(),
            expected: None,
        }
    }

    #[test]
    fn the_programs_written_again_are_the_flawed_then_the_failed_or_all_when_none_did_work() {
        let flawed = Outcome {
            flaw: Some("'97' and '121' compared as text".into()),
            ..wrote("97")
        };
        let tried = [
            (step("a"), failed()),
            (step("b"), wrote("3")),
            (step("c"), flawed),
            (step("d"), failed()),
        ];
        let order: Vec<&str> = to_fix(&tried).iter().map(|(s, _)| code(s)).collect();
        assert_eq!(order, ["c", "a", "d"], "the one that did work is not written again");
        let tried = [(step("a"), failed()), (step("b"), failed())];
        let order: Vec<&str> = to_fix(&tried).iter().map(|(s, _)| code(s)).collect();
        assert_eq!(order, ["a", "b"], "when none did work, each in turn");
    }

    #[test]
    fn a_program_that_reads_the_clock_is_set_aside_when_another_did_the_work_without() {
        let clock = "import datetime\nhour = datetime.datetime.now().hour\nprint(s['day' if hour > 6 else 'night'])";
        let plain = "print(s['schedule']['night']['target'])";
        let mut tried = vec![(step(clock), wrote("20.5")), (step(plain), wrote("16.5"))];
        clock_readers_set_aside(&mut tried);
        assert_eq!(tried[0].1.flaw.as_deref(), Some(READS_THE_CLOCK));
        assert_eq!(tried[1].1.flaw, None);
        let outcomes: Vec<&Outcome> = tried.iter().map(|(_, o)| o).collect();
        assert_eq!(vote(&outcomes).chosen, 1);
        // A task about the present: every program reads the clock, none is set aside.
        let today = "from datetime import date\nprint((date(2025, 1, 1) - date.today()).days)";
        let mut all = vec![
            (step(today), wrote("12")),
            (step(&today.replace("days", "days ")), wrote("12")),
        ];
        clock_readers_set_aside(&mut all);
        assert!(all.iter().all(|(_, o)| o.flaw.is_none()));
        assert!(!reads_the_clock(
            "# uses datetime.now() nowhere\nprint(time.strptime(s, '%H:%M'))"
        ));
    }

    #[test]
    fn two_zeros_are_no_agreement() {
        let outcomes = [wrote("0.0"), wrote("0"), wrote("37.5")];
        let outcomes: Vec<&Outcome> = outcomes.iter().collect();
        let tally = vote(&outcomes);
        assert_eq!(tally.agreeing, 1, "two programs that summed nothing do not agree");
        assert_eq!(tally.chosen, 0, "with no agreement the first that did work is kept");
        let outcomes = [wrote("37.5"), wrote("0.0"), wrote("37.50")];
        let outcomes: Vec<&Outcome> = outcomes.iter().collect();
        assert_eq!(vote(&outcomes).agreeing, 2, "numbers that are not zero still agree");
    }

    #[test]
    fn two_failures_are_no_agreement() {
        let (f, g, a) = (failed(), failed(), wrote("10"));
        assert_eq!(vote(&[&f, &g, &a]).chosen, 2);
    }
}
