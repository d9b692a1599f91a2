//! A program run on a copy of the workspace, and what it did there: the
//! files it wrote or changed, what it printed, or why it failed.
//!
//! The planner uses it to compare programs written apart for the same task
//! ([`crate::program_vote`]) before one of them is shown for approval: the
//! workspace itself is never touched, and a program runs only where the
//! run may run `python` without asking.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use crate::context::Setting;
use crate::list_test::{ListOrder, ListTest};
use crate::policy::Permission;
use crate::scratch::{CopyLimit, ScratchDir};
use crate::tools::python::Python;
use crate::tools::shell::ShellConfig;
use crate::tools::workspace::Workspace;
use crate::tools::Tool;

/// Most bytes and files of a workspace copied for a program (here, and for
/// the second derivation, [`crate::recompute`]); a bigger workspace is not
/// copied, and no program runs beside it.
const COPY_LIMIT: CopyLimit = CopyLimit {
    files: 1000,
    bytes: 8 * 1024 * 1024,
};

/// Most bytes of one written file kept for comparison.
const KEPT_BYTES: usize = 64 * 1024;

/// Where the watch below notes a flaw, in the program's folder.
const FLAW_FILE: &str = ".planexec-flaw";

/// Run before a program on a copy: the cells its `csv` readers give are
/// text that notes (in [`FLAW_FILE`]) when two that read as numbers are
/// compared as text with another result than as numbers, and then compares
/// them as text all the same. The 1.5B model's programs took the wettest
/// month as `max(rows, key=lambda r: r['rain_mm'])`: "97" > "121". Two
/// such programs agree with each other, so the vote alone cannot tell.
/// A number written with thousands separators (`"9,870"`) is a number
/// here too: the lowest month by `min` over such cells was "10,020"'s
/// (held-out-31). It notes too a cell found different from the program's
/// own text only in spaces or case, texts that are numbers ordered as text
/// by `sorted`, `min` or `max`, a line-anchored pattern found over many
/// lines without `re.M`, a match cut out of the middle of a number, and
/// patterns that found nothing at all.
pub(crate) const WATCH: &str = r#"def _planexec_watch():
    import csv, os, re
    mark = os.path.abspath(".planexec-flaw")
    grouped = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
    def number(text):
        # `9,870` is a number too, written with thousands separators.
        text = text.strip()
        if grouped.fullmatch(text):
            text = text.replace(",", "")
        try:
            n = float(text)
        except ValueError:
            return None
        return n if n == n and abs(n) != float("inf") else None
    def note(flaw):
        with open(mark, "a", encoding="utf-8") as f:
            f.write(flaw + "\n")
    def compared(a, b, op, as_text):
        if isinstance(b, str):
            x, y = number(a), number(b)
            if x is not None and y is not None and getattr(float, op)(x, y) != as_text:
                note(f"{str(a)!r} and {str(b)!r} compared as text, not as numbers")
        return as_text
    # A cell compared with text of the program's own (`'weekly'`) and
    # found different only in the spaces around it or in letter case
    # (`' Weekly '`): the rows a filter left out for it were asked for
    # (held-out-31's plants watered weekly). Cell with cell (a dedupe) is
    # left alone: there the case may be the point.
    def matched(a, b, equal):
        if not equal and type(b) is str and str.strip(a) \
                and str.casefold(str.strip(a)) == b.strip().casefold():
            differs = "the spaces around it" if str.strip(a) == b.strip() else "letter case"
            note(f"the value {str(a)!r} was compared with {b!r} and found different only in {differs}: strip (and casefold) values before comparing them")
        return equal
    class Cell(str):
        __hash__ = str.__hash__
        def __lt__(self, o): return compared(self, o, "__lt__", str.__lt__(self, o))
        def __le__(self, o): return compared(self, o, "__le__", str.__le__(self, o))
        def __gt__(self, o): return compared(self, o, "__gt__", str.__gt__(self, o))
        def __ge__(self, o): return compared(self, o, "__ge__", str.__ge__(self, o))
        def __eq__(self, o):
            equal = str.__eq__(self, o)
            return equal if equal is NotImplemented else matched(self, o, equal)
        def __ne__(self, o):
            # `str.__eq__` of a cell and a number is NotImplemented, not False.
            equal = self.__eq__(o)
            return equal if equal is NotImplemented else not equal
    # A cell stripped or lowered is still a cell, so the comparison after
    # `.lower()` is watched too.
    for name in ("strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize"):
        setattr(Cell, name, (lambda plain: lambda self, *a: Cell(plain(self, *a)))(getattr(str, name)))
    # Texts that all read as numbers, ordered as text (`sorted` of ticket
    # numbers found by a pattern: "1150" before "450", held-out-31), where
    # the order as numbers differs.
    import builtins
    plain_sorted, plain_min, plain_max = builtins.sorted, builtins.min, builtins.max
    # An item's text that is a number: the item, or the first of a tuple
    # (`sorted(counts.items())`).
    def lead(x):
        return x[0] if isinstance(x, tuple) and x else x
    def all_numbers(items):
        return len(items) > 1 and all(isinstance(lead(x), str) and number(lead(x)) is not None for x in items)
    def by_number(x):
        return number(lead(x))
    def ordered_as_text(items, as_text, as_numbers):
        if [by_number(x) for x in as_text] != [by_number(x) for x in as_numbers]:
            shown = ", ".join(repr(str(lead(x))) for x in items[:4])
            note(f"texts that are numbers ({shown}, ...) were ordered as text, not as numbers: convert them with int() or float(), or give key=int")
    def sorted_watched(iterable, /, *, key=None, reverse=False):
        items = list(iterable)
        ordered = plain_sorted(items, key=key, reverse=reverse)
        if key is None and all_numbers(items):
            ordered_as_text(items, ordered, plain_sorted(items, key=by_number, reverse=reverse))
        return ordered
    def extreme_watched(plain):
        def watched(*args, **kw):
            items = list(args[0]) if len(args) == 1 else list(args)
            found = plain(items, **kw) if len(args) == 1 else plain(*args, **kw)
            if kw.get("key") is None and all_numbers(items):
                ordered_as_text(items, [found], [plain(items, key=by_number)])
            return found
        return watched
    # The program's own builtins: the launcher gives it a copy, and its own
    # code keeps the plain ones.
    scope = globals().get("__builtins__", builtins)
    scope = scope if isinstance(scope, dict) else vars(scope)
    scope.update(sorted=sorted_watched, min=extreme_watched(plain_min), max=extreme_watched(plain_max))
    plain_reader, plain_dict = csv.reader, csv.DictReader
    class Reader:
        def __init__(self, *a, **k): self._r = plain_reader(*a, **k)
        def __iter__(self): return self
        def __next__(self): return [Cell(c) for c in next(self._r)]
        def __getattr__(self, name): return getattr(self._r, name)
    class DictReader(plain_dict):
        def __next__(self):
            row = super().__next__()
            return {k: Cell(v) if type(v) is str else v for k, v in row.items()}
    csv.reader, csv.DictReader = Reader, DictReader
    # A pattern anchored at a line's start or end (`^## `), found all over a
    # text of many lines without re.M, is found at the text's start or end
    # only, once at most: the level-2 headings of a handbook were counted as
    # 0 or 1. (`re.sub(r'^\s+', '', text)` on the whole text is an lstrip,
    # and left alone.)
    plain_findall, plain_finditer = re.findall, re.finditer
    def lines_missed(plain):
        def watched(pattern, string, flags=0):
            if isinstance(pattern, str) and isinstance(string, str) and isinstance(flags, int) and not flags & re.M \
                    and (pattern.startswith("^") or pattern.endswith("$")) and "\n" in string.strip():
                once = len(plain_findall(pattern, string, flags))
                every = len(plain_findall(pattern, string, flags | re.M))
                if every != once:
                    note(f"the pattern {pattern!r} was found over a text of many lines without re.M, so its ^ or $ matched only at the text's start or end ({once} match(es); with re.M, {every})")
            return plain(pattern, string, flags)
        return watched
    re.findall, re.finditer = lines_missed(re.findall), lines_missed(re.finditer)
    # Whether each pattern the program searched a text with found anything
    # there. When none found anything, what the program made of its finds is
    # made of nothing: on held-out-32 `\b€\d+` (no word edge before €)
    # summed no amounts into 0.00, and `re.match` of a login line's middle
    # counted none; two such programs agreed. Noted at exit, and counted a
    # flaw only when the work is nothing too (`counted_flaw`).
    found = {}
    def tally(pattern, string, hit):
        if isinstance(string, str) and string.strip():
            text = pattern.pattern if isinstance(pattern, Pattern) else pattern
            found[text] = found.get(text, False) or bool(hit)
        return hit
    # A match that begins or ends between two digits took part of a number:
    # `€(\d{1,3},\d{2})` read €1,184.20 as 1,18 (held-out-32).
    def cut(matches):
        for m in matches:
            s, a, b = m.string, m.start(), m.end()
            if isinstance(s, str) and b - a > 1 and (0 < a and s[a - 1].isdigit() and s[a].isdigit()
                    or b < len(s) and s[b - 1].isdigit() and s[b].isdigit()):
                note(f"the pattern {m.re.pattern!r} took {m.group(0)!r} out of the middle of a number in {s[max(0, a - 12):b + 12]!r}: match each number whole, with its separators")
                return
    class Pattern:
        # A compiled pattern whose searches are tallied.
        def __init__(self, plain): self._plain = plain
        def __getattr__(self, name): return getattr(self._plain, name)
        def search(self, string, *a, **k): return matched_by(self, string, self._plain.search(string, *a, **k))
        def match(self, string, *a, **k): return matched_by(self, string, self._plain.match(string, *a, **k))
        def fullmatch(self, string, *a, **k): return matched_by(self, string, self._plain.fullmatch(string, *a, **k))
        def findall(self, string, *a, **k):
            cut(self._plain.finditer(string, *a, **k))
            hits = self._plain.findall(string, *a, **k)
            words_cut(self, string, hits, *a, *k)
            return tally(self, string, hits)
        def finditer(self, string, *a, **k): return iter(matched_by(self, string, list(self._plain.finditer(string, *a, **k))))
    def matched_by(pattern, string, hit):
        cut(hit if isinstance(hit, list) else [hit] if hit else [])
        return tally(pattern, string, hit)
    def plain_pattern(pattern):
        return pattern._plain if isinstance(pattern, Pattern) else pattern
    # A pattern of word letters (`\w+`, `[A-Za-z]+`) found over a text whose
    # words hold an apostrophe or a hyphen (`It's`, `bad-tempered`) cuts
    # each such word in two: a story's words were counted so, two
    # programs agreed, and the run said `succeeded` (held-out-45). Noted
    # once, with the count of matches, and counted a flaw only when the
    # work holds that count (`counted_flaw`): a word's frequency taken
    # from such matches may be right.
    word_patterns = {r"\w+", r"\b\w+\b", r"[a-zA-Z]+", r"[A-Za-z]+", r"\b[a-zA-Z]+\b", r"\b[A-Za-z]+\b"}
    joined = re.compile(r"[^\W\d_]['\u2019-][^\W\d_]")
    cut_noted = []
    def words_cut(pattern, string, hits, *rest):
        text = getattr(plain_pattern(pattern), "pattern", pattern)
        if not cut_noted and not rest and isinstance(text, str) and text in word_patterns \
                and isinstance(string, str) and isinstance(hits, list):
            inside = joined.search(string)
            spaced = string.split()
            if inside and len(hits) != len(spaced):
                word = next(w for w in spaced if inside.group(0) in w)
                cut_noted.append(True)
                note(f"words cut: {len(hits)}: the pattern {text!r} cut words at an apostrophe or a hyphen inside them ({word!r} stands between spaces as one word): {len(hits)} matches, where the text has {len(spaced)} words between spaces")
    def searching(plain, every=False, spans=False):
        def watched(pattern, string, *a, **k):
            hit = plain(plain_pattern(pattern), string, *a, **k)
            if spans:
                cut(plain_finditer(plain_pattern(pattern), string, *a, **k))
                words_cut(pattern, string, hit, *a, *k)
                return tally(pattern, string, hit)
            return iter(matched_by(pattern, string, list(hit))) if every else matched_by(pattern, string, hit)
        return watched
    def unwrapped(plain):
        return lambda pattern, *a, **k: plain(plain_pattern(pattern), *a, **k)
    plain_compile = re.compile
    re.compile = lambda pattern, flags=0: Pattern(plain_compile(plain_pattern(pattern), flags))
    re.search, re.match, re.fullmatch = searching(re.search), searching(re.match), searching(re.fullmatch)
    re.findall, re.finditer = searching(re.findall, spans=True), searching(re.finditer, every=True)
    re.sub, re.subn, re.split = unwrapped(re.sub), unwrapped(re.subn), unwrapped(re.split)
    def nothing_found():
        if found and not any(found.values()):
            shown = ", ".join(repr(p) for p in list(found)[:3])
            note(f"found nothing: the pattern {shown} found nothing in any text it was searched in: look at what the text holds (its words, signs and where they stand on a line), and match that")
    import atexit
    atexit.register(nothing_found)
    # Run again under another hash seed (`Sandbox::ordered_by_a_set`), a
    # folder is listed in reverse: no file system promises an order, and a
    # program whose work keeps the listing's does other work then. On
    # held-out-32 the photos "biggest first" came in `os.listdir`'s order.
    if os.environ.get("PYTHONHASHSEED", "0") != "0":
        plain_listdir, plain_scandir = os.listdir, os.scandir
        class Listing:
            def __init__(self, entries): self._entries = iter(entries)
            def __iter__(self): return self
            def __next__(self): return next(self._entries)
            def __enter__(self): return self
            def __exit__(self, *exc): return False
            def close(self): pass
        def scandir(*a, **k):
            with plain_scandir(*a, **k) as listed:
                return Listing(list(listed)[::-1])
        os.listdir = lambda *a, **k: plain_listdir(*a, **k)[::-1]
        os.scandir = scandir
