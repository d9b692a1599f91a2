//! Agent steps against the in-process scripted model and the real built-in
//! file tools on a temporary folder: the loop's calls run, are checked by the
//! profile, the mode and the budget, are recorded under their step, and the
//! loop's last message is the step's output.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
use planexec::llm::ToolChoice;
use planexec::tools::builtin;
use planexec::tools::workspace::Workspace;
use planexec::{
    Agent, AgentBuilder, AgentProfile, Approval, Approver, Budget, Effect, Event, EventBus, Mode, Plan, Role,
    RunOptions, RunStatus, Step, StepStatus,
};
use serde_json::{json, Value};

struct Folder {
    dir: tempfile::TempDir,
}

impl Folder {
    fn new() -> Folder {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("reports")).unwrap();
        std::fs::write(dir.path().join("reports/a.txt"), "Quarterly numbers, nothing else.").unwrap();
        std::fs::write(dir.path().join("reports/b.txt"), "Supplier: Acme Widgets Ltd.").unwrap();
        Folder { dir }
    }
    /// An agent over the built-in tools of this folder, answered by `model`.
    fn builder(&self, model: &Arc<ScriptedModel>, options: RunOptions) -> AgentBuilder {
        Agent::builder(model.clone(), "scripted")
            .tools(builtin::registry(Workspace::new(self.dir.path()).unwrap()))
            .options(options)
    }
}

fn agent_plan(agent: &str) -> Plan {
    serde_json::from_value(json!({
        "goal": "name the supplier",
        "steps": [{
            "id": "s1",
            "description": "find which file under reports/ names the supplier and return the supplier's name",
            "agent": agent,
            "depends_on": []
        }]
    }))
    .unwrap()
}

fn options(mode: Mode) -> RunOptions {
    RunOptions {
        mode,
        max_replans: 0,
        ..RunOptions::default()
    }
}

fn events() -> (EventBus, Arc<Mutex<Vec<Event>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let bus = EventBus::new();
    let sink = seen.clone();
    bus.on_event(move |e| sink.lock().unwrap().push(e.clone()));
    (bus, seen)
}

fn call(name: &str, args: Value) -> ScriptedReply {
    ScriptedReply::tool_call(name, &args)
}

/// A model whose agent loop writes "hello" to out.txt, then answers `answer`.
fn writes_out_txt_then_says(answer: &str) -> Arc<ScriptedModel> {
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![
            call("write_file", json!({"path": "out.txt", "content": "hello"})),
            ScriptedReply::text(answer),
        ],
    );
    model
}

/// The text of every message the agent loop was sent in its `n`th turn.
fn turn_text(model: &ScriptedModel, n: usize) -> String {
    let request = &model.requests_from(Role::Agent)[n];
    serde_json::to_string(&request.messages).unwrap()
}

#[tokio::test]
async fn an_agent_step_lists_a_folder_reads_two_files_and_returns_a_name() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![
            call("list_dir", json!({"path": "reports"})),
            call("read_file", json!({"path": "reports/a.txt"})),
            call("read_file", json!({"path": "reports/b.txt"})),
            ScriptedReply::text("Acme Widgets Ltd."),
        ],
    );
    model.always(
        Role::Synthesizer,
        ScriptedReply::text("The supplier is Acme Widgets Ltd."),
    );
    let (bus, seen) = events();
    let agent = folder.builder(&model, options(Mode::Auto)).events(bus).build();
    let report = agent.run_plan("name the supplier", agent_plan("worker")).await;

    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let step = report.step("s1").unwrap();
    assert_eq!(step.agent.as_deref(), Some("worker"));
    assert_eq!(step.output, Some(json!("Acme Widgets Ltd.")));
    let inner: Vec<(&str, Option<&str>)> = step.calls.iter().map(|c| (c.id.as_str(), c.tool.as_deref())).collect();
    assert_eq!(
        inner,
        vec![
            ("s1.1", Some("list_dir")),
            ("s1.2", Some("read_file")),
            ("s1.3", Some("read_file"))
        ]
    );
    assert!(step.calls.iter().all(|c| c.error.is_none()));
    // The listing gives paths as read_file takes them, not bare names.
    assert_eq!(step.calls[0].output, Some(json!(["reports/a.txt", "reports/b.txt"])));
    // The first turn must act; later turns may call or answer; tools are described.
    let choices: Vec<ToolChoice> = model
        .requests_from(Role::Agent)
        .iter()
        .map(|r| r.tool_choice.clone())
        .collect();
    assert_eq!(choices[0], ToolChoice::Required);
    assert!(choices[1..].iter().all(|c| *c == ToolChoice::Auto), "{choices:?}");
    assert!(
        turn_text(&model, 0).contains("- read_file: Read a UTF-8"),
        "{}",
        turn_text(&model, 0)
    );
    // The third turn saw what the first two calls returned.
    let third = turn_text(&model, 2);
    assert!(
        third.contains("a.txt") && third.contains("Quarterly numbers"),
        "{third}"
    );
    let finished = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, Event::AgentCallFinished { step_id, .. } if step_id == "s1"))
        .count();
    assert_eq!(finished, 3);
    assert_eq!(report.usage.role(Role::Agent).calls, 4, "{:?}", report.usage);
}

