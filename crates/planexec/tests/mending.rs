//! Plans the runtime mends itself before asking the planner again, and only
//! where the run's `mend` setting says so: a small local planner asked again
//! with the errors as often writes a worse plan; a hosted model is told what
//! is wrong and fixes its own plan. The scripted planner gives one plan and
//! nothing else, so a run that succeeds was mended, and the files it wrote
//! show the mend was right.

use std::sync::{Arc, Mutex};

use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
use planexec::tools::builtin;
use planexec::tools::workspace::Workspace;
use planexec::{Agent, Event, MemoryStore, MendMode, Role, RunOptions, RunStatus, RunStore};
use serde_json::json;

/// The jpg count planned as a search of file contents and with no write.
fn jpg_plan() -> serde_json::Value {
    json!({"steps": [
        {"id": "s1", "description": "read the contents of photos/", "tool": "list_dir", "args": {"path": "photos/"}, "depends_on": []},
        {"id": "s2", "description": "filter the files to only .jpg files", "tool": "search", "args": {"path": "photos/", "text": ".jpg", "count": true}, "depends_on": ["s1"]}
    ]})
}

const JPG_TASK: &str = "How many .jpg files are in photos/? Write the count to jpg.txt.";

/// Run `task` in a folder of three photos, planned with `plans` (one per
/// planner call), with `mend`; the run, the folder, the events and the ledger.
async fn run_planned(
    mend: MendMode,
    wants_help: bool,
    plans: Vec<serde_json::Value>,
) -> (
    planexec::RunReport,
    tempfile::TempDir,
    Vec<Event>,
    Arc<MemoryStore>,
    Arc<ScriptedModel>,
) {
    let dir = tempfile::tempdir().unwrap();
    for path in ["photos/a.jpg", "photos/b.jpg", "photos/c.png"] {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, "x").unwrap();
    }
    let model = Arc::new(ScriptedModel::new());
    model.set_plan_help(wants_help);
    let replies = plans.iter().map(|p| ScriptedReply::text(p.to_string())).collect();
    model.replies(Role::Planner, replies);
    model.always(Role::Synthesizer, ScriptedReply::text("done"));
    let options = RunOptions {
        max_reasks: 1,
        max_replans: 0,
        mend,
        ..RunOptions::default()
    };
    let store = Arc::new(MemoryStore::new());
    let agent = Agent::builder(model.clone(), "scripted")
        .tools(builtin::registry(Workspace::new(dir.path()).unwrap()))
        .options(options)
        .store(store.clone())
        .build();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    agent.events().on_event(move |e| seen.lock().unwrap().push(e.clone()));
    let report = agent.run(JPG_TASK).await;
    let events = events.lock().unwrap().clone();
    (report, dir, events, store, model)
}

/// The first check stops at the search of file contents for `.jpg`; once
/// that is a glob and a count, the next check finds `jpg.txt` unwritten,
/// and that is mended too (the listing nobody uses is not the result).
/// Each mend is an event, part of the plan version in the ledger and the
/// report, and a line beside its step in plan review.
#[tokio::test]
async fn a_plan_for_the_embedded_model_is_mended_and_every_mend_is_recorded() {
    let (report, dir, events, store, model) = run_planned(MendMode::Auto, true, vec![jpg_plan()]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("jpg.txt")).unwrap(), "2");
    assert_eq!(
        model.requests_from(Role::Planner).len(),
        1,
        "the planner was asked again"
    );
    let rules: Vec<&str> = report.plans[0].mends.iter().map(|m| m.rule.as_str()).collect();
    assert_eq!(rules, ["file-kind-to-glob", "output-written"]);
    let told: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::PlanMended { rule, .. } => Some(rule.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(told, rules);
    let recorded = store.load_run(&report.run_id).await.unwrap().unwrap();
    assert_eq!(recorded.plans[0].mends, report.plans[0].mends);
    let notes = planexec::render::Annotations {
        mends: &report.plans[0].mends,
        ..Default::default()
    };
    let review = planexec::render::text(&report.plans[0].plan, &notes);
    assert!(review.contains("mended: file-kind-to-glob at s2"), "{review}");
    assert!(
        review.contains("mended: output-written at jpg.txt") || review.contains("output-written"),
        "{review}"
    );
}

