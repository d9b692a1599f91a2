//! The seeds' loop protections, against the scripted model and the real file
//! tools: a revision that repeats an earlier plan's calls stops the run, and
//! replans that keep failing stop it or, with `fallback = "react"`, hand the
//! rest of the goal to one ReAct loop that sees what was done.

use std::sync::{Arc, Mutex};

use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
use planexec::tools::builtin;
use planexec::tools::workspace::Workspace;
use planexec::{Agent, Event, EventBus, Fallback, Mode, Plan, Role, RunOptions, RunReport, RunStatus};
use serde_json::{json, Value};

fn read(id: &str, path: &str, depends_on: &[&str]) -> Value {
    json!({"id": id, "description": format!("read {path}"), "tool": "read_file", "args": {"path": path}, "depends_on": depends_on})
}

fn plan(steps: Vec<Value>) -> Value {
    json!({"goal": "report the total", "steps": steps})
}

/// Run `first` with the replanner answering `revisions` in turn.
async fn run(
    first: Value,
    revisions: Vec<Value>,
    options: RunOptions,
    model: Arc<ScriptedModel>,
) -> (RunReport, Vec<Event>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("numbers.txt"), "3 4 5").unwrap();
    model.replies(Role::Replanner, revisions.iter().map(ScriptedReply::json).collect());
    model.always(Role::Synthesizer, ScriptedReply::text("The total is 12."));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let bus = EventBus::new();
    let sink = seen.clone();
    bus.on_event(move |e| sink.lock().unwrap().push(e.clone()));
    let agent = Agent::builder(model, "scripted")
        .tools(builtin::registry(Workspace::new(dir.path()).unwrap()))
        .options(RunOptions {
            mode: Mode::Auto,
            ..options
        })
        .events(bus)
        .build();
    let first: Plan = serde_json::from_value(first).unwrap();
    // The task names the files, so no revision reads a made-up input.
    let report = agent
        .run_plan("report the total of the numbers in a.txt, b.txt, c.txt or d.txt", first)
        .await;
    let events = seen.lock().unwrap().clone();
    (report, events)
}

#[tokio::test]
async fn a_revision_that_repeats_an_earlier_plans_calls_stops_replanning() {
    let model = Arc::new(ScriptedModel::new());
    let options = RunOptions {
        max_replans: 5,
        stall_replans: 5,
        ..RunOptions::default()
    };
    // v1 reads a.txt, v2 reads b.txt, v3 goes back to a.txt: a circle.
    let (report, _) = run(
        plan(vec![read("s1", "a.txt", &[])]),
        vec![
            plan(vec![read("s2", "b.txt", &[])]),
            plan(vec![read("s3", "a.txt", &[])]),
            plan(vec![read("s4", "c.txt", &[])]),
        ],
        options,
        model.clone(),
    )
    .await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap();
    assert!(
        error.contains("no progress") && error.contains("repeats the calls plan v1 had left"),
        "{error}"
    );
    assert_eq!(report.plans.len(), 3, "the circle is seen at v3, not replanned again");
    assert_eq!(model.requests_from(Role::Replanner).len(), 2);
    assert!(report.fell_back.is_none());
}

#[tokio::test]
async fn replans_without_progress_stop_the_run_by_default() {
    let model = Arc::new(ScriptedModel::new());
    let options = RunOptions {
        max_replans: 5,
        ..RunOptions::default()
    };
    let (report, _) = run(
        plan(vec![read("s1", "a.txt", &[])]),
        vec![
            plan(vec![read("s2", "b.txt", &[])]),
            plan(vec![read("s3", "c.txt", &[])]),
            plan(vec![read("s4", "d.txt", &[])]),
        ],
        options,
        model.clone(),
    )
    .await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap();
    assert!(
        error.contains("no progress") && error.contains("after 2 replans in a row in which no step succeeded"),
        "{error}"
    );
    assert_eq!(
        model.requests_from(Role::Replanner).len(),
        2,
        "stall_replans (2) bounds the replans"
    );
}

#[tokio::test]
async fn a_stalled_run_falls_back_to_one_react_loop_that_sees_the_results_so_far() {
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![
            ScriptedReply::tool_call("list_dir", &json!({"path": "."})),
            ScriptedReply::text("3 + 4 + 5 = 12"),
        ],
    );
    let options = RunOptions {
        max_replans: 5,
        fallback: Fallback::React,
        recover: planexec::Recover::Replan,
        ..RunOptions::default()
    };
    // s0 works; every step after it reads a file that is not there.
    let (report, events) = run(
        plan(vec![read("s0", "numbers.txt", &[]), read("s1", "a.txt", &["s0"])]),
        vec![
            plan(vec![read("s0", "numbers.txt", &[]), read("s2", "b.txt", &["s0"])]),
            plan(vec![read("s0", "numbers.txt", &[]), read("s3", "c.txt", &["s0"])]),
        ],
        options,
        model.clone(),
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.answer.as_deref(), Some("The total is 12."));
    let reason = report.fell_back.clone().expect("the report says it fell back");
    assert!(
        reason.contains("step s3 failed") && reason.contains("2 replans"),
        "{reason}"
    );
    // The last plan is what was done plus one `react` agent step over the rest.
    let last = report.plan.as_ref().unwrap();
    let react = last.steps.last().unwrap();
    assert_eq!(react.agent.as_deref(), Some("react"));
    assert_eq!(react.depends_on, vec!["s0".to_string()]);
    assert!(report
        .plans
        .last()
        .unwrap()
        .reason
        .starts_with("fell back to a ReAct loop"));
    let step = report.step(&react.id).unwrap();
    assert_eq!(step.status, planexec::StepStatus::Succeeded);
    assert_eq!(step.calls.len(), 1, "its list_dir call is recorded under it");
    // The loop saw the goal, why the plan stopped, and what s0 read.
    let first_turn = serde_json::to_string(&model.requests_from(Role::Agent)[0].messages).unwrap();
    assert!(
        first_turn.contains("3 4 5") && first_turn.contains("c.txt"),
        "{first_turn}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::FellBack { reason } if reason.contains("s3"))));
    assert_eq!(model.requests_from(Role::Replanner).len(), 2);
}