#[tokio::test]
async fn the_loop_sees_only_the_goal_its_step_and_its_dependencies() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.replies(Role::Agent, vec![ScriptedReply::text("done")]);
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let plan: Plan = serde_json::from_value(json!({
        "goal": "the goal text",
        "steps": [
            {"id": "s1", "description": "unrelated side step", "tool": "calculator", "args": {"expression": "6*7"}, "depends_on": []},
            {"id": "s2", "description": "count the files", "tool": "list_dir", "args": {"path": "reports"}, "depends_on": []},
            {"id": "s3", "description": "summarise the listing", "agent": "worker", "depends_on": ["s2"]}
        ]
    }))
    .unwrap();
    let agent = folder.builder(&model, options(Mode::Auto)).build();
    let report = agent.run_plan("the task", plan).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let seen = turn_text(&model, 0);
    assert!(
        seen.contains("the goal text") && seen.contains("summarise the listing"),
        "{seen}"
    );
    assert!(seen.contains("b.txt"), "the dependency's result is shown: {seen}");
    assert!(!seen.contains("unrelated side step") && !seen.contains("42"), "{seen}");
}

#[tokio::test]
async fn a_tool_outside_the_profile_is_refused_and_the_loop_recovers() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![
            call("write_file", json!({"path": "x.txt", "content": "no"})),
            call("read_file", json!({"path": "reports/b.txt"})),
            ScriptedReply::text("Acme Widgets Ltd."),
        ],
    );
    model.always(Role::Synthesizer, ScriptedReply::text("Acme"));
    let mut o = options(Mode::Auto);
    o.agents.push(
        AgentProfile::new("reader")
            .description("reads files")
            .tools(["read_file", "list_*"]),
    );
    let agent = folder.builder(&model, o).build();
    let report = agent.run_plan("t", agent_plan("reader")).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert!(!folder.dir.path().join("x.txt").exists());
    let step = report.step("s1").unwrap();
    let refused = step.calls[0].error.clone().unwrap_or_default();
    assert!(
        refused.contains("write_file") && refused.contains("reader"),
        "{refused}"
    );
    // The refusal reached the loop, which went on.
    assert!(turn_text(&model, 1).contains(&refused), "{}", turn_text(&model, 1));
    // The tools offered to the loop are only the profile's.
    let offered: Vec<String> = model.requests_from(Role::Agent)[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(offered, vec!["list_dir".to_string(), "read_file".to_string()]);
}

#[tokio::test]
async fn plan_mode_refuses_an_inner_write() {
    let folder = Folder::new();
    let model = writes_out_txt_then_says("could not write");
    model.always(Role::Synthesizer, ScriptedReply::text("no"));
    let agent = folder.builder(&model, options(Mode::Plan)).build();
    let report = agent.run_plan("t", agent_plan("worker")).await;
    assert!(!folder.dir.path().join("out.txt").exists());
    let step = report.step("s1").unwrap();
    let refused = step.calls[0].error.clone().unwrap_or_default();
    assert!(refused.contains("plan mode"), "{refused}");
}

