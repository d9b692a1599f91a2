//! The import graph of a crate's source, file to file, for the architecture
//! tests of every planexec crate.
//!
//! Each `.rs` file under `src/` is a node (a module's `mod.rs` is a file like
//! any other). An edge `a.rs -> b.rs` means code in `a.rs` names an item that
//! `b.rs` defines: through a `use` declaration or an inline `crate::`/`super::`
//! path, following `pub use` re-exports to the file that defines the item. A
//! `mod b;` declaration is ownership, not an import, and is not an edge. Test
//! modules (`#[cfg(test)]` and what follows) and comment lines are left out.
//!
//! The parser reads Rust's surface syntax, not its full grammar: it is made for
//! this workspace's code and its own tests show it finds what it should.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A module path as segments: `plan/refs.rs` is `["plan", "refs"]`, `lib.rs` is `[]`.
type ModulePath = Vec<String>;

/// One source file of the crate.
struct SourceFile {
    /// Relative to `src/`, e.g. `plan/mod.rs`.
    file: String,
    /// Paths its code uses, absolute (`plan::refs::Ref`).
    uses: Vec<String>,
    /// Names it re-exports (`pub use`), with the absolute path each stands for.
    reexports: HashMap<String, String>,
    /// Names of items it defines at its top level (`fn`, `struct`, `enum`, …).
    defines: BTreeSet<String>,
}

/// The file-to-file import graph of one crate.
pub struct ImportGraph {
    files: BTreeMap<ModulePath, SourceFile>,
    edges: BTreeMap<ModulePath, BTreeSet<ModulePath>>,
    /// For each edge, the paths that make it (`plan::types::Plan`).
    names: BTreeMap<(ModulePath, ModulePath), BTreeSet<String>>,
}

impl ImportGraph {
    /// Reads every `.rs` file under `src` (the crate's `src/` folder).
    pub fn of_crate(src: &Path) -> ImportGraph {
        Self::of_sources(&source_files(src))
    }

    fn of_sources(sources: &[(ModulePath, String, String)]) -> ImportGraph {
        let names: BTreeSet<ModulePath> = sources.iter().map(|(m, _, _)| m.clone()).collect();
        let files: BTreeMap<ModulePath, SourceFile> = sources
            .iter()
            .map(|(module, file, text)| (module.clone(), parse_file(module, file, text, &names)))
            .collect();
        let mut edges: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
        let mut edge_names: BTreeMap<(ModulePath, ModulePath), BTreeSet<String>> = BTreeMap::new();
        for (module, source) in &files {
            let reexported = source.reexports.values();
            for used in source.uses.iter().chain(reexported) {
                let target = defining_file(used, &files, 0);
                if &target != module {
                    edges.entry(module.clone()).or_default().insert(target.clone());
                    edge_names
                        .entry((module.clone(), target))
                        .or_default()
                        .insert(used.clone());
                }
            }
        }
        ImportGraph {
            files,
            edges,
            names: edge_names,
        }
    }

    /// Whether `from` imports something `to` defines (files relative to `src/`).
    pub fn imports(&self, from: &str, to: &str) -> bool {
        let (Some(from), Some(to)) = (self.module_of(from), self.module_of(to)) else {
            return false;
        };
        self.edges.get(&from).is_some_and(|e| e.contains(&to))
    }

    fn module_of(&self, file: &str) -> Option<ModulePath> {
        self.files.iter().find(|(_, s)| s.file == file).map(|(m, _)| m.clone())
    }

    /// The number of files in the graph.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every circle, one per strongly connected group of files, each written
    /// as one cycle through that group: `a.rs -> b.rs -> a.rs`.
    pub fn circles(&self) -> Vec<String> {
        let groups = strongly_connected(&self.files.keys().cloned().collect::<Vec<_>>(), &self.edges);
        groups
            .into_iter()
            .filter(|g| g.len() > 1)
            .map(|group| {
                let cycle = self.cycle_within(&group);
                let names: Vec<&str> = cycle.iter().map(|m| self.files[m].file.as_str()).collect();
                format!("{} files: {}", group.len(), names.join(" -> "))
            })
            .collect()
    }

