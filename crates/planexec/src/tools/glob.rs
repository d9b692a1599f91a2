//! `glob`: the workspace's files whose paths match a pattern, one per line,
//! as coding agents' users expect (`data/*.csv`, `**/*.md`). A listing a
//! small model would otherwise filter by hand (and get wrong) becomes one
//! call whose output can be counted (`count({{s1}})`) or written as it is.
//! The workspace walk that `search` shares lives here too.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::{str_arg, string_args};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

pub(crate) struct Glob(pub Arc<Workspace>);

/// Most files a folder search or a glob reads.
const MAX_FILES: usize = 200;

/// The text files under `full` (itself, when it is a file), sorted, hidden ones left out.
pub(super) fn files_under(full: &Path) -> Vec<PathBuf> {
    if full.is_file() {
        return vec![full.to_path_buf()];
    }
    let mut files = Vec::new();
    let mut folders = vec![full.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(read) = std::fs::read_dir(&folder) else { continue };
        for entry in read.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => folders.push(entry.path()),
                Ok(t) if t.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files.sort();
    files.truncate(MAX_FILES);
    files
}

/// Whether `name` (one path segment) matches `pattern`, where `*` is any
/// run of characters and `?` any one character.
fn segment_matches(pattern: &[char], name: &[char]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some('*'), _) => {
            segment_matches(&pattern[1..], name) || (!name.is_empty() && segment_matches(pattern, &name[1..]))
        }
        (Some('?'), Some(_)) => segment_matches(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) => p == n && segment_matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// Whether the path segments `path` match the pattern segments `pattern`,
/// where a `**` segment is any number of folders.
fn path_matches(pattern: &[Vec<char>], path: &[Vec<char>]) -> bool {
    match pattern.first() {
        None => path.is_empty(),
        Some(p) if p.iter().collect::<String>() == "**" => {
            path_matches(&pattern[1..], path) || (!path.is_empty() && path_matches(pattern, &path[1..]))
        }
        Some(p) => !path.is_empty() && segment_matches(p, &path[0]) && path_matches(&pattern[1..], &path[1..]),
    }
}

fn segments(path: &str) -> Vec<Vec<char>> {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(|s| s.chars().collect())
        .collect()
}

/// Whether workspace path `path` matches `pattern`. A pattern with no `/`
/// matches a file name in any folder (as `.gitignore` and `rg -g` read it).
/// `{a,b}` is either, as in a shell, and so are patterns written side by
/// side (`*.png *.gif`, `*.png, *.gif`): read as one pattern they match
/// nothing, and an empty listing looks like an answer.
pub(crate) fn glob_matches(pattern: &str, path: &str) -> bool {
    alternatives(pattern).iter().any(|one| one_matches(one, path))
}

/// The patterns `pattern` stands for: its `{a,b}` groups expanded, and split
/// where whitespace, `,` or `|` (outside braces) separates patterns that
/// each have a wildcard (a name with a space in it stays whole).
fn alternatives(pattern: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in pattern.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c.is_whitespace() || c == ',' || c == '|') => {
                pieces.push(&pattern[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    pieces.push(&pattern[start..]);
    pieces.retain(|p| !p.is_empty());
    let split = pieces.len() > 1 && pieces.iter().all(|p| is_pattern(p));
    let wholes = if split { pieces } else { vec![pattern] };
    wholes.into_iter().flat_map(braces_expanded).collect()
}

/// `pattern` with its first `{a,b,…}` group replaced by each choice in turn
/// (and the rest expanded the same way); itself when it has none.
fn braces_expanded(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_string()];
    };
    let Some(close) = pattern[open..].find('}').map(|i| open + i) else {
        return vec![pattern.to_string()];
    };
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    pattern[open + 1..close]
        .split(',')
        .flat_map(|choice| braces_expanded(&format!("{head}{}{tail}", choice.trim())))
        .collect()
}

/// Whether `path` matches one pattern with no alternatives.
fn one_matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim().trim_start_matches("./");
    let pattern = if pattern.contains('/') {
        pattern.to_string()
    } else {
        format!("**/{pattern}")
    };
    path_matches(&segments(&pattern), &segments(path))
}

