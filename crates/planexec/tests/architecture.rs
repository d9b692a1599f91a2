//! The shape of the core, checked on its source so that it stays easy to see:
//!
//! - no import circles between modules (a file and its own parent or children
//!   are one room; circles across rooms fail, naming the files);
//! - no function longer than a screen (120 lines) outside tests;
//! - the shared DAG loop fits on one screen of its own (80 lines);
//! - no `macro_rules!` in the run loop or the strategies (early exits are
//!   values, not macros with a hidden `return`);
//! - `Strategy` variants are named only in `strategy/`: the roles ask the
//!   strategy's profile instead.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every source file with its module path (`plan/refs.rs` is `plan::refs`).
fn sources() -> Vec<(Vec<String>, PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(SRC), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(SRC).unwrap().with_extension("");
            let mut module: Vec<String> = rel.iter().map(|p| p.to_string_lossy().to_string()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            (module, path, text)
        })
        .collect()
}

/// The code of a file: tests cut off, comment lines dropped.
fn code(text: &str) -> String {
    let body = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One `use` declaration expanded into paths, e.g. `use a::{b, c::{d as e}}`
/// gives `a::b` and `a::c::d` (named `e`).
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<(String, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let prefix = [prefix, head]
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("::");
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&inner[start..i], &prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&inner[start..], &prefix, out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p.trim(), a.trim()),
        None => (tree, tree.rsplit("::").next().unwrap_or(tree)),
    };
    let full = if prefix.is_empty() {
        path.to_string()
    } else if path == "self" {
        prefix.to_string()
    } else {
        format!("{prefix}::{path}")
    };
    let alias = if alias == "self" {
        full.rsplit("::").next().unwrap_or("").to_string()
    } else {
        alias.to_string()
    };
    out.push((full, alias));
}

struct Module {
    file: String,
    /// Paths this module's code uses (`use` declarations and inline `crate::`/`super::` paths).
    uses: Vec<String>,
    /// Names it re-exports (`pub use`), with the path each stands for.
    reexports: HashMap<String, String>,
}

/// A path as absolute module segments, from the module `at`.
fn absolute(path: &str, at: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut segments: Vec<String> = path.split("::").map(|s| s.trim().to_string()).collect();
    let mut base: Vec<String> = match segments.first().map(String::as_str) {
        Some("crate") => {
            segments.remove(0);
            Vec::new()
        }
        Some("self") => {
            segments.remove(0);
            at.to_vec()
        }
        Some("super") => {
            let mut base = at.to_vec();
            while segments.first().map(String::as_str) == Some("super") {
                segments.remove(0);
                base.pop();
            }
            base
        }
        // A child module of `at`, or another crate.
        Some(first) => {
            let mut child = at.to_vec();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            at.to_vec()
        }
        None => return None,
    };
    base.extend(segments);
    Some(base)
}

