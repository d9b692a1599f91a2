//! Heads put before a program the sandbox's watch saw go wrong in a way
//! whose meaning is plain ([`crate::sandbox`]), so that it does what it
//! meant: its csv cells compared as numbers where both sides read as
//! numbers, and equal to a text of the program's own that differs only in
//! the spaces around it or in letter case ([`CELLS_HEAD`]); what it
//! printed written to the one new file the task names, which it did not
//! write ([`printed_head`]); or the one number it wrote with words around
//! it to a file the task names for a value, left there alone
//! ([`value_head`]).
//!
//! The 1.5B model, told its program compared `'7.5'` with `'61.0'` as text
//! or `'Aerial silks  '` with `'Aerial silks'`, or printed the list it was
//! to write, writes the same program again: on held-out-47 (spent) six of
//! seven programs ranking skaters by score compared the scores as text,
//! all seven programs for a class's new price matched its padded name
//! exactly, and four of seven for a rally's no-shows printed the names;
//! fixes written after being told kept the flaw. A head is the same for
//! any task, and it is shown in the program: the plan that is approved is
//! the program that runs.

/// Put before a program whose cells compared with a flaw: `csv.reader` and
/// `csv.DictReader` give cells that compare as numbers when both sides
/// read as numbers (thousands separators too), and that equal a plain text
/// differing only in the spaces around it or in letter case. A cell
/// compared with a cell for equality is left exact: a dedupe's case may be
/// its point.
pub(crate) const CELLS_HEAD: &str = r#"# planexec: csv cells below compare as numbers when both sides read as
# numbers, and match a text that differs only in spaces around it or case.
import csv as _pe_csv
def _pe_number(text):
    # String methods, not `re`: a pattern here would count among the
    # program's own searches in planexec's watch.
    text = text.strip()
    whole, dot, part = text.lstrip("+-").partition(".")
    groups = whole.split(",")
    if len(groups) > 1 and 1 <= len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]) \
            and "".join(groups).isdecimal() and (not dot or part.isdecimal()):
        text = text.replace(",", "")
    try:
        n = float(text)
    except ValueError:
        return None
    return n if n == n and abs(n) != float("inf") else None
class _PeCell(str):
    __hash__ = str.__hash__
    def _pe_numbers(self, other):
        if isinstance(other, str):
            a, b = _pe_number(self), _pe_number(other)
            if a is not None and b is not None:
                return a, b
        return None
    def __lt__(self, o): n = self._pe_numbers(o); return n[0] < n[1] if n else str.__lt__(self, o)
    def __le__(self, o): n = self._pe_numbers(o); return n[0] <= n[1] if n else str.__le__(self, o)
    def __gt__(self, o): n = self._pe_numbers(o); return n[0] > n[1] if n else str.__gt__(self, o)
    def __ge__(self, o): n = self._pe_numbers(o); return n[0] >= n[1] if n else str.__ge__(self, o)
    def __eq__(self, o):
        if type(o) is str:
            return str.casefold(str.strip(self)) == o.strip().casefold()
        return str.__eq__(self, o)
    def __ne__(self, o):
        equal = self.__eq__(o)
        return equal if equal is NotImplemented else not equal
for _pe_name in ("strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize"):
    setattr(_PeCell, _pe_name, (lambda plain: lambda self, *a: _PeCell(plain(self, *a)))(getattr(str, _pe_name)))
_pe_reader, _pe_dict_reader = _pe_csv.reader, _pe_csv.DictReader
class _PeReader:
    def __init__(self, *a, **k): self._r = _pe_reader(*a, **k)
    def __iter__(self): return self
    def __next__(self): return [_PeCell(c) for c in next(self._r)]
    def __getattr__(self, name): return getattr(self._r, name)
class _PeDictReader(_pe_dict_reader):
    def __next__(self):
        row = super().__next__()
        return {k: _PeCell(v) if isinstance(v, str) else v for k, v in row.items()}
_pe_csv.reader, _pe_csv.DictReader = _PeReader, _PeDictReader
# planexec: the program as it was written follows.
"#;

/// What the watch says of cells compared as text where they read as
/// numbers, and of a cell found different from the program's own text only
/// in spaces or case: the two flaws [`CELLS_HEAD`] answers.
const CELL_FLAWS: [&str; 2] = ["compared as text, not as numbers", "found different only in"];