/// The workspace's files whose paths match `pattern`, sorted.
pub(super) fn matching_files(workspace: &Workspace, pattern: &str) -> Vec<PathBuf> {
    files_under(workspace.root())
        .into_iter()
        .filter(|file| glob_matches(pattern, &workspace.display(file)))
        .collect()
}

/// Whether a path a planner wrote is a pattern (`inbox/*`), not a name.
pub(super) fn is_pattern(path: &str) -> bool {
    path.contains(['*', '?'])
}

#[async_trait]
impl Tool for Glob {
    fn name(&self) -> &str {
        "glob"
    }
    fn description(&self) -> &str {
        "The workspace's files whose paths match a pattern, one per line: `*` is any part of a name, `**` any folders, {a,b} either (data/*.csv, **/*.md, *.{png,gif}; a pattern with no / matches file names in every folder). count({{s1}}) in the calculator counts them."
    }
    fn summary(&self) -> &str {
        "The workspace paths matching a pattern (* and **), one per line."
    }
    fn parameters(&self) -> Value {
        string_args(&[(
            "pattern",
            "a path pattern relative to the workspace root, e.g. data/*.csv",
        )])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let pattern = str_arg(&args, "pattern")?;
        if pattern.trim().is_empty() {
            return Err(ToolError::invalid_args(
                "`pattern` is empty: say which paths to match, e.g. *.txt",
            ));
        }
        let found: Vec<String> = matching_files(&self.0, pattern)
            .iter()
            .map(|file| self.0.display(file))
            .collect();
        Ok(json!(found.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_in_a_shell_with_double_star_for_folders() {
        assert!(glob_matches("data/*.csv", "data/sales.csv"));
        assert!(!glob_matches("data/*.csv", "data/notes.txt"));
        assert!(!glob_matches("data/*.csv", "data/old/sales.csv"));
        assert!(glob_matches("data/**/*.csv", "data/old/sales.csv"));
        assert!(glob_matches("data/**/*.csv", "data/sales.csv"));
        assert!(glob_matches("*.jpg", "photos/2024/cat.jpg"), "no slash: any folder");
        assert!(glob_matches("./report-?.md", "report-1.md"));
        assert!(!glob_matches("report-?.md", "report-12.md"));
    }

    #[test]
    fn braces_and_patterns_side_by_side_are_alternatives() {
        assert!(glob_matches("assets/*.{png,gif}", "assets/logo.gif"));
        assert!(!glob_matches("assets/*.{png,gif}", "assets/logo.jpg"));
        for both in ["assets/*.png assets/*.gif", "*.png, *.gif", "*.png|*.gif"] {
            assert!(glob_matches(both, "assets/a.png"), "{both}");
            assert!(glob_matches(both, "assets/b.gif"), "{both}");
            assert!(!glob_matches(both, "assets/c.svg"), "{both}");
        }
        // A name with a space in it is one name, not two patterns.
        assert!(glob_matches("notes/meeting notes.txt", "notes/meeting notes.txt"));
        assert!(!glob_matches("notes/meeting notes.txt", "notes/meeting"));
    }

    #[tokio::test]
    async fn glob_lists_matching_files_one_per_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/old")).unwrap();
        for f in [
            "data/sales.csv",
            "data/stock.csv",
            "data/notes.txt",
            "data/old/2023.csv",
            "readme.md",
        ] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let glob = Glob(Arc::new(Workspace::new(dir.path()).unwrap()));
        let call = |p: &str| glob.call(json!({ "pattern": p }));
        assert_eq!(
            call("data/*.csv").await.unwrap(),
            json!("data/sales.csv\ndata/stock.csv")
        );
        assert_eq!(
            call("*.csv").await.unwrap(),
            json!("data/old/2023.csv\ndata/sales.csv\ndata/stock.csv")
        );
        assert_eq!(call("*.pdf").await.unwrap(), json!(""));
        assert!(call(" ").await.is_err());
    }
}
