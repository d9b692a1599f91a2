//! Calculator expressions a small planner writes over names instead of
//! results: `sum(scores.txt)` (a file), `sum(amount)` (a CSV column),
//! `sum({{s1.items.qty}})` (a path into a JSON file read whole),
//! `sum({{s1}}) where west` (a query); and `count({{s2}})` of a search that
//! already counted ([`PlanError::CountOfACount`](crate::plan::PlanError::CountOfACount)).
//! The calculator's own check finds the first four
//! ([`PlanError::InvalidArgs`](crate::plan::PlanError::InvalidArgs) of a
//! calculator step); each rule here tests the expression's shape itself.

use serde_json::{json, Map};

use super::steps::{fresh_id, tool_step};
use crate::plan::{Plan, Step};
use crate::tools::ToolRegistry;

/// Calculator step `id`, which the calculator's check refused, rewritten by
/// the first rule whose shape its expression has; the rule's name.
pub(super) fn mended(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<&'static str> {
    if count_dropped(plan, id).is_some() {
        return Some("count-of-a-count");
    }
    if filtered_by_search(plan, id, tools).is_some() {
        return Some("query-to-search");
    }
    if json_paths_to_reads(plan, id, tools).is_some() {
        return Some("json-path-to-read");
    }
    files_to_references(plan, id, tools).map(|()| "names-to-reads")
}

/// In calculator step `id`, put the text of each file its expression names
/// (`sum(scores.txt) / count(scores.txt)`) in place of the name, as
/// `{{sN}}` of the step that reads it (one is added when none does). This
/// is what the calculator's error asks for; a small planner asked again
/// rewrites the whole plan instead, often worse. `None` (nothing changed)
/// unless the expression then passes the calculator's check.
fn files_to_references(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    let calculator = tools.get("calculator")?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let expression = plan.steps[at].args.get("expression")?.as_str()?.to_string();
    let mut rewritten = expression.clone();
    let mut reads = Vec::new();
    let mut added = Vec::new();
    for (call, name) in aggregated_files(&expression) {
        let added_reader = added.iter().find(|s: &&Step| s.args.get("path") == Some(&json!(name)));
        let reader = match reader_of(plan, &name).or_else(|| added_reader.map(|s| s.id.clone())) {
            Some(reader) => reader,
            None => {
                // A bare name is a column or a field, never a file to read.
                let new = csv_column_step(plan, &name, tools, added.len())
                    .or_else(|| json_field_step(plan, &name, tools, added.len()))
                    .or_else(|| FILE_NAME.is_match(&name).then(|| read_step(plan, &name, added.len()))?)?;
                let new_id = new.id.clone();
                added.push(new);
                new_id
            }
        };
        let with_text = call.replacen(&name, &format!("{{{{{reader}}}}}"), 1);
        rewritten = rewritten.replace(&call, &with_text);
        if !reads.contains(&reader) {
            reads.push(reader);
        }
    }
    let mut args = plan.steps[at].args.clone();
    args.insert("expression".into(), json!(rewritten));
    if reads.is_empty()
        || calculator
            .tool
            .plan_check(&serde_json::Value::Object(args.clone()))
            .is_some()
    {
        return None;
    }
    let step = &mut plan.steps[at];
    step.args = args;
    for reader in reads {
        if !step.depends_on.contains(&reader) {
            step.depends_on.push(reader);
        }
    }
    for (n, new) in added.into_iter().enumerate() {
        plan.steps.insert(n, new);
    }
    Some(())
}

/// Calculator step `id` that reaches into a JSON file's text with a path,
/// `{{s1.items.price}}` where `s1` reads order.json whole, gets a read_json
/// step of that field in the reference's place: a file read whole is text,
/// and its fields are what read_json reads (every item's price, here).
fn json_paths_to_reads(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    tools.get("read_json")?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let expression = plan.steps[at].args.get("expression")?.as_str()?.to_string();
    if crate::plan::find_references(&expression)
        .iter()
        .any(|r| plan.step(&r.step).is_none())
    {
        return None;
    }
    let mut added: Vec<Step> = Vec::new();
    let rewritten = crate::refs::rewrite_references(&expression, |r| {
        let source = plan.step(&r.step)?;
        let path = source.args.get("path")?.as_str()?;
        if r.path.is_empty() || source.tool.as_deref() != Some("read_file") || !is_json(path) {
            return None;
        }
        let new_id = fresh_id(plan, "read", added.len())?;
        let reads = read_json_step(new_id.clone(), path, &r.path.join("."), source.depends_on.clone());
        added.push(reads);
        Some(format!("{{{{{new_id}}}}}"))
    });
    if added.is_empty() {
        return None;
    }
    let step = &mut plan.steps[at];
    step.args.insert("expression".into(), json!(rewritten));
    let still_used: Vec<String> = crate::plan::find_references(&rewritten)
        .into_iter()
        .map(|r| r.step)
        .collect();
    step.depends_on.retain(|d| still_used.contains(d));
    step.depends_on.extend(added.iter().map(|s| s.id.clone()));
    for (n, new) in added.into_iter().enumerate() {
        plan.steps.insert(at + n, new);
    }
    Some(())
}

