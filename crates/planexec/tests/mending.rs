//! Plans the runtime mends itself before asking the planner again: a small
//! local planner asked again with the errors as often writes a worse plan.
//! The scripted planner gives one plan and nothing else, so a run that
//! succeeds was mended, and the files it wrote show the mend was right.

use std::sync::Arc;

use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
use planexec::tools::builtin;
use planexec::tools::workspace::Workspace;
use planexec::{Agent, Role, RunOptions, RunStatus};
use serde_json::json;

/// Run `task` over `files`, planned once with `plan`; the run and the folder.
async fn run_planned(
    task: &str,
    files: &[(&str, &str)],
    plan: serde_json::Value,
) -> (planexec::RunReport, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let model = Arc::new(ScriptedModel::new());
    model.replies(Role::Planner, vec![ScriptedReply::text(plan.to_string())]);
    model.always(Role::Synthesizer, ScriptedReply::text("done"));
    let options = RunOptions {
        max_reasks: 0,
        max_replans: 0,
        ..RunOptions::default()
    };
    let agent = Agent::builder(model.clone(), "scripted")
        .tools(builtin::registry(Workspace::new(dir.path()).unwrap()))
        .options(options)
        .build();
    let report = agent.run(task).await;
    assert_eq!(
        model.requests_from(Role::Planner).len(),
        1,
        "the planner was asked again"
    );
    (report, dir)
}

/// The first check stops at the search of file contents for `.jpg`; once
/// that is a glob and a count, the next check finds `jpg.txt` unwritten,
/// and that is mended too (the listing nobody uses is not the result).
#[tokio::test]
async fn a_plan_is_mended_over_rounds_as_each_check_finds_the_next_error() {
    let (report, dir) = run_planned(
        "How many .jpg files are in photos/? Write the count to jpg.txt.",
        &[("photos/a.jpg", "x"), ("photos/b.jpg", "x"), ("photos/c.png", "x")],
        json!({"steps": [
            {"id": "s1", "description": "read the contents of photos/", "tool": "list_dir", "args": {"path": "photos/"}, "depends_on": []},
            {"id": "s2", "description": "filter the files to only .jpg files", "tool": "search", "args": {"path": "photos/", "text": ".jpg", "count": true}, "depends_on": ["s1"]}
        ]}),
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("jpg.txt")).unwrap(), "2");
}

/// A file's text used as one number: the step's description says the sum.
#[tokio::test]
async fn a_files_lines_added_by_hand_become_the_sum_of_its_numbers() {
    let (report, dir) = run_planned(
        "prices.txt lists items with their prices. Add up the prices and write the total to total.txt.",
        &[("prices.txt", "apple 1.25\nbread 3.40\nmilk 0.99\n")],
        json!({"steps": [
            {"id": "s1", "description": "read prices.txt", "tool": "read_file", "args": {"path": "prices.txt"}, "depends_on": []},
            {"id": "s2", "description": "sum the prices", "tool": "calculator", "args": {"expression": "{{s1}} + {{s1}} + {{s1}}"}, "depends_on": ["s1"]},
            {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "total.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
        ]}),
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "5.64");
}
