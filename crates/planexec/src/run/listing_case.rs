//! A list of files a run wrote that leaves out a file of the same folder
//! whose extension is a listed file's written in other capitals
//! (`receipt.PDF` beside listed `.pdf` files).
//!
//! A file's extension names its kind in any capitals, and a program that
//! tests `name.endswith('.pdf')` misses the others. On held-out-39 (spent)
//! the 1.5B model's program listed a folder's PDFs so, a checking program
//! did the same, and the run said `succeeded`. The finding is read from
//! the list and the folder alone, never from the task's words; a list
//! that holds both spellings of an extension is left alone.

use std::collections::BTreeSet;
use std::path::Path;

use super::Run;

/// Most entries of one folder looked through.
const MOST_ENTRIES: usize = 500;

/// When a file the run wrote is a list of files (each line names a file of
/// the workspace or of one of its top folders) that leaves out a file of a
/// listed folder whose extension is a listed one in other capitals: its
/// path and a line saying so.
pub(crate) fn left_out_by_capitals(run: &Run) -> Option<(String, String)> {
    let workspace = run.ctx.setting.tools.workspace()?;
    run.new_outputs.iter().find_map(|path| {
        let text = std::fs::read_to_string(workspace.resolve(path).ok()?).ok()?;
        let missed = missed_in(workspace.root(), &text, &run.new_outputs)?;
        let what = format!(
            "{path} leaves out {missed}, whose extension is a listed file's in other capitals: a file's extension names its kind in any capitals (compare it casefolded)"
        );
        Some((path.clone(), what))
    })
}

/// The first file `listing` leaves out that it would hold but for the
/// capitals of its extension, with the folders looked in under `root`
/// (the run's own `outputs` aside). `None` when `listing` is no list of
/// files, or leaves out none so.
fn missed_in(root: &Path, listing: &str, outputs: &[String]) -> Option<String> {
    let lines: Vec<&str> = listing.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let folders = folders_of(root, &lines)?;
    let listed: BTreeSet<&str> = lines.iter().map(|line| name_of(line)).collect();
    let extensions: BTreeSet<&str> = listed.iter().filter_map(|name| extension(name)).collect();
    for folder in &folders {
        let missed = names_in(&root.join(folder), |kind| kind.is_file())?
            .into_iter()
            .find(|name| {
                let shown = joined(folder, name);
                let ext = extension(name);
                !listed.contains(name.as_str())
                    && !outputs.contains(&shown)
                    && ext.is_some_and(|ext| {
                        !extensions.contains(ext) && extensions.iter().any(|listed| listed.eq_ignore_ascii_case(ext))
                    })
            });
        if let Some(name) = missed {
            return Some(joined(folder, &name));
        }
    }
    None
}

/// The folders (relative to `root`, `""` for itself) the files `lines` name
/// are in, when each names a file there: a line is a path from `root`, or
/// a name in `root` or in one of its top folders.
fn folders_of(root: &Path, lines: &[&str]) -> Option<BTreeSet<String>> {
    let mut tops = names_in(root, |kind| kind.is_dir())?;
    tops.retain(|name| !name.starts_with('.'));
    let mut folders = BTreeSet::new();
    for line in lines {
        let line = line.trim_start_matches("./");
        if line.contains("..") || line.starts_with('/') {
            return None;
        }
        let folder = match line.rsplit_once('/') {
            Some((folder, _)) if root.join(line).is_file() => folder.to_string(),
            Some(_) => return None,
            None if root.join(line).is_file() => String::new(),
            None => tops.iter().find(|top| root.join(top).join(line).is_file())?.clone(),
        };
        folders.insert(folder);
    }
    Some(folders)
}

/// The names of the entries of `folder` of a `kind` (of its first
/// [`MOST_ENTRIES`]), sorted; `None` when it cannot be read.
fn names_in(folder: &Path, kind: fn(&std::fs::FileType) -> bool) -> Option<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .ok()?
        .take(MOST_ENTRIES)
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| kind(&t)))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    Some(names)
}

fn name_of(line: &str) -> &str {
    line.rsplit('/').next().unwrap_or(line)
}

fn extension(name: &str) -> Option<&str> {
    name.rsplit_once('.').map(|(_, ext)| ext).filter(|ext| !ext.is_empty())
}

fn joined(folder: &str, name: &str) -> String {
    match folder {
        "" => name.to_string(),
        folder => format!("{folder}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    #[test]
    fn a_list_that_leaves_out_an_extension_in_other_capitals_is_found() {
        let dir = folder(&["docs/a.pdf", "docs/b.PDF", "docs/c.pdf", "docs/notes.txt"]);
        let outputs = vec!["pdfs.txt".to_string()];
        assert_eq!(
            missed_in(dir.path(), "a.pdf\nc.pdf\n", &outputs),
            Some("docs/b.PDF".to_string())
        );
        assert_eq!(
            missed_in(dir.path(), "docs/a.pdf\ndocs/c.pdf\n", &outputs),
            Some("docs/b.PDF".to_string())
        );
        // Both spellings listed, or the other file listed: nothing left out.
        assert_eq!(missed_in(dir.path(), "a.pdf\nb.PDF\nc.pdf\n", &outputs), None);
        // A text file of another kind, or lines that are no files, say nothing.
        assert_eq!(missed_in(dir.path(), "notes.txt\n", &outputs), None);
        assert_eq!(missed_in(dir.path(), "a.pdf\nnot a file\n", &outputs), None);
        assert_eq!(missed_in(dir.path(), "", &outputs), None);
    }
}