/// Calculator step `id`, which only counts (or repeats) what a counting
/// search returned, is dropped: the steps that used it use the search.
pub(super) fn count_dropped(plan: &mut Plan, id: &str) -> Option<&'static str> {
    let step = plan.step(id)?;
    let expression = step.args.get("expression")?.as_str()?;
    let search = crate::plan::findings::count_of_a_count(plan, expression)?;
    super::steps::replaced_by(plan, id, &search);
    Some("count-of-a-count")
}

/// Whether `path` names a JSON file.
fn is_json(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".json")
}

/// A step the runtime adds that reads `field` of the JSON file `path`.
fn read_json_step(id: String, path: &str, field: &str, depends_on: Vec<String>) -> Step {
    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    args.insert("field".into(), json!(field));
    tool_step(id, format!("read {field} of {path}"), "read_json", args, depends_on)
}

/// A file name as a planner writes one in an aggregate: `scores.txt`,
/// `data/q1-sales.csv`, not a number.
static FILE_NAME: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^[A-Za-z0-9_./-]+\.[A-Za-z0-9]+$").expect("a valid pattern"));

/// A bare name in an aggregate, such as a CSV column (`sum(amount)`).
static BARE_NAME: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("a valid pattern"));

/// The aggregate calls of `expression` on a file's name or a bare name,
/// with the name: (`sum(scores.txt)`, `scores.txt`), (`sum(amount)`,
/// `amount`); not `sum({{s1}})` nor `max(3, 4)`.
fn aggregated_files(expression: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for (call, inner) in crate::tools::aggregate_arguments(expression) {
        let word = inner.trim();
        let file_like =
            (FILE_NAME.is_match(word) || BARE_NAME.is_match(word)) && !word.starts_with(|c: char| c.is_ascii_digit());
        if file_like && !found.iter().any(|(c, _)| c == call) {
            found.push((call.to_string(), word.to_string()));
        }
    }
    found
}

/// An aggregate written as a query: `sum({{s1}}) where west`,
/// `count(sales.txt) where region = 'west'`. Small models reach for SQL.
static AGGREGATE_WHERE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?is)^\s*(count|sum|total|mean|avg|average|min|max)\s*\((.+)\)\s+(?:where|if|for|with)\s+(.+?)\s*$",
    )
    .expect("a valid pattern")
});

/// Calculator step `id` written as a query over a file (`sum({{s1}}) where
/// west`) becomes the aggregate of the lines that hold the word: a new
/// search step finds them in the file, and the step aggregates its result.
fn filtered_by_search(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    tools.get("search")?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let expression = plan.steps[at].args.get("expression")?.as_str()?.to_string();
    let query = AGGREGATE_WHERE.captures(&expression)?;
    let (aggregate, source, condition) = (&query[1], query[2].trim(), &query[3]);
    let references = crate::plan::find_references(source);
    let (path, reader) = match references.as_slice() {
        [] if FILE_NAME.is_match(source) => (source.to_string(), reader_of(plan, source)),
        [only] if only.span == (0, source.len()) => {
            let reader = plan.step(&only.step)?;
            (reader.args.get("path")?.as_str()?.to_string(), Some(only.step.clone()))
        }
        _ => return None,
    };
    // The value the condition compares with: `region = 'west'` is `west`.
    let word = condition
        .rsplit(|c: char| c.is_whitespace() || "=<>!".contains(c))
        .map(|w| w.trim_matches(|c: char| "'\"`".contains(c)))
        .find(|w| !w.is_empty())?
        .to_string();
    if !word.chars().all(|c| c.is_alphanumeric() || "-_.".contains(c)) {
        return None;
    }
    let search_id = fresh_id(plan, "find", 0)?;
    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    args.insert("text".into(), json!(word));
    args.insert("count".into(), json!(false));
    args.insert("matches".into(), json!(false));
    // The search waits for what the read waited for (a step writing the file).
    let after = reader
        .as_ref()
        .and_then(|r| plan.step(r))
        .map(|s| s.depends_on.clone())
        .unwrap_or_default();
    let description = format!("find the lines of {path} that contain {word}");
    let search = tool_step(search_id.clone(), description, "search", args, after);
    let step = &mut plan.steps[at];
    step.args
        .insert("expression".into(), json!(format!("{aggregate}({{{{{search_id}}}}})")));
    // The search reads the file now, in place of the step that read it.
    step.depends_on.retain(|d| Some(d) != reader.as_ref());
    step.depends_on.push(search_id);
    plan.steps.insert(at, search);
    Some(())
}