/// Says yes to every confirmation and records what it was asked.
struct Confirming(Mutex<Vec<(String, Value, Effect)>>);

#[async_trait]
impl Approver for Confirming {
    async fn review(&self, _plan: &Plan, _check: planexec::policy::PlanCheck<'_>) -> Approval {
        Approval::Approve
    }
    async fn confirm_step(&self, step: &Step, args: &Value, effect: Effect) -> bool {
        self.0.lock().unwrap().push((step.id.clone(), args.clone(), effect));
        true
    }
}

#[tokio::test]
async fn ask_mode_confirms_an_inner_write_with_its_arguments() {
    let folder = Folder::new();
    let model = writes_out_txt_then_says("wrote out.txt");
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let approver = Arc::new(Confirming(Mutex::default()));
    let agent = folder
        .builder(&model, options(Mode::Ask))
        .approver(approver.clone())
        .build();
    let report = agent.run_plan("t", agent_plan("worker")).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(
        std::fs::read_to_string(folder.dir.path().join("out.txt")).unwrap(),
        "hello"
    );
    let asked = approver.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, "s1.1");
    assert_eq!(asked[0].1, json!({"path": "out.txt", "content": "hello"}));
    assert_eq!(asked[0].2, Effect::WritesWorkspace);
}

#[tokio::test]
async fn a_budget_stops_the_loop_mid_way() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.always(Role::Agent, call("list_dir", json!({"path": "reports"})));
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let mut o = options(Mode::Auto);
    o.budget = Budget {
        max_tokens: Some(6400),
        ..Budget::default()
    };
    o.agents = vec![AgentProfile::worker().max_turns(50)];
    let agent = folder.builder(&model, o).build();
    let report = agent.run_plan("t", agent_plan("worker")).await;
    assert_eq!(report.status, RunStatus::BudgetExhausted, "{:?}", report.error);
    let turns = model.requests_from(Role::Agent).len();
    assert!(
        turns > 1 && turns < 50,
        "the loop ran {turns} turns: {:?}",
        report.error
    );
    let total = report.usage.total();
    let spent = total.prompt_tokens + total.completion_tokens;
    let one_turn = report.usage.role(Role::Agent).prompt_tokens / turns as u64 + 200;
    assert!(spent <= 6400 + one_turn, "spent {spent}: {:?}", report.usage);
}

#[tokio::test]
async fn a_call_written_as_text_is_run_and_an_unanswered_loop_fails() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![
            ScriptedReply::text(
                "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"reports/b.txt\"}}</tool_call>",
            ),
            ScriptedReply::text("{\"name\": \"read_file\", \"arguments\": {\"path\": \"reports/a.txt\"}}"),
        ],
    );
    model.always(Role::Agent, call("list_dir", json!({"path": "."})));
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let mut o = options(Mode::Auto);
    o.agents = vec![AgentProfile::worker().max_turns(3)];
    let agent = folder.builder(&model, o).build();
    let report = agent.run_plan("t", agent_plan("worker")).await;
    let step = report.step("s1").unwrap();
    let tools: Vec<Option<&str>> = step.calls.iter().map(|c| c.tool.as_deref()).collect();
    assert_eq!(tools, vec![Some("read_file"), Some("read_file")]);
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = step.error.clone().unwrap_or_default();
    assert!(error.contains("no answer in 3 turns"), "{error}");
}

/// Run the supplier plan with the agent loop answering `replies` in turn;
/// the report and the model (for what each turn was sent).
async fn run_agent_with(folder: &Folder, replies: Vec<ScriptedReply>) -> (planexec::RunReport, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new());
    model.replies(Role::Agent, replies);
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let agent = folder.builder(&model, options(Mode::Auto)).build();
    let report = agent.run_plan("t", agent_plan("worker")).await;
    (report, model)
}

