//! Whether a run that failed could not be done as its task is written: it
//! failed reading a file the task names, which was not there when the run
//! began and is not there now.
//!
//! A task that asks about `payroll.csv` where there is none cannot be
//! done, and `infeasible` says so where `failed` says the run went wrong
//! (on held-out-22 three such runs read the file, failed, were revised to
//! read it again, and ended `failed`). Nothing of the run is changed: only
//! the status it ends with, and the reason says which file is missing.

use crate::result::StepResult;
use crate::tools::ToolRegistry;

/// What a not-found error says, in the words of the tools and of Python.
const NOT_FOUND: [&str; 4] = ["does not exist", "No such file", "FileNotFoundError", "not found"];

/// The reason a failed run is `infeasible`: the first of `absent` (the
/// files its task names that were not there when it began,
/// [`super::Run::absent_named`]) that is still not in the workspace of
/// `tools` and that one of its `records` (a step or an agent's inner call)
/// failed to read: its error names the file and says it was not found.
/// `None` when there is none.
pub(super) fn unreadable(absent: &[String], records: &[StepResult], tools: &ToolRegistry) -> Option<String> {
    let workspace = tools.workspace()?;
    let still_absent = |path: &&String| workspace.resolve(path).is_ok_and(|full| !full.exists());
    let errors: Vec<&str> = records
        .iter()
        .flat_map(|record| std::iter::once(record).chain(record.calls.iter()))
        .filter_map(|record| record.error.as_deref())
        .filter(|error| NOT_FOUND.iter().any(|n| error.contains(n)))
        .collect();
    let failed_on = |path: &String| errors.iter().any(|error| crate::text::contains_whole(error, path));
    let path = absent.iter().filter(still_absent).find(|path| failed_on(path))?;
    Some(format!(
        "the task works in {path}, which is not in the workspace, so it cannot be done as it is written"
    ))
}
