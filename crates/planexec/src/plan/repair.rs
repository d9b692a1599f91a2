//! Mending a plan the planner could not fix itself.
//!
//! Asked again with the exact errors, a small local planner often writes the
//! same plan: it keeps a missing `write_file`, or keeps sending a text
//! transformation through the calculator. When the error already says what
//! the plan should be, the runtime can make that change itself: the
//! planner's steps are kept and the smallest edit is made, the one the error
//! would ask any planner for. A re-ask is left for the errors it cannot mend.

use serde_json::{json, Map};

use super::{Plan, PlanError, PlanErrors, Step};
use crate::tools::ToolRegistry;

/// `plan` with the edits its `errors` call for, when each error is one this
/// knows how to mend; `None` when any is not (the planner must fix those).
pub fn repaired(mut plan: Plan, errors: &PlanErrors, tools: &ToolRegistry) -> Option<Plan> {
    for error in &errors.0 {
        match error {
            PlanError::InvalidArgs { step, problems, .. }
                if problems
                    .iter()
                    .any(|p| p.starts_with(super::asked::LISTING_NOT_COUNTED)) =>
            {
                listing_counted(&mut plan, step, tools)?
            }
            PlanError::OutputNotWritten { path } => write_last_result(&mut plan, path)?,
            PlanError::InvalidArgs { step, tool, .. } if tool == "calculator" => {
                if count_dropped(&mut plan, step)
                    .or_else(|| filtered_by_search(&mut plan, step, tools))
                    .or_else(|| {
                        json_paths_to_reads(&mut plan, step, tools)?;
                        // `{{read1}}` alone, now a list, gets its aggregate.
                        aggregate_as_described(&mut plan, step, tools).or(Some(()))
                    })
                    .or_else(|| files_to_references(&mut plan, step, tools))
                    .or_else(|| aggregate_as_described(&mut plan, step, tools))
                    .is_none()
                {
                    calculation_to_reasoning(&mut plan, step, tools)?
                }
            }
            PlanError::InvalidArgs { step, tool, problems } if tool == "search" => {
                if problems.iter().any(|p| p.starts_with(super::asked::COUNT_NOT_ASKED)) {
                    uncounted(&mut plan, step)?
                } else if problems.iter().any(|p| p.starts_with(super::asked::PARTS_AS_LINES)) {
                    parts_matched(&mut plan, step)?
                } else if problems.iter().any(|p| p.starts_with(super::asked::PLAIN_TEXT_MATCHED)) {
                    plain_text_unmatched(&mut plan, step)?
                } else if problems.iter().any(|p| p.starts_with(super::asked::JSON_SEARCHED)) {
                    search_to_reasoning(&mut plan, step)?
                } else if problems.iter().any(|p| p.starts_with(crate::tools::CSV_KEYED)) {
                    csv_value_searched(&mut plan, step, tools)?
                } else {
                    search_to_glob(&mut plan, step, tools)?
                }
            }
            PlanError::InvalidArgs { step, tool, problems }
                if tool == "write_file"
                    && problems
                        .iter()
                        .any(|p| p.starts_with(super::asked::YES_OR_NO_NOT_ANSWERED)) =>
            {
                let question = problems.iter().find_map(|p| super::asked::quoted_question(p));
                yes_or_no_answered(&mut plan, step, question.unwrap_or("the task's question"))?
            }
            PlanError::InvalidArgs { step, tool, .. } if tool == "list_dir" => listing_to_glob(&mut plan, step, tools)?,
            PlanError::InvalidArgs { step, tool, problems }
                if tool == "reverse_text"
                    && problems.iter().any(|p| p.starts_with(super::asked::REVERSAL_NOT_ASKED)) =>
            {
                tool_to_reasoning(&mut plan, step)?
            }
            PlanError::RoundingLeftOut { step, places } => rounded(&mut plan, step, *places)?,
            _ => return None,
        }
    }
    Some(plan)
}

/// The `skip`-th id `{prefix}1`, `{prefix}2`, … that no step of `plan` has
/// (ids before it are taken by steps about to be added).
fn fresh_id(plan: &Plan, prefix: &str, skip: usize) -> Option<String> {
    (1..)
        .map(|n| format!("{prefix}{n}"))
        .filter(|id| !plan.steps.iter().any(|s| &s.id == id))
        .nth(skip)
}

/// A tool step the runtime adds to a plan.
fn tool_step(
    id: String,
    description: String,
    tool: &str,
    args: Map<String, serde_json::Value>,
    depends_on: Vec<String>,
) -> Step {
    Step {
        id,
        description,
        tool: Some(tool.into()),
        agent: None,
        args,
        depends_on,
        expected: None,
    }
}