/// How the sandbox says a program did not write the new file the task
/// names (`{NOT_WRITTEN}{path}{TASK_SAYS}`), what [`printed_head`] answers.
pub(crate) const NOT_WRITTEN: &str = "it did not write ";
pub(crate) const TASK_SAYS: &str = ", which the task says to write";

/// What a program did on its copy, as far as a head is chosen by it.
pub(crate) struct Ran<'a> {
    /// The flaw the sandbox saw.
    pub flaw: &'a str,
    /// What it printed, trimmed.
    pub printed: &'a str,
    /// Whether it failed, or wrote or changed any file.
    pub failed_or_wrote: bool,
    /// Whether its one flaw is a value written with words around it
    /// ([`crate::sandbox::Outcome::worded`]).
    pub worded: bool,
}

/// `code` with the head before it that answers what it did (`ran`): the
/// [`CELLS_HEAD`] for a cell flaw, the [`printed_head`] for a program that
/// printed, wrote nothing and did not fail, where the task says to write a
/// new file, the [`value_head`] for one whose only flaw is a value written
/// with words around it; `None` when no head answers it, the code has a
/// head already, or it has a `from __future__` import (which must come
/// first).
pub(crate) fn repaired(code: &str, ran: &Ran) -> Option<String> {
    if has_head(code) || code.contains("__future__") {
        return None;
    }
    if CELL_FLAWS.iter().any(|said| ran.flaw.contains(said)) {
        return Some(format!("{CELLS_HEAD}{code}"));
    }
    if ran.worded {
        let (path, _) = ran.flaw.split_once(crate::content::HOLDS)?;
        let said = ran.flaw.contains(crate::content::IN_WORDS);
        return (said && inside(path)).then(|| format!("{}{code}", value_head(path)));
    }
    let path = ran.flaw.strip_prefix(NOT_WRITTEN)?.split_once(TASK_SAYS)?.0;
    let data = printed_data(ran.printed, path);
    (inside(path) && data && !ran.failed_or_wrote).then(|| format!("{}{code}", printed_head(path)))
}

/// Whether `path` stays inside the workspace: a head writes only there.
fn inside(path: &str) -> bool {
    !path.starts_with('/') && !path.split('/').any(|part| part == "..")
}

/// Put before a program that wrote the value the task asks for into a
/// sentence or beside its unit (`59.8 kg`, `Tansy's gain of weight: 59.8
/// kg`) in the file at `path`: when it ends, a file that holds one line of
/// words around one plain number holds the number alone, as the task
/// asked. On held-out-52 (spent) the only two of seven programs that
/// computed a foal's weight gain wrote it so, and were not counted; the
/// one kept was wrong. The number is read as
/// [`crate::content::number_in_words`] reads it: one run of digits, not a
/// date, time or version, not inside a word, thousands commas dropped.
pub(crate) fn value_head(path: &str) -> String {
    let quoted = serde_json::to_string(path).unwrap_or_default();
    format!(
        r#"{VALUE_MARK} {path} holds its one number alone, not the words around it.
import atexit as _pe_atexit
def _pe_value_alone(path={quoted}):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().strip()
    except (OSError, UnicodeError):
        return
    if "\n" in text or not any(c.isalpha() for c in text):
        return
    # Words that carry a sign or a size are the value's own.
    if "\u2212" in text or any(w in ("million", "thousand", "billion", "hundred") for w in text.lower().split()):
        return
    numeric, runs, start = "0123456789.,:/-", [], None
    for i, c in enumerate(text + " "):
        if c in numeric and start is None:
            start = i
        elif c not in numeric and start is not None:
            if any(d in "0123456789" for d in text[start:i]):
                runs.append((start, i))
            start = None
    if len(runs) != 1:
        return
    start, end = runs[0]
    glued = lambda c: c.isalnum() or c == "_"
    if (start > 0 and glued(text[start - 1])) or (end < len(text) and glued(text[end])):
        return
    run = text[start:end].rstrip(".,:-/").lstrip(",:/")
    whole, _, fraction = run.partition(".")
    groups = whole[1:].split(",") if whole.startswith("-") else whole.split(",")
    digits = lambda part: part != "" and all(d in "0123456789" for d in part)
    grouped = len(groups) == 1 or (len(groups[0]) <= 3 and all(len(g) == 3 and digits(g) for g in groups[1:]))
    if not (digits(groups[0]) and grouped and (fraction == "" or digits(fraction))):
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(run.replace(",", "") + "\n")
_pe_atexit.register(_pe_value_alone)
# planexec: the program as it was written follows.
"#
    )
}

