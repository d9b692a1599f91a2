//! Whether a file a program or a run wrote holds a Python value as Python
//! prints it (`Counter({'Blue Tit': 3, …})`, `['Ash', 'Elm']`,
//! `np.float64(12.5)`, `<generator object …>`) where a person's file holds
//! the value itself: the number, one item per line, a table's cells.
//!
//! A small model's program writes `str(value)` of whatever it computed: on
//! held-out-49 (spent) two programs asked for the number of species wrote
//! `str(Counter(species))` to species_count.txt, agreed, and the run said
//! `succeeded`. A repr is the language's way of showing a value to its
//! programmer, not a form any task names for a data or text file, so of
//! the task only the paths it names are read; a text an input holds as it
//! is (a log that quotes one) is copied, not printed, and is left alone.
//! Code in another language (SQL's `('Ann', 30)`, a JavaScript array)
//! writes the same brackets, so only data and text files are read.

use std::sync::OnceLock;

use regex::Regex;

/// The files read: data and text a person reads (and files with no
/// extension), where a repr is no value; in code it is code.
const DATA_EXTENSIONS: [&str; 7] = ["txt", "csv", "tsv", "md", "json", "log", "list"];

/// The texts Python prints for a value that are no value a person writes:
/// a call of a library type around its contents, an object's address, and
/// a list, dict, set or tuple (or one inside another) whose first item is
/// a string in single quotes, at a line's start, a table cell's or after
/// a label (`Top species: ['Robin', 'Wren']`).
fn reprs() -> &'static [Regex; 3] {
    static REPRS: OnceLock<[Regex; 3]> = OnceLock::new();
    REPRS.get_or_init(|| {
        let pattern = |p: &str| Regex::new(p).expect("a valid pattern");
        [
            pattern(
                r"\b(?:Counter|defaultdict|OrderedDict|deque|dict_keys|dict_values|dict_items|Decimal|Fraction|datetime\.(?:date|datetime|time|timedelta)|Timestamp|Timedelta|np\.[a-z][a-z0-9_]*|numpy\.[a-z][a-z0-9_]*|array)\([^)\n]*\)?",
            ),
            pattern(r"<[A-Za-z_][\w.]* object (?:<[\w.]+> )?at 0x[0-9a-fA-F]+>"),
            pattern(r#"(?m)(?:^|[,\t":=])[ \t]*[\[{(]{1,2}[ \t]*'[^'\n]*'[ \t]*[:,\]})]"#),
        ]
    })
}

/// The flaw, said for the program or the run, when `text` (what the file
/// at `path`, a file `task` names, holds) holds a Python repr that none of
/// `inputs` (path, text) holds as it is. A file the task does not name is
/// a program's own (a scratch file, a log) and left to it.
pub(crate) fn printed_as_python(path: &str, text: &str, task: &str, inputs: &[(&str, &str)]) -> Option<String> {
    if !crate::plan::paths_named_by(task).iter().any(|named| named == path) {
        return None;
    }
    let extension = std::path::Path::new(path).extension().and_then(|e| e.to_str());
    if extension.is_some_and(|e| !DATA_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())) {
        return None;
    }
    let copied = |found: &str| inputs.iter().any(|(_, input)| input.contains(found));
    let found = reprs()
        .iter()
        .flat_map(|repr| repr.find_iter(text))
        .map(|m| m.as_str().trim_start_matches([',', '\t', '"', ':', '=', ' ']))
        .find(|found| !copied(found))?;
    let line = text.lines().find(|line| line.contains(found)).unwrap_or(found);
    Some(format!(
        "{path} holds `{}`, a Python value as Python prints it (`{}`): write the value itself in the form the task asks for (the number alone, one item per line, a table's cells), not str() of a container or object",
        crate::text::one_line(line.trim(), 120),
        crate::text::one_line(found, 40)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "date,ring,species\n2024-08-03,AXB1021,Blue Tit\n2024-08-03,AXB1022,Great Tit\n";

    fn flaw(path: &str, text: &str) -> Option<String> {
        let task = format!("How many species are in ringing_log.csv? Write the answer to {path}.");
        printed_as_python(path, text, &task, &[("ringing_log.csv", LOG)])
    }

    #[test]
    fn a_counter_a_list_or_an_object_printed_is_a_flaw() {
        let counter = "Counter({'Blue Tit': 3, 'Great Tit': 2, 'Robin': 2})";
        let said = flaw("species_count.txt", counter).expect("a Counter is no count");
        assert!(
            said.contains("species_count.txt") && said.contains("Counter("),
            "{said}"
        );
        assert!(flaw("names.txt", "['Blue Tit', 'Great Tit']\n").is_some());
        assert!(flaw("totals.txt", "{'Blue Tit': 3}\n").is_some());
        assert!(flaw("mean.txt", "np.float64(64.5)\n").is_some());
        assert!(flaw("keys.txt", "dict_keys(['Blue Tit', 'Robin'])").is_some());
        assert!(flaw("out.txt", "<generator object <genexpr> at 0x7f3a2b>").is_some());
        assert!(flaw("out.txt", "<map object at 0x7f3a2b10>").is_some());
        assert!(flaw("top.txt", "Top species: ['Robin', 'Wren']\n").is_some());
        assert!(flaw("top.txt", "[('Blue Tit', 3)]\n").is_some());
        // A list written into a table's cell.
        let table = "species,rings\nBlue Tit,\"['AXB1021', 'AXB1023']\"\n";
        assert!(flaw("rings.csv", table).is_some());
    }

    #[test]
    fn values_written_as_values_code_and_reprs_an_input_holds_are_no_flaw() {
        for right in [
            "8\n",
            "Blue Tit\nGreat Tit\n",
            "species,count\nBlue Tit,3\n",
            "{\"Blue Tit\": 3}\n",
        ] {
            assert_eq!(flaw("out.txt", right), None, "{right}");
        }
        // Words in brackets and a possessive are no repr.
        assert_eq!(
            flaw("notes.txt", "Robin (adult's ring) seen twice\n[draft] see 'Wren'\n"),
            None
        );
        assert_eq!(flaw("count.py", "print(Counter({'a': 1}))\n"), None);
        // Code in another language writes the same brackets.
        assert_eq!(
            flaw("seed.sql", "INSERT INTO people VALUES\n('Alice', 30),\n('Bob', 25);\n"),
            None
        );
        let quoted = [("debug.log", "result: Counter({'a': 1})\n")];
        let task = "Copy the result in debug.log to copy.txt.";
        assert_eq!(
            printed_as_python("copy.txt", "Counter({'a': 1})\n", task, &quoted),
            None
        );
        // A file the task does not name is the program's own.
        let task = "How many species are in ringing_log.csv? Write the answer to count.txt.";
        assert_eq!(printed_as_python("debug.txt", "Counter({'a': 1})\n", task, &[]), None);
    }
}