    /// The edges inside each circle's group of files, `(from, to)`, for a
    /// reader who wants to see where to cut.
    pub fn circle_edges(&self) -> Vec<Vec<(String, String)>> {
        let groups = strongly_connected(&self.files.keys().cloned().collect::<Vec<_>>(), &self.edges);
        groups
            .into_iter()
            .filter(|g| g.len() > 1)
            .map(|group| {
                let mut inside = Vec::new();
                for from in &group {
                    for to in self
                        .edges
                        .get(from)
                        .into_iter()
                        .flatten()
                        .filter(|t| group.contains(*t))
                    {
                        let what: Vec<&str> = self.names[&(from.clone(), to.clone())]
                            .iter()
                            .map(|n| n.rsplit("::").next().unwrap_or(n))
                            .collect();
                        let to_file = format!("{} ({})", self.files[to].file, what.join(", "));
                        inside.push((self.files[from].file.clone(), to_file));
                    }
                }
                inside
            })
            .collect()
    }

    /// A shortest cycle from the group's first file back to it, within the group.
    fn cycle_within(&self, group: &BTreeSet<ModulePath>) -> Vec<ModulePath> {
        let start = group.iter().next().expect("a non-empty group").clone();
        let mut came_from: BTreeMap<ModulePath, ModulePath> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        while let Some(node) = queue.pop_front() {
            for next in self
                .edges
                .get(&node)
                .into_iter()
                .flatten()
                .filter(|n| group.contains(*n))
            {
                if *next == start {
                    // Walk back from `node` to `start`, then read it forwards.
                    let mut cycle = vec![start.clone(), node.clone()];
                    while let Some(previous) = came_from.get(cycle.last().expect("non-empty")) {
                        cycle.push(previous.clone());
                    }
                    cycle.reverse();
                    return cycle;
                }
                if *next != start && !came_from.contains_key(next) {
                    came_from.insert(next.clone(), node.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        vec![start]
    }
}

/// Every `.rs` file under `src`, sorted: its module path (`plan/refs.rs` is
/// `["plan", "refs"]`, `lib.rs` the root `[]`), its path relative to `src`,
/// and its text.
pub fn source_files(src: &Path) -> Vec<(Vec<String>, String, String)> {
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let rel = path.strip_prefix(src).expect("under src");
            let text = std::fs::read_to_string(path).expect("a readable source file");
            (module_path(rel), rel.display().to_string(), text)
        })
        .collect()
}

/// Every circle in the crate whose sources are in `src`, as a message that
/// names the files of each and the imports inside it, or `Ok` when there is none.
pub fn check_no_circles(src: &Path) -> Result<usize, String> {
    let graph = ImportGraph::of_crate(src);
    let circles = graph.circles();
    if circles.is_empty() {
        return Ok(graph.len());
    }
    let mut message = format!(
        "{} import circle(s) between files in {}:\n",
        circles.len(),
        src.display()
    );
    for (circle, inside) in circles.iter().zip(graph.circle_edges()) {
        message.push_str(&format!("- {circle}\n  imports inside it:\n"));
        for (from, to) in inside {
            message.push_str(&format!("    {from} -> {to}\n"));
        }
    }
    message.push_str("Cut one import of each circle: move what both files need to a file below them.");
    Err(message)
}

/// Functions longer than `limit` lines in the files under `src`, outside test
/// modules: `(file, function, lines)`.
pub fn long_functions(src: &Path, limit: usize) -> Vec<(String, String, usize)> {
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        let file = path.strip_prefix(src).expect("under src").display().to_string();
        out.extend(
            long_functions_in(&text, limit)
                .into_iter()
                .map(|(name, lines)| (file.clone(), name, lines)),
        );
    }
    out
}

/// A function starts at a line `fn name` (after `pub`, `async`, …) and ends at
/// the first line that is its indentation followed by `}`.
fn long_functions_in(text: &str, limit: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for i in 0..end {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let signature = trimmed
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("async ");
        // A declaration (`fn f();`) or a function on one line has no body to measure.
        let one_line = line.trim_end().ends_with(';') || line.trim_end().ends_with('}');
        if !signature.starts_with("fn ") || one_line {
            continue;
        }
        let name: String = signature[3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(last) = (i + 1..end).find(|&j| lines[j] == close) {
            if last - i + 1 > limit {
                out.push((name, last - i + 1));
            }
        }
    }
    out
}

/// The architecture tests every crate shares, written once: no import circle
/// between the files of its `src/`, no function longer than a screen (120
/// lines). A crate's `tests/architecture.rs` is one line:
/// `planexec_testkit::architecture_tests!();`
#[macro_export]
macro_rules! architecture_tests {
    () => {
        #[test]
        fn no_import_circles_between_files() {
            let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
            $crate::structure::check_no_circles(src).unwrap_or_else(|e| panic!("{e}"));
        }

        #[test]
        fn no_function_is_longer_than_a_screen() {
            let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
            let long = $crate::structure::long_functions(src, 120);
            assert!(long.is_empty(), "functions over 120 lines: {long:?}");
        }
    };
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `plan/refs.rs` → `plan::refs`; `plan/mod.rs` → `plan`; `lib.rs`, `main.rs` → the root.
fn module_path(rel: &Path) -> ModulePath {
    let mut module: ModulePath = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let root = module.len() == 1 && matches!(module[0].as_str(), "lib" | "main");
    if root || module.last().map(String::as_str) == Some("mod") {
        module.pop();
    }
    module
}

/// The code of a file: its test module cut off, comment lines dropped.
pub fn code(text: &str) -> String {
    let body = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_file(module: &[String], file: &str, text: &str, names: &BTreeSet<ModulePath>) -> SourceFile {
    let code = code(text);
    let mut uses = Vec::new();
    let mut reexports = HashMap::new();
    let mut rest = code.as_str();
    while let Some((is_pub, start)) = find_use(rest) {
        let decl = &rest[start..];
        let end = decl.find(';').unwrap_or(decl.len());
        let mut paths = Vec::new();
        expand_use(&decl[..end], "", &mut paths);
        for (path, alias) in paths {
            let Some(abs) = absolute(&path, module, names) else {
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
    uses.extend(inline_paths(&code, module, names));
    SourceFile {
        file: file.to_string(),
        uses,
        reexports,
        defines: top_level_items(&code),
    }
}

/// Inline paths in code (not in `use` declarations): `crate::…`, `super::…`
/// and `child::…` for a child module of this file's module.
fn inline_paths(code: &str, module: &[String], names: &BTreeSet<ModulePath>) -> Vec<String> {
    let mut out = Vec::new();
    let children: Vec<String> = names
        .iter()
        .filter(|n| n.len() == module.len() + 1 && n.starts_with(module))
        .map(|n| format!("{}::", n[module.len()]))
        .collect();
    let markers = ["crate::".to_string(), "super::".to_string()]
        .into_iter()
        .chain(children);
    for marker in markers {
        let marker = marker.as_str();
        let mut from = 0;
        while let Some(i) = code[from..].find(marker) {
            let start = from + i;
            let prev = code[..start].chars().last().unwrap_or(' ');
            let tail: String = code[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            from = start + tail.len().max(marker.len());
            // Part of a longer path, or the head of a `use` group (`super::{a, b}`),
            // which `find_use` reads whole.
            if prev.is_alphanumeric() || prev == '_' || prev == ':' || tail.ends_with("::") {
                continue;
            }
            if let Some(abs) = absolute(&tail, module, names) {
                out.push(abs.join("::"));
            }
        }
    }
    out
}

/// Names of the items a file defines at its top level (lines with no indentation).
fn top_level_items(code: &str) -> BTreeSet<String> {
    let kinds = [
        "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
    ];
    let modifiers = ["pub", "async", "unsafe", "extern", "\"C\"", "default"];
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.starts_with(char::is_whitespace)) {
        // `pub(crate)` and friends read as `pub`.
        let line = line.replace("pub(crate)", "pub").replace("pub(super)", "pub");
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || "(<:{;=".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        let mut at = 0;
        // Skip what may come before the item's kind; `const fn` is a function.
        while let Some(word) = words.get(at) {
            let const_fn = *word == "const" && words.get(at + 1).is_some_and(|w| ["fn", "unsafe", "async"].contains(w));
            if modifiers.contains(word) || const_fn {
                at += 1;
            } else {
                break;
            }
        }
        if let (Some(kind), Some(name)) = (words.get(at), words.get(at + 1)) {
            if kinds.contains(kind) {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The next `use` declaration in `text` at the start of a line: whether it is
/// `pub`, and where its tree starts.
fn find_use(text: &str) -> Option<(bool, usize)> {
    let mut from = 0;
    loop {
        let i = text[from..].find("use ")? + from;
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let before = text[line_start..i].trim();
        if before.is_empty() || before == "pub" || before.starts_with("pub(") {
            return Some((!before.is_empty(), i + 4));
        }
        from = i + 4;
    }
}

/// One `use` tree expanded into paths with the name each is bound to, e.g.
/// `a::{b, c::{d as e}}` gives `a::b` (named `b`) and `a::c::d` (named `e`).
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<(String, String)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let prefix = join_path(prefix, head);
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
    let full = if path == "self" {
        prefix.to_string()
    } else {
        join_path(prefix, path)
    };
    let alias = if alias == "self" {
        full.rsplit("::").next().unwrap_or("").to_string()
    } else {
        alias.to_string()
    };
    out.push((full, alias));
}

fn join_path(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (_, true) => prefix.to_string(),
        _ => format!("{prefix}::{path}"),
    }
}

/// A path as absolute module segments, read from the module `at`; `None` for
/// another crate's path.
fn absolute(path: &str, at: &[String], modules: &BTreeSet<ModulePath>) -> Option<ModulePath> {
    let mut segments: Vec<String> = path.split("::").map(|s| s.trim().to_string()).collect();
    let mut base: ModulePath = match segments.first().map(String::as_str) {
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
    base.extend(segments.into_iter().filter(|s| !s.is_empty() && s != "*"));
    Some(base)
}

/// The file that defines what `path` names, following `pub use` re-exports.
fn defining_file(path: &str, files: &BTreeMap<ModulePath, SourceFile>, depth: usize) -> ModulePath {
    let segments: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
    let longest = (0..=segments.len())
        .filter(|&n| files.contains_key(&segments[..n]))
        .max()
        .unwrap_or(0);
    let module = segments[..longest].to_vec();
    let Some(item) = segments.get(longest) else {
        return module;
    };
    let source = &files[&module];
    if source.defines.contains(item) || depth >= 8 {
        return module;
    }
    match source.reexports.get(item) {
        Some(target) if target != path => defining_file(target, files, depth + 1),
        _ => module,
    }
}

/// Tarjan's strongly connected components, each as a set of modules.
fn strongly_connected(
    nodes: &[ModulePath],
    edges: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
) -> Vec<BTreeSet<ModulePath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        index: HashMap<ModulePath, usize>,
        low: HashMap<ModulePath, usize>,
        stack: Vec<ModulePath>,
        on_stack: BTreeSet<ModulePath>,
        groups: Vec<BTreeSet<ModulePath>>,
    }
    fn visit(node: &ModulePath, state: &mut State) {
        let n = state.index.len();
        state.index.insert(node.clone(), n);
        state.low.insert(node.clone(), n);
        state.stack.push(node.clone());
        state.on_stack.insert(node.clone());
        for next in state.edges.get(node).into_iter().flatten() {
            if !state.index.contains_key(next) {
                visit(next, state);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node.clone(), low);
            } else if state.on_stack.contains(next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node.clone(), low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut group = BTreeSet::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(&top);
                let done = &top == node;
                group.insert(top);
                if done {
                    break;
                }
            }
            state.groups.push(group);
        }
    }
    let mut state = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(node, &mut state);
        }
    }
    state.groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> ImportGraph {
        let sources: Vec<(ModulePath, String, String)> = files
            .iter()
            .map(|(file, text)| (module_path(Path::new(file)), file.to_string(), text.to_string()))
            .collect();
        ImportGraph::of_sources(&sources)
    }

    #[test]
    fn a_circle_between_two_files_is_found_and_named() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::Beta;\npub struct Alpha;\n"),
            ("b.rs", "pub struct Beta;\npub fn f() -> crate::a::Alpha { todo!() }\n"),
        ]);
        assert_eq!(g.circles(), vec!["2 files: a.rs -> b.rs -> a.rs".to_string()]);
    }

    #[test]
    fn a_facade_and_its_children_are_files_like_any_other() {
        // The child names an item its parent defines, the parent re-exports the child's.
        let g = graph(&[
            ("lib.rs", "mod plan;\n"),
            ("plan/mod.rs", "mod types;\npub use types::Plan;\npub struct Limits;\n"),
            ("plan/types.rs", "use super::Limits;\npub struct Plan;\n"),
        ]);
        assert!(g.imports("plan/mod.rs", "plan/types.rs"));
        assert!(g.imports("plan/types.rs", "plan/mod.rs"));
        assert_eq!(g.circles().len(), 1);
    }

    #[test]
    fn a_reexported_name_is_followed_to_the_file_that_defines_it() {
        let g = graph(&[
            ("lib.rs", "mod plan;\nmod run;\n"),
            ("plan/mod.rs", "mod types;\npub use types::Plan;\n"),
            ("plan/types.rs", "pub struct Plan;\n"),
            ("run.rs", "use crate::plan::Plan;\n"),
        ]);
        assert!(g.imports("run.rs", "plan/types.rs"));
        assert!(!g.imports("run.rs", "plan/mod.rs"));
        assert!(g.circles().is_empty());
    }

    #[test]
    fn a_use_group_names_the_files_of_its_items_not_the_module_it_opens() {
        let g = graph(&[
            ("lib.rs", "mod plan;\n"),
            (
                "plan/mod.rs",
                "mod types;\nmod waves;\npub use types::{Plan, Step};\npub use waves::waves;\n",
            ),
            ("plan/types.rs", "pub struct Plan;\npub struct Step;\n"),
            (
                "plan/waves.rs",
                "use super::{Plan, Step};\npub fn waves(_: &Plan, _: &Step) {}\n",
            ),
        ]);
        assert!(g.imports("plan/waves.rs", "plan/types.rs"));
        assert!(!g.imports("plan/waves.rs", "plan/mod.rs"));
        assert!(g.circles().is_empty());
    }

    #[test]
    fn a_long_function_is_measured_from_its_signature_to_its_closing_brace() {
        let body = "    let x = 1;\n".repeat(5);
        let text = format!("pub async fn long() {{\n{body}}}\n\nfn short() {{}}\n\nimpl A {{\n    fn method() {{\n    {body}    }}\n}}\n");
        assert_eq!(
            long_functions_in(&text, 6),
            vec![("long".to_string(), 7), ("method".to_string(), 7)]
        );
        assert!(long_functions_in(&text, 7).is_empty());
    }

    #[test]
    fn a_path_through_a_child_module_is_an_import_of_the_childs_file() {
        let g = graph(&[
            ("lib.rs", "mod serve;\n"),
            (
                "serve/mod.rs",
                "mod api;\npub struct Server;\npub fn router() { let _ = api::viewer; }\n",
            ),
            ("serve/api.rs", "pub fn viewer(_: &super::Server) {}\n"),
        ]);
        assert!(g.imports("serve/mod.rs", "serve/api.rs"));
        assert!(g.imports("serve/api.rs", "serve/mod.rs"));
        assert_eq!(g.circles().len(), 1);
    }

    #[test]
    fn ownership_tests_and_comments_are_not_imports() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "// use crate::b::Beta;\npub struct Alpha;\n#[cfg(test)]\nmod tests { use crate::b::Beta; }\n",
            ),
            ("b.rs", "use crate::a::Alpha;\npub struct Beta;\n"),
        ]);
        assert!(g.imports("b.rs", "a.rs"));
        assert!(!g.imports("a.rs", "b.rs"));
        assert!(g.circles().is_empty());
    }
}
