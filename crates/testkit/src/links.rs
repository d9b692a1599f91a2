//! Links between the project's Markdown pages, checked offline: every
//! relative link must name a file that exists and, with `#anchor`, a heading
//! of that page (GitHub's slugs). Links to `http(s)://` addresses are not
//! followed (the test machines have no network); links inside code blocks and
//! code spans are not links.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The broken links of `page` (a Markdown file), each as `page: target: why`.
pub fn broken_links(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let dir = page.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for target in links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let file: PathBuf = if path.is_empty() {
            page.to_path_buf()
        } else {
            dir.join(path)
        };
        if !file.exists() {
            out.push(format!("{}: {target}: no such file", page.display()));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        let is_markdown = file.extension().is_some_and(|e| e == "md");
        let headings = anchors(&std::fs::read_to_string(&file).unwrap_or_default());
        if is_markdown && !headings.contains(anchor) {
            out.push(format!(
                "{}: {target}: no heading with that anchor in {}",
                page.display(),
                file.display()
            ));
        }
    }
    out
}

/// Text outside fenced code blocks, with code spans removed.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` links.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].trim();
        // `[a](b "title")` has a title after the target.
        let target = target.split_whitespace().next().unwrap_or("");
        if !target.is_empty() {
            out.push(target.to_string());
        }
        rest = &after[end..];
    }
    out
}

/// The anchors of a page's headings, as GitHub makes them: lower case,
/// punctuation dropped, spaces as hyphens, a repeated one numbered.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 1;
        while out.contains(&unique) {
            unique = format!("{slug}-{n}");
            n += 1;
        }
        out.insert(unique);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_githubs() {
        let a = anchors("# planexec\n## Comparing strategies: `planexec bench`\n## The task suite's history, rounds 1–12 (to 3c8e5c5)\n## Notes\n## Notes\n```sh\n# not a heading\n```\n");
        for expected in [
            "planexec",
            "comparing-strategies-planexec-bench",
            "the-task-suites-history-rounds-112-to-3c8e5c5",
            "notes",
            "notes-1",
        ] {
            assert!(a.contains(expected), "{expected} in {a:?}");
        }
        assert!(!a.contains("not-a-heading"));
    }

    #[test]
    fn links_in_code_are_not_links() {
        let found = links("See [the guide](docs/README.md) and ![x](a.png \"t\").\n`[a](b)` and\n```\n[c](d)\n```\n");
        assert_eq!(found, vec!["docs/README.md".to_string(), "a.png".to_string()]);
    }

    #[test]
    fn a_missing_page_and_a_missing_heading_are_reported() {
        let dir = std::env::temp_dir().join(format!("planexec-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("other.md"), "# Other\n## A part\n").unwrap();
        let page = dir.join("page.md");
        std::fs::write(
            &page,
            "[ok](other.md#a-part) [gone](missing.md) [no part](other.md#b-part) [web](https://example.com/x) [self](#top)\n# Top\n",
        )
        .unwrap();
        let broken = broken_links(&page);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(broken[0].ends_with("missing.md: no such file"));
        assert!(broken[1].contains("other.md#b-part: no heading"));
    }
}