_planexec_watch()
del _planexec_watch
"#;

/// The hash seed a program is run under a second time
/// ([`Sandbox::ordered_by_a_set`]); the tool's own is 0.
pub(crate) const OTHER_HASH_SEED: u32 = 1;

/// Said of a program whose work changed under another hash seed: it is
/// not counted, and the program written again is told why.
pub(crate) const SET_ORDER: &str = "what it wrote came out in another order when it ran again: it took the order from a set or a folder's listing, which keep none (keep the order of the input, or the order the task asks for)";

/// What one program did on its copy of the workspace.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// Why it failed (its error), when it did.
    pub failed: Option<String>,
    /// What it printed, trimmed.
    pub printed: String,
    /// The files it made or changed, by workspace path, with what they hold
    /// (trimmed); a file it removed holds `None`.
    pub wrote: BTreeMap<String, Option<String>>,
    /// A flaw seen while it ran ([`WATCH`]): its work is not to be trusted.
    pub flaw: Option<String>,
    /// Whether its flaw is only that a file the task names holds its value
    /// with words around it ([`crate::content::value_in_words`]): its value
    /// may still second a program that wrote the value alone.
    pub worded: bool,
    /// How many lines of the files it changed are still there as they were:
    /// of two programs that did one edit, the one that kept more of the
    /// file is the smaller change.
    pub kept: usize,
}

impl Outcome {
    /// The work it did, as two programs that did the same work share it:
    /// the files it wrote, or, when it wrote none, what it printed. `None`
    /// when it failed, did nothing or ran with a flaw.
    pub fn work(&self) -> Option<String> {
        if self.failed.is_some() || self.flaw.is_some() {
            return None;
        }
        if self.wrote.is_empty() {
            return (!self.printed.is_empty()).then(|| self.printed.clone());
        }
        if self
            .wrote
            .values()
            .all(|content| content.as_ref().is_some_and(String::is_empty))
        {
            return None;
        }
        serde_json::to_string(&self.wrote).ok()
    }
}

/// Where programs run: fresh copies of the run's workspace.
pub(crate) struct Sandbox {
    root: std::path::PathBuf,
    /// The workspace's files as they are, to tell what a program changed.
    original: BTreeMap<String, Vec<u8>>,
    /// What the task states of the lines of the file it writes
    /// ([`crate::task_test`]), which each program's file must keep to,
    /// with the workspace's files as text, for the order they first
    /// appear in (decoded once, not for each program).
    test: Option<(ListTest, Vec<(String, String)>)>,
}

impl Sandbox {
    /// A sandbox for the run of `setting`, when it has the `python` tool,
    /// may run it without asking (a program is an external effect) and its
    /// workspace is small enough to copy.
    pub fn for_run(setting: &Setting) -> Option<Sandbox> {
        let root = programs_may_run(setting)?.root().to_path_buf();
        let original = files_under(&root)?;
        Some(Sandbox {
            root,
            original,
            test: None,
        })
    }

    /// A sandbox over the workspace at `root` as it is now, for tests of
    /// what uses one.
    #[cfg(test)]
    pub(crate) fn over(root: &Path) -> Sandbox {
        Sandbox {
            root: root.to_path_buf(),
            original: files_under(root).unwrap_or_default(),
            test: None,
        }
    }

    /// The sandbox with the file each program writes held to `test`.
    pub fn with_test(self, test: ListTest) -> Sandbox {
        let texts = self
            .original
            .iter()
            .map(|(path, bytes)| (path.clone(), String::from_utf8_lossy(bytes).into_owned()))
            .collect();
        Sandbox {
            test: Some((test, texts)),
            ..self
        }
    }

    /// What breaks the sandbox's test in the file the program wrote in its
    /// copy at `root`, said as a flaw; the files the order is read from
    /// are those `task` names, else all of them.
    fn test_broken(&self, root: &Path, task: &str) -> Option<String> {
        let (test, texts) = self.test.as_ref()?;
        let written = std::fs::read_to_string(root.join(&test.file)).ok()?;
        let named = crate::plan::paths_named_by(task);
        let all: Vec<(&str, &str)> = texts
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        let named_inputs: Vec<(&str, &str)> = all
            .iter()
            .filter(|(path, _)| named.iter().any(|n| n == path))
            .copied()
            .collect();
        let inputs = match named_inputs.is_empty() {
            true => all,
            false => named_inputs,
        };
        test.broken_by(&written, &inputs)
    }

