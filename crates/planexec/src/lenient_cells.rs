//! A program that compared csv cells the way the sandbox's watch flags
//! ([`crate::sandbox`]), run again with a head that makes its cells compare
//! as the task meant: as numbers where both sides read as numbers, and
//! equal to a text of the program's own when they differ only in the
//! spaces around them or in letter case.
//!
//! The 1.5B model, told its program compared `'7.5'` with `'61.0'` as text
//! or `'Aerial silks  '` with `'Aerial silks'`, writes the same comparison
//! again: on held-out-47 (spent) six of seven programs ranking skaters by
//! score compared the scores as text, and all seven programs for a class's
//! new price matched its padded name exactly, and fixes written after being
//! told kept the flaw. The comparison each program meant is plain from
//! what the watch saw, and the head is the same for any task: it is shown
//! in the program, so the plan that is approved is the program that runs.

/// Put before a program whose cells compared with a flaw: `csv.reader` and
/// `csv.DictReader` give cells that compare as numbers when both sides
/// read as numbers (thousands separators too), and that equal a plain text
/// differing only in the spaces around it or in letter case. A cell
/// compared with a cell for equality is left exact: a dedupe's case may be
/// its point.
pub(crate) const HEAD: &str = r#"# planexec: csv cells below compare as numbers when both sides read as
# numbers, and match a text that differs only in spaces around it or case.
import csv as _pe_csv, re as _pe_re
def _pe_number(text):
    text = text.strip()
    if _pe_re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", text):
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
    def __ne__(self, o): return not self.__eq__(o)
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
/// in spaces or case: the two flaws [`HEAD`] answers.
const CELL_FLAWS: [&str; 2] = ["compared as text, not as numbers", "found different only in"];

/// `code` with [`HEAD`] before it, when `flaw` (what the watch saw of it
/// running) is one the head answers, the code has no head yet, and it has
/// no `from __future__` import (which must come first).
pub(crate) fn repaired(code: &str, flaw: &str) -> Option<String> {
    let answered = CELL_FLAWS.iter().any(|said| flaw.contains(said));
    (answered && !code.contains("_PeCell") && !code.contains("__future__")).then(|| format!("{HEAD}{code}"))
}

/// Whether `code` runs with [`HEAD`] before it.
pub(crate) fn has_head(code: &str) -> bool {
    code.starts_with(HEAD)
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
    fn only_the_cell_flaws_are_repaired_and_only_once() {
        let code = "import csv\nprint(1)\n";
        let flaw = "'7.5' and '61.0' compared as text, not as numbers";
        let fixed = repaired(code, flaw).expect("a cell flaw is answered");
        assert!(has_head(&fixed) && fixed.ends_with(code));
        assert_eq!(repaired(&fixed, flaw), None, "a head is put once");
        assert_eq!(repaired(code, "it reads the clock"), None);
        let future = "from __future__ import annotations\nimport csv\n";
        assert_eq!(repaired(future, flaw), None);
    }

    #[test]
    fn the_flaws_answered_are_those_the_watch_says() {
        let watch = crate::sandbox::WATCH;
        for said in CELL_FLAWS {
            assert!(watch.contains(said), "the watch no longer says {said:?}");
        }
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
        let fixed = run(dir.path(), &format!("{HEAD}{program}"));
        assert_eq!(
            fixed,
            "['Cy', 'Bo', 'Dee', 'Asha']\nCy\n['Asha  ', 'Cy', 'Dee']\nFalse False\n"
        );
    }
}