/// A hosted provider's plan is sent back with the finding, never rewritten
/// (unless `mend = on`); turned off, the embedded model's is sent back too.
#[tokio::test]
async fn a_hosted_providers_plan_is_sent_back_not_rewritten() {
    let fixed = json!({"steps": [
        {"id": "s1", "description": "the jpg files", "tool": "glob", "args": {"pattern": "photos/*.jpg"}, "depends_on": []},
        {"id": "s2", "description": "count them", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "save", "tool": "write_file", "args": {"path": "jpg.txt", "content": "{{s2}}"}, "depends_on": ["s2"]}
    ]});
    for (mend, wants_help) in [(MendMode::Auto, false), (MendMode::Off, true)] {
        let (report, dir, events, _, model) = run_planned(mend, wants_help, vec![jpg_plan(), fixed.clone()]).await;
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        assert_eq!(
            model.requests_from(Role::Planner).len(),
            2,
            "{mend:?}: the planner fixes its own plan"
        );
        assert!(report.plans[0].mends.is_empty(), "{:?}", report.plans[0].mends);
        assert!(!events.iter().any(|e| matches!(e, Event::PlanMended { .. })));
        let sent_back = &model.requests_from(Role::Planner)[1];
        let text = serde_json::to_string(&sent_back.messages).unwrap();
        assert!(text.contains("use glob with pattern"), "{text}");
        assert_eq!(std::fs::read_to_string(dir.path().join("jpg.txt")).unwrap(), "2");
    }
    // `on` mends a hosted provider's plan too.
    let (report, _, _, _, model) = run_planned(MendMode::On, false, vec![jpg_plan()]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(model.requests_from(Role::Planner).len(), 1);
}

/// A reference missing from `depends_on` is a structural error, beside a
/// finding no rule mends (a result waited for and never used). The mend
/// declares the reference; what is left is a finding, so the same plan
/// written again is taken as mended rather than the run end with no plan.
/// Without the help the plan can never be taken.
#[tokio::test]
async fn a_mend_that_leaves_a_finding_is_taken_when_the_plan_comes_back() {
    let undeclared = json!({"steps": [
        {"id": "s1", "description": "the jpg files", "tool": "glob", "args": {"pattern": "photos/*.jpg"}, "depends_on": []},
        {"id": "s2", "description": "count them", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": []},
        {"id": "s3", "description": "a check", "tool": "calculator", "args": {"expression": "1 + 1"}, "depends_on": []},
        {"id": "s4", "description": "save", "tool": "write_file", "args": {"path": "jpg.txt", "content": "{{s2}}"}, "depends_on": ["s2", "s3"]}
    ]});
    let (report, dir, events, _, model) =
        run_planned(MendMode::Auto, true, vec![undeclared.clone(), undeclared.clone()]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("jpg.txt")).unwrap(), "2");
    assert_eq!(model.requests_from(Role::Planner).len(), 2);
    let rules: Vec<&str> = report.plans[0].mends.iter().map(|m| m.rule.as_str()).collect();
    assert_eq!(rules, ["reference-declared"]);
    assert_eq!(report.plans[0].plan.step("s2").unwrap().depends_on, ["s1"]);
    assert_eq!(
        events.iter().filter(|e| matches!(e, Event::PlanMended { .. })).count(),
        1,
        "the mend is told once, when its plan is taken"
    );
    let (report, _, _, _, _) = run_planned(MendMode::Off, true, vec![undeclared.clone(), undeclared]).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap_or_default();
    assert!(error.contains("not in its depends_on"), "{error}");
}

/// A planner told of a finding that answers with a refusal copied from the
/// message (as the 0.5B model did) has not lost its plan: when no later
/// reply can be taken, the last plan that could be, with its findings, is.
#[tokio::test]
async fn a_worse_reply_after_a_plan_with_findings_does_not_throw_the_plan_away() {
    let with_finding = json!({"steps": [
        {"id": "s1", "description": "the jpg files", "tool": "glob", "args": {"pattern": "photos/*.jpg"}, "depends_on": []},
        {"id": "s2", "description": "count them", "tool": "calculator", "args": {"expression": "count({{s1}})"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "a check", "tool": "calculator", "args": {"expression": "1 + 1"}, "depends_on": []},
        {"id": "s4", "description": "save", "tool": "write_file", "args": {"path": "jpg.txt", "content": "{{s2}}"}, "depends_on": ["s2", "s3"]}
    ]});
    let copied = json!({"steps": [], "infeasible": "step s4 waits for s3 but does not use its result: write {{s3}} in its args"});
    let (report, dir, _, _, model) = run_planned(MendMode::Off, false, vec![with_finding, copied]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(model.requests_from(Role::Planner).len(), 2);
    assert_eq!(std::fs::read_to_string(dir.path().join("jpg.txt")).unwrap(), "2");
}

/// An edit in place whose report is then written over the file it edited
/// (the 1.5B planner saved `{{s3}}`, replace_in_file's `{"path": …,
/// "replaced": 5}`, as stations.csv, and the run said it had fixed the
/// file). For the embedded model the write is dropped and the file keeps
/// its edit; a hosted provider is told what the write would do.
#[tokio::test]
async fn an_edits_report_is_not_written_over_the_file_it_edited() {
    let task = "stations.csv ends its lines in CRLF. Fix it in place so it has LF line endings.";
    let plan = json!({"steps": [
        {"id": "s1", "description": "read it", "tool": "read_file", "args": {"path": "stations.csv"}, "depends_on": []},
        {"id": "s2", "description": "plain LF", "tool": "replace_in_file", "args": {"path": "stations.csv", "old": "\r\n", "new": "\n"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "save the fixed file", "tool": "write_file", "args": {"path": "stations.csv", "content": "{{s2}}"}, "depends_on": ["s2"]}
    ]});
    for wants_help in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stations.csv"), "id,name\r\n1,Aa\r\n2,Bb\r\n").unwrap();
        let model = Arc::new(ScriptedModel::new());
        model.set_plan_help(wants_help);
        model.always(Role::Planner, ScriptedReply::text(plan.to_string()));
        model.always(Role::Synthesizer, ScriptedReply::text("done"));
        let options = RunOptions {
            max_reasks: 1,
            max_replans: 0,
            ..RunOptions::default()
        };
        let agent = Agent::builder(model.clone(), "scripted")
            .tools(builtin::registry(Workspace::new(dir.path()).unwrap()))
            .options(options)
            .build();
        let report = agent.run(task).await;
        let text = std::fs::read_to_string(dir.path().join("stations.csv")).unwrap();
        let asked = model.requests_from(Role::Planner);
        if wants_help {
            assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
            assert_eq!(text, "id,name\n1,Aa\n2,Bb\n");
            let rules: Vec<&str> = report.plans[0].mends.iter().map(|m| m.rule.as_str()).collect();
            assert_eq!(rules, ["edit-report-dropped"]);
            assert_eq!(asked.len(), 1);
        } else {
            let told = serde_json::to_string(&asked[1].messages).unwrap();
            assert!(told.contains("replace the edited file with the report"), "{told}");
            assert!(report.plans.iter().all(|p| p.mends.is_empty()));
        }
    }
}

/// The day counts the program plans below total.
const STEPS_TASK: &str = "steps.txt has my step count for each day. Write the total to total.txt.";
/// The folder of [`STEPS_TASK`].
const STEPS: [(&str, &str); 1] = [("steps.txt", "Mon 8412\nTue 10233\n")];
/// A checking program for [`STEPS_TASK`]: it prints the total.
const STEPS_DERIVED: &str = "print(sum(int(line.split()[-1]) for line in open('steps.txt')))";
/// A program that does [`STEPS_TASK`] (18645).
const STEPS_TOTALLED: &str =
    "t = sum(int(l.split()[1]) for l in open('steps.txt'))\nopen('total.txt', 'w').write(str(t))\nprint(t)";

/// Another program that does [`STEPS_TASK`], written apart from [`STEPS_TOTALLED`].
const STEPS_TOTALLED_TOO: &str = "total = 0\nfor line in open('steps.txt'):\n    total += int(line.split()[-1])\nopen('total.txt', 'w').write(str(total))";

/// Run `STEPS_TASK` with `python` among the tools, the planner replying
/// `planner` and the executor `executor`; the run, the folder and the model.
async fn run_program_plan(
    mend: MendMode,
    planner: Vec<ScriptedReply>,
    executor: Vec<ScriptedReply>,
) -> (planexec::RunReport, tempfile::TempDir, Arc<ScriptedModel>) {
    run_program_task(STEPS_TASK, &STEPS, mend, (planner, executor), false).await
}

/// Run `task` over `files` as above, checking the work when `verify`.
async fn run_program_task(
    task: &str,
    files: &[(&str, &str)],
    mend: MendMode,
    (planner, executor): (Vec<ScriptedReply>, Vec<ScriptedReply>),
    verify: bool,
) -> (planexec::RunReport, tempfile::TempDir, Arc<ScriptedModel>) {
    let options = RunOptions {
        verify,
        ..no_retries(RunOptions::default())
    };
    run_program_task_with(task, files, mend, (planner, executor), options, |_| ()).await
}

/// `options` with no re-asks or replans: what a test scripts is all the model says.
fn no_retries(options: RunOptions) -> RunOptions {
    RunOptions {
        max_reasks: 0,
        max_replans: 0,
        ..options
    }
}

/// Options for a run in `auto` mode (a program may run unasked), checked
/// when `verify`, with no re-asks or replans.
fn auto(verify: bool) -> RunOptions {
    RunOptions {
        mode: planexec::Mode::Auto,
        verify,
        ..no_retries(RunOptions::default())
    }
}

/// Run `task` over `files` as above, with `options`.
async fn run_program_task_with(
    task: &str,
    files: &[(&str, &str)],
    mend: MendMode,
    (planner, executor): (Vec<ScriptedReply>, Vec<ScriptedReply>),
    options: RunOptions,
    script: impl FnOnce(&ScriptedModel),
) -> (planexec::RunReport, tempfile::TempDir, Arc<ScriptedModel>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let workspace = Workspace::new(dir.path()).unwrap();
    let mut tools = builtin::registry(workspace.clone());
    let python = planexec::tools::python::Python::find(Arc::new(workspace), Default::default(), "python3");
    tools.register(Arc::new(python.expect("python3 runs here"))).unwrap();
    let model = Arc::new(ScriptedModel::new());
    model.set_plan_help(true);
    // The script's own rules first, then the question of the order a
    // list's lines are in: none stated, unless the script says otherwise.
    script(&model);
    model.always_containing(Role::Planner, LIST_TEST, ScriptedReply::text(NO_ORDER));
    model.always_containing(Role::Planner, ORDER_PART, ScriptedReply::text(NO_PART));
    model.replies(Role::Planner, planner);
    model.replies(Role::Executor, executor);
    model.always(Role::Synthesizer, ScriptedReply::text("done"));
    let options = RunOptions { mend, ..options };
    let agent = Agent::builder(model.clone(), "scripted")
        .tools(tools)
        .options(options)
        .build();
    let report = agent.run(task).await;
    (report, dir, model)
}

/// What the planner's model is asked of the lines of a file a task writes.
const LIST_TEST: &str = "What order does the task state for the lines of";
const NO_ORDER: &str = r#"{"order": "none: no order is stated", "each_once": false}"#;
/// What it is asked when it reads no order there: which part of the task
/// says which line comes first, and what that part says alone.
const ORDER_PART: &str = "comes closest to saying which line of";
const PART_ORDER: &str = "These words are from a task that writes";
/// A pick that is no part of the task: no order is read from it.
const NO_PART: &str = r#"{"part": ""}"#;

/// A program that writes the first day's steps alone to total.txt (wrong).
const FIRST_DAY_ONLY: &str = "t = int(open('steps.txt').readline().split()[1])\nopen('total.txt', 'w').write(str(t))";

/// [`STEPS_TASK`], checked, in `auto` mode with one revision, the vote's
/// programs `planner` and the revisions `replanner`; a checking program
/// derives the total and the checker finds total.txt wrong whatever it is
/// shown.
async fn run_steps_revised(
    planner: Vec<ScriptedReply>,
    replanner: Vec<ScriptedReply>,
) -> (planexec::RunReport, tempfile::TempDir, Arc<ScriptedModel>) {
    let options = RunOptions {
        max_replans: 1,
        ..auto(true)
    };
    run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner, vec![]),
        options,
        |model| {
            model.replies(Role::Replanner, replanner);
            model.replies_containing(
                Role::Synthesizer,
                "computes exactly what the file",
                vec![program(STEPS_DERIVED)],
            );
            let wrong = ScriptedReply::text(r#"{"done": false, "wrong": "total.txt holds one day's steps"}"#);
            model.always_containing(Role::Synthesizer, "\"done\"", wrong);
        },
    )
    .await
}

fn program(code: &str) -> ScriptedReply {
    ScriptedReply::text(format!("Here it is:\n```python\n{code}\n```"))
}

/// For the embedded model with `python`, the first plan is one program the
/// model writes shown the task's files whole: a plan of one step, recorded
/// as the `program-plan` help. With the help off the planner is asked for a
/// plan of steps.
#[tokio::test]
async fn the_embedded_models_first_plan_is_one_program_written_seeing_the_files() {
    let code = STEPS_TOTALLED;
    let (report, dir, model) = run_program_plan(MendMode::Auto, vec![program(code)], vec![]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    let asked = model.requests_from(Role::Planner);
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].response_format.is_none(),
        "a program is asked for, not a JSON plan"
    );
    let prompt = serde_json::to_string(&asked[0].messages).unwrap();
    assert!(prompt.contains("--- steps.txt ---\\nMon 8412\\nTue 10233"), "{prompt}");
    let plan = &report.plans[0];
    assert_eq!(plan.plan.steps.len(), 1);
    assert_eq!(plan.plan.steps[0].tool.as_deref(), Some("python"));
    let rules: Vec<&str> = plan.mends.iter().map(|m| m.rule.as_str()).collect();
    assert_eq!(rules, ["program-plan"]);

    let steps = json!({"steps": [
        {"id": "s1", "description": "total", "tool": "python", "args": {"code": code}, "depends_on": []}
    ]});
    let (report, _, model) =
        run_program_plan(MendMode::Off, vec![ScriptedReply::text(steps.to_string())], vec![]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert!(model.requests_from(Role::Planner)[0].response_format.is_some());
    assert!(report.plans[0].mends.is_empty(), "{:?}", report.plans[0].mends);
}

/// A program whose list breaks the order the task states for it (read
/// from the task before any program ran) is not counted: the greedy
/// program's dates in the order of the file and a sampled one's repeated
/// are left out, and the two that wrote them once, earliest first, agree.
#[tokio::test]
async fn a_list_out_of_the_order_the_task_states_is_not_counted() {
    let task = "Write each date in log.txt once, earliest first, to dates.txt.";
    let files = [("log.txt", "2025-03-02 boiler\n2025-01-05 roof\n2025-03-02 gutter\n")];
    let read = "dates = [line.split()[0] for line in open('log.txt')]\n";
    let writes = |what: &str| program(&format!("{read}open('dates.txt', 'w').write('\\n'.join({what}))"));
    let planner = vec![
        writes("dict.fromkeys(dates)"),
        writes("sorted(dates)"),
        writes("sorted(set(dates))"),
        writes("sorted(dict.fromkeys(dates))"),
    ];
    let ascending =
        r#"{"order": "ascending: A to Z, alphabetical, smallest, lowest or earliest first", "each_once": true}"#;
    let (report, dir, _) =
        run_program_task_with(task, &files, MendMode::Auto, (planner, vec![]), auto(false), |model| {
            model.always_containing(Role::Planner, LIST_TEST, ScriptedReply::text(ascending));
        })
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some((4, 2)));
    let note = mend.note.clone().unwrap_or_default();
    assert!(
        note.contains("(2 not counted: in dates.txt `2025-03-02` comes before `2025-01-05`"),
        "{note}"
    );
    let dates = std::fs::read_to_string(dir.path().join("dates.txt")).unwrap();
    assert_eq!(dates, "2025-01-05\n2025-03-02");
}

/// An order the reading of the whole task misses is read from the part of
/// the task that states it, read alone (twice, with the choices in two
/// orders): the lists out of that order are not counted.
#[tokio::test]
async fn an_order_read_from_the_part_of_the_task_that_states_it_is_held_to() {
    let task = "Write each date in log.txt once, earliest first, to dates.txt.";
    let files = [("log.txt", "2025-03-02 boiler\n2025-01-05 roof\n2025-03-02 gutter\n")];
    let read = "dates = [line.split()[0] for line in open('log.txt')]\n";
    let writes = |what: &str| program(&format!("{read}open('dates.txt', 'w').write('\\n'.join({what}))"));
    let planner = vec![
        writes("dict.fromkeys(dates)"),
        writes("sorted(set(dates))"),
        writes("sorted(dict.fromkeys(dates))"),
    ];
    let ascending = r#"{"order": "ascending: A to Z, alphabetical, smallest, lowest or earliest first"}"#;
    let (report, dir, model) =
        run_program_task_with(task, &files, MendMode::Auto, (planner, vec![]), auto(false), |model| {
            model.always_containing(
                Role::Planner,
                ORDER_PART,
                ScriptedReply::text(r#"{"part": "earliest first"}"#),
            );
            model.always_containing(Role::Planner, PART_ORDER, ScriptedReply::text(ascending));
        })
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    let test = mend.list_test.clone().expect("a test read");
    assert_eq!(test.order, planexec::ListOrder::Ascending);
    let asked: Vec<String> = model
        .requests_from(Role::Planner)
        .iter()
        .filter(|r| r.response_format.as_ref().is_some_and(|f| f.name == "part_order"))
        .map(|r| serde_json::to_string(&r.messages).unwrap())
        .collect();
    assert_eq!(asked.len(), 2, "the part read twice");
    assert!(asked.iter().all(|q| q.contains("\\\"earliest first\\\"")), "{asked:?}");
    let dates = std::fs::read_to_string(dir.path().join("dates.txt")).unwrap();
    assert_eq!(dates, "2025-01-05\n2025-03-02");
}

/// A program the vote keeps with a flaw, because no program ran without
/// one, is not passed as done, though a checking program computes its
/// file the same way: the run's check says the flaw, and with no revision
/// left the run fails.
#[tokio::test]
async fn a_program_kept_with_a_flaw_is_not_done() {
    let task = "Write each date in log.txt once, earliest first, to dates.txt.";
    let files = [("log.txt", "2025-03-02 boiler\n2025-01-05 roof\n2025-03-02 gutter\n")];
    let in_file_order = "dates = [line.split()[0] for line in open('log.txt')]\nopen('dates.txt', 'w').write('\\n'.join(dict.fromkeys(dates)))";
    let ascending =
        r#"{"order": "ascending: A to Z, alphabetical, smallest, lowest or earliest first", "each_once": true}"#;
    let options = auto(true);
    let (report, _, _) = run_program_task_with(task, &files, MendMode::Auto, (vec![], vec![]), options, |model| {
        model.always_containing(Role::Planner, LIST_TEST, ScriptedReply::text(ascending));
        model.always(Role::Planner, program(in_file_order));
        model.always(Role::Replanner, program(in_file_order));
    })
    .await;
    assert_eq!(report.status, RunStatus::Failed, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    let flaw = mend.kept_flaw.clone().unwrap_or_default();
    assert!(flaw.contains("`2025-03-02` comes before `2025-01-05`"), "{mend:?}");
    let error = report.error.clone().unwrap_or_default();
    assert!(error.contains("`2025-03-02` comes before `2025-01-05`"), "{error}");
}

/// A program the plan was revised to, after a vote in which no two
/// programs did the same work, is no more confirmed than the vote's: where
/// no checking program computes what it wrote, the model's check passing
/// it does not make the run `succeeded`.
#[tokio::test]
async fn a_revision_after_a_vote_with_no_agreement_is_not_confirmed_by_the_check_alone() {
    let planner: Vec<ScriptedReply> = (1..=6)
        .map(|n| {
            program(&format!(
                "t = sum(int(l.split()[1]) for l in open('steps.txt')) + {n}\nopen('total.txt', 'w').write(str(t))"
            ))
        })
        .collect();
    let options = RunOptions {
        max_replans: 1,
        ..auto(true)
    };
    let (report, dir, model) = run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner, vec![]),
        options,
        |model| {
            model.replies(Role::Replanner, vec![program(STEPS_TOTALLED_TOO)]);
            model.always_containing(Role::Synthesizer, "computes exactly what the file", program("pass"));
            let passed = ScriptedReply::text(r#"{"done": true, "wrong": ""}"#);
            model.always_containing(Role::Synthesizer, "\"done\"", passed);
        },
    )
    .await;
    assert_eq!(
        report.plans[0].mends[0].agreement.map(|a| (a.programs, a.agreeing)),
        Some((6, 1))
    );
    assert_eq!(
        model.requests_from(Role::Replanner).len(),
        1,
        "revised once, as not confirmed"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    assert_eq!(report.status, RunStatus::Failed, "{:?}", report.error);
    let error = report.error.unwrap_or_default();
    assert!(
        error.contains("the program the plan was revised to, after the vote on the programs written apart, did work no other program did"),
        "{error}"
    );
}

/// The file a run ends with is held to the test of its lines the vote held
/// its programs to, whichever program wrote it: the replanner's program,
/// written after the vote, that repeats a date does not pass (with no
/// check of the run's work asked for), and one that writes each date once,
/// earliest first, does.
#[tokio::test]
async fn a_file_written_after_the_vote_is_held_to_the_test_of_its_lines() {
    let task = "Write each date in log.txt once, earliest first, to dates.txt.";
    let files = [("log.txt", "2025-03-02 boiler\n2025-01-05 roof\n2025-03-02 gutter\n")];
    let read = "dates = [line.split()[0] for line in open('log.txt')]\n";
    let writes = |what: &str| program(&format!("{read}open('dates.txt', 'w').write('\\n'.join({what}))"));
    let ascending =
        r#"{"order": "ascending: A to Z, alphabetical, smallest, lowest or earliest first", "each_once": true}"#;
    let options = RunOptions {
        max_replans: 1,
        ..auto(false)
    };
    let revised_with = |revision: ScriptedReply| {
        let options = options.clone();
        let in_file_order = writes("dict.fromkeys(dates)");
        async move {
            run_program_task_with(task, &files, MendMode::Auto, (vec![], vec![]), options, |model| {
                model.always_containing(Role::Planner, LIST_TEST, ScriptedReply::text(ascending));
                model.always(Role::Planner, in_file_order);
                model.always(Role::Replanner, revision);
            })
            .await
        }
    };
    let (report, dir, _) = revised_with(writes("sorted(dates)")).await;
    assert_eq!(report.status, RunStatus::Failed, "{:?}", report.error);
    let error = report.error.clone().unwrap_or_default();
    assert!(error.contains("dates.txt holds `2025-03-02` twice"), "{error}");
    let dates = std::fs::read_to_string(dir.path().join("dates.txt")).unwrap();
    assert_eq!(dates, "2025-01-05\n2025-03-02\n2025-03-02", "the revision ran");

    let (report, dir, _) = revised_with(writes("sorted(dict.fromkeys(dates))")).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.plans.len(), 2, "{:?}", report.plans);
    let dates = std::fs::read_to_string(dir.path().join("dates.txt")).unwrap();
    assert_eq!(dates, "2025-01-05\n2025-03-02");
}

/// A reply that is an answer where a program was asked for is no program
/// (it would run and fail): the model is asked once more, for the program
/// that computes it, and that program is the plan.
#[tokio::test]
async fn an_answer_where_a_program_was_asked_is_asked_again_for_the_program() {
    let code = STEPS_TOTALLED;
    let planner = vec![ScriptedReply::text("18645"), program(code)];
    let (report, dir, model) = run_program_plan(MendMode::Auto, planner, vec![]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.plans[0].plan.steps[0].args["code"], code);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    let asked = model.requests_from(Role::Planner);
    assert_eq!(asked.len(), 2);
    let again = serde_json::to_string(&asked[1].messages).unwrap();
    assert!(again.contains("That is an answer, not a program"), "{again}");
}

/// Where the run may run programs without asking, programs are sampled
/// apart until two do the same work on a copy of the folder, and the first
/// of the two is planned: the greedy program, which no other agrees with,
/// is not, and nothing the programs did on their copies reaches the
/// workspace.
#[tokio::test]
async fn the_program_two_samples_agree_on_is_the_plan() {
    let wrong = "open('total.txt', 'w').write('8412')\nopen('scratch.txt', 'w').write('x')";
    let right = STEPS_TOTALLED;
    let planner = vec![program(wrong), program(right), program(STEPS_TOTALLED_TOO)];
    let files = STEPS;
    let options = auto(false);
    let (report, dir, model) =
        run_program_task_with(STEPS_TASK, &files, MendMode::Auto, (planner, vec![]), options, |_| ()).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let (list_tests, programs): (Vec<_>, Vec<_>) = model
        .requests_from(Role::Planner)
        .into_iter()
        .filter(|r| r.response_format.as_ref().is_none_or(|f| f.name != "order_part"))
        .partition(|r| r.response_format.as_ref().is_some_and(|f| f.name == "list_test"));
    assert_eq!(
        list_tests.len(),
        2,
        "the order of total.txt's lines asked twice: an order read as free is read again to be known"
    );
    let asked: Vec<Option<f32>> = programs.iter().map(|r| r.temperature).collect();
    assert_eq!(
        asked,
        [Some(0.0), Some(0.6), Some(0.8)],
        "greedy, then sampled until two agree"
    );
    let step = &report.plans[0].plan.steps[0];
    assert_eq!(step.args["code"], right);
    let note = report.plans[0].mends[0].note.clone().unwrap_or_default();
    assert!(
        note.contains("2 of 3 programs written apart did the same work"),
        "{note}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    assert!(
        !dir.path().join("scratch.txt").exists(),
        "a program voted on ran on a copy"
    );
}

/// A program no other program written apart agreed with is the model's
/// guess: its own check passing the file is no confirmation, and the run
/// does not report `succeeded`. A program written from the task alone that
/// computes what the file holds confirms it.
#[tokio::test]
async fn a_program_no_other_agreed_with_needs_a_second_derivation_to_succeed() {
    let guesses = (1..=5).map(|n| program(&format!("open('total.txt', 'w').write('{n}')")));
    let planner: Vec<ScriptedReply> = std::iter::once(program(STEPS_TOTALLED)).chain(guesses).collect();
    confirmed_only_by_a_second_derivation(planner, (6, 1), "no two of the 6 programs written apart").await;
}

/// A pair found only among six programs, the other four each doing work
/// of its own, is a weak one, and needs a second derivation as a lone
/// program does. A pair among the first two programs is confirmed as it
/// stands.
#[tokio::test]
async fn a_pair_found_only_among_six_programs_needs_a_second_derivation_to_succeed() {
    let guesses = (1..=4).map(|n| program(&format!("open('total.txt', 'w').write('{n}')")));
    let planner: Vec<ScriptedReply> = std::iter::once(program(STEPS_TOTALLED))
        .chain(guesses)
        .chain(std::iter::once(program(STEPS_TOTALLED_TOO)))
        .collect();
    confirmed_only_by_a_second_derivation(planner, (6, 2), "only 2 of the 6 programs written apart").await;

    let pair = vec![program(STEPS_TOTALLED), program(STEPS_TOTALLED_TOO)];
    let (report, _, _) =
        run_program_task_with(STEPS_TASK, &STEPS, MendMode::Auto, (pair, vec![]), auto(true), checked).await;
    let mend = &report.plans[0].mends[0];
    assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some((2, 2)));
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
}

/// The model's check, passing whatever it is shown.
fn checked(model: &ScriptedModel) {
    model.always_containing(
        Role::Synthesizer,
        "\"done\"",
        ScriptedReply::text(r#"{"done": true, "wrong": ""}"#),
    );
}

/// [`STEPS_TASK`] run with the programs `planner` writes, whose vote
/// comes out as `tally` (programs, agreeing) and plans the right program:
/// with the model's check alone the run fails, its error saying `said`;
/// with a program written from the task alone that computes what the file
/// holds, it succeeds.
async fn confirmed_only_by_a_second_derivation(planner: Vec<ScriptedReply>, tally: (usize, usize), said: &str) {
    let (report, dir, _) = run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner.clone(), vec![]),
        auto(true),
        checked,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("total.txt")).unwrap(),
        "18645",
        "the right program is planned"
    );
    let mend = &report.plans[0].mends[0];
    assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some(tally));
    assert_eq!(report.status, RunStatus::Failed, "the model's check alone passed it");
    let error = report.error.clone().unwrap_or_default();
    assert!(error.contains(said) && error.contains("not confirmed"), "{error}");

    let (report, _, _) = run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner, vec![]),
        auto(true),
        |model| {
            model.replies_containing(
                Role::Synthesizer,
                "computes exactly what the file",
                vec![program(STEPS_DERIVED)],
            );
            checked(model);
        },
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
}