    /// Run `code`, a program for `task`, on a fresh copy of the workspace;
    /// `None` when no copy could be made or there is no interpreter.
    pub async fn run(&self, code: &str, task: &str) -> Option<Outcome> {
        let (copy, python) = python_on_copy(&self.root, "sandbox")?;
        let times = self.modified_times(copy.path());
        let (ran, flaw) = run_watched(&python, copy.path(), code).await;
        let (printed, failed) = match ran {
            Ok(printed) => (crate::plan::value_as_text(&printed).trim().to_string(), None),
            Err(error) => (String::new(), Some(error.message)),
        };
        let after = self.carried_back(files_under(copy.path())?, task, code);
        let wrote = changed(&self.original, &after);
        let work: Vec<&str> = match wrote.is_empty() {
            true => vec![printed.as_str()],
            false => wrote.values().map(|text| text.as_deref().unwrap_or_default()).collect(),
        };
        let earlier = counted_flaw(flaw, failed.is_none().then_some(&work[..]))
            .or_else(|| self.typed(code, task, &printed, &wrote))
            .or_else(|| self.named_value_ignored(code, task, (&printed, &wrote)))
            .or_else(|| self.rewritten(&after, task, code))
            .or_else(|| self.shadowed(&after, task))
            .or_else(|| self.form_changed(&after, task));
        let worded = match earlier {
            Some(_) => None,
            None => self.worded_value(&wrote, task),
        };
        let worded_only = worded.is_some() && failed.is_none();
        let flaw = earlier
            .or(worded)
            .or_else(|| self.new_file_flaw(&wrote, task))
            .or_else(|| {
                failed
                    .is_none()
                    .then(|| self.work_not_done(&wrote, task, &printed))
                    .flatten()
            })
            .or_else(|| self.written_back(copy.path(), &times, &wrote));
        let flaw = match (flaw, &failed) {
            (None, None) => match self.test_broken(copy.path(), task) {
                Some(broken) => Some(broken),
                None => match self.ordered_by_a_set(code, task, (&printed, &wrote)).await {
                    Some(flaw) => Some(flaw),
                    None => self.form_left_out(code, task, (&printed, &wrote)).await,
                },
            },
            (flaw, _) => flaw,
        };
        let kept = kept_lines(&self.original, &after);
        Some(Outcome {
            failed,
            printed,
            wrote,
            flaw,
            worded: worded_only,
            kept,
        })
    }

    /// Lines of an input `task` names that `code`, which `printed` and
    /// `wrote` these, does not read ([`crate::form_probe`]).
    async fn form_left_out(
        &self,
        code: &str,
        task: &str,
        (printed, wrote): (&str, &BTreeMap<String, Option<String>>),
    ) -> Option<String> {
        let inputs: Vec<(String, String)> = crate::plan::paths_named_by(task)
            .into_iter()
            .filter_map(|input| {
                let text = String::from_utf8(self.original.get(&input)?.clone()).ok()?;
                Some((input, text))
            })
            .collect();
        let copies = VoteCopies { sandbox: self, task };
        let work = work(printed, wrote);
        if let Some(flaw) = crate::form_probe::form_left_out(&copies, code, &inputs, &work).await {
            return Some(flaw);
        }
        // A file the program wrote is its work, and differs on a filled copy.
        let read: Vec<(String, String)> = inputs
            .into_iter()
            .filter(|(input, _)| !wrote.contains_key(input))
            .collect();
        crate::form_probe::meaning_changed(&copies, (code, task), &read, &work).await
    }

    /// [`SET_ORDER`], when `code` run again on a fresh copy under another
    /// hash seed did other work than it did the first time, when it
    /// `printed` and `wrote` these: other files, or, writing none, other
    /// printed text. A program that dedupes by `set()` writes its lines in the
    /// order the seed gives, and two such programs agree with each other.
    async fn ordered_by_a_set(
        &self,
        code: &str,
        task: &str,
        (printed, wrote): (&str, &BTreeMap<String, Option<String>>),
    ) -> Option<String> {
        let (copy, python) = python_on_copy(&self.root, "sandbox")?;
        let (ran, _) = run_watched(&python.with_hash_seed(OTHER_HASH_SEED), copy.path(), code).await;
        let printed_again = crate::plan::value_as_text(&ran.ok()?).trim().to_string();
        let wrote_again = changed(
            &self.original,
            &self.carried_back(files_under(copy.path())?, task, code),
        );
        let changed = match wrote.is_empty() {
            true => printed_again != printed,
            false => &wrote_again != wrote && !self.reordered_freely(wrote, &wrote_again),
        };
        changed.then(|| SET_ORDER.to_string())
    }

    /// Whether `again` differs from `wrote` only in the order of the lines
    /// of the list whose order the task leaves free, as two readings of it
    /// agreed ([`ListOrder::Any`]): on held-out-41 (spent) all six programs
    /// listing "files bigger than 2000 bytes … The order doesn't matter"
    /// in `os.listdir`'s order were not counted, and the run failed.
    fn reordered_freely(
        &self,
        wrote: &BTreeMap<String, Option<String>>,
        again: &BTreeMap<String, Option<String>>,
    ) -> bool {
        let Some((test, _)) = self.test.as_ref().filter(|(test, _)| test.order == ListOrder::Any) else {
            return false;
        };
        let sorted_lines = |text: &Option<String>| {
            let mut lines: Vec<String> = text
                .as_deref()
                .unwrap_or_default()
                .lines()
                .map(|l| l.trim().to_string())
                .collect();
            lines.sort();
            lines
        };
        wrote.len() == again.len()
            && wrote.iter().all(|(path, text)| match again.get(path) {
                Some(other) if path == &test.file => sorted_lines(text) == sorted_lines(other),
                Some(other) => other == text,
                None => false,
            })
    }

    /// A file the program made that `task` names and that holds its value
    /// with words around it ([`crate::content::value_in_words`]), said as a
    /// flaw: the program is not counted, and when none is, the first is
    /// written again told so.
    fn worded_value(&self, wrote: &BTreeMap<String, Option<String>>, task: &str) -> Option<String> {
        let named = crate::plan::paths_named_by(task);
        let texts = self.original_texts();
        let inputs: Vec<&str> = texts.iter().map(|(_, text)| text.as_ref()).collect();
        wrote
            .iter()
            .filter(|(path, _)| named.contains(path) && !self.original.contains_key(*path))
            .find_map(|(path, text)| crate::content::value_in_words(path, text.as_deref()?, &inputs))
    }

    /// Each file of the workspace, by path, with its text.
    fn original_texts(&self) -> Vec<(&str, std::borrow::Cow<'_, str>)> {
        self.original
            .iter()
            .map(|(path, bytes)| (path.as_str(), String::from_utf8_lossy(bytes)))
            .collect()
    }

    /// The first flaw found in a new file the program wrote, read beside
    /// the workspace's files as they were (path, text), decoded once for
    /// all the checks: those every new file is held to
    /// ([`crate::new_file::checks`]), and, after the two of a table's
    /// header, a column beside those `task` lists ([`crate::named_columns`]).
    fn new_file_flaw(&self, wrote: &BTreeMap<String, Option<String>>, task: &str) -> Option<String> {
        let texts = self.original_texts();
        let inputs: Vec<(&str, &str)> = texts.iter().map(|(path, text)| (*path, text.as_ref())).collect();
        let new_files: Vec<(&str, &str)> = wrote
            .iter()
            .filter(|(path, _)| !self.original.contains_key(*path))
            .filter_map(|(path, text)| Some((path.as_str(), text.as_deref()?)))
            .collect();
        let mut checks = crate::new_file::checks(task);
        checks.insert(
            2,
            Box::new(move |path, text, inputs| crate::named_columns::unlisted(path, text, task, inputs)),
        );
        crate::new_file::first_flaw(&checks, &new_files, &inputs).map(|(_, flaw)| flaw)
    }

    /// What of the work `task` names a program that ran did not do: a file
    /// to change left as it was, or a new file to write not written.
    pub(crate) fn work_not_done(
        &self,
        wrote: &BTreeMap<String, Option<String>>,
        task: &str,
        printed: &str,
    ) -> Option<String> {
        self.left_as_it_was(wrote, task)
            .or_else(|| self.not_written(wrote, task, printed))
    }

    /// The first file `task` says to change in place
    /// ([`crate::plan::edited_in`]), when the program changed none of
    /// them, said as a flaw: what it printed is no edit. Two programs for
    /// held-out-22's TODO.md, whose case-sensitive match found no line,
    /// printed the same and agreed, and the run said `succeeded`.
    fn left_as_it_was(&self, wrote: &BTreeMap<String, Option<String>>, task: &str) -> Option<String> {
        let edited = crate::plan::edited_in(task, &|path| self.original.contains_key(path));
        let first = edited.first()?;
        let changed_one = edited.iter().any(|path| wrote.contains_key(path));
        (!changed_one).then(|| format!("it left {first} as it was, and the task says to change it"))
    }