/// The id of a step that reads the file `path` whole.
fn reader_of(plan: &Plan, path: &str) -> Option<String> {
    let bare = |p: &str| p.trim().trim_start_matches("./").to_string();
    plan.steps
        .iter()
        .find(|s| {
            s.tool.as_deref() == Some("read_file")
                && s.args.get("path").and_then(|p| p.as_str()).map(bare) == Some(bare(path))
        })
        .map(|s| s.id.clone())
}

/// A step reading the CSV column an aggregate names: `expenses.csv.amount`
/// (a file and its column), or `amount` when exactly one CSV file of the
/// plan (or else of the workspace) has that column.
fn csv_column_step(plan: &Plan, name: &str, tools: &ToolRegistry, skip: usize) -> Option<Step> {
    tools.get("read_csv")?;
    let workspace = tools.workspace()?;
    if workspace.resolve(name).is_ok_and(|p| p.exists()) {
        return None;
    }
    let (named, column): (Vec<String>, &str) = match name.to_ascii_lowercase().find(".csv.") {
        Some(at) => (vec![name[..at + 4].to_string()], &name[at + 5..]),
        None => (Vec::new(), name),
    };
    let is_csv = |p: &str| p.to_ascii_lowercase().ends_with(".csv");
    let file = one_file_holding(plan, workspace, named, is_csv, |p| {
        crate::tools::csv_has_column(p, column)
    })?;
    let mut args = Map::new();
    args.insert("path".into(), json!(file));
    args.insert("column".into(), json!(column));
    let id = fresh_id(plan, "read", skip)?;
    Some(tool_step(
        id,
        format!("read the {column} column of {file}"),
        "read_csv",
        args,
        Vec::new(),
    ))
}

/// The one file of a kind that `holds` what a calculation names: among
/// `named` when given, or else the plan's files of that kind, or else the
/// workspace's (its listing, as the planner saw it). `None` for none or two.
fn one_file_holding(
    plan: &Plan,
    workspace: &crate::tools::workspace::Workspace,
    named: Vec<String>,
    of_kind: impl Fn(&str) -> bool,
    holds: impl Fn(&std::path::Path) -> bool,
) -> Option<String> {
    let mut files = named;
    if files.is_empty() {
        let paths = plan.steps.iter().filter_map(|s| s.args.get("path")?.as_str());
        files = paths.filter(|p| of_kind(p)).map(str::to_string).collect();
    }
    if files.is_empty() {
        let (listed, _) = workspace.listing(40);
        files = listed.into_iter().map(|(p, _)| p).filter(|p| of_kind(p)).collect();
    }
    // Sorted first: dedup alone keeps a file two steps apart name twice.
    files.sort();
    files.dedup();
    let mut holding = files
        .into_iter()
        .filter(|f| workspace.resolve(f).is_ok_and(|p| holds(&p)));
    let file = holding.next()?;
    holding.next().is_none().then_some(file)
}

/// A new first step reading `field` with read_json, when `field` is no file
/// of the workspace but a dotted path in exactly one JSON file the plan
/// names or the workspace holds: `sum(items.qty)` means the `qty` of every
/// item of inventory.json, which the planner saw in the listing's shape.
fn json_field_step(plan: &Plan, field: &str, tools: &ToolRegistry, skip: usize) -> Option<Step> {
    tools.get("read_json")?;
    let workspace = tools.workspace()?;
    if workspace.resolve(field).is_ok_and(|p| p.exists()) {
        return None;
    }
    let file = one_file_holding(plan, workspace, Vec::new(), is_json, |p| {
        crate::tools::json_has_field(p, field)
    })?;
    Some(read_json_step(fresh_id(plan, "read", skip)?, &file, field, Vec::new()))
}

/// A new first step reading `path`, with an id no step has (`skip` ids are
/// taken by steps about to be added).
fn read_step(plan: &Plan, path: &str, skip: usize) -> Option<Step> {
    let id = fresh_id(plan, "read", skip)?;
    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    Some(tool_step(id, format!("read {path}"), "read_file", args, Vec::new()))
}
