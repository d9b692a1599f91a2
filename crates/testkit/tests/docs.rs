//! The README and the guide in `docs/`: every relative link resolves (file and
//! heading), the README stays a front door of at most 300 lines, and its two
//! commands are still marked for `.ci/run` and the task suite to read.

use std::path::{Path, PathBuf};

use planexec_testkit::links::broken_links;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("a docs folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guide.sort();
    pages.extend(guide);
    pages
}

#[test]
fn every_link_of_the_readme_and_the_guide_resolves() {
    let pages = pages();
    assert!(pages.len() >= 10, "the guide's pages: {pages:?}");
    let broken: Vec<String> = pages.iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_guide_page_is_linked_from_the_guides_index() {
    let index = std::fs::read_to_string(root().join("docs/README.md")).expect("docs/README.md");
    for page in pages().iter().skip(1) {
        let name = page.file_name().unwrap().to_string_lossy().to_string();
        if name != "README.md" {
            assert!(
                index.contains(&format!("]({name})")),
                "docs/README.md does not link {name}"
            );
        }
    }
}

#[test]
fn the_readme_is_a_front_door_with_its_two_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move detail to a page of docs/"
    );
    for marker in ["<!-- main-command -->", "<!-- test-command -->"] {
        assert!(readme.contains(marker), "README.md lost {marker}");
    }
}