    /// The first new file `task` says to write ([`crate::plan::outputs_named_in`])
    /// that the program did not write, said as a flaw with what it printed:
    /// what a program prints in place of the file is no work. On
    /// held-out-31 (spent) seven programs for a budget's difference found
    /// no `$2,450.00` by their patterns and printed "Error: Unable to find
    /// planned or actual spending"; their prints were taken for work, and
    /// no program was told what went wrong.
    fn not_written(&self, wrote: &BTreeMap<String, Option<String>>, task: &str, printed: &str) -> Option<String> {
        let is_file = |path: &str| self.original.contains_key(path);
        let named = crate::plan::outputs_named_in(task, &is_file);
        // A folder named ("move a.txt into archive/") is written by a file in it.
        let written = |path: &str| wrote.keys().any(|w| w == path || w.starts_with(&format!("{path}/")));
        let path = named
            .iter()
            .map(|path| path.trim_end_matches('/'))
            .find(|path| !is_file(path) && !self.root.join(path).is_dir() && !written(path))?;
        let said = match crate::text::one_line(printed, 200) {
            said if said.is_empty() => "nothing".to_string(),
            said => format!("{said:?}"),
        };
        let (not_written, task_says) = (crate::program_heads::NOT_WRITTEN, crate::program_heads::TASK_SAYS);
        Some(format!("{not_written}{path}{task_says} (it printed {said})"))
    }

    /// When the file was last changed, for each file of the workspace in
    /// the copy at `root`, before a program runs there.
    fn modified_times(&self, root: &Path) -> BTreeMap<String, std::time::SystemTime> {
        self.original
            .keys()
            .filter_map(|path| Some((path.clone(), modified(root, path)?)))
            .collect()
    }

    /// The first file of the workspace the program wrote over with what
    /// it held (its time changed since `times`, its bytes did not), when it
    /// changed no file (`wrote` is empty), said as a flaw: it set out to
    /// change the file, and its change matched nothing. On held-out-27 a
    /// program to tick off a TODO item searched for the item already ticked,
    /// wrote TODO.md back as it was, printed it, and the run said
    /// `succeeded`. Whatever the task's words, a program that rewrites a
    /// file unchanged did not do what it was written for.
    fn written_back(
        &self,
        root: &Path,
        times: &BTreeMap<String, std::time::SystemTime>,
        wrote: &BTreeMap<String, Option<String>>,
    ) -> Option<String> {
        if !wrote.is_empty() {
            return None;
        }
        let touched = |path: &&String| {
            let now = modified(root, path);
            now.is_some() && now != times.get(path.as_str()).copied()
        };
        let path = self.original.keys().find(|path| touched(path))?;
        Some(format!(
            "it wrote {path} back as it was: the change it was to make matched nothing in the file (look at what the file holds, and match that)"
        ))
    }

    /// A configuration file the program rewrote instead of changing what
    /// `task` names ([`crate::config_edit`]), said as a flaw: two programs
    /// that edited deploy.yaml through `yaml.dump` agreed, sorted keys and
    /// dropped comments alike (held-out-21). `after`: the copy's files.
    fn rewritten(&self, after: &BTreeMap<String, Vec<u8>>, task: &str, code: &str) -> Option<String> {
        self.changed_texts(after)
            .find_map(|(path, was, now)| crate::config_edit::rewritten(path, &was, &now, task, &[code]))
    }

    /// Each file that was there before and changed in `after`: its path,
    /// and its text before and after.
    fn changed_texts<'a>(
        &'a self,
        after: &'a BTreeMap<String, Vec<u8>>,
    ) -> impl Iterator<Item = (&'a String, std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)> {
        self.original.iter().filter_map(|(path, was)| {
            let now = after.get(path).filter(|now| *now != was)?;
            Some((path, String::from_utf8_lossy(was), String::from_utf8_lossy(now)))
        })
    }

    /// The copy's files `after` a program ran, each configuration file it
    /// rewrote through a parser's dump carried back to its own lines
    /// ([`crate::carry_back`]), as a step of the run would be: two programs
    /// that changed one value, one line by line and one by a dump, did the
    /// same work.
    fn carried_back(&self, mut after: BTreeMap<String, Vec<u8>>, task: &str, code: &str) -> BTreeMap<String, Vec<u8>> {
        let carried: Vec<(String, String)> = self
            .changed_texts(&after)
            .filter_map(|(path, was, now)| {
                let (merged, _) = crate::carry_back::carried_back(path, &was, &now, task, &[code])?;
                Some((path.clone(), merged))
            })
            .collect();
        after.extend(carried.into_iter().map(|(path, merged)| (path, merged.into_bytes())));
        after
    }

    /// A setting the program added beside a configuration file's own of
    /// that name, which it left as it was ([`crate::carry_back::shadowed`]),
    /// said as a flaw. `after`: the copy's files.
    fn shadowed(&self, after: &BTreeMap<String, Vec<u8>>, task: &str) -> Option<String> {
        self.changed_texts(after)
            .find_map(|(path, was, now)| crate::carry_back::shadowed(path, &was, &now, task))
    }

    /// A dotted number (a version) that the program wrote back as a value
    /// of another form ([`crate::dotted_value`]), or lines it wrote back
    /// with other line ends ([`crate::line_ends`]), or a table's number
    /// with other decimal places than its column's ([`crate::decimal_places`]),
    /// or a record the task does not name changed in place of the one it
    /// names ([`crate::other_record`]), said as a flaw. `after`: the copy's
    /// files.
    fn form_changed(&self, after: &BTreeMap<String, Vec<u8>>, task: &str) -> Option<String> {
        self.changed_texts(after).find_map(|(path, was, now)| {
            crate::dotted_value::changed_form(path, &was, &now, task)
                .or_else(|| crate::line_ends::changed_ends(path, &was, &now, task))
                .or_else(|| crate::decimal_places::changed_places(path, &was, &now, task))
                .or_else(|| crate::other_record::changed_unnamed(path, &was, &now, task))
        })
    }

    /// A value of a column of a table `task` names, which `task` names
    /// too and `code` holds in no string ([`crate::named_value`]), said as
    /// a flaw: the program did not keep to the rows the task asks about.
    /// A TOML, YAML or XML file the program changed as text is left out
    /// ([`crate::named_value::edited_as_text`]).
    fn named_value_ignored(
        &self,
        code: &str,
        task: &str,
        (printed, wrote): (&str, &BTreeMap<String, Option<String>>),
    ) -> Option<String> {
        let named = crate::plan::paths_named_by(task);
        let texts = self.original_texts();
        let edited_as_text = |path: &str| wrote.contains_key(path) && crate::named_value::edited_as_text(path, code);
        let tables: Vec<(&str, &str)> = texts
            .iter()
            .filter(|(path, _)| named.iter().any(|n| n == path) && !edited_as_text(path))
            .map(|(path, text)| (*path, text.as_ref()))
            .collect();
        let written: Vec<&str> = wrote.values().flatten().map(String::as_str).chain([printed]).collect();
        crate::named_value::ignored(code, task, &tables)
            .or_else(|| crate::named_value::flag_ignored(code, task, &tables, &written))
            .or_else(|| crate::named_date::date_ignored(code, task, &tables))
    }

    /// A value the program typed in ([`crate::typed_value`]), said as a
    /// flaw: neither `task` nor any file of the workspace holds it; or the
    /// files' values copied into its text ([`crate::typed_value::copied_values`]).
    fn typed(&self, code: &str, task: &str, printed: &str, wrote: &BTreeMap<String, Option<String>>) -> Option<String> {
        let computed: Vec<&str> = std::iter::once(printed)
            .chain(wrote.values().flatten().map(String::as_str))
            .collect();
        let files = self.original.values().map(|b| String::from_utf8_lossy(b));
        let given: Vec<std::borrow::Cow<str>> = std::iter::once(task.into()).chain(files).collect();
        if let Some(value) = crate::typed_value::typed_value(code, &computed.join("\n"), &given) {
            return Some(crate::typed_value::said(&value));
        }
        // The files read as they were: text ones, and not those the
        // program wrote (whose new text it may hold whole).
        let read: Vec<&str> = (self.original.iter())
            .filter(|(path, _)| !wrote.contains_key(*path))
            .filter_map(|(_, bytes)| std::str::from_utf8(bytes).ok())
            .collect();
        crate::typed_value::copied_values(code, &read, task)
    }
}

/// When the file at `path` under `root` was last changed, if it is there.
fn modified(root: &Path, path: &str) -> Option<std::time::SystemTime> {
    std::fs::metadata(root.join(path)).and_then(|m| m.modified()).ok()
}