/// Add a last step writing the result of the plan's one final step to `path`
/// (what the error asks the planner to do). Only when exactly one step is
/// final (no step depends on it) and it changes nothing itself.
fn write_last_result(plan: &mut Plan, path: &str) -> Option<()> {
    let mut finals: Vec<&Step> = plan
        .steps
        .iter()
        .filter(|s| !plan.steps.iter().any(|o| o.depends_on.contains(&s.id)))
        .collect();
    // A look no step builds on (a listing left beside the real work) is
    // not the result, when one final step builds on others.
    if finals.len() > 1 && finals.iter().filter(|s| !s.depends_on.is_empty()).count() == 1 {
        finals.retain(|s| !s.depends_on.is_empty());
    }
    let [last] = finals.as_slice() else { return None };
    if last.tool.as_deref() == Some("write_file") {
        return None;
    }
    let last_id = last.id.clone();
    let id = fresh_id(plan, "s", 0)?;
    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    args.insert("content".into(), json!(format!("{{{{{last_id}}}}}")));
    let description = format!("write the result to {path}");
    plan.steps
        .push(tool_step(id, description, "write_file", args, vec![last_id]));
    Some(())
}

/// Search step `id`, which looks for a file extension inside files (`.jpg`
/// in `photos/`), becomes the glob for those files' names; one that counted
/// becomes a count of the glob's lines, so the steps that use its result
/// still get a number.
fn search_to_glob(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    tools.get("glob")?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let step = &plan.steps[at];
    let pattern = crate::tools::file_kind_pattern(&serde_json::Value::Object(step.args.clone()))?;
    let counts = step.args.get("count").and_then(serde_json::Value::as_bool) == Some(true);
    let mut glob_args = Map::new();
    glob_args.insert("pattern".into(), json!(pattern));
    if !counts {
        let step = &mut plan.steps[at];
        step.tool = Some("glob".into());
        step.args = glob_args;
        return Some(());
    }
    tools.get("calculator")?;
    let glob_id = fresh_id(plan, "glob", 0)?;
    let description = format!("list the files matching {pattern}");
    let glob = tool_step(glob_id.clone(), description, "glob", glob_args, step.depends_on.clone());
    let step = &mut plan.steps[at];
    step.tool = Some("calculator".into());
    step.args = Map::new();
    step.args
        .insert("expression".into(), json!(format!("count({{{{{glob_id}}}}})")));
    step.depends_on = vec![glob_id];
    plan.steps.insert(at, glob);
    Some(())
}

/// Search step `id` returns its lines instead of how many there are: the
/// task never asked how many.
fn uncounted(plan: &mut Plan, id: &str) -> Option<()> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    step.args.insert("count".into(), json!(false));
    Some(())
}

/// Search step `id`, described as extracting a kind of part (emails,
/// #tags), returns only the parts, by that kind's regular expression.
fn parts_matched(plan: &mut Plan, id: &str) -> Option<()> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let pattern = super::asked::part_pattern(&step.description)?;
    step.args.insert("text".into(), json!(pattern));
    step.args.insert("matches".into(), json!(true));
    Some(())
}

/// Search step `id`, matching a plain text: the parts of the kind its
/// description extracts, when it names one (`@` for emails), or else the
/// lines that contain the text.
fn plain_text_unmatched(plan: &mut Plan, id: &str) -> Option<()> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    match super::asked::part_pattern(&step.description) {
        Some(pattern) => step.args.insert("text".into(), json!(pattern)),
        None => step.args.insert("matches".into(), json!(false)),
    };
    Some(())
}

/// Write_file step `id`, which writes a tool's output where the task asks
/// for yes or no, writes the answer of a reasoning step added over that output.
fn yes_or_no_answered(plan: &mut Plan, id: &str, question: &str) -> Option<()> {
    let source = super::asked::written_tool_output(plan, plan.step(id)?)?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let answer_id = fresh_id(plan, "s", 0)?;
    let answer = Step {
        id: answer_id.clone(),
        // The question itself, in the step's own words: told only to answer
        // "the task's question", the 1.5B model said no beside the line
        // that showed yes.
        description: format!("{question} Answer from this result, with only yes or no."),
        tool: None,
        agent: None,
        args: Map::new(),
        depends_on: vec![source.clone()],
        expected: None,
    };
    let writer = &mut plan.steps[at];
    writer
        .args
        .insert("content".into(), json!(format!("{{{{{answer_id}}}}}")));
    writer.depends_on.retain(|d| *d != source);
    writer.depends_on.push(answer_id);
    plan.steps.insert(at, answer);
    Some(())
}

/// Search step `id` for `city: Paris` in a CSV file searches for `Paris`.
fn csv_value_searched(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    let workspace = tools.workspace()?;
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let value = crate::tools::keyed_value_in_csv(workspace, &serde_json::Value::Object(step.args.clone()))?;
    step.args.insert("text".into(), json!(value));
    Some(())
}

/// List_dir step `id`, described as listing one kind of file (`the .csv
/// files in data`), becomes the glob for that kind in its folder.
fn listing_to_glob(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    tools.get("glob")?;
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let pattern = super::asked::listing_pattern(step, &super::asked::kind_of_file(&step.description)?);
    step.tool = Some("glob".into());
    step.args = Map::new();
    step.args.insert("pattern".into(), json!(pattern));
    Some(())
}