/// A small model that is stuck answers with the error its last call got.
/// That is no result: taken as one, it would be written on as the work.
#[tokio::test]
async fn an_answer_that_only_repeats_the_last_calls_error_fails_the_step() {
    let folder = Folder::new();
    let (report, _) = run_agent_with(
        &folder,
        vec![
            call("read_file", json!({"path": "reports/a.txt"})),
            call("read_file", json!({"path": "reports/c.txt"})),
            ScriptedReply::text("error: `reports/c.txt` does not exist"),
        ],
    )
    .await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let step = report.step("s1").unwrap();
    assert_eq!(step.output, None);
    let error = step.error.clone().unwrap_or_default();
    assert!(
        error.contains("ended on the error of its last call: `reports/c.txt` does not exist"),
        "{error}"
    );

    // An answer that says more than the error is the agent's answer.
    let (report, _) = run_agent_with(
        &folder,
        vec![
            call("read_file", json!({"path": "reports/b.txt"})),
            call("read_file", json!({"path": "reports/c.txt"})),
            ScriptedReply::text(
                "There is no c.txt; the supplier, from reports/b.txt read earlier, is Acme Widgets Ltd.",
            ),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
}

/// An answer before any call succeeded is a guess: while the loop may still
/// call, the agent is sent to look, and its answer after looking is the output.
#[tokio::test]
async fn an_answer_before_any_call_succeeded_sends_the_agent_to_look() {
    let folder = Folder::new();
    let (report, model) = run_agent_with(
        &folder,
        vec![
            call("read_file", json!({"path": "reports/0.txt"})),
            ScriptedReply::text("42"),
            call("read_file", json!({"path": "reports/b.txt"})),
            ScriptedReply::text("Acme Widgets Ltd."),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("Acme Widgets Ltd.")));
    // The failed read told it what the folder holds; the guess was sent back.
    let third = turn_text(&model, 2);
    assert!(
        third.contains("the folder holds: reports/a.txt, reports/b.txt"),
        "{third}"
    );
    assert!(third.contains("that answer is a guess"), "{third}");
}

/// A call the loop made before and that failed is not run again: it is told
/// the call failed already (the 1.5B model, recovering, wrote its own failed
/// program three times over, each run to the same error).
#[tokio::test]
async fn a_call_that_failed_is_not_run_again() {
    let folder = Folder::new();
    let missing = || call("read_file", json!({"path": "reports/zzz.txt"}));
    let (report, model) = run_agent_with(
        &folder,
        vec![
            missing(),
            // Asked again once with temperature, and still the same call.
            missing(),
            missing(),
            call("read_file", json!({"path": "reports/a.txt"})),
            ScriptedReply::text("Quarterly numbers, nothing else."),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let calls = &report.step("s1").unwrap().calls;
    assert_eq!(calls.len(), 2, "the failed read ran once: {calls:?}");
    assert!(turn_text(&model, 3).contains("that call failed already"));
}

/// A bare number no result shows is asked about once; the answer after
/// that stands.
#[tokio::test]
async fn a_number_no_result_shows_is_asked_about_once() {
    let folder = Folder::new();
    std::fs::write(folder.dir.path().join("reports/n.txt"), "41").unwrap();
    let (report, model) = run_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("42"),
            call("read_file", json!({"path": "reports/n.txt"})),
            ScriptedReply::text("41"),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("41")));
    assert!(turn_text(&model, 2).contains("42 appears in no result above"));

    // A value written with digits (a version, a date) is read, not guessed.
    let versions = Folder::new();
    std::fs::write(versions.dir.path().join("reports/v.txt"), "junit 5.10.2").unwrap();
    let (report, model) = run_agent_with(
        &versions,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("4.12.2"),
            call("read_file", json!({"path": "reports/v.txt"})),
            ScriptedReply::text("5.10.2"),
        ],
    )
    .await;
    assert_eq!(report.step("s1").unwrap().output, Some(json!("5.10.2")));
    assert!(turn_text(&model, 2).contains("4.12.2 appears in no result above"));

    // Asked once and still unseen: the step fails, nothing is handed on.
    let (report, _) = run_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("42"),
            ScriptedReply::text("42"),
        ],
    )
    .await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = report.step("s1").unwrap().error.clone().unwrap_or_default();
    assert!(
        error.contains("answered 42, which no result of its calls shows"),
        "{error}"
    );

    // A count of what a call listed is seen: the folder holds three files.
    let (report, _) = run_agent_with(
        &folder,
        vec![call("list_dir", json!({"path": "reports"})), ScriptedReply::text("3")],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("3")));

    // A number the goal gives ("a crate holds 24 bottles") is seen.
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![call("list_dir", json!({"path": "reports"})), ScriptedReply::text("24")],
    );
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let agent = folder.builder(&model, options(Mode::Auto)).build();
    let mut plan = agent_plan("worker");
    plan.goal = "A crate holds 24 bottles. How many bottles are in 17 crates?".into();
    let report = agent.run_plan("t", plan).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("24")));
}