/// How many lines of the files that were there before and changed in
/// `after` are still there as they were (each line of the file before, found
/// among the lines of the file after).
fn kept_lines(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> usize {
    before
        .iter()
        .filter_map(|(path, was)| Some((was, after.get(path).filter(|now| *now != was)?)))
        .map(|(was, now)| {
            let now = String::from_utf8_lossy(now);
            let lines: std::collections::HashSet<&str> = now.lines().collect();
            String::from_utf8_lossy(was)
                .lines()
                .filter(|line| lines.contains(line))
                .count()
        })
        .sum()
}

/// A program's work as two programs share it ([`Outcome::work`]): the
/// files it `wrote`, or, writing none, what it `printed`.
fn work(printed: &str, wrote: &BTreeMap<String, Option<String>>) -> String {
    match wrote.is_empty() {
        true => printed.to_string(),
        false => serde_json::to_string(wrote).unwrap_or_default(),
    }
}

/// The vote's copies for [`crate::form_probe`]: a program's work in one is
/// the files it changed, carried back as the run's own are, the cut input
/// aside, or what it printed.
struct VoteCopies<'a> {
    sandbox: &'a Sandbox,
    task: &'a str,
}

impl crate::form_probe::CutCopies for VoteCopies<'_> {
    async fn work_in_cut(&self, code: &str, input: &str, text: String) -> Option<String> {
        let Self { sandbox, task } = self;
        let (copy, printed) = run_on_cut_copy(&sandbox.root, (input, &text), code).await?;
        let after = sandbox.carried_back(files_under(copy.path())?, task, code);
        let mut wrote = changed(&sandbox.original, &after);
        // The input cut for the probe is no work of the program's.
        wrote.remove(input);
        Some(work(&printed, &wrote))
    }
}

/// Run `code` in a fresh copy of the folder at `root` where `input` holds
/// `text` ([`crate::form_probe`]): the copy, and what the program printed;
/// `None` when no copy could be made or the program failed.
pub(crate) async fn run_on_cut_copy(
    root: &Path,
    (input, text): (&str, &str),
    code: &str,
) -> Option<(ScratchDir, String)> {
    let (copy, python) = python_on_copy(root, "forms")?;
    std::fs::write(copy.path().join(input), text).ok()?;
    let printed = run_watched(&python, copy.path(), code).await.0.ok()?;
    Some((copy, crate::plan::value_as_text(&printed).trim().to_string()))
}

/// Run `code` with `python` in its copy at `root`, watched ([`WATCH`]):
/// what the call gave, and the first flaw noted, with its note taken away
/// (so it is no file the program wrote).
pub(crate) async fn run_watched(
    python: &Python,
    root: &Path,
    code: &str,
) -> (Result<serde_json::Value, crate::tools::ToolError>, Option<String>) {
    let ran = python.call(json!({ "code": watched(code) })).await;
    (ran, flaw_left(root))
}

/// `code` with the [`WATCH`] run before it; a program with a `from
/// __future__` import (which must come first) runs unwatched.
fn watched(code: &str) -> String {
    if code.contains("__future__") {
        code.to_string()
    } else {
        format!("{WATCH}{code}")
    }
}

/// How the [`WATCH`] begins its note that no pattern the program searched
/// with found anything.
const FOUND_NOTHING: &str = "found nothing: ";

/// How the [`WATCH`] begins its note that a word pattern cut words at
/// their apostrophes or hyphens, the count of its matches after it.
const WORDS_CUT: &str = "words cut: ";

/// The `flaw` a program's run left, as it counts for its `work` (what it
/// printed, or the files it wrote; `None` when it failed): that its
/// patterns found nothing is a flaw only when its work is nothing too (a
/// zero, or nothing but signs), for a program may try a pattern for lines
/// it then finds none of (a comment to skip) and take its work from
/// elsewhere; words cut at apostrophes are one only when the work holds
/// the count of the pattern's matches; a program that failed is told its
/// error.
pub(crate) fn counted_flaw(flaw: Option<String>, work: Option<&[&str]>) -> Option<String> {
    let flaw = flaw?;
    if let Some(said) = flaw.strip_prefix(FOUND_NOTHING) {
        return work?.iter().all(|w| made_of_nothing(w)).then(|| said.to_string());
    }
    // Words cut apart are a flaw where their count is the work: a word's
    // frequency taken from the same matches may be right.
    if let Some(noted) = flaw.strip_prefix(WORDS_CUT) {
        let (count, said) = noted.split_once(": ")?;
        let counted = work?.iter().any(|w| crate::text::contains_whole(w, count));
        return counted.then(|| said.to_string());
    }
    Some(flaw)
}

/// Whether `work` says nothing found: a zero in any words (`Total: 0.00`),
/// or no letter or digit at all (`[]`, an empty file).
fn made_of_nothing(work: &str) -> bool {
    let mut digits = work.chars().filter(char::is_ascii_digit).peekable();
    match digits.peek() {
        Some(_) => digits.all(|d| d == '0'),
        None => !work.chars().any(char::is_alphanumeric),
    }
}

/// The first flaw the [`WATCH`] noted in the folder at `root`, if any,
/// taken away with its note.
fn flaw_left(root: &Path) -> Option<String> {
    let noted = root.join(FLAW_FILE);
    let flaw = std::fs::read_to_string(&noted).ok()?;
    let _ = std::fs::remove_file(&noted);
    flaw.lines().next().map(str::to_string)
}

/// The run's workspace, when programs may run beside it: the run has the
/// `python` tool and may run it without asking (a program is an external
/// effect, whatever folder it runs in).
pub(crate) fn programs_may_run(setting: &Setting) -> Option<&Workspace> {
    let entry = setting.tools.get("python")?;
    let workspace = setting.tools.workspace()?;
    let may = setting.options.permission("python", entry.effect(&json!({}))) == Permission::Run;
    may.then_some(workspace)
}

/// A fresh copy of the folder at `root` (named for `purpose`), removed when
/// dropped, and `python` running there; `None` past the copy limit or with
/// no interpreter.
pub(crate) fn python_on_copy(root: &Path, purpose: &str) -> Option<(ScratchDir, Python)> {
    let copy = ScratchDir::copy_of(root, purpose, COPY_LIMIT).ok()?;
    let workspace = Arc::new(Workspace::new(copy.path()).ok()?);
    let python = Python::find(workspace, ShellConfig::default(), "python3")?;
    Some((copy, python))
}