/// How [`value_head`] begins.
const VALUE_MARK: &str = "# planexec: when the program below ends,";

/// Put before a program that printed what the task says to write to
/// `path`: what it prints goes to the file instead, as `> path` would send
/// it.
pub(crate) fn printed_head(path: &str) -> String {
    let quoted = serde_json::to_string(path).unwrap_or_default();
    format!(
        "{PRINTED_MARK} {path}; what it prints goes there.\nimport atexit as _pe_atexit, os as _pe_os, sys as _pe_sys\n_pe_os.makedirs(_pe_os.path.dirname({quoted}) or \".\", exist_ok=True)\n_pe_sys.stdout = open({quoted}, \"w\", encoding=\"utf-8\")\n_pe_atexit.register(_pe_sys.stdout.close)\n# planexec: the program as it was written follows.\n"
    )
}

/// How [`printed_head`] begins.
const PRINTED_MARK: &str = "# planexec: the program below prints what the task says to write to";

/// Whether what a program `printed` reads as the lines of the file at
/// `path`, not as words about them: no line labels what it holds
/// (`No-shows:`, `Total: 2`), tells of the file or its writing, or is a
/// Python list, tuple or dict printed whole (`['Ann', 'Bo']`). A file of
/// what was printed would hold all of it, and two programs that printed
/// the same words would agree.
fn printed_data(printed: &str, path: &str) -> bool {
    let file_name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    let told = |line: &str| {
        let lower = line.to_lowercase();
        lower.contains(&file_name)
            || ["saved", "written", "wrote", "writing"]
                .iter()
                .any(|word| crate::text::contains_whole(&lower, word))
    };
    let printed_whole = |line: &str| {
        let line = line.trim();
        [('[', ']'), ('(', ')'), ('{', '}')]
            .iter()
            .any(|(open, close)| line.starts_with(*open) && line.ends_with(*close))
    };
    !printed.trim().is_empty()
        && !printed
            .lines()
            .any(|line| labels(line) || told(line) || printed_whole(line))
}

/// Whether `line` begins with a label: words and a colon, then a space or
/// the line's end (`Total: 2`, `No-shows:`); a time (`12:30`) is no label.
fn labels(line: &str) -> bool {
    let Some((before, after)) = line.split_once(':') else {
        return false;
    };
    let worded = before.chars().any(char::is_alphabetic);
    worded && (after.is_empty() || after.starts_with(char::is_whitespace))
}

