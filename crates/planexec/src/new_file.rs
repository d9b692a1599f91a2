//! The checks a new file is held to wherever one is written: by each
//! program in the vote, on its copy of the workspace ([`crate::sandbox`]),
//! and by the run, on the file it ends with ([`crate::run::outputs`]), so
//! a program written after the vote (a revision, a fix) meets the same
//! ones. Each reads the new file (its path, its text) beside the files it
//! was written from (path, text) and says the flaw it finds as a line; no
//! model reads anything here.

/// One check of a new file: its path, its text, the files it was written
/// from (path, text); the flaw it finds, said as a line.
pub(crate) type NewFileCheck<'a> = Box<dyn Fn(&str, &str, &[(&str, &str)]) -> Option<String> + 'a>;

/// The checks of a new file written for `task`, in the order they are
/// tried: a table that lacks the header of the table it copies rows from
/// ([`crate::content::header_lost`]) or repeats its own as rows
/// ([`crate::content::header_repeated`]); one line twice in two Unicode
/// forms ([`crate::content::unicode_twins`]); a plain list that kept the
/// marks of the Markdown list it copies ([`crate::list_marks`]); an
/// input's rows in the order of their dates read as text
/// ([`crate::date_order`]); rows picked by a value the task names found
/// inside longer words ([`crate::row_filter`]); a join that lost the rows
/// whose keys meet only trimmed ([`crate::join_keys`]); rows kept once by
/// one column the task does not name ([`crate::dedupe_key`]); a value
/// read from a configuration's key outside the section the task names
/// ([`crate::section_value`]); a Python value written as Python prints it
/// ([`crate::python_repr`]).
pub(crate) fn checks(task: &str) -> Vec<NewFileCheck<'_>> {
    vec![
        Box::new(crate::content::header_lost),
        Box::new(crate::content::header_repeated),
        Box::new(crate::content::unicode_twins),
        Box::new(crate::list_marks::marks_kept),
        Box::new(crate::date_order::sorted_as_text),
        Box::new(move |path, text, inputs| crate::row_filter::matched_elsewhere(path, text, task, inputs)),
        Box::new(crate::join_keys::hidden_by_spaces),
        Box::new(move |path, text, inputs| crate::dedupe_key::kept_by_one_column(path, text, task, inputs)),
        Box::new(move |path, text, inputs| crate::section_value::read_elsewhere(path, text, task, inputs)),
        Box::new(move |path, text, inputs| crate::python_repr::printed_as_python(path, text, task, inputs)),
    ]
}

/// The first flaw `checks` find among `files` (path, text), each check
/// tried over every file before the next: the file's path and the flaw.
pub(crate) fn first_flaw<'f>(
    checks: &[NewFileCheck<'_>],
    files: &[(&'f str, &str)],
    inputs: &[(&str, &str)],
) -> Option<(&'f str, String)> {
    checks.iter().find_map(|check| {
        files
            .iter()
            .find_map(|(path, text)| Some((*path, check(path, text, inputs)?)))
    })
}