/// The files that are new or changed in `after`, and those gone from it.
fn changed(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Option<String>> {
    let mut wrote = BTreeMap::new();
    for (path, bytes) in after {
        if !before
            .get(path)
            .is_some_and(|was| crate::content::same_text(was, bytes))
        {
            let kept = &bytes[..bytes.len().min(KEPT_BYTES)];
            wrote.insert(path.clone(), Some(String::from_utf8_lossy(kept).trim().to_string()));
        }
    }
    for path in before.keys().filter(|path| !after.contains_key(*path)) {
        wrote.insert(path.clone(), None);
    }
    wrote
}

/// Every file under `root` (not `.git`, not links) with its bytes, by path
/// relative to `root` with `/` between names; `None` past the copy limit.
pub(crate) fn files_under(root: &Path) -> Option<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    let mut bytes = 0u64;
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).ok()?.flatten() {
            let kind = entry.file_type().ok()?;
            if kind.is_dir() && entry.file_name() != ".git" {
                folders.push(entry.path());
            } else if kind.is_file() {
                let content = std::fs::read(entry.path()).ok()?;
                bytes += content.len() as u64;
                if files.len() >= COPY_LIMIT.files || bytes > COPY_LIMIT.bytes {
                    return None;
                }
                let relative = entry.path().strip_prefix(root).ok()?.to_path_buf();
                let name = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>();
                files.insert(name.join("/"), content);
            }
        }
    }
    Some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sandbox over `dir` as it is now.
    fn sandbox_of(dir: &tempfile::TempDir) -> Sandbox {
        Sandbox {
            root: dir.path().to_path_buf(),
            original: files_under(dir.path()).unwrap(),
            test: None,
        }
    }

    fn outcome(printed: &str, wrote: &[(&str, Option<&str>)]) -> Outcome {
        Outcome {
            failed: None,
            printed: printed.to_string(),
            wrote: wrote
                .iter()
                .map(|(p, c)| (p.to_string(), c.map(str::to_string)))
                .collect(),
            flaw: None,
            worded: false,
            kept: 0,
        }
    }

    #[test]
    fn the_work_is_the_files_written_else_what_was_printed() {
        let a = outcome("42", &[("sum.txt", Some("42"))]);
        let b = outcome("The sum is 42", &[("sum.txt", Some("42"))]);
        assert_eq!(a.work(), b.work(), "what they printed aside, they wrote the same");
        assert_ne!(a.work(), outcome("42", &[("sum.txt", Some("43"))]).work());
        assert_eq!(outcome("7", &[]).work().as_deref(), Some("7"));
        assert_eq!(outcome("", &[]).work(), None, "a program that did nothing did no work");
        assert_eq!(
            outcome("", &[("out.txt", Some(""))]).work(),
            None,
            "an empty file is no work"
        );
        let failed = Outcome {
            failed: Some("boom".into()),
            ..outcome("42", &[("sum.txt", Some("42"))])
        };
        assert_eq!(failed.work(), None);
    }

    #[test]
    fn what_changed_is_new_changed_and_removed_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub/.git")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "1").unwrap();
        std::fs::write(dir.path().join("sub/b.txt"), "2").unwrap();
        std::fs::write(dir.path().join("sub/.git/HEAD"), "x").unwrap();
        let before = files_under(dir.path()).unwrap();
        assert_eq!(before.keys().collect::<Vec<_>>(), ["a.txt", "sub/b.txt"]);
        std::fs::write(dir.path().join("a.txt"), "1").unwrap();
        std::fs::write(dir.path().join("sub/b.txt"), "3\n").unwrap();
        std::fs::write(dir.path().join("c.txt"), "new").unwrap();
        std::fs::remove_file(dir.path().join("a.txt")).unwrap();
        let wrote = changed(&before, &files_under(dir.path()).unwrap());
        let expected: BTreeMap<String, Option<String>> = [
            ("a.txt".to_string(), None),
            ("c.txt".to_string(), Some("new".to_string())),
            ("sub/b.txt".to_string(), Some("3".to_string())),
        ]
        .into();
        assert_eq!(wrote, expected);
    }

    #[tokio::test]
    async fn numbers_compared_as_text_are_a_flaw_and_no_work() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rain.csv"), "month,mm\nSep,97\nOct,121\nNov,45\n").unwrap();
        let sandbox = sandbox_of(&dir);
        let read = "import csv\nrows = list(csv.DictReader(open('rain.csv')))\n";
        let as_text = format!("{read}print(max(rows, key=lambda r: r['mm'])['month'])");
        let flawed = sandbox.run(&as_text, "").await.expect("python3 runs the program");
        assert_eq!(flawed.printed, "Sep", "the program runs as written");
        let flaw = flawed.flaw.clone().unwrap_or_default();
        assert!(flaw.contains("compared as text"), "{flawed:?}");
        assert_eq!(flawed.work(), None, "its work is not counted");
        let as_numbers =
            format!("{read}print(max(rows, key=lambda r: int(r['mm']))['month'], sorted(r['month'] for r in rows)[0])");
        let right = sandbox.run(&as_numbers, "").await.unwrap();
        assert_eq!((right.printed.as_str(), right.flaw.as_ref()), ("Oct Nov", None));
        assert!(
            right.wrote.is_empty(),
            "the watch leaves no file behind: {:?}",
            right.wrote
        );
        let rows =
            "import csv\nr = csv.reader(open('rain.csv'))\nnext(r)\nprint(sorted(r, key=lambda row: row[1])[0][0])";
        assert!(
            sandbox.run(rows, "").await.unwrap().flaw.is_some(),
            "csv.reader's cells are watched too"
        );
    }

    /// A program of the vote that writes a total of one spelling of a name
    /// is found not to read the rows of its other spellings, and its work
    /// is not counted; one that reads every spelling is counted.
    #[tokio::test]
    async fn a_program_that_reads_one_spelling_of_a_name_is_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let harvest = "date,hive,kg\n05-18,Linden,8.4\n05-18,Clover,6.1\n06-02, linden ,9.25\n06-16,LINDEN,11.3\n07-01,Linden,7.05\n";
        std::fs::write(dir.path().join("harvest.csv"), harvest).unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "How many kg did the Linden hive give in harvest.csv? Write it to total.txt";
        let read = "import csv\nrows = list(csv.DictReader(open('harvest.csv')))\n";
        // Looked up in a set, not compared: the watch for near misses sees `==`.
        let one = format!("{read}t = sum(float(r['kg']) for r in rows if r['hive'] in {{'Linden'}})\nopen('total.txt', 'w').write(str(round(t, 2)))");
        let flawed = sandbox.run(&one, task).await.expect("python3 runs the program");
        let flaw = flawed.flaw.clone().unwrap_or_default();
        assert!(
            flaw.starts_with(
                "run without the 2 lines of harvest.csv where column `hive` is written as ` linden `, `LINDEN`"
            ),
            "{flawed:?}"
        );
        assert_eq!(flawed.work(), None);
        let every = format!("{read}t = sum(float(r['kg']) for r in rows if r['hive'].strip().lower() == 'linden')\nopen('total.txt', 'w').write(str(round(t, 2)))");
        let right = sandbox.run(&every, task).await.unwrap();
        assert_eq!(right.flaw, None);
        assert_eq!(right.wrote.get("total.txt"), Some(&Some("36.0".to_string())));
    }

    /// Two more flaws of the same kind: numbers written with thousands
    /// separators compared as text, and a line-anchored pattern found all
    /// over a text of many lines without `re.M`; an lstrip by `re.sub` is none.
    #[tokio::test]
    async fn grouped_numbers_and_patterns_anchored_to_the_text_are_flaws() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = sandbox_of(&dir);
        std::fs::write(
            dir.path().join("water.csv"),
            "month,liters\nJan,\"9,870\"\nFeb,\"10,240\"\n",
        )
        .unwrap();
        let grouped = "import csv\nrows = list(csv.DictReader(open('water.csv')))\nprint(min(rows, key=lambda r: r['liters'])['month'])";
        let flawed = sandbox.run(grouped, "").await.unwrap();
        assert_eq!(flawed.printed, "Feb", "the program runs as written");
        assert!(
            flawed.flaw.is_some(),
            "thousands separators make no text of a number: {flawed:?}"
        );
        std::fs::write(dir.path().join("book.md"), "# Book\n## One\ntext\n## Two\n### Deeper\n").unwrap();
        let once = "import re\nprint(len(re.findall(r'^## ', open('book.md').read())))";
        let flawed = sandbox.run(once, "").await.unwrap();
        let flaw = flawed.flaw.clone().unwrap_or_default();
        assert!(
            flaw.contains("without re.M") && flaw.contains("with re.M, 2"),
            "{flawed:?}"
        );
        let every = "import re\nt = open('book.md').read()\nprint(len(re.findall(r'^## ', t, re.M)), re.sub(r'^\\s+', '', t)[:1])";
        let right = sandbox.run(every, "").await.unwrap();
        assert_eq!((right.printed.as_str(), right.flaw.as_ref()), ("2 #", None));
    }

    /// Patterns that found nothing anywhere are a flaw when the work is
    /// nothing too (a sum of no amounts), through `re` and a compiled
    /// pattern alike; a pattern for lines the text lacks, beside work made
    /// elsewhere, is none, nor is one pattern of two that found nothing.
    #[tokio::test]
    async fn patterns_that_found_nothing_are_a_flaw_when_the_work_is_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("notes.txt"),
            "taxi €12.50\nhotel €80.00\nv1.2.3,4 on 2024-06-10\n",
        )
        .unwrap();
        let sandbox = sandbox_of(&dir);
        let read = "import re\nt = open('notes.txt', encoding='utf-8').read()\n";
        let flaw = |code: String| {
            let sandbox = &sandbox;
            async move { sandbox.run(&code, "").await.unwrap() }
        };
        let edged = flaw(format!(
            "{read}total = sum(float(a) for a in re.findall(r'\\b€(\\d+\\.\\d\\d)', t))\nprint(f'Total: {{total:.2f}}')"
        ))
        .await;
        assert_eq!(edged.printed, "Total: 0.00", "the program runs as written");
        assert!(
            edged
                .flaw
                .as_deref()
                .is_some_and(|f| f.starts_with("the pattern") && f.contains("found nothing")),
            "{edged:?}"
        );
        let compiled = flaw(format!(
            "{read}p = re.compile(r'EUR (\\d+)')\nopen('total.txt', 'w').write(str(sum(int(m.group(1)) for m in p.finditer(t))))"
        ))
        .await;
        assert_eq!(compiled.wrote.get("total.txt"), Some(&Some("0".to_string())));
        assert!(
            compiled.flaw.is_some(),
            "a compiled pattern is tallied too: {compiled:?}"
        );
        let elsewhere = format!("{read}print([l for l in t.splitlines() if not re.match(r'#', l)])");
        assert_eq!(flaw(elsewhere).await.flaw, None, "the work is the lines themselves");
        let part = format!("{read}print(re.findall(r'€(\\d{{1,3}},\\d\\d)', 'a €1,184.20 b €12.50 c'))");
        let part = flaw(part).await;
        assert!(
            part.flaw
                .as_deref()
                .is_some_and(|f| f.contains("'€1,18'") && f.contains("middle of a number")),
            "{part:?}"
        );
        let whole = format!("{read}print(re.findall(r'\\d+', t), re.search(r'\\d{{4}}', t).group())");
        assert_eq!(flaw(whole).await.flaw, None, "numbers taken whole, between separators");
        let second = format!("{read}print(len(re.findall(r'EUR', t)) + len(re.compile(r'€').findall(t)), re.sub(re.compile('€'), '', t)[:4])");
        let right = flaw(second).await;
        assert_eq!((right.printed.as_str(), right.flaw), ("2 taxi", None));
    }

    /// Two more: a cell compared with the program's own text and found
    /// different only in spaces or case (also after `.lower()`), and texts
    /// that are numbers ordered as text by `sorted` or `max`. A filter that
    /// strips and lowers, a cell compared with a cell, and a sort by `int`
    /// are none.
    #[tokio::test]
    async fn near_misses_and_numbers_ordered_as_text_are_flaws() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = sandbox_of(&dir);
        let plants = "name,watering\nBasil, Weekly \nFern,daily\nIvy,biweekly\nBasil,weekly\n";
        std::fs::write(dir.path().join("plants.csv"), plants).unwrap();
        let read = "import csv\nrows = list(csv.DictReader(open('plants.csv')))\n";
        let flaw = |code: String| {
            let sandbox = &sandbox;
            async move { sandbox.run(&code, "").await.unwrap().flaw }
        };
        let lowered = flaw(format!(
            "{read}print([r['name'] for r in rows if r['watering'].lower() == 'weekly'])"
        ))
        .await;
        assert!(
            lowered
                .as_deref()
                .is_some_and(|f| f.contains("' weekly '") && f.contains("spaces")),
            "{lowered:?}"
        );
        let stripped = flaw(format!(
            "{read}print([r['name'] for r in rows if r['watering'].strip() == 'weekly'])"
        ))
        .await;
        assert!(
            stripped.as_deref().is_some_and(|f| f.contains("letter case")),
            "{stripped:?}"
        );
        let right = format!("{read}print([r['name'] for r in rows if r['watering'].strip().lower() == 'weekly'])");
        assert_eq!(flaw(right).await, None);
        let cells =
            format!("{read}print(rows[0]['watering'] == rows[3]['watering'], rows[0]['name'] == rows[3]['name'])");
        assert_eq!(flaw(cells).await, None, "a cell against a cell is the program's choice");
        std::fs::write(dir.path().join("log.txt"), "TCK-98 TCK-450 TCK-7 TCK-1150 TCK-98").unwrap();
        let ids = "import re\nids = re.findall(r'TCK-(\\d+)', open('log.txt').read())\n";
        let as_text = flaw(format!("{ids}print(sorted(set(ids)))")).await;
        assert!(
            as_text.as_deref().is_some_and(|f| f.contains("ordered as text")),
            "{as_text:?}"
        );
        let greatest = flaw(format!("{ids}print(max(ids))")).await;
        assert!(greatest.is_some(), "the greatest by max over texts: '98'");
        let counted = flaw(format!("{ids}print(sorted({{i: ids.count(i) for i in ids}}.items()))")).await;
        assert!(counted.is_some(), "pairs ordered by their first text, a number");
        let by_int = format!("{ids}print(sorted(set(ids), key=int), max(ids, key=int), min(3, 1), sorted(['b', 'a']))");
        assert_eq!(flaw(by_int).await, None);
    }

    /// A word pattern found over a text whose words hold an apostrophe or
    /// a hyphen cut them in two, and is a flaw where the count of its
    /// matches is the work; words counted between spaces, a word's
    /// frequency, or a word pattern over a text with no such word, are none.
    #[tokio::test]
    async fn words_cut_at_their_apostrophes_are_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("story.txt"),
            "It's a bad-tempered goat.\nShe climbed the steps.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("plain.txt"), "Hello, world - again\n").unwrap();
        // The inputs are the workspace as it was: a count printed is the work.
        let sandbox = sandbox_of(&dir);
        let flaw = |code: &'static str| {
            let sandbox = &sandbox;
            async move { sandbox.run(code, "").await.unwrap() }
        };
        let cut = flaw("import re\nprint(len(re.findall(r'\\b\\w+\\b', open('story.txt').read())))").await;
        assert_eq!(cut.printed, "10", "the program runs as written");
        assert!(
            cut.flaw
                .as_deref()
                .is_some_and(|f| f.contains("\"It's\"") && f.contains("8 words between spaces")),
            "{cut:?}"
        );
        let compiled = flaw("import re\nprint(len(re.compile(r'[A-Za-z]+').findall(open('story.txt').read())))").await;
        assert!(compiled.flaw.is_some(), "{compiled:?}");
        let spaced = flaw("print(len(open('story.txt').read().split()))").await;
        assert_eq!((spaced.printed.as_str(), spaced.flaw), ("8", None));
        let frequency =
            flaw("import re\nprint(re.findall(r'\\w+', open('story.txt').read().lower()).count('goat'))").await;
        assert_eq!(
            (frequency.printed.as_str(), frequency.flaw),
            ("1", None),
            "the count is not the work"
        );
        let plain = flaw("import re\nprint(len(re.findall(r'\\w+', open('plain.txt').read())))").await;
        assert_eq!((plain.printed.as_str(), plain.flaw), ("3", None));
    }

    /// A program that prints where the task says to write a new file did no
    /// work, and the flaw says what it printed; one that writes it, or
    /// moves a file into a folder the task names, did.
    #[tokio::test]
    async fn a_file_to_write_left_unwritten_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("budget.txt"), "Planned: $2,450.00\nActual: $1,987.65\n").unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "How much under budget am I? Write the amount to under_budget.txt.";
        let printed = sandbox.run("print('Error: no spending found')", task).await.unwrap();
        let flaw = printed.flaw.clone().unwrap_or_default();
        assert!(
            flaw.contains("did not write under_budget.txt") && flaw.contains("Error: no spending found"),
            "{printed:?}"
        );
        assert_eq!(printed.work(), None);
        let computed = "import re\nplanned, actual = [float(n.replace(',', '')) for n in re.findall(r'\\$([\\d,.]+)', open('budget.txt').read())]\nopen('under_budget.txt', 'w').write(f'{planned - actual:.2f}')";
        let wrote = sandbox.run(computed, task).await.unwrap();
        assert_eq!(wrote.flaw, None);
        let moved = "import os\nos.makedirs('archive')\nos.rename('budget.txt', 'archive/budget.txt')";
        let into = sandbox.run(moved, "Move budget.txt into archive/").await.unwrap();
        assert_eq!(into.flaw, None, "{into:?}");
    }

    /// A file whose lines break the order the task states for them (or
    /// hold a value twice where it says each once) is a flaw; the same
    /// lines in that order are not.
    #[tokio::test]
    async fn a_list_out_of_the_order_the_task_states_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("log.txt"), "2025-03-02 x\n2025-01-05 y\n2025-03-02 z\n").unwrap();
        let task = "Write each date in log.txt once, earliest first, to dates.txt.";
        let test = ListTest {
            file: "dates.txt".to_string(),
            order: crate::list_test::ListOrder::Ascending,
            each_once: true,
            only_some: false,
        };
        let sandbox = sandbox_of(&dir).with_test(test);
        let read = "dates = [line.split()[0] for line in open('log.txt')]\n";
        let in_file_order = format!("{read}open('dates.txt', 'w').write('\\n'.join(dict.fromkeys(dates)))");
        let loose = sandbox
            .run(&in_file_order, task)
            .await
            .expect("python3 runs the program");
        let flaw = loose.flaw.clone().unwrap_or_default();
        assert!(flaw.contains("`2025-03-02` comes before `2025-01-05`"), "{loose:?}");
        assert_eq!(loose.work(), None, "its work is not counted");
        let sorted = format!("{read}open('dates.txt', 'w').write('\\n'.join(sorted(set(dates))))");
        let kept = sandbox.run(&sorted, task).await.unwrap();
        assert_eq!(kept.flaw, None, "{kept:?}");
    }

    /// A dedupe whose lines come out in the order a set iterates in is a
    /// flaw (under the one seed it always writes the same lines, so two such
    /// programs agree); one that keeps the input's order, or uses a set
    /// only where order cannot show (a count), is not.
    #[tokio::test]
    async fn work_ordered_by_a_set_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        let birds = "robin\nwren\nmagpie\nrobin\nchaffinch\nblackbird\nwren\njay\nstarling\nrook\n";
        std::fs::write(dir.path().join("birds.txt"), birds).unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "Write each bird in birds.txt once to unique.txt, in the order each first appears.";
        let read = "lines = open('birds.txt').read().split()\n";
        let by_set = format!("{read}open('unique.txt', 'w').write('\\n'.join(set(lines)))");
        let flawed = sandbox.run(&by_set, task).await.expect("python3 runs the program");
        assert_eq!(flawed.flaw.as_deref(), Some(SET_ORDER), "{flawed:?}");
        assert_eq!(flawed.work(), None, "its work is not counted");
        let to_print = "Print each bird in birds.txt once, in the order each first appears.";
        let printed_set = sandbox
            .run(&format!("{read}print(' '.join(set(lines)))"), to_print)
            .await
            .unwrap();
        assert_eq!(
            printed_set.flaw.as_deref(),
            Some(SET_ORDER),
            "what it prints counts when it writes nothing"
        );
        let in_order = format!("{read}open('unique.txt', 'w').write('\\n'.join(dict.fromkeys(lines)))");
        let kept = sandbox.run(&in_order, task).await.unwrap();
        assert_eq!(kept.flaw, None, "{kept:?}");
        let first = kept.wrote.get("unique.txt").cloned().flatten().unwrap_or_default();
        assert!(first.starts_with("robin\nwren\nmagpie\nchaffinch"), "{first:?}");
        let count = sandbox
            .run(&format!("{read}print(len(set(lines)))"), to_print)
            .await
            .unwrap();
        assert_eq!((count.printed.as_str(), count.flaw.as_ref()), ("8", None));
    }

    /// A folder's listing keeps no order either: work in `os.listdir`'s or
    /// `os.walk`'s order is a flaw, work sorted as the task asks is none.
    #[tokio::test]
    async fn work_in_a_folder_listings_order_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("photos")).unwrap();
        for (name, size) in [("beach.jpg", 300), ("cat.jpg", 100), ("forest.jpg", 200)] {
            std::fs::write(dir.path().join("photos").join(name), vec![b'x'; size]).unwrap();
        }
        let sandbox = sandbox_of(&dir);
        let task = "Write the photos in photos/ to big.txt, biggest first.";
        let write = "open('big.txt', 'w').write('\\n'.join(names))";
        let listed = format!("import os\nnames = os.listdir('photos')\n{write}");
        let listed = sandbox.run(&listed, task).await.expect("python3 runs the program");
        assert_eq!(listed.flaw.as_deref(), Some(SET_ORDER), "{listed:?}");
        let walked = format!("import os\nnames = [n for _, _, files in os.walk('photos') for n in files]\n{write}");
        assert_eq!(
            sandbox.run(&walked, task).await.unwrap().flaw.as_deref(),
            Some(SET_ORDER)
        );
        let sorted = format!(
            "import os\nnames = sorted(os.listdir('photos'), key=lambda n: -os.path.getsize('photos/' + n))\n{write}"
        );
        let sorted = sandbox.run(&sorted, task).await.unwrap();
        assert_eq!(sorted.flaw, None, "{sorted:?}");
        assert_eq!(
            sorted.wrote.get("big.txt"),
            Some(&Some("beach.jpg\nforest.jpg\ncat.jpg".to_string()))
        );
    }

    /// Where the task leaves a list's order free, as two readings of it
    /// agreed, its lines in a folder listing's order are no flaw; where
    /// the readings did not settle it, they are.
    #[tokio::test]
    async fn a_listings_order_is_no_flaw_where_the_order_is_free() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("photos")).unwrap();
        for (name, size) in [("beach.jpg", 300), ("cat.jpg", 100), ("forest.jpg", 200)] {
            std::fs::write(dir.path().join("photos").join(name), vec![b'x'; size]).unwrap();
        }
        let test = |order| ListTest {
            file: "big.txt".to_string(),
            order,
            each_once: false,
            only_some: false,
        };
        let task = "Write the photos in photos/ bigger than 150 bytes to big.txt. The order doesn't matter.";
        let listed = "import os\nnames = [n for n in os.listdir('photos') if os.path.getsize('photos/' + n) > 150]\nopen('big.txt', 'w').write('\\n'.join(names))";
        let free = sandbox_of(&dir).with_test(test(ListOrder::Any));
        let ran = free.run(listed, task).await.expect("python3 runs the program");
        assert_eq!(ran.flaw, None, "{ran:?}");
        assert_eq!(ran.wrote["big.txt"].as_deref().map(|t| t.lines().count()), Some(2));
        let unsettled = sandbox_of(&dir).with_test(test(ListOrder::Unsettled));
        let ran = unsettled.run(listed, task).await.unwrap();
        assert_eq!(
            ran.flaw.as_deref(),
            Some(SET_ORDER),
            "an order not read as free may matter"
        );
    }

    /// A program that writes a version it typed in has a flaw and does no
    /// work that counts; the one that computes it from the file has none.
    #[tokio::test]
    async fn a_value_typed_into_the_program_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("manifest.json"), "{\"version\": \"2.9.4\"}").unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "Bump the minor version in manifest.json.";
        let load = "import json\nm = json.load(open('manifest.json'))\n";
        let save = "json.dump(m, open('manifest.json', 'w'))";
        let typed = sandbox
            .run(&format!("{load}m['version'] = '2.9.5'\n{save}"), task)
            .await
            .unwrap();
        assert!(typed.flaw.as_deref().is_some_and(|f| f.contains("2.9.5")), "{typed:?}");
        assert_eq!(typed.work(), None);
        let bump = "a, b, c = m['version'].split('.')\nm['version'] = f'{a}.{int(b) + 1}.0'\n";
        let computed = sandbox.run(&format!("{load}{bump}{save}"), task).await.unwrap();
        assert_eq!(computed.flaw, None, "{computed:?}");
        assert!(computed.work().is_some_and(|w| w.contains("2.10.0")));
    }

    /// A program that leaves the file the task says to change as it was
    /// (written back with no line taken out) has a flaw and does no work
    /// that counts, whatever it printed; the one that takes the line out
    /// has none.
    #[tokio::test]
    async fn a_file_to_change_left_as_it_was_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("TODO.md"),
            "- [ ] Renew the domain\n- [ ] Sort the loft\n",
        )
        .unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "Remove the item about renewing the domain from TODO.md.";
        let filter = |word: &str| {
            format!(
                "lines = open('TODO.md').readlines()\nkept = [l for l in lines if '{word}' not in l]\nopen('TODO.md', 'w').writelines(kept)\nprint('removed', len(lines) - len(kept))"
            )
        };
        let missed = sandbox
            .run(&filter("renew"), task)
            .await
            .expect("python3 runs the program");
        assert!(missed.wrote.is_empty(), "{missed:?}");
        let flaw = missed.flaw.clone().unwrap_or_default();
        assert!(flaw.contains("left TODO.md as it was"), "{missed:?}");
        assert_eq!(missed.work(), None, "what it printed is no edit");
        let removed = sandbox.run(&filter("Renew"), task).await.unwrap();
        assert_eq!(removed.flaw, None, "{removed:?}");
        assert!(removed
            .work()
            .is_some_and(|w| w.contains("Sort the loft") && !w.contains("domain")));
        let count = "print(len(open('TODO.md').readlines()))";
        let asked = sandbox.run(count, "How many items are in TODO.md?").await.unwrap();
        assert_eq!(asked.flaw, None, "a task that changes no file asks for no change");
    }

    /// A program that writes a file back as it was, changing none, has a
    /// flaw whatever the task's words; one whose change matched has none.
    #[tokio::test]
    async fn a_file_written_back_unchanged_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("TODO.md"), "- [x] Pick a date\n- [ ] Book the venue\n").unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "Tick off 'Book the venue' in TODO.md.";
        let tick = |from: &str, to: &str| {
            format!("t = open('TODO.md').read().replace('{from}', '{to}')\nopen('TODO.md', 'w').write(t)\nprint(t)")
        };
        let missed = sandbox
            .run(&tick("- [x] Book the venue", "- [ ] Book the venue"), task)
            .await
            .expect("python3 runs the program");
        assert!(missed.wrote.is_empty(), "{missed:?}");
        let flaw = missed.flaw.clone().unwrap_or_default();
        assert!(flaw.contains("wrote TODO.md back as it was"), "{missed:?}");
        assert_eq!(missed.work(), None);
        let ticked = sandbox
            .run(&tick("- [ ] Book the venue", "- [x] Book the venue"), task)
            .await
            .unwrap();
        assert_eq!(ticked.flaw, None, "{ticked:?}");
        assert!(ticked.work().is_some_and(|w| w.contains("[x] Book the venue")));
        let crlf = "t = open('TODO.md').read()\nopen('TODO.md', 'w', newline='\\r\\n').write(t)\nprint('done')";
        let crlf = sandbox.run(crlf, task).await.unwrap();
        assert!(
            crlf.wrote.is_empty(),
            "lines ended by \\r\\n are the same lines: {crlf:?}"
        );
        assert!(crlf.flaw.is_some_and(|f| f.contains("back as it was")));
    }

    /// A program that copies a Markdown list's items to a plain list with
    /// their `- ` has a flaw ([`crate::list_marks`]); one that writes the
    /// items alone has none.
    #[tokio::test]
    async fn a_list_that_kept_its_markdown_marks_is_a_flaw() {
        let dir = tempfile::tempdir().unwrap();
        let register = "## Ballet\n- Zo\u{eb} Marchetti\n- In\u{e8}s Laurent\n\n## Tap\n- Noah Brennan\n";
        std::fs::write(dir.path().join("register.md"), register).unwrap();
        let sandbox = sandbox_of(&dir);
        let task = "Copy the names in the Ballet class from register.md into ballet.txt, one per line.";
        let copy = |line: &str| {
            format!(
                "lines = open('register.md', encoding='utf-8').read().split('## Tap')[0].splitlines()\nitems = [{line} for l in lines if l.startswith('- ')]\nopen('ballet.txt', 'w', encoding='utf-8').write('\\n'.join(items))"
            )
        };
        let marked = sandbox.run(&copy("l"), task).await.expect("python3 runs the program");
        let flaw = marked.flaw.clone().unwrap_or_default();
        assert!(flaw.contains("list mark copied from register.md"), "{marked:?}");
        assert_eq!(marked.work(), None, "its work is not counted");
        let items = sandbox.run(&copy("l[2:]"), task).await.unwrap();
        assert_eq!(items.flaw, None, "{items:?}");
        assert!(
            items
                .work()
                .is_some_and(|w| w.contains("Marchetti") && !w.contains("- ")),
            "{items:?}"
        );
    }
}