#[tokio::test]
async fn a_failed_fallback_loop_ends_the_run() {
    let model = Arc::new(ScriptedModel::new());
    model.always(
        Role::Agent,
        ScriptedReply::tool_call("read_file", &json!({"path": "nowhere.txt"})),
    );
    let options = RunOptions {
        stall_replans: 0,
        fallback: Fallback::React,
        ..RunOptions::default()
    };
    let (report, _) = run(plan(vec![read("s1", "a.txt", &[])]), Vec::new(), options, model.clone()).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap();
    assert!(error.contains("last resort"), "{error}");
    assert!(report.fell_back.is_some());
    assert_eq!(
        model.requests_from(Role::Replanner).len(),
        0,
        "stall_replans = 0 falls back at once"
    );
}

/// In the react strategy a call that repeats one that succeeded is not run
/// again (its result is already in the history, and a side effect would
/// happen twice): the model is told so and answers from what it has.
#[tokio::test]
async fn react_does_not_run_a_repeated_call_again() {
    let dir = tempfile::tempdir().unwrap();
    let model = Arc::new(ScriptedModel::new());
    let note = json!({"path": "note.txt", "content": "hello"});
    model.replies(
        Role::Executor,
        vec![
            ScriptedReply::tool_call("write_file", &note),
            ScriptedReply::tool_call("write_file", &note),
            ScriptedReply::text("The note is written."),
        ],
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let bus = EventBus::new();
    let sink = seen.clone();
    bus.on_event(move |e| sink.lock().unwrap().push(e.clone()));
    let agent = Agent::builder(model.clone(), "scripted")
        .tools(builtin::registry(Workspace::new(dir.path()).unwrap()))
        .options(RunOptions {
            mode: Mode::Auto,
            strategy: planexec::Strategy::React,
            ..RunOptions::default()
        })
        .events(bus)
        .build();
    let report = agent.run("Write hello to note.txt").await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.answer.as_deref(), Some("The note is written."));
    let started = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, Event::StepStarted { .. }))
        .count();
    assert_eq!(started, 1, "the repeated call did not run");
    let last = model.requests_from(Role::Executor).pop().unwrap();
    let told = serde_json::to_string(&last.messages).unwrap();
    assert!(
        told.contains("you already called `write_file` with these arguments"),
        "{told}"
    );
}

/// A recovery that makes the failed call again, with the same arguments,
/// starts anew once, shown the error without the failed arguments (a small
/// model copies what it is shown), and stops the second time: the same
/// call fails the same way, and each turn is seconds on a local model (it
/// is asked again with some temperature first).
#[tokio::test]
async fn a_recovery_that_repeats_the_failed_call_stops_at_once() {
    let model = Arc::new(ScriptedModel::new());
    model.always(
        Role::Agent,
        ScriptedReply::tool_call("read_file", &json!({"path": "c.txt"})),
    );
    let options = RunOptions {
        max_replans: 0,
        ..RunOptions::default()
    };
    let (report, _) = run(plan(vec![read("s1", "c.txt", &[])]), vec![], options, model.clone()).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.clone().unwrap();
    assert!(
        error.contains("`c.txt` does not exist") && error.contains("made the failed call again"),
        "{error}"
    );
    let asked = model.requests_from(Role::Agent);
    assert_eq!(asked.len(), 3, "one turn, then one started anew and asked again once");
    let first = serde_json::to_string(&asked[0].messages).unwrap();
    let anew = serde_json::to_string(&asked[1].messages).unwrap();
    assert!(
        first.contains(r#"called `read_file` with {\"path\":\"c.txt\"}"#),
        "{first}"
    );
    assert!(!anew.contains(r#"{\"path\":\"c.txt\"}"#), "{anew}");
    assert!(anew.contains("written anew from the step"), "{anew}");
    // Started anew, its first turn is again the step's own tool only.
    let offered: Vec<&str> = asked[1].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(offered, ["read_file"]);
    assert!(report.step("s1").unwrap().calls.is_empty(), "the repeat never ran");
}