/// A program found wrong that the revision writes again as it was gives
/// way to the vote's other programs: the first of them that did other work
/// on a copy is taken (recorded in the first plan's mend, and noted in the
/// revision's), and a second derivation confirms it.
#[tokio::test]
async fn a_program_written_again_as_it_was_gives_way_to_the_votes_next_program() {
    let right = STEPS_TOTALLED;
    let guesses = (1..=4).map(|n| program(&format!("open('total.txt', 'w').write('{n}')")));
    let planner: Vec<ScriptedReply> = [program(FIRST_DAY_ONLY), program(right)]
        .into_iter()
        .chain(guesses)
        .collect();
    let (report, dir, model) = run_steps_revised(planner, vec![program(FIRST_DAY_ONLY)]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    let others = &report.plans[0].mends[0].others;
    assert_eq!(others.len(), 5, "each other program did other work");
    assert_eq!(others[0].args["code"], right);
    assert_eq!(model.requests_from(Role::Replanner).len(), 1);
    let revision = &report.plans[1];
    assert_eq!(revision.plan.steps[0].args["code"], right);
    assert_eq!(revision.plan.steps[0].id, "s2");
    let note = revision.mends[0].note.clone().unwrap_or_default();
    assert!(note.contains("the first of the vote's other programs"), "{note}");
}

/// A program written again as it was, or one that leaves out the file the
/// task names (printing the total instead of writing total.txt), with no
/// other program of the vote to take, is asked for once more anew: told
/// what went wrong, not shown the program it would copy; that one is the
/// revision.
#[tokio::test]
async fn a_program_written_again_as_it_was_with_no_other_is_asked_for_anew() {
    for again in [FIRST_DAY_ONLY, STEPS_DERIVED] {
        let right = STEPS_TOTALLED;
        // Every sample of the vote is the first program again: no other did other work.
        let planner: Vec<ScriptedReply> = (1..=6).map(|_| program(FIRST_DAY_ONLY)).collect();
        let (report, dir, model) = run_steps_revised(planner, vec![program(again), program(right)]).await;
        assert!(report.plans[0].mends[0].others.is_empty());
        assert_eq!(report.status, RunStatus::Succeeded, "{again}: {:?}", report.error);
        assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
        let asked = model.requests_from(Role::Replanner);
        assert_eq!(asked.len(), 2);
        let program = serde_json::to_string(FIRST_DAY_ONLY).unwrap();
        let text = |request: &planexec::llm::ChatRequest| serde_json::to_string(&request.messages).unwrap();
        assert!(
            text(&asked[0]).contains(program.trim_matches('"')),
            "the first is shown the program to fix"
        );
        assert!(
            !text(&asked[1]).contains(program.trim_matches('"')),
            "the second is not shown the program it would copy"
        );
        assert!(
            text(&asked[1]).contains("A program written for this task before"),
            "the second is told what went wrong"
        );
        assert_eq!(report.plans[1].plan.steps[0].args["code"], right);
    }
}

/// An edit that takes out a line holding the address the task names only
/// inside a longer one (`mk.osei@…` for `k.osei@…`) is not the work, though
/// the program did it without failing: the run says which line.
#[tokio::test]
async fn a_line_taken_out_for_part_of_its_value_is_not_the_work() {
    let task = "The address k.osei@example.org keeps bouncing. Remove it from subscribers.txt.";
    let list = "a.fern@example.com\nmk.osei@example.org\nk.osei@example.org\ntom@example.org\n";
    let by_part = "lines = open('subscribers.txt').readlines()\nopen('subscribers.txt', 'w').writelines(l for l in lines if 'k.osei@example.org' not in l)";
    let files = [("subscribers.txt", list)];
    let (report, dir, _) = run_program_task(task, &files, MendMode::Auto, (vec![program(by_part)], vec![]), true).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap_or_default();
    assert!(
        error.contains("`mk.osei@example.org`") && error.contains("only inside a longer word"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("subscribers.txt")).unwrap(),
        "a.fern@example.com\ntom@example.org\n",
        "the run's edit stands, and is reported"
    );
}

/// A task that says to delete a file names it with a verb of changing,
/// and a run that removed it did the work: a file gone is no file left as
/// it was.
#[tokio::test]
async fn a_file_the_task_says_to_delete_is_done_when_it_is_gone() {
    let task = "Delete old.log, we no longer need it.";
    let files = [("old.log", "boot ok\n"), ("keep.log", "up\n")];
    let remove = program("import os\nos.remove('old.log')\nprint('removed old.log')");
    let (report, dir, _) = run_program_task(task, &files, MendMode::Auto, (vec![remove], vec![]), false).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert!(!dir.path().join("old.log").exists());
    assert!(dir.path().join("keep.log").exists());
}

/// A task that works in a file that is not there names a missing input,
/// not a file to make: the planner writes a plan of steps (no program is
/// run on the folder for it), and a run that makes the file does not
/// succeed.
#[tokio::test]
async fn a_file_the_task_works_in_that_is_missing_is_not_made() {
    let task = "In lighting.ini, set key_light to 80 in the [levels] section.";
    let makes = json!({"steps": [
        {"id": "s1", "description": "write the setting", "tool": "write_file",
         "args": {"path": "lighting.ini", "content": "[levels]\nkey_light = 80\n"}, "depends_on": []}
    ]});
    let files = [("booking.ini", "[guests]\ncount = 2\n")];
    let planner = vec![ScriptedReply::text(makes.to_string())];
    let (report, dir, model) =
        run_program_task_with(task, &files, MendMode::Auto, (planner, vec![]), auto(true), |_| ()).await;
    let asked = serde_json::to_string(&model.requests_from(Role::Planner)).unwrap();
    assert!(!asked.contains("booking.ini ---"), "no program plan shown the files");
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap_or_default();
    assert!(error.contains("the task works in lighting.ini"), "{error}");
    assert!(dir.path().join("lighting.ini").exists(), "the run made it, and says so");
}

/// A price list, a task that changes one price in it, and two programs
/// written apart that do it.
const PRICES: &str = "product,price\nwhole milk,1.35\noat milk,1.99\n";
const OAT_MILK_TASK: &str = "In prices.csv, change the price of oat milk to 2.15. Don't change anything else.";
const OAT_MILK_EDITS: [&str; 2] = [
    "rows = open('prices.csv').read().replace('oat milk,1.99', 'oat milk,2.15')\nopen('prices.csv', 'w').write(rows)",
    "lines = open('prices.csv').read().splitlines()\nlines = [l.replace('1.99', '2.15') if l.startswith('oat') else l for l in lines]\nopen('prices.csv', 'w').write('\\n'.join(lines) + '\\n')",
];

/// The oat milk task in `auto` mode, checked: the two edits are voted on
/// (and agree), every program written to check the file is `checking`,
/// and `script` says the rest.
async fn run_oat_milk_voted(
    checking: &str,
    script: impl FnOnce(&ScriptedModel),
) -> (planexec::RunReport, tempfile::TempDir, Arc<ScriptedModel>) {
    let planner = OAT_MILK_EDITS.map(program).to_vec();
    let files = [("prices.csv", PRICES)];
    run_program_task_with(
        OAT_MILK_TASK,
        &files,
        MendMode::Auto,
        (planner, vec![]),
        auto(true),
        |model| {
            model.always_containing(Role::Synthesizer, "computes exactly what the file", program(checking));
            script(model);
        },
    )
    .await
}

/// Two programs written apart that did the same work outweigh one checking
/// program that computed otherwise (or, for an edit, the file as it was:
/// no derivation at all), and the model's check is not asked.
#[tokio::test]
async fn two_programs_that_agree_outweigh_one_checking_program() {
    let header_made_up = "print('item,cost')\nprint('whole milk,1.35')\nprint('oat milk,2.15')";
    let as_it_was = "print(open('prices.csv').read())";
    for checking in [header_made_up, as_it_was] {
        let (report, dir, model) = run_oat_milk_voted(checking, |model| {
            let check = ScriptedReply::text(r#"{"done": true, "wrong": ""}"#);
            model.always_containing(Role::Synthesizer, "\"done\"", check);
        })
        .await;
        let mend = &report.plans[0].mends[0];
        assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some((2, 2)));
        assert_eq!(report.status, RunStatus::Succeeded, "{checking}: {:?}", report.error);
        assert!(std::fs::read_to_string(dir.path().join("prices.csv"))
            .unwrap()
            .contains("oat milk,2.15"));
        let asked: Vec<String> = model
            .requests_from(Role::Synthesizer)
            .iter()
            .map(|request| serde_json::to_string(&request.messages).unwrap())
            .collect();
        assert!(
            !asked.iter().any(|text| text.contains("You are the checker")),
            "{asked:?}"
        );
        assert!(model.requests_from(Role::Replanner).is_empty(), "no revision");
    }
}

/// An edit of a configuration file that moves a setting the task does not
/// name rewrote the file instead of changing it (a parser's dump sorts
/// the keys): one of values only is carried back to the file's own lines
/// and is the work; one that also adds a section cannot be, and the run
/// fails and says which line moved, whatever a checker would say. A task
/// that names the setting it moves may move it.
#[tokio::test]
async fn a_config_edit_that_moves_settings_the_task_does_not_name_is_not_the_work() {
    let ini = "[server]\nport = 8080\nhost = 0.0.0.0\ntimeout = 30\nadmin = ops\n";
    let sort = "head, *rest = open('settings.ini').read().splitlines()\nrest = sorted(l.replace('8080', '9090') for l in rest)\nopen('settings.ini', 'w').write('\\n'.join([head] + rest) + '\\n')";
    let sort_too = "lines = open('settings.ini').read().split('\\n')\nbody = sorted(x.replace('port = 8080', 'port = 9090') for x in lines[1:] if x)\nopen('settings.ini', 'w').write('\\n'.join(lines[:1] + body) + '\\n')";
    let move_last = "lines = open('settings.ini').read().splitlines()\nlines.remove('port = 8080')\nopen('settings.ini', 'w').write('\\n'.join(lines + ['port = 8080']) + '\\n')";
    let move_too = "rows = [r for r in open('settings.ini').read().split('\\n') if r]\nkept = [r for r in rows if not r.startswith('port')] + [r for r in rows if r.startswith('port')]\nopen('settings.ini', 'w').write('\\n'.join(kept) + '\\n')";
    let and_a_section = |code: &str| format!("{code}\nopen('settings.ini', 'a').write('[extra]\\nx = 1\\n')");
    let (sort_more, sort_more_too) = (and_a_section(sort), and_a_section(sort_too));
    let port = "In settings.ini, change the port to 9090.";
    let cases = [
        (port, [sort, sort_too], true),
        (port, [sort_more.as_str(), sort_more_too.as_str()], false),
        (
            "In settings.ini, move the port line to the end of the file.",
            [move_last, move_too],
            true,
        ),
    ];
    for (task, [first, second], done) in cases {
        let planner = vec![program(first), program(second)];
        let files = [("settings.ini", ini)];
        let (report, dir, _) = run_program_task(task, &files, MendMode::Auto, (planner, vec![]), true).await;
        assert_eq!(
            report.status == RunStatus::Succeeded,
            done,
            "{task}: {:?}",
            report.error
        );
        let now = std::fs::read_to_string(dir.path().join("settings.ini")).unwrap();
        if done && first == sort {
            assert_eq!(now, ini.replace("8080", "9090"), "carried back to the file's order");
        }
        if !done {
            let error = report.error.unwrap_or_default();
            assert!(
                error.contains(
                    "settings.ini was edited in place and settings the task does not name moved (`admin = ops`"
                ),
                "{error}"
            );
        }
    }
}

/// Where two programs of the vote did the work and a checking program
/// computed otherwise, the task is asked which of the two routes it asks
/// for, both ways round: the checking program's, named twice, fails the
/// run; the run's, named twice, passes it.
#[tokio::test]
async fn the_route_a_task_asks_for_is_asked_where_a_checking_program_differs_from_a_vote() {
    let header_made_up = "print('item,cost')\nprint('whole milk,1.35')\nprint('oat milk,2.15')";
    for (answers, fails) in [(["B", "A"], true), (["A", "B"], false)] {
        let (report, _dir, model) = run_oat_milk_voted(header_made_up, |model| {
            let asks = answers
                .map(|a| ScriptedReply::text(format!(r#"{{"asks": "{a}"}}"#)))
                .to_vec();
            model.replies_containing(Role::Synthesizer, "Which does the task ask for", asks);
        })
        .await;
        let asked: Vec<String> = model
            .requests_from(Role::Synthesizer)
            .iter()
            .map(|r| serde_json::to_string(&r.messages).unwrap())
            .filter(|text| text.contains("Which does the task ask for"))
            .collect();
        assert_eq!(asked.len(), 2, "{:?}", report.error);
        assert!(asked[0].contains("print('item,cost')"), "{}", asked[0]);
        if fails {
            assert_eq!(report.status, RunStatus::Failed);
            let error = report.error.unwrap_or_default();
            assert!(error.contains("the task asks for that program's way"), "{error}");
        } else {
            assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        }
    }
}

/// Where two programs written apart did the work, the model's check of it
/// is not asked: it is no second route, and against such agreement the
/// 1.5B checker was wrong each time it was replayed.
#[tokio::test]
async fn a_voted_program_is_not_failed_by_the_check() {
    let wrong =
        || ScriptedReply::text(r#"{"done": false, "wrong": "the price was changed without reading prices.csv"}"#);
    let as_it_was = "print(open('prices.csv').read())";
    let (report, dir, model) = run_oat_milk_voted(as_it_was, |model| {
        model.replies_containing(Role::Synthesizer, "You are the checker", vec![wrong(), wrong()]);
    })
    .await;
    let checks = model
        .requests_from(Role::Synthesizer)
        .into_iter()
        .filter(|request| {
            serde_json::to_string(&request.messages)
                .unwrap()
                .contains("You are the checker")
        })
        .count();
    assert_eq!(checks, 0);
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let prices = std::fs::read_to_string(dir.path().join("prices.csv")).unwrap();
    assert!(prices.contains("oat milk,2.15"), "{prices}");
}

/// A program plan that fails is written again by the model, shown its
/// program and the error, before any other recovery or the replanner: the
/// program written again is the step's inner call `s1.1`.
#[tokio::test]
async fn a_failed_program_plan_is_written_again_with_its_error() {
    let wrong = "t = sum(int(l) for l in open('steps.txt'))\nopen('total.txt', 'w').write(str(t))";
    let right = "t = sum(int(l.split()[1]) for l in open('steps.txt'))\nopen('total.txt', 'w').write(str(t))";
    let (report, dir, model) = run_program_plan(MendMode::Auto, vec![program(wrong)], vec![program(right)]).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    let fix = model.requests_from(Role::Executor);
    assert_eq!(fix.len(), 1);
    let shown = serde_json::to_string(&fix[0].messages).unwrap();
    assert!(
        shown.contains("invalid literal for int()") && shown.contains("Mon 8412"),
        "{shown}"
    );
    assert!(model.requests_from(Role::Replanner).is_empty());
    let calls: Vec<&str> = report.steps[0].calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["s1.1"]);
}

/// A program the executor fixed after it failed, then found wrong by the
/// check, is written again from the program that ran, not from the plan's
/// program with the first bug.
#[tokio::test]
async fn a_fixed_program_found_wrong_is_revised_from_the_program_that_ran() {
    let failing = "t = sum(int(l) for l in open('steps.txt'))\nopen('total.txt', 'w').write(str(t))";
    let options = RunOptions {
        max_replans: 1,
        verify: true,
        ..no_retries(RunOptions::default())
    };
    let replies = (vec![program(failing)], vec![program(FIRST_DAY_ONLY)]);
    let (report, dir, model) = run_program_task_with(STEPS_TASK, &STEPS, MendMode::Auto, replies, options, |model| {
        model.replies(Role::Replanner, vec![program(STEPS_TOTALLED)]);
        let wrong = ScriptedReply::text(r#"{"done": false, "wrong": "total.txt holds one day's steps"}"#);
        let right = ScriptedReply::text(r#"{"done": true, "wrong": ""}"#);
        model.replies_containing(Role::Synthesizer, "\"done\"", vec![wrong, right]);
    })
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    let revision = serde_json::to_string(&model.requests_from(Role::Replanner)[0].messages).unwrap();
    assert!(
        revision.contains("readline().split()[1]"),
        "the program that ran: {revision}"
    );
    assert!(
        !revision.contains("int(l) for l"),
        "not the plan's first program: {revision}"
    );
}

/// A program that writes its edit to a copy beside the file the task says
/// to change, leaving that file as it was, did not do the work, whatever a
/// checker would say: the run fails and says where the edit went.
#[tokio::test]
async fn an_edit_written_to_a_copy_of_the_file_is_not_the_work() {
    let task = "Change the price of oat milk in prices.csv to 2.15 and keep every other line as it is.";
    let prices = "product,price\nwhole milk,1.35\noat milk,1.99\nbutter,2.79\n";
    let copy = "rows = open('prices.csv').read().replace('oat milk,1.99', 'oat milk,2.15')\nopen('prices_modified.csv', 'w').write(rows)";
    let files = [("prices.csv", prices)];
    let replies = (vec![program(copy)], vec![]);
    let (report, dir, _) = run_program_task(task, &files, MendMode::Auto, replies, true).await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap_or_default();
    assert!(
        error.contains("prices_modified.csv, a changed copy of prices.csv"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("prices.csv")).unwrap(), prices);
}

/// Programs that computed one number and printed it in their own words
/// did the same work: they agree, and the plainest of them (the number
/// alone) is the plan. A file the task names for the value that holds it
/// with words around it is not the value: that program is not counted as
/// the work, but it seconds a program that wrote the value alone.
#[tokio::test]
async fn one_number_in_other_words_agrees_and_a_file_of_it_in_words_is_not_counted() {
    let told = "t = sum(int(l.split()[1]) for l in open('steps.txt'))\nprint(f'You walked {t:,} steps in all.')";
    let bare = "print(sum(int(l.split()[-1]) for l in open('steps.txt')))";
    let task = "steps.txt has my step count for each day. How many steps is that in all? Just tell me.";
    let planner = vec![program(told), program(bare)];
    let (report, _, model) =
        run_program_task_with(task, &STEPS, MendMode::Auto, (planner, vec![]), auto(false), |_| ()).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some((2, 2)));
    assert_eq!(report.plans[0].plan.steps[0].args["code"], bare);
    assert_eq!(
        model.requests_from(Role::Planner).len(),
        2,
        "two agreed: no third sample"
    );

    let worded =
        "t = sum(int(l.split()[1]) for l in open('steps.txt'))\nopen('total.txt', 'w').write(f'Total steps: {t:,}')";
    let planner = vec![program(worded), program(STEPS_TOTALLED), program(STEPS_TOTALLED_TOO)];
    let (report, dir, _) = run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner, vec![]),
        auto(false),
        |_| (),
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    assert_eq!(
        mend.agreement.map(|a| (a.programs, a.agreeing)),
        Some((2, 2)),
        "the value in words seconds the bare value: no third sample"
    );
    let note = mend.note.clone().unwrap_or_default();
    assert!(note.contains("(1 of them wrote it with words around it)"), "{note}");
    assert!(
        note.contains("1 not counted: total.txt holds `Total steps: 18,645`, the value with words around it"),
        "{note}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
}

/// Run [`STEPS_TASK`] in `auto` mode, checked, the planner replying
/// `planner` and the checking programs asked for `checking`, in order.
async fn run_steps_checked(
    planner: Vec<ScriptedReply>,
    checking: Vec<ScriptedReply>,
) -> (planexec::RunReport, tempfile::TempDir, Arc<ScriptedModel>) {
    let checked = |model: &ScriptedModel| {
        model.replies_containing(Role::Synthesizer, "computes exactly what the file", checking);
    };
    run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner, vec![]),
        auto(true),
        checked,
    )
    .await
}

/// Two checking programs that agree with each other against two programs
/// of the vote that agreed are a tie: the next checking program breaks it.
/// One that computes what the file holds, or a third content, leaves the
/// file to the vote; a third that computes what the two did refutes it.
#[tokio::test]
async fn a_tie_between_checking_programs_and_the_vote_is_broken_by_the_next_program() {
    let first_day = "print(open('steps.txt').readline().split()[1])";
    let first_day_too = "with open('steps.txt') as f:\n    print(f.read().split()[1])";
    let first_day_again = "lines = open('steps.txt').read().split('\\n')\nprint(lines[0].split()[1])";
    let cases = [(STEPS_DERIVED, true), ("print(10233)", true), (first_day_again, false)];
    for (third, confirmed) in cases {
        let planner = vec![program(STEPS_TOTALLED), program(STEPS_TOTALLED_TOO)];
        let checking = vec![program(first_day), program(first_day_too), program(third)];
        let (report, _, model) = run_steps_checked(planner, checking).await;
        let asked = model
            .requests_from(Role::Synthesizer)
            .iter()
            .filter(|r| {
                serde_json::to_string(&r.messages)
                    .unwrap()
                    .contains("computes exactly what the file")
            })
            .count();
        assert_eq!(asked, 3, "{third}: the tie was broken by a third program");
        assert_eq!(
            report.status == RunStatus::Succeeded,
            confirmed,
            "{third}: {:?}",
            report.error
        );
        if !confirmed {
            let error = report.error.unwrap_or_default();
            assert!(error.contains("two programs written from the task alone"), "{error}");
        }
    }
}

/// A zero is what a checking program whose pattern matched nothing
/// prints: two of them are no refutation of the file (nor would they
/// confirm it), and the vote's agreement stands.
#[tokio::test]
async fn checking_programs_that_printed_zero_refute_nothing() {
    let none_matched = "print(sum(int(l.split()[1]) for l in open('steps.txt') if l.startswith('Sun')))";
    let none_matched_too =
        "n = 0\nfor l in open('steps.txt'):\n    if l.startswith('Sat'):\n        n += int(l.split()[1])\nprint(n)";
    let planner = vec![program(STEPS_TOTALLED), program(STEPS_TOTALLED_TOO)];
    let checking = vec![program(none_matched), program(none_matched_too), program(none_matched)];
    let (report, dir, _) = run_steps_checked(planner, checking).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
}

/// A new file the task names for a value that holds the value with words
/// around it is not the value, in a plan of steps too: the run says so and
/// does not succeed.
#[tokio::test]
async fn a_value_written_with_words_around_it_is_not_the_work() {
    let steps = json!({"steps": [
        {"id": "s1", "description": "save the total", "tool": "write_file", "args": {"path": "total.txt", "content": "Total steps: 18645"}, "depends_on": []}
    ]});
    let planner = vec![ScriptedReply::text(steps.to_string())];
    let (report, _, _) = run_program_task(STEPS_TASK, &STEPS, MendMode::Off, (planner, vec![]), false).await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = report.error.unwrap_or_default();
    assert!(
        error.contains("total.txt holds `Total steps: 18645`, the value with words around it"),
        "{error}"
    );
}

/// Programs that rewrote a configuration file through a parser (its
/// comments gone) did the work of those that changed its one line, once
/// their edit is carried back to the file's lines: the first two agree,
/// and the file keeps its comment. A dump that cannot be carried back (it adds a
/// section too) is not counted, however many agree: the programs that
/// changed the one line are planned.
#[tokio::test]
async fn programs_that_rewrote_a_config_file_are_carried_back_or_not_counted() {
    let ini = "# mail settings\n[smtp]\nhost = mail.example.org\nport = 25\n";
    let task = "Please update the SMTP port in mailer.ini to 587.";
    let parsed = "import configparser\nc = configparser.ConfigParser()\nc.read('mailer.ini')\nc['smtp']['port'] = '587'\nwith open('mailer.ini', 'w') as f:\n    c.write(f)";
    let parsed_too = "import configparser\nconfig = configparser.ConfigParser()\nconfig.read('mailer.ini')\nconfig.set('smtp', 'port', '587')\nconfig.write(open('mailer.ini', 'w'))";
    let line =
        "text = open('mailer.ini').read()\nopen('mailer.ini', 'w').write(text.replace('port = 25', 'port = 587'))";
    let line_too = "lines = open('mailer.ini').read().split('\\n')\nlines = ['port = 587' if l.startswith('port') else l for l in lines]\nopen('mailer.ini', 'w').write('\\n'.join(lines))";
    let more = |code: &str| format!("{code}\nopen('mailer.ini', 'a').write('\\n[extra]\\nx = 1\\n')");
    for (dumps, carried) in [
        ([parsed.to_string(), parsed_too.to_string()], true),
        ([more(parsed), more(parsed_too)], false),
    ] {
        let planner = vec![program(&dumps[0]), program(&dumps[1]), program(line), program(line_too)];
        let files = [("mailer.ini", ini)];
        let (report, dir, _) =
            run_program_task_with(task, &files, MendMode::Auto, (planner, vec![]), auto(false), |_| ()).await;
        assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
        let mend = &report.plans[0].mends[0];
        // Carried back, the first two agree and no more are written.
        let tally = if carried { (2, 2) } else { (4, 2) };
        assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some(tally));
        let note = mend.note.clone().unwrap_or_default();
        assert_eq!(
            note.contains("2 not counted: mailer.ini was edited in place and its comment"),
            !carried,
            "{note}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("mailer.ini")).unwrap(),
            ini.replace("port = 25", "port = 587")
        );
    }
}

/// Where no two programs agree and one ran with a flaw (numbers compared
/// as text), that program is written again, told its flaw, and its fix can
/// make the agreement: here it does the work another program did.
#[tokio::test]
async fn a_flawed_program_is_written_again_when_no_two_agree() {
    let csv = "day,steps\nMon,8412\nTue,10233\nWed,9001\n";
    let task = "Which day in steps.csv had the most steps? Write the day to best.txt.";
    let as_text = "import csv\nrows = list(csv.DictReader(open('steps.csv')))\nbest = max(rows, key=lambda r: r['steps'])\nopen('best.txt', 'w').write(best['day'])";
    let right = "import csv\nrows = list(csv.DictReader(open('steps.csv')))\nbest = max(rows, key=lambda r: int(r['steps']))\nopen('best.txt', 'w').write(best['day'])";
    let fixed = "import csv\nbest, most = '', -1\nfor row in csv.DictReader(open('steps.csv')):\n    if int(row['steps']) > most:\n        best, most = row['day'], int(row['steps'])\nopen('best.txt', 'w').write(best)";
    let guesses = ["Mon", "Sun", "Sat", "Fri"].map(|day| program(&format!("open('best.txt', 'w').write('{day}')")));
    let planner: Vec<ScriptedReply> = [program(as_text), program(right)].into_iter().chain(guesses).collect();
    let files = [("steps.csv", csv)];
    let (report, dir, model) =
        run_program_task_with(task, &files, MendMode::Auto, (planner, vec![]), auto(false), |model| {
            model.replies_containing(Role::Planner, "compared as text", vec![program(fixed)]);
        })
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    // The fix and the right program are a weak pair among seven: the
    // program that compared as text, run again with a head, makes three.
    assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some((7, 3)));
    assert_eq!(std::fs::read_to_string(dir.path().join("best.txt")).unwrap(), "Tue");
    let asked = model.requests_from(Role::Planner);
    let fix = serde_json::to_string(&asked.last().unwrap().messages).unwrap();
    assert!(fix.contains("compared as text, not as numbers"), "{fix}");
}

/// Where no two programs agree, none ran with a flaw and one did work
/// while the others failed, the first that failed is written again, shown
/// its error, and its fix can make the agreement.
#[tokio::test]
async fn a_failed_program_is_written_again_when_only_one_did_work() {
    let crashes = (1..=5).map(|n| program(&format!("t = int('{n} steps')\nopen('total.txt', 'w').write(str(t))")));
    let planner: Vec<ScriptedReply> = std::iter::once(program(STEPS_TOTALLED)).chain(crashes).collect();
    let (report, dir, model) = run_program_task_with(
        STEPS_TASK,
        &STEPS,
        MendMode::Auto,
        (planner, vec![]),
        auto(false),
        |model| {
            model.replies_containing(Role::Planner, "invalid literal", vec![program(STEPS_TOTALLED_TOO)]);
        },
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let mend = &report.plans[0].mends[0];
    assert_eq!(mend.agreement.map(|a| (a.programs, a.agreeing)), Some((7, 2)));
    assert_eq!(std::fs::read_to_string(dir.path().join("total.txt")).unwrap(), "18645");
    let asked = model.requests_from(Role::Planner);
    let fix = serde_json::to_string(&asked.last().unwrap().messages).unwrap();
    assert!(
        fix.contains("int('1 steps')"),
        "the first that failed is the one fixed: {fix}"
    );
}