/// A name with digits in it (`user1`) that no result shows is made up: the
/// agent listed a folder, never read a file, and answered one. It is asked
/// about once, and fails if it keeps it; a name a result shows stands.
#[tokio::test]
async fn a_name_no_result_shows_is_asked_about_once() {
    let folder = Folder::new();
    std::fs::write(folder.dir.path().join("reports/log.txt"), "login ok user=kestrel7").unwrap();
    let (report, model) = run_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("The user who logged in is user1."),
            call("read_file", json!({"path": "reports/log.txt"})),
            ScriptedReply::text("The user who logged in is kestrel7."),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(
        report.step("s1").unwrap().output,
        Some(json!("The user who logged in is kestrel7."))
    );
    assert!(turn_text(&model, 2).contains("user1 appears in no result above"));

    let (report, _) = run_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("The user is user1."),
            ScriptedReply::text("The user is user1."),
        ],
    )
    .await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = report.step("s1").unwrap().error.clone().unwrap_or_default();
    assert!(
        error.contains("answered user1, which no result of its calls shows"),
        "{error}"
    );

    // Ordinals and units are no names: "the 2nd file" stands.
    let (report, _) = run_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("b.txt is the 2nd file."),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
}

/// A read of a guessed name in a folder that holds one file reads that
/// file, and says so; in a folder of several the agent is told what is
/// there instead, and nothing is read for it.
#[tokio::test]
async fn a_guessed_name_beside_one_file_reads_that_file() {
    let folder = Folder::new();
    std::fs::create_dir(folder.dir.path().join("inbox")).unwrap();
    std::fs::write(folder.dir.path().join("inbox/note-7.txt"), "Supplier: Kestrel Ltd.").unwrap();
    let (report, model) = run_agent_with(
        &folder,
        vec![
            call("read_file", json!({"path": "inbox/0.txt"})),
            ScriptedReply::text("Kestrel Ltd."),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let calls = &report.step("s1").unwrap().calls;
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].status, StepStatus::Failed);
    assert_eq!(calls[1].args, Some(json!({"path": "inbox/note-7.txt"})));
    let shown = turn_text(&model, 1);
    assert!(
        shown.contains("the one file in its folder is inbox/note-7.txt, read instead")
            && shown.contains("Kestrel Ltd."),
        "{shown}"
    );

    let (_, model) = run_agent_with(
        &folder,
        vec![
            call("read_file", json!({"path": "reports/0.txt"})),
            ScriptedReply::text("unknown"),
        ],
    )
    .await;
    let shown = turn_text(&model, 1);
    assert!(
        shown.contains("the folder holds: reports/a.txt, reports/b.txt"),
        "{shown}"
    );
    assert!(!shown.contains("read instead"), "{shown}");
}

/// An agent that answers with the step's own word for what it asks ("the
/// supplier" answered `supplier`, after a search that only counted) is
/// asked once to find it, and the step fails if it answers so again.
#[tokio::test]
async fn the_steps_own_word_for_its_answer_is_asked_about_once() {
    let folder = Folder::new();
    let counted = call(
        "search",
        json!({"path": "reports", "text": "supplier", "count": true, "matches": false}),
    );
    let (report, model) = run_agent_with(
        &folder,
        vec![
            counted.clone(),
            ScriptedReply::text("supplier"),
            call("read_file", json!({"path": "reports/b.txt"})),
            ScriptedReply::text("Acme Widgets Ltd."),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("Acme Widgets Ltd.")));
    assert!(turn_text(&model, 2).contains("the step's own word for what it asks"));

    let (report, _) = run_agent_with(
        &folder,
        vec![
            counted,
            ScriptedReply::text("Supplier."),
            ScriptedReply::text("supplier"),
        ],
    )
    .await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = report.step("s1").unwrap().error.clone().unwrap_or_default();
    assert!(error.contains("answered \"supplier\", the step's own word"), "{error}");
}