fn parse_modules() -> BTreeMap<Vec<String>, Module> {
    let files = sources();
    let names: BTreeSet<Vec<String>> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let mut modules = BTreeMap::new();
    for (module, path, text) in &files {
        let code = code(text);
        let mut uses = Vec::new();
        let mut reexports = HashMap::new();
        // `use` declarations (possibly over several lines).
        let mut rest = code.as_str();
        while let Some(at) = find_use(rest) {
            let (is_pub, start) = at;
            let decl = &rest[start..];
            let end = decl.find(';').unwrap_or(decl.len());
            let mut paths = Vec::new();
            expand_use(&decl[..end], "", &mut paths);
            for (p, alias) in paths {
                let Some(abs) = absolute(&p, module, &names) else {
                    continue;
                };
                let joined = abs.join("::");
                if is_pub {
                    reexports.insert(alias, joined);
                } else {
                    uses.push(joined);
                }
            }
            rest = &decl[end..];
        }
        // Inline paths.
        for marker in ["crate::", "super::"] {
            let mut from = 0;
            while let Some(i) = code[from..].find(marker) {
                let start = from + i;
                let prev = code[..start].chars().last().unwrap_or(' ');
                let tail: String = code[start..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                from = start + tail.len().max(marker.len());
                if prev.is_alphanumeric() || prev == '_' || prev == ':' {
                    continue;
                }
                if let Some(abs) = absolute(tail.trim_end_matches(':'), module, &names) {
                    uses.push(abs.join("::"));
                }
            }
        }
        modules.insert(
            module.clone(),
            Module {
                file: path.strip_prefix(SRC).unwrap().display().to_string(),
                uses,
                reexports,
            },
        );
    }
    modules
}

/// The next `use` declaration in `text`: whether it is `pub`, and where its tree starts.
fn find_use(text: &str) -> Option<(bool, usize)> {
    let mut from = 0;
    loop {
        let i = text[from..].find("use ")? + from;
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let before = text[line_start..i].trim();
        let at_start = before.is_empty() || before.starts_with("pub");
        if at_start && (before.is_empty() || before == "pub" || before.starts_with("pub(")) {
            return Some((!before.is_empty(), i + 4));
        }
        from = i + 4;
    }
}

/// The module that defines what `path` names, following re-exports.
fn defining_module(path: &str, modules: &BTreeMap<Vec<String>, Module>, depth: usize) -> Option<Vec<String>> {
    let segments: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
    let mut longest = 0;
    for n in 0..=segments.len() {
        if modules.contains_key(&segments[..n]) {
            longest = n;
        }
    }
    let module = segments[..longest].to_vec();
    if let (Some(item), true) = (segments.get(longest), depth < 8) {
        if let Some(target) = modules[&module].reexports.get(item) {
            return defining_module(target, modules, depth + 1).or(Some(module));
        }
    }
    Some(module)
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() < b.len() && b.starts_with(a)
}

#[test]
fn no_import_circles_between_modules() {
    let modules = parse_modules();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (name, module) in &modules {
        for used in &module.uses {
            let Some(target) = defining_module(used, &modules, 0) else {
                continue;
            };
            // The crate root, the module itself, and its own parents and children are one room.
            if target.is_empty() || &target == name || is_ancestor(&target, name) || is_ancestor(name, &target) {
                continue;
            }
            edges.entry(name.clone()).or_default().insert(target);
        }
    }
    // A circle: a path from a module back to itself.
    let mut circles = Vec::new();
    for start in modules.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if next == start {
                    let files: Vec<&str> = path.iter().map(|m| modules[m].file.as_str()).collect();
                    circles.push(format!("{} -> {}", files.join(" -> "), modules[start].file));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
        if !circles.is_empty() {
            break;
        }
    }
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
    // The check sees what it should: the roles depend on the context, the strategies on the run.
    let depends = |a: &str, b: &str| {
        let key = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
        edges.get(&key(a)).is_some_and(|e| e.contains(&key(b)))
    };
    assert!(depends("planner", "context"));
    assert!(depends("strategy::dag", "run"));
    assert!(
        depends("policy", "strategy::kind"),
        "a re-exported name is followed to its file"
    );
}

/// Functions longer than `limit` lines, outside tests: `(file, name, lines)`.
fn long_functions(limit: usize) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    for (_, path, text) in sources() {
        let lines: Vec<&str> = text.lines().collect();
        let end = lines
            .iter()
            .position(|l| l.trim() == "#[cfg(test)]")
            .unwrap_or(lines.len());
        for i in 0..end {
            let line = lines[i];
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            let signature = trimmed
                .trim_start_matches("pub ")
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub(super) ")
                .trim_start_matches("async ");
            if !signature.starts_with("fn ") || line.trim_end().ends_with(';') {
                continue;
            }
            let name: String = signature[3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if let Some(close) = (i + 1..end).find(|&j| lines[j] == format!("{indent}}}")) {
                if close - i + 1 > limit {
                    let file = path.strip_prefix(SRC).unwrap().display().to_string();
                    out.push((file, name, close - i + 1));
                }
            }
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_a_screen() {
    let long = long_functions(120);
    assert!(long.is_empty(), "functions over 120 lines: {long:?}");
}

#[test]
fn the_shared_dag_loop_fits_on_one_screen() {
    let text = std::fs::read_to_string(Path::new(SRC).join("strategy/dag.rs")).unwrap();
    let start = text.find("pub(crate) async fn drive(").expect("dag::drive");
    let body = &text[start..];
    let lines = body.lines().position(|l| l == "}").expect("its end") + 1;
    assert!(lines <= 80, "dag::drive is {lines} lines");
}

#[test]
fn the_run_loop_and_the_strategies_use_no_macros_and_only_strategy_names_its_variants() {
    let variants = ["PlanExecute", "ReplanEachStep", "Rewoo", "Compiler", "React"];
    for (module, path, text) in sources() {
        let code = code(&text);
        let file = path.strip_prefix(SRC).unwrap().display().to_string();
        let in_loop = matches!(module.first().map(String::as_str), Some("run" | "strategy")) || file == "agent.rs";
        assert!(!(in_loop && code.contains("macro_rules!")), "{file} defines a macro");
        if module.first().map(String::as_str) != Some("strategy") {
            for v in variants {
                assert!(
                    !code.contains(&format!("Strategy::{v}")),
                    "{file} names Strategy::{v}: ask the strategy's profile instead"
                );
            }
        }
    }
}