/// Listing step `id`, described as a count, becomes the count of a new
/// listing step with its tool and arguments; keeping its id, the steps that
/// use its result get the number.
fn listing_counted(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    tools.get("calculator")?;
    let at = plan.steps.iter().position(|s| s.id == id)?;
    let list_id = fresh_id(plan, "list", 0)?;
    let step = &plan.steps[at];
    let listing = tool_step(
        list_id.clone(),
        format!("list: {}", step.description),
        step.tool.as_deref()?,
        step.args.clone(),
        step.depends_on.clone(),
    );
    let step = &mut plan.steps[at];
    step.tool = Some("calculator".into());
    step.args = Map::new();
    step.args
        .insert("expression".into(), json!(format!("count({{{{{list_id}}}}})")));
    step.depends_on = vec![list_id];
    plan.steps.insert(at, listing);
    Some(())
}

/// Calculator step `id` rounds its result to `places` decimals, as the task asks.
fn rounded(plan: &mut Plan, id: &str, places: u32) -> Option<()> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let expression = step.args.get("expression")?.as_str()?.trim().to_string();
    step.args
        .insert("expression".into(), json!(format!("round({expression}, {places})")));
    Some(())
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
    if super::refs::find_references(&expression)
        .iter()
        .any(|r| plan.step(&r.step).is_none())
    {
        return None;
    }
    let mut added: Vec<Step> = Vec::new();
    let rewritten = super::refs::rewrite_references(&expression, |r| {
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
    let still_used: Vec<String> = super::refs::find_references(&rewritten)
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
fn count_dropped(plan: &mut Plan, id: &str) -> Option<()> {
    let step = plan.step(id)?;
    let expression = step.args.get("expression")?.as_str()?;
    let search = super::asked::count_of_a_count(plan, expression)?;
    plan.steps.retain(|s| s.id != id);
    super::refs::rename_step(&mut plan.steps, id, &search);
    for step in &mut plan.steps {
        let mut seen = std::collections::HashSet::new();
        step.depends_on.retain(|d| seen.insert(d.clone()));
    }
    Some(())
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

/// Calculator step `id` whose expression works on one other step's output
/// but not as the calculator can (`{{s2}}` alone, `{{s2}} + {{s2}}` over a
/// list of prices) gets the aggregate its description names: "sum the
/// prices" is `sum({{s2}})`, "count the files" `count({{s2}})`. `None` when
/// the description names none of them (or more than one).
fn aggregate_as_described(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    const NAMED: [(&str, &[&str]); 7] = [
        ("words", &["words", "word"]),
        ("chars", &["characters", "character", "letters", "chars"]),
        ("sum", &["sum", "total", "add"]),
        ("count", &["count", "how many", "number of"]),
        ("mean", &["average", "mean"]),
        ("max", &["highest", "largest", "maximum", "biggest", "max"]),
        ("min", &["lowest", "smallest", "minimum", "cheapest", "min"]),
    ];
    let calculator = tools.get("calculator")?;
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    let expression = step.args.get("expression")?.as_str()?.trim().to_string();
    let mut referenced: Vec<String> = super::refs::find_references(&expression)
        .into_iter()
        .map(|r| r.step)
        .collect();
    referenced.dedup();
    let [only] = referenced.as_slice() else { return None };
    let whole = format!("{{{{{only}}}}}");
    // Only arithmetic and aggregates around it: `sort({{s2}})` asked for
    // something else, whatever its description says.
    let around = expression.replace(&whole, " ");
    let names_only_aggregates = around
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .all(|w| NAMED.iter().any(|(aggregate, _)| *aggregate == w.to_lowercase()));
    if !names_only_aggregates {
        return None;
    }
    let description = step.description.to_lowercase();
    let words: Vec<&str> = description.split(|c: char| !c.is_alphanumeric()).collect();
    let names = |phrase: &str| match phrase.contains(' ') {
        true => description.contains(phrase),
        false => words.contains(&phrase),
    };
    let mut named: Vec<&str> = NAMED
        .iter()
        .filter(|(_, phrases)| phrases.iter().any(|p| names(p)))
        .map(|(aggregate, _)| *aggregate)
        .collect();
    // "count the words" is a count of words; "count the total sales" a sum.
    if named.contains(&"words") || named.contains(&"chars") || super::asked::speaks_of_a_total(&step.description) {
        named.retain(|a| *a != "count");
    }
    let [aggregate] = named.as_slice() else { return None };
    let mut args = step.args.clone();
    args.insert("expression".into(), json!(format!("{aggregate}({whole})")));
    if calculator
        .tool
        .plan_check(&serde_json::Value::Object(args.clone()))
        .is_some()
    {
        return None;
    }
    step.args = args;
    Some(())
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
    let references = super::refs::find_references(source);
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

/// Search step `id`, which looks for a value in a JSON file (`Bo` in
/// `users.json`, for Bo's age), becomes the reasoning step its description
/// describes, over the whole file's text (read by a step added for it when
/// none reads it): which field holds the value is not known, and a small
/// file is read well by a model.
fn search_to_reasoning(plan: &mut Plan, id: &str) -> Option<()> {
    let path = plan.step(id)?.args.get("path")?.as_str()?.to_string();
    let reader = match reader_of(plan, &path) {
        Some(reader) => reader,
        None => {
            let read = read_step(plan, &path, 0)?;
            let reader = read.id.clone();
            plan.steps.insert(0, read);
            reader
        }
    };
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    if !step.depends_on.contains(&reader) {
        step.depends_on.push(reader);
    }
    tool_to_reasoning(plan, id)
}

/// Tool step `id` becomes the reasoning step its description describes,
/// working from the same dependencies (a reasoning step also sees the task,
/// where a text its arguments held was given).
fn tool_to_reasoning(plan: &mut Plan, id: &str) -> Option<()> {
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    step.tool = None;
    step.args = Map::new();
    Some(())
}

/// Make calculator step `id`, whose expression the calculator can never
/// evaluate (`upper('{{s1}}')`), the reasoning step its description already
/// describes, working from the same dependencies.
fn calculation_to_reasoning(plan: &mut Plan, id: &str, tools: &ToolRegistry) -> Option<()> {
    let calculator = tools.get("calculator")?;
    let step = plan.steps.iter_mut().find(|s| s.id == id)?;
    calculator
        .tool
        .plan_check(&serde_json::Value::Object(step.args.clone()))?;
    if step.depends_on.is_empty() {
        return None;
    }
    tool_to_reasoning(plan, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{builtin, workspace::Workspace};

    fn plan(steps: serde_json::Value) -> Plan {
        serde_json::from_value(json!({"goal": "g", "steps": steps})).unwrap()
    }

    #[test]
    fn a_missing_write_is_added_after_the_one_final_step() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let unwritten = plan(json!([
            {"id": "s1", "description": "list", "tool": "glob", "args": {"pattern": "photos/*.jpg"}, "depends_on": []},
            {"id": "s2", "description": "count", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]}
        ]));
        let errors = PlanErrors(vec![PlanError::OutputNotWritten { path: "jpg.txt".into() }]);
        let mended = repaired(unwritten.clone(), &errors, &tools).unwrap();
        let last = mended.steps.last().unwrap();
        assert_eq!((last.id.as_str(), last.tool.as_deref()), ("s3", Some("write_file")));
        assert_eq!(last.args["content"], json!("{{s2}}"));
        assert_eq!(last.depends_on, ["s2"]);
        assert!(super::super::validate(&mended, &tools, &Default::default()).is_ok());

        // A listing nobody uses beside the work is not the result.
        let mut with_a_look = unwritten.clone();
        with_a_look.steps.insert(
            0,
            serde_json::from_value(json!({"id": "s0", "description": "look", "tool": "list_dir", "args": {"path": "photos"}, "depends_on": []})).unwrap(),
        );
        let mended = repaired(with_a_look, &errors, &tools).unwrap();
        assert_eq!(mended.steps.last().unwrap().depends_on, ["s2"]);

        // Two final steps: which one is the answer is not known.
        let mut two = unwritten;
        two.steps[1].depends_on.clear();
        two.steps[1].args.insert("expression".into(), json!("2 + 2"));
        assert!(repaired(two, &errors, &tools).is_none());
    }

    #[test]
    fn a_file_name_in_a_calculation_becomes_the_text_of_the_step_that_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["works on the text written in it".into()],
        }]);
        let p = plan(json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "scores.txt"}, "depends_on": []},
            {"id": "s2", "description": "average", "tool": "calculator", "args": {"expression": "sum(scores.txt) / count(scores.txt)"}, "depends_on": []}
        ]));
        let mended = repaired(p, &invalid, &tools).unwrap();
        assert_eq!(mended.steps[1].args["expression"], json!("sum({{s1}}) / count({{s1}})"));
        assert_eq!(mended.steps[1].tool.as_deref(), Some("calculator"));
        assert_eq!(mended.steps[1].depends_on, ["s1"]);

        // No step reads the file: one is added ahead of the calculation
        // (one, however many calls name it).
        let p = plan(json!([
            {"id": "s2", "description": "count", "tool": "calculator", "args": {"expression": "count(names.txt) + count( names.txt )"}, "depends_on": []}
        ]));
        let mended = repaired(p, &invalid, &tools).unwrap();
        assert_eq!(mended.steps[0].args["path"], json!("names.txt"));
        let reader = mended.steps[0].id.clone();
        assert_eq!(mended.steps.len(), 2);
        assert_eq!(
            mended.steps[1].args["expression"],
            json!(format!("count({{{{{reader}}}}}) + count( {{{{{reader}}}}} )"))
        );
        assert_eq!(mended.steps[1].depends_on, [reader]);
        assert!(super::super::validate(&mended, &tools, &Default::default()).is_ok());
    }

    #[test]
    fn a_csv_column_in_a_calculation_becomes_a_read_csv_step_of_the_file_that_has_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("expenses.csv"), "date,amount,tax\n2024-05-01,12.50,1\n").unwrap();
        std::fs::write(dir.path().join("grades.csv"), "student,math\nAmy,82\n").unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s1".into(),
            tool: "calculator".into(),
            problems: vec!["works on the text written in it".into()],
        }]);
        let with = |expression: &str| {
            plan(json!([
                {"id": "s1", "description": "the figure", "tool": "calculator", "args": {"expression": expression}, "depends_on": []}
            ]))
        };
        for (expression, file, column, aggregate) in [
            ("sum(amount)", "expenses.csv", "amount", "sum"),
            ("round(mean(grades.csv.math), 1)", "grades.csv", "math", "round(mean"),
        ] {
            let mended = repaired(with(expression), &invalid, &tools).unwrap();
            let reader = &mended.steps[0];
            assert_eq!(reader.tool.as_deref(), Some("read_csv"), "{expression}");
            assert_eq!(reader.args["path"], json!(file));
            assert_eq!(reader.args["column"], json!(column));
            let calculation = mended.step("s1").unwrap();
            let written = calculation.args["expression"].as_str().unwrap();
            assert!(
                written.starts_with(&format!("{aggregate}({{{{{}}}}})", reader.id)),
                "{written}"
            );
            assert_eq!(calculation.depends_on, std::slice::from_ref(&reader.id));
        }
        // A name no CSV file has a column for is never read as a file.
        if let Some(mended) = repaired(with("sum(price)"), &invalid, &tools) {
            assert!(mended.steps.iter().all(|s| s.tool.as_deref() != Some("read_file")));
        }
    }

    #[test]
    fn a_json_field_in_a_calculation_becomes_a_read_json_step_of_the_file_that_has_it() {
        let dir = tempfile::tempdir().unwrap();
        let inventory = r#"{"items": [{"sku": "A1", "qty": 12}, {"sku": "B2", "qty": 7}]}"#;
        std::fs::write(dir.path().join("inventory.json"), inventory).unwrap();
        std::fs::write(dir.path().join("other.json"), r#"{"name": "x"}"#).unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["works on the text written in it".into()],
        }]);
        let with = |expression: &str| {
            plan(json!([
                {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "inventory.json"}, "depends_on": []},
                {"id": "s2", "description": "total", "tool": "calculator", "args": {"expression": expression}, "depends_on": ["s1"]}
            ]))
        };
        let mended = repaired(with("sum(items.qty)"), &invalid, &tools).unwrap();
        let reader = &mended.steps[0];
        assert_eq!(reader.tool.as_deref(), Some("read_json"));
        assert_eq!(reader.args["path"], json!("inventory.json"));
        assert_eq!(reader.args["field"], json!("items.qty"));
        let calculation = mended.step("s2").unwrap();
        assert_eq!(
            calculation.args["expression"],
            json!(format!("sum({{{{{}}}}})", reader.id))
        );
        assert!(calculation.depends_on.contains(&reader.id));

        // The file named by two steps apart is still one file.
        let mut twice = with("sum(items.qty)");
        for (id, path) in [("s3", "other.json"), ("s4", "inventory.json")] {
            let read =
                json!({"id": id, "description": "read", "tool": "read_file", "args": {"path": path}, "depends_on": []});
            twice.steps.push(serde_json::from_value(read).unwrap());
        }
        let mended = repaired(twice, &invalid, &tools).unwrap();
        assert_eq!(mended.steps[0].tool.as_deref(), Some("read_json"));

        // A path no JSON file has is read as a file name, as before.
        let mended = repaired(with("sum(items.price)"), &invalid, &tools).unwrap();
        assert_eq!(mended.steps[0].tool.as_deref(), Some("read_file"));
    }

    #[test]
    fn a_path_into_a_json_file_read_whole_becomes_a_read_json_of_that_field() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["is only another step's output".into()],
        }]);
        let p = plan(json!([
            {"id": "s1", "description": "read order.json", "tool": "read_file", "args": {"path": "order.json"}, "depends_on": []},
            {"id": "s2", "description": "sum the prices of the items", "tool": "calculator", "args": {"expression": "{{s1.items.price}}"}, "depends_on": ["s1"]}
        ]));
        let mended = repaired(p, &invalid, &tools).unwrap();
        let read = mended
            .steps
            .iter()
            .find(|s| s.tool.as_deref() == Some("read_json"))
            .unwrap();
        assert_eq!(read.args["path"], json!("order.json"));
        assert_eq!(read.args["field"], json!("items.price"));
        let sum = mended.step("s2").unwrap();
        assert_eq!(sum.args["expression"], json!(format!("sum({{{{{}}}}})", read.id)));
        assert_eq!(sum.depends_on, std::slice::from_ref(&read.id));
    }

    #[test]
    fn a_yes_or_no_task_that_writes_a_tools_output_writes_a_reasoning_steps_answer() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let task = "Is port 8080 used in servers.txt? Write yes or no to used.txt.";
        let p = plan(json!([
            {"id": "s1", "description": "find port 8080", "tool": "search", "args": {"path": "servers.txt", "text": "8080", "count": false, "matches": false}, "depends_on": []},
            {"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "used.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
        ]));
        let errors = PlanErrors(super::super::asked_but_not_planned(&p, task, &tools));
        let mended = repaired(p.clone(), &errors, &tools).unwrap();
        let write = mended.step("s2").unwrap();
        let [answer] = write.depends_on.as_slice() else {
            panic!("{write:?}")
        };
        assert_eq!(write.args["content"], json!(format!("{{{{{answer}}}}}")));
        let answer = mended.step(answer).unwrap();
        assert!(answer.is_reasoning() && answer.depends_on == ["s1"], "{answer:?}");
        assert!(
            answer
                .description
                .starts_with("Is port 8080 used in servers.txt? Answer"),
            "{answer:?}"
        );
        assert!(super::super::asked_but_not_planned(&mended, task, &tools).is_empty());
        // A task that does not ask for yes or no writes the lines.
        assert!(super::super::asked_but_not_planned(&p, "Copy the 8080 lines to used.txt.", &tools).is_empty());
    }

    #[test]
    fn a_search_for_column_colon_value_in_a_csv_file_searches_for_the_value() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("people.csv"), "name,city\nAnna,Paris\nBen,Lyon\n").unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let p = plan(json!([
            {"id": "s1", "description": "count the people in Paris", "tool": "search", "args": {"path": "people.csv", "text": "city: Paris", "count": true, "matches": false}, "depends_on": []}
        ]));
        let errors = crate::plan::validate(&p, &tools, &crate::plan::PlanLimits::default()).unwrap_err();
        let mended = repaired(p, &errors, &tools).unwrap();
        assert_eq!(mended.step("s1").unwrap().args["text"], json!("Paris"));
    }

    #[test]
    fn a_count_of_what_a_counting_search_returned_is_dropped_for_the_search() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let task = "How many people in people.csv live in Paris? Write the number to paris.txt.";
        for expression in ["count({{s1}})", "{{s1}}"] {
            let p = plan(json!([
                {"id": "s1", "description": "find the Paris lines", "tool": "search", "args": {"path": "people.csv", "text": "Paris", "count": true, "matches": false}, "depends_on": []},
                {"id": "s2", "description": "count them", "tool": "calculator", "args": {"expression": expression}, "depends_on": ["s1"]},
                {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "paris.txt", "content": "{{s2}}"}, "depends_on": ["s2", "s1"]}
            ]));
            let errors = PlanErrors(
                match crate::plan::validate(&p, &tools, &crate::plan::PlanLimits::default()) {
                    Err(e) => e.0,
                    Ok(()) => super::super::asked_but_not_planned(&p, task, &tools),
                },
            );
            assert!(!errors.0.is_empty(), "{expression}: a count of a count is an error");
            let mended = repaired(p, &errors, &tools).unwrap();
            let ids: Vec<&str> = mended.steps.iter().map(|s| s.id.as_str()).collect();
            assert_eq!(ids, ["s1", "s3"], "{expression}");
            let write = mended.step("s3").unwrap();
            assert_eq!(write.args["content"], json!("{{s1}}"));
            assert_eq!(write.depends_on, ["s1"]);
        }
        // A count of a search's lines (count false) is the count asked for.
        let lines = plan(json!([
            {"id": "s1", "description": "find the Paris lines", "tool": "search", "args": {"path": "people.csv", "text": "Paris", "count": false, "matches": false}, "depends_on": []},
            {"id": "s2", "description": "count them", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]}
        ]));
        assert!(super::super::asked_but_not_planned(&lines, task, &tools).is_empty());
    }

    #[test]
    fn a_search_for_a_value_in_a_json_file_becomes_a_reasoning_step_over_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let searched = |with_read: bool| {
            let mut steps = vec![
                json!({"id": "s2", "description": "find Bo's age", "tool": "search", "args": {"path": "users.json", "text": "Bo", "count": false, "matches": false}, "depends_on": []}),
            ];
            if with_read {
                steps.insert(0, json!({"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "users.json"}, "depends_on": []}));
            }
            plan(serde_json::Value::Array(steps))
        };
        for with_read in [true, false] {
            let p = searched(with_read);
            let errors = super::super::asked_but_not_planned(&p, "How old is Bo, according to users.json?", &tools);
            let mended = repaired(p, &PlanErrors(errors), &tools).unwrap();
            let step = mended.step("s2").unwrap();
            assert!(step.is_reasoning(), "{step:?}");
            let [reader] = step.depends_on.as_slice() else {
                panic!("{step:?}")
            };
            assert_eq!(mended.step(reader).unwrap().args["path"], json!("users.json"));
            assert_eq!(mended.steps.len(), 2);
        }
    }

    #[test]
    fn a_reversal_nothing_asks_for_becomes_a_reasoning_step() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let p = plan(json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "name.txt"}, "depends_on": []},
            {"id": "s2", "description": "the name in upper case", "tool": "reverse_text", "args": {"text": "{{s1}}", "reverse": "letters"}, "depends_on": ["s1"]}
        ]));
        let errors = super::super::asked_but_not_planned(&p, "Write the name in upper case.", &tools);
        let mended = repaired(p, &PlanErrors(errors), &tools).unwrap();
        let step = mended.step("s2").unwrap();
        assert!(step.is_reasoning() && step.args.is_empty(), "{step:?}");
        assert_eq!(step.depends_on, ["s1"]);
    }

    #[test]
    fn an_aggregate_written_as_a_query_becomes_one_over_a_search_of_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["cannot evaluate".into()],
        }]);
        let with = |expression: &str| {
            plan(json!([
                {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "sales.txt"}, "depends_on": []},
                {"id": "s2", "description": "west sales", "tool": "calculator", "args": {"expression": expression}, "depends_on": ["s1"]}
            ]))
        };
        for query in ["sum({{s1}}) where west", "sum(sales.txt) where region = 'west'"] {
            let mended = repaired(with(query), &invalid, &tools).unwrap();
            let search = mended
                .steps
                .iter()
                .find(|s| s.tool.as_deref() == Some("search"))
                .unwrap();
            assert_eq!(search.args["path"], json!("sales.txt"), "{query}");
            assert_eq!(search.args["text"], json!("west"), "{query}");
            assert_eq!(search.args["count"], json!(false), "{query}");
            let sum = mended.step("s2").unwrap();
            assert_eq!(
                sum.args["expression"],
                json!(format!("sum({{{{{}}}}})", search.id)),
                "{query}"
            );
            assert_eq!(sum.depends_on, std::slice::from_ref(&search.id), "{query}");
            assert!(super::super::validate(&mended, &tools, &Default::default()).is_ok());
        }
        // Not a query over one text: left to the other mends.
        let two = with("sum({{s1}} + {{s1}}) where west");
        let mended = repaired(two, &invalid, &tools).unwrap();
        assert!(mended.steps.iter().all(|s| s.tool.as_deref() != Some("search")));
    }

    #[test]
    fn a_calculation_of_a_whole_output_gets_the_aggregate_its_description_names() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["only another step's output".into()],
        }]);
        let with = |description: &str| {
            plan(json!([
                {"id": "s1", "description": "prices", "tool": "read_json", "args": {"path": "o.json", "field": "items.price"}, "depends_on": []},
                {"id": "s2", "description": description, "tool": "calculator", "args": {"expression": "{{s1}}"}, "depends_on": ["s1"]}
            ]))
        };
        let mended = repaired(with("sum the prices"), &invalid, &tools).unwrap();
        assert_eq!(mended.steps[1].args["expression"], json!("sum({{s1}})"));
        let mended = repaired(with("How many files are there"), &invalid, &tools).unwrap();
        assert_eq!(mended.steps[1].args["expression"], json!("count({{s1}})"));
        let mut added_by_hand = with("add up the prices");
        added_by_hand.steps[1]
            .args
            .insert("expression".into(), json!("{{s1}} + {{s1}} + {{s1}}"));
        let mended = repaired(added_by_hand, &invalid, &tools).unwrap();
        assert_eq!(mended.steps[1].args["expression"], json!("sum({{s1}})"));
        // Nothing named, or two things: the step's description is handed to a model.
        for unclear in ["work it out", "the highest and the lowest"] {
            let mended = repaired(with(unclear), &invalid, &tools).unwrap();
            assert_eq!(mended.steps[1].tool, None, "{unclear}");
        }
        // A function it does not know asked for something else.
        let mut sort = with("sort the prices, largest first");
        sort.steps[1].args.insert("expression".into(), json!("sort({{s1}})"));
        assert_eq!(repaired(sort, &invalid, &tools).unwrap().steps[1].tool, None);
    }

    #[test]
    fn a_search_for_a_kind_of_file_becomes_a_glob_and_a_count_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "search".into(),
            problems: vec!["not for file names".into()],
        }]);
        let p = |count: bool| {
            plan(json!([
                {"id": "s1", "description": "list", "tool": "list_dir", "args": {"path": "photos/"}, "depends_on": []},
                {"id": "s2", "description": "the jpg files", "tool": "search", "args": {"path": "photos/", "text": ".jpg", "count": count}, "depends_on": ["s1"]},
                {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "jpg.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
            ]))
        };
        let mended = repaired(p(true), &invalid, &tools).unwrap();
        let ids: Vec<&str> = mended.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["s1", "glob1", "s2", "s3"]);
        assert_eq!(mended.steps[1].args["pattern"], json!("photos/*.jpg"));
        assert_eq!(mended.steps[1].depends_on, ["s1"]);
        assert_eq!(mended.steps[2].tool.as_deref(), Some("calculator"));
        assert_eq!(mended.steps[2].args["expression"], json!("count({{glob1}})"));
        assert!(super::super::validate(&mended, &tools, &Default::default()).is_ok());

        let listed = repaired(p(false), &invalid, &tools).unwrap();
        assert_eq!(listed.steps.len(), 3);
        assert_eq!(listed.steps[1].tool.as_deref(), Some("glob"));
    }

    #[test]
    fn a_calculation_of_text_becomes_a_reasoning_step_and_other_errors_are_not_mended() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let p = plan(json!([
            {"id": "s1", "description": "read", "tool": "read_file", "args": {"path": "name.txt"}, "depends_on": []},
            {"id": "s2", "description": "upper-case the name", "tool": "calculator", "args": {"expression": "upper('{{s1}}')"}, "depends_on": ["s1"]}
        ]));
        let invalid = PlanErrors(vec![PlanError::InvalidArgs {
            step: "s2".into(),
            tool: "calculator".into(),
            problems: vec!["cannot evaluate".into()],
        }]);
        let mended = repaired(p.clone(), &invalid, &tools).unwrap();
        assert_eq!(mended.steps[1].tool, None);
        assert!(mended.steps[1].args.is_empty());
        assert_eq!(mended.steps[1].depends_on, ["s1"]);
        assert!(repaired(p, &PlanErrors(vec![PlanError::Empty]), &tools).is_none());
    }

    #[test]
    fn what_the_task_asks_is_mended_in_the_step_that_does_it() {
        let dir = tempfile::tempdir().unwrap();
        let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
        let p = plan(json!([
            {"id": "s1", "description": "read poem.txt", "tool": "read_file", "args": {"path": "poem.txt"}, "depends_on": []},
            {"id": "s2", "description": "count the words in poem.txt", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "extract the tags", "tool": "search", "args": {"path": "poem.txt", "text": "#\\w+", "count": true}, "depends_on": []},
            {"id": "s4", "description": "list the .csv files in data", "tool": "list_dir", "args": {"path": "data"}, "depends_on": []},
            {"id": "s5", "description": "half of it", "tool": "calculator", "args": {"expression": "{{s2}} / 3"}, "depends_on": ["s2"]}
        ]));
        let task = "Pull out the tags, list the data, and divide the words by 3, rounded to 2 decimals.";
        let errors = PlanErrors(super::super::asked_but_not_planned(&p, task, &tools));
        assert_eq!(errors.0.len(), 4, "{errors}");
        let mended = repaired(p, &errors, &tools).unwrap();
        assert_eq!(mended.steps[1].args["expression"], json!("words({{s1}})"));
        assert_eq!(mended.steps[2].args["count"], json!(false));
        assert_eq!(mended.steps[3].tool.as_deref(), Some("glob"));
        assert_eq!(mended.steps[3].args["pattern"], json!("data/*.csv"));
        assert_eq!(mended.steps[4].args["expression"], json!("round({{s2}} / 3, 2)"));
        assert!(super::super::asked_but_not_planned(&mended, task, &tools).is_empty());

        // A listing described as a count becomes the count of a listing.
        let p = plan(json!([
            {"id": "s1", "description": "count the .py files in src", "tool": "list_dir", "args": {"path": "src"}, "depends_on": []},
            {"id": "s2", "description": "save", "tool": "write_file", "args": {"path": "n.txt", "content": "{{s1}}"}, "depends_on": ["s1"]}
        ]));
        let errors = PlanErrors(super::super::asked_but_not_planned(&p, "count the .py files", &tools));
        let mended = repaired(p, &errors, &tools).unwrap();
        let kinds: Vec<(&str, Option<&str>)> = mended
            .steps
            .iter()
            .map(|s| (s.id.as_str(), s.tool.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("list1", Some("glob")),
                ("s1", Some("calculator")),
                ("s2", Some("write_file"))
            ]
        );
        assert_eq!(mended.steps[0].args["pattern"], json!("src/*.py"));
        assert_eq!(mended.steps[1].args["expression"], json!("count({{list1}})"));
        assert!(super::super::asked_but_not_planned(&mended, "count the .py files", &tools).is_empty());
        assert!(super::super::validate(&mended, &tools, &Default::default()).is_ok());

        // A search for lines, described as extracting hashtags, returns the tags.
        let p = plan(json!([
            {"id": "s1", "description": "pull out the hashtags", "tool": "search", "args": {"path": "post.txt", "text": "#", "count": false}, "depends_on": []}
        ]));
        let errors = PlanErrors(super::super::asked_but_not_planned(&p, "write the hashtags", &tools));
        let mended = repaired(p, &errors, &tools).unwrap();
        assert_eq!(mended.steps[0].args["matches"], json!(true));
        assert_eq!(mended.steps[0].args["text"], json!("#[A-Za-z0-9_]+"));
        assert!(super::super::asked_but_not_planned(&mended, "write the hashtags", &tools).is_empty());

        // Matching a plain text gives the emails the step extracts, or else the lines.
        let p = plan(json!([
            {"id": "s1", "description": "extract the email addresses", "tool": "search", "args": {"path": "c.txt", "text": "@", "count": false, "matches": true}, "depends_on": []},
            {"id": "s2", "description": "copy the refund lines", "tool": "search", "args": {"path": "o.txt", "text": "refund", "count": false, "matches": true}, "depends_on": []}
        ]));
        let errors = PlanErrors(super::super::asked_but_not_planned(&p, "emails and refunds", &tools));
        let mended = repaired(p, &errors, &tools).unwrap();
        assert_eq!(mended.steps[0].args["matches"], json!(true));
        assert!(mended.steps[0].args["text"].as_str().unwrap().contains('@'));
        assert_eq!(mended.steps[1].args["matches"], json!(false));
        assert_eq!(mended.steps[1].args["text"], json!("refund"));
        assert!(super::super::asked_but_not_planned(&mended, "emails and refunds", &tools).is_empty());
    }
}