/// A whole listing handed on for a step that asks for only some of it is
/// asked about once; what the agent answers then stands, even the whole
/// listing again (every file may be one the step asks for).
#[tokio::test]
async fn a_whole_listing_for_a_step_that_picks_is_asked_about_once() {
    let folder = Folder::new();
    let listing = "reports/a.txt\nreports/b.txt";
    let (report, model) = run_agent_with(
        &folder,
        vec![
            call("glob", json!({"pattern": "reports/*"})),
            ScriptedReply::text(listing),
            ScriptedReply::text("reports/b.txt"),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("reports/b.txt")));
    let question = turn_text(&model, 2);
    assert!(
        question.contains("That is everything `glob` returned") && question.contains("reports/*part*"),
        "{question}"
    );

    let (report, _) = run_agent_with(
        &folder,
        vec![
            call("glob", json!({"pattern": "reports/*"})),
            ScriptedReply::text(listing),
            ScriptedReply::text(listing),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!(listing)));
}

/// An agent step that never answers (it lists the folder for both its turns)
/// with one replan allowed: what the replanner revises decides the end.
async fn run_a_failing_agent_step(folder: &Folder, model: &Arc<ScriptedModel>) -> planexec::RunReport {
    model.always(Role::Agent, call("list_dir", json!({"path": "reports"})));
    let mut o = options(Mode::Auto);
    o.max_replans = 1;
    o.agents = vec![AgentProfile::worker().max_turns(2)];
    let agent = folder.builder(model, o).build();
    agent.run_plan("name the supplier", agent_plan("worker")).await
}

/// When the agent step that was to find the supplier fails, a revision that
/// only reasons (and writes what it reasoned) would invent the name and report
/// `succeeded`. It is refused with why, and the run ends with the truth.
#[tokio::test]
async fn a_failed_agent_step_is_not_replaced_by_a_guess() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    let guess = json!({"goal": "name the supplier", "steps": [
        {"id": "g1", "description": "name the supplier", "tool": null, "args": {}, "depends_on": []},
        {"id": "g2", "description": "save it", "tool": "write_file",
         "args": {"path": "supplier.txt", "content": "{{g1}}"}, "depends_on": ["g1"]}
    ]});
    model.replies(
        Role::Replanner,
        vec![
            ScriptedReply::json(&guess),
            ScriptedReply::json(&json!({"goal": "name the supplier", "steps": [],
                "infeasible": "the reports could not be read"})),
        ],
    );
    model.always(Role::Executor, ScriptedReply::text("Acme Guesswork Inc."));
    let report = run_a_failing_agent_step(&folder, &model).await;
    assert_eq!(report.status, RunStatus::Infeasible, "{:?}", report.error);
    assert!(!folder.dir.path().join("supplier.txt").exists());
    let asks = model.requests_from(Role::Replanner);
    assert_eq!(asks.len(), 2, "the guess is sent back once");
    let again = serde_json::to_string(&asks[1].messages).unwrap();
    assert!(again.contains("agent step s1 failed to find out"), "{again}");
    assert!(again.contains("would only guess it"), "{again}");
}

/// Looking again another way is a fine revision after a failed agent step.
#[tokio::test]
async fn a_failed_agent_step_may_be_replaced_by_a_read() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.reply(
        Role::Replanner,
        ScriptedReply::json(&json!({"goal": "name the supplier", "steps": [
            {"id": "r1", "description": "read b", "tool": "read_file", "args": {"path": "reports/b.txt"}, "depends_on": []}
        ]})),
    );
    model.always(Role::Synthesizer, ScriptedReply::text("Acme Widgets Ltd."));
    let report = run_a_failing_agent_step(&folder, &model).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(model.requests_from(Role::Replanner).len(), 1);
    assert_eq!(report.step("r1").unwrap().status, planexec::StepStatus::Succeeded);
}