/// Whether `code` runs with a head before it.
pub(crate) fn has_head(code: &str) -> bool {
    code.starts_with(CELLS_HEAD) || code.starts_with(PRINTED_MARK) || code.starts_with(VALUE_MARK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `code` with python3 in `dir`, and what it printed.
    fn run(dir: &std::path::Path, code: &str) -> String {
        let out = std::process::Command::new("python3")
            .arg("-c")
            .arg(code)
            .current_dir(dir)
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn only_the_flaws_a_head_answers_are_repaired_and_only_once() {
        let code = "import csv\nprint(1)\n";
        let ran = |flaw| Ran {
            flaw,
            printed: "",
            failed_or_wrote: true,
            worded: false,
        };
        let cells = ran("'7.5' and '61.0' compared as text, not as numbers");
        let fixed = repaired(code, &cells).expect("a cell flaw is answered");
        assert!(has_head(&fixed) && fixed.ends_with(code));
        assert_eq!(repaired(&fixed, &cells), None, "a head is put once");
        assert_eq!(repaired(code, &ran("it reads the clock")), None);
        let future = "from __future__ import annotations\nimport csv\n";
        assert_eq!(repaired(future, &cells), None);
    }

    #[test]
    fn the_flaws_answered_are_those_the_watch_says() {
        let watch = crate::sandbox::WATCH;
        for said in CELL_FLAWS {
            assert!(watch.contains(said), "the watch no longer says {said:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let sandbox = crate::sandbox::Sandbox::over(dir.path());
        let flaw = sandbox.work_not_done(&Default::default(), "Write the names to out.txt.", "Ann");
        let flaw = flaw.expect("out.txt was not written");
        assert!(flaw.starts_with(NOT_WRITTEN) && flaw.contains(TASK_SAYS), "{flaw}");
    }

    #[test]
    fn cells_rank_as_numbers_and_match_padded_text_but_stay_exact_between_cells() {
        let dir = tempfile::tempdir().unwrap();
        let csv = "name,score,level\nAsha  ,7.5,beginner \nBo,61.0,Improver\nCy,1,250.5,beginner\nDee,12,BEGINNER\n";
        std::fs::write(dir.path().join("s.csv"), csv.replace("1,250.5", "\"1,250.5\"")).unwrap();
        let program = r#"import csv
rows = list(csv.DictReader(open("s.csv")))
print([r["name"].strip() for r in sorted(rows, key=lambda r: r["score"], reverse=True)])
print(max(rows, key=lambda r: r["score"])["name"])
print([r["name"] for r in rows if r["name"] == "Asha" or r["level"] == "beginner"])
print(rows[0]["level"] == rows[3]["level"], rows[0]["score"] > "10")
"#;
        let plain = run(dir.path(), program);
        assert!(plain.starts_with("['Asha', 'Bo', 'Dee', 'Cy']"), "{plain}");
        let fixed = run(dir.path(), &format!("{CELLS_HEAD}{program}"));
        assert_eq!(
            fixed,
            "['Cy', 'Bo', 'Dee', 'Asha']\nCy\n['Asha  ', 'Cy', 'Dee']\nFalse False\n"
        );
    }

    #[test]
    fn what_a_program_printed_goes_to_the_file_it_did_not_write_unless_it_labels_it() {
        let dir = tempfile::tempdir().unwrap();
        let program = "for name in ['Ann', 'Bo']:\n    print(name)\n";
        let ran = |printed| Ran {
            flaw: "it did not write out/no shows.txt, which the task says to write (it printed \"Ann …\")",
            printed,
            failed_or_wrote: false,
            worded: false,
        };
        let fixed = repaired(program, &ran("Ann\nBo")).expect("a program that printed its list is answered");
        assert!(has_head(&fixed), "{fixed}");
        assert_eq!(run(dir.path(), &fixed), "", "what it prints goes to the file");
        let written = std::fs::read_to_string(dir.path().join("out/no shows.txt")).unwrap();
        assert_eq!(written, "Ann\nBo\n");
        for worded in [
            "No-shows:\nAnn\nBo",
            "Ann\nBo\nTotal: 2",
            "['Ann', 'Bo']",
            "Ann\nSaved the names",
        ] {
            assert_eq!(
                repaired(program, &ran(worded)),
                None,
                "{worded:?} would go to the file too"
            );
        }
        assert!(
            repaired(program, &ran("Ann 12:30\nBo 14:05")).is_some(),
            "a time is no label"
        );
        let outside = Ran {
            flaw: "it did not write ../x.txt, which the task says to write",
            ..ran("Ann")
        };
        assert_eq!(repaired(program, &outside), None);
        assert_eq!(repaired(program, &ran("")), None);
        let wrote = Ran {
            failed_or_wrote: true,
            ..ran("Ann\nBo")
        };
        assert_eq!(repaired(program, &wrote), None);
    }

    #[test]
    fn a_number_written_with_words_around_it_is_left_alone_in_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let flaw = crate::content::value_in_words("gain.txt", "59.8 kg", &[]).expect("words around a value");
        let ran = Ran {
            flaw: &flaw,
            printed: "",
            failed_or_wrote: true,
            worded: true,
        };
        let write = |text: &str| format!("open('gain.txt', 'w').write({text:?})\n");
        let fixed = repaired(&write("Tansy's gain of weight: 59.8 kg"), &ran).expect("a worded value is answered");
        assert!(has_head(&fixed), "{fixed}");
        let written = |code: &str| {
            run(dir.path(), code);
            std::fs::read_to_string(dir.path().join("gain.txt")).unwrap()
        };
        assert_eq!(written(&fixed), "59.8\n");
        let head = value_head("gain.txt");
        for (text, left) in [
            ("Total takings: £2,709.90.", "2709.90\n"),
            ("Loss: -3.5 kg", "-3.5\n"),
            ("From 2025-04-07 to 2025-06-16", "From 2025-04-07 to 2025-06-16"),
            ("Bay 12 and bay 14", "Bay 12 and bay 14"),
            ("Room B12", "Room B12"),
            ("Raised 1.5 million", "Raised 1.5 million"),
            ("59.8", "59.8"),
            ("59.8 kg\nTansy", "59.8 kg\nTansy"),
        ] {
            assert_eq!(written(&format!("{head}{}", write(text))), left, "{text:?}");
        }
        let flawed = Ran { worded: false, ..ran };
        assert_eq!(
            repaired(&write("59.8 kg"), &flawed),
            None,
            "another flaw is not answered so"
        );
    }
}