/// A fetch over the network looks too: the revision is taken as it is (the
/// fetch itself then fails here, with nothing listening).
#[tokio::test]
async fn a_failed_agent_step_may_be_replaced_by_a_fetch() {
    let folder = Folder::new();
    let model = Arc::new(ScriptedModel::new());
    model.reply(
        Role::Replanner,
        ScriptedReply::json(&json!({"goal": "name the supplier", "steps": [
            {"id": "f1", "description": "fetch the supplier list", "tool": "http_get",
             "args": {"url": "http://127.0.0.1:9/suppliers"}, "depends_on": []}
        ]})),
    );
    let report = run_a_failing_agent_step(&folder, &model).await;
    assert_eq!(model.requests_from(Role::Replanner).len(), 1, "{:?}", report.error);
    assert_eq!(report.plans.len(), 2, "the fetch revision was adopted");
    assert!(report.step("f1").is_some(), "{:?}", report.error);
}

/// The name of a file the agent listed and never read is where the answer
/// is, not the answer: it is asked about once, and given again it fails the
/// step instead of being written on as the work.
#[tokio::test]
async fn the_name_of_a_file_it_never_read_is_asked_about_once() {
    let folder = Folder::new();
    std::fs::write(folder.dir.path().join("reports/n.txt"), "41").unwrap();
    let (report, model) = run_number_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("\"reports/n.txt\""),
            call("read_file", json!({"path": "reports/n.txt"})),
            ScriptedReply::text("41"),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("41")));
    assert!(turn_text(&model, 2).contains("reports/n.txt is the name of a file, not what it holds"));

    let (report, _) = run_number_agent_with(
        &folder,
        vec![
            call("list_dir", json!({"path": "reports"})),
            ScriptedReply::text("reports/n.txt"),
            ScriptedReply::text("reports/n.txt"),
        ],
    )
    .await;
    assert_ne!(report.status, RunStatus::Succeeded);
    let error = report.step("s1").unwrap().error.clone().unwrap_or_default();
    assert!(
        error.contains("the name of a file it did not read (reports/n.txt)"),
        "{error}"
    );

    // Once the file was read, its name is an answer like any other.
    let (report, _) = run_number_agent_with(
        &folder,
        vec![
            call("read_file", json!({"path": "reports/n.txt"})),
            ScriptedReply::text("reports/n.txt"),
        ],
    )
    .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
}

/// Several file names an agent listed are a listing, not the name of one
/// unread file: the step's answer stands (the check took a glob's last match
/// for a name and failed the step).
#[tokio::test]
async fn file_names_on_several_lines_are_a_listing_not_an_unread_name() {
    let folder = Folder::new();
    std::fs::write(folder.dir.path().join("reports/n.txt"), "41").unwrap();
    std::fs::write(folder.dir.path().join("reports/m.txt"), "7").unwrap();
    let model = Arc::new(ScriptedModel::new());
    model.replies(
        Role::Agent,
        vec![
            call("glob", json!({"pattern": "reports/*.txt"})),
            ScriptedReply::text("reports/m.txt\nreports/n.txt"),
        ],
    );
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let agent = folder.builder(&model, options(Mode::Auto)).build();
    let mut plan = agent_plan("worker");
    plan.steps[0].description = "find the reports under reports/ and return them".into();
    let report = agent.run_plan("t", plan).await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(
        model.requests_from(Role::Agent).len(),
        2,
        "no question asked about the answer"
    );
    assert_eq!(
        report.step("s1").unwrap().output,
        Some(json!("reports/m.txt\nreports/n.txt"))
    );
}

/// Like [`run_agent_with`], for a step that asks what a file holds.
async fn run_number_agent_with(
    folder: &Folder,
    replies: Vec<ScriptedReply>,
) -> (planexec::RunReport, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new());
    model.replies(Role::Agent, replies);
    model.always(Role::Synthesizer, ScriptedReply::text("ok"));
    let agent = folder.builder(&model, options(Mode::Auto)).build();
    let mut plan = agent_plan("worker");
    plan.steps[0].description = "find the file under reports/ that holds a number and return only that number".into();
    let report = agent.run_plan("t", plan).await;
    (report, model)
}
