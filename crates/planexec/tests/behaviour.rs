//! Behaviour snapshots: every strategy, on the bench workload and on the
//! paths a run can take (a failing tool, the replan bound, a repaired call, a
//! reasoning step with an `expected` check, approval with feedback, edits and
//! rejection, clarifying questions, plan mode, a declined confirmation, a
//! budget, cancellation, resume), recorded as three things that must not
//! change when the code is reorganised:
//!
//! - the event stream, in order;
//! - every write to the ledger, in order (a journal kept by a store wrapper);
//! - the JSON report of each run.
//!
//! The model is the in-process scripted model and the test runs on one
//! thread, so the interleaving of steps, streamed plans and ledger writes is
//! the same on every run. Times and run ids are normalised; system prompts and
//! structured-output schemas are kept once per file by hash.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test -p planexec --test behaviour` rewrites the
//! files and then fails, so a run with it set can never pass by comparing a
//! file with itself.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use planexec::llm::scripted::{ScriptedModel, ScriptedReply};
use planexec::policy::PlanCheck;
use planexec::store::{
    Decision, Lease, ModelExchange, RunEnd, RunFilter, RunHeader, RunSummary, StepStart, StoredRun, Waiting,
};
use planexec::{
    Agent, AgentBuilder, Approval, Approver, Budget, CancelToken, Effect, LlmError, MemoryStore, Mode, Plan,
    ResumeOptions, Role, RunOptions, RunReport, RunStore, Step, StepResult, StepSelection, StoreError, Strategy, Tool,
    ToolError, ToolRegistry,
};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// The ledger journal: every write, in order.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct JournalStore {
    inner: MemoryStore,
    journal: Mutex<Vec<Value>>,
}

impl JournalStore {
    fn log(&self, op: &str, fields: Value) {
        let mut entry = json!({ "op": op });
        if let (Some(e), Some(f)) = (entry.as_object_mut(), fields.as_object()) {
            e.extend(f.clone());
        }
        self.journal.lock().unwrap().push(entry);
    }
}

#[async_trait]
impl RunStore for JournalStore {
    fn describe(&self) -> String {
        "journal".to_string()
    }
    async fn create_run(&self, run: &RunHeader) -> Result<(), StoreError> {
        self.log("create_run", json!({ "header": run }));
        self.inner.create_run(run).await
    }
    async fn add_plan(&self, run_id: &str, version: &planexec::PlanVersion, replans: u32) -> Result<(), StoreError> {
        self.log("add_plan", json!({ "version": version, "replans": replans }));
        self.inner.add_plan(run_id, version, replans).await
    }
    async fn approve_plan(&self, run_id: &str, version: u32) -> Result<(), StoreError> {
        self.log("approve_plan", json!({ "version": version }));
        self.inner.approve_plan(run_id, version).await
    }
    async fn set_clarifications(
        &self,
        run_id: &str,
        clarifications: &[planexec::report::Clarification],
    ) -> Result<(), StoreError> {
        self.log("set_clarifications", json!({ "clarifications": clarifications }));
        self.inner.set_clarifications(run_id, clarifications).await
    }
    async fn step_started(&self, run_id: &str, start: &StepStart) -> Result<(), StoreError> {
        self.log("step_started", json!({ "start": start }));
        self.inner.step_started(run_id, start).await
    }
    async fn step_finished(
        &self,
        run_id: &str,
        seq: u64,
        plan_version: u32,
        result: &StepResult,
    ) -> Result<(), StoreError> {
        self.log(
            "step_finished",
            json!({ "seq": seq, "plan_version": plan_version, "result": result }),
        );
        self.inner.step_finished(run_id, seq, plan_version, result).await
    }
    async fn record_exchange(&self, run_id: &str, exchange: &ModelExchange) -> Result<(), StoreError> {
        self.log("record_exchange", json!({ "exchange": exchange }));
        self.inner.record_exchange(run_id, exchange).await
    }
    async fn finish_run(&self, run_id: &str, end: &RunEnd) -> Result<(), StoreError> {
        self.log("finish_run", json!({ "end": end }));
        self.inner.finish_run(run_id, end).await
    }
    async fn reopen_run(&self, run_id: &str) -> Result<(), StoreError> {
        self.log("reopen_run", json!({}));
        self.inner.reopen_run(run_id).await
    }
    async fn load_run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError> {
        self.log("load_run", json!({}));
        self.inner.load_run(run_id).await
    }
    async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.inner.list_runs(filter).await
    }
    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        self.inner.delete_run(run_id).await
    }
    async fn set_waiting(&self, run_id: &str, waiting: Option<&Waiting>) -> Result<(), StoreError> {
        self.log("set_waiting", json!({ "waiting": waiting }));
        self.inner.set_waiting(run_id, waiting).await
    }
    async fn add_decision(&self, run_id: &str, decision: &Decision) -> Result<u64, StoreError> {
        self.log("add_decision", json!({ "decision": decision }));
        self.inner.add_decision(run_id, decision).await
    }
    async fn load_decisions(&self, run_id: &str) -> Result<Vec<Decision>, StoreError> {
        self.inner.load_decisions(run_id).await
    }
    // The lease is the process's, not the run's record: left out of the journal
    // (its heartbeat's timing would make the snapshots flaky).
    async fn take_lease(&self, run_id: &str, lease: &Lease, now: u64) -> Result<Option<Lease>, StoreError> {
        self.inner.take_lease(run_id, lease, now).await
    }
    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        self.inner.release_lease(run_id, owner).await
    }
    async fn save_template(&self, template: &planexec::templates::PlanTemplate) -> Result<(), StoreError> {
        self.inner.save_template(template).await
    }
    async fn list_templates(&self) -> Result<Vec<planexec::templates::PlanTemplate>, StoreError> {
        self.inner.list_templates().await
    }
    async fn delete_template(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_template(id).await
    }
}

// ---------------------------------------------------------------------------
// Tools: deterministic, instant, and counting.
// ---------------------------------------------------------------------------

/// `fetch`: a ~1 KB document about its input (the bench workload's tool).
struct Fetch;

#[async_trait]
impl Tool for Fetch {
    fn name(&self) -> &str {
        "fetch"
    }
    fn description(&self) -> &str {
        "fetches the document named by `input`"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string", "description": "what to fetch"}}, "required": ["input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let topic: String = args["input"].as_str().unwrap_or("").chars().take(40).collect();
        let line = format!("Notes on {topic}: figures, dates and remarks gathered for the report. ");
        Ok(json!(line.repeat(1000 / line.len() + 1)))
    }
}

/// `echo`: echoes its input; fails on inputs containing `broken` (for good),
/// `bad` (invalid arguments a model may fix) or, the first time, `flaky`.
#[derive(Default)]
struct Echo {
    flaky_seen: Mutex<bool>,
}

#[async_trait]
impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "echoes its input"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let input = args["input"].as_str().unwrap_or_default().to_string();
        if input.contains("broken") {
            return Err(ToolError::failed("broken is broken"));
        }
        if input.contains("bad") {
            return Err(ToolError::invalid_args(format!("`{input}` is not a good input")));
        }
        if input.contains("flaky") && !std::mem::replace(&mut *self.flaky_seen.lock().unwrap(), true) {
            return Err(ToolError::retryable("the service is busy"));
        }
        Ok(json!(format!("echo {input}")))
    }
}

/// `save`: writes the workspace (a side effect); `stall` in its text stops the
/// run from outside while the call is in flight.
struct Save {
    cancel: CancelToken,
    /// Only the first `stall` stalls (a resumed session's call goes through).
    stalled: Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait]
impl Tool for Save {
    fn name(&self) -> &str {
        "save"
    }
    fn description(&self) -> &str {
        "saves text"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false})
    }
    fn effect(&self) -> Effect {
        Effect::WritesWorkspace
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let text = args["text"].as_str().unwrap_or_default().to_string();
        if text.contains("stall") && !self.stalled.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.cancel.cancel();
            std::future::pending::<()>().await;
        }
        Ok(json!({ "saved": text }))
    }
}

fn tools(cancel: &CancelToken, stalled: &Arc<std::sync::atomic::AtomicBool>) -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(Fetch)).unwrap();
    reg.register(Arc::new(Echo::default())).unwrap();
    reg.register(Arc::new(Save {
        cancel: cancel.clone(),
        stalled: stalled.clone(),
    }))
    .unwrap();
    reg
}

// ---------------------------------------------------------------------------
// A scripted person.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Person {
    reviews: Mutex<VecDeque<Approval>>,
    answers: Option<Vec<String>>,
    confirm: bool,
    rerun: Option<bool>,
}

#[async_trait]
impl Approver for Person {
    async fn review(&self, _plan: &Plan, _check: PlanCheck<'_>) -> Approval {
        self.reviews.lock().unwrap().pop_front().unwrap_or(Approval::Approve)
    }
    fn can_answer_questions(&self) -> bool {
        self.answers.is_some()
    }
    async fn answer_questions(&self, _questions: &[String]) -> Option<Vec<String>> {
        self.answers.clone()
    }
    async fn confirm_step(&self, _step: &Step, _args: &Value, _effect: Effect) -> bool {
        self.confirm
    }
    async fn rerun_inflight(&self, _step: &Step, _args: Option<&Value>) -> Option<bool> {
        self.rerun
    }
}

// ---------------------------------------------------------------------------
// The harness: one scripted model, one journal, one event log per case.
// ---------------------------------------------------------------------------

struct Harness {
    model: Arc<ScriptedModel>,
    store: Arc<JournalStore>,
    events: Arc<Mutex<Vec<Value>>>,
    cancel: CancelToken,
    stalled: Arc<std::sync::atomic::AtomicBool>,
    reports: Vec<Value>,
}

fn options(strategy: Strategy) -> RunOptions {
    RunOptions {
        strategy,
        mode: Mode::Auto,
        retry_backoff: Duration::from_millis(1),
        ..RunOptions::default()
    }
}

impl Harness {
    fn new() -> Harness {
        Harness {
            model: Arc::new(ScriptedModel::new()),
            store: Arc::new(JournalStore::default()),
            events: Arc::default(),
            cancel: CancelToken::new(),
            stalled: Arc::default(),
            reports: Vec::new(),
        }
    }

    fn builder(&self, options: RunOptions) -> AgentBuilder {
        let events = self.events.clone();
        let bus = planexec::EventBus::new();
        bus.on_event(move |e| events.lock().unwrap().push(serde_json::to_value(e).unwrap()));
        Agent::builder(self.model.clone(), "scripted")
            .tools(tools(&self.cancel, &self.stalled))
            .options(options)
            .store(self.store.clone())
            .events(bus)
    }

    fn agent(&self, options: RunOptions) -> Agent {
        self.builder(options).build()
    }

    async fn run(&mut self, agent: &Agent, task: &str) -> RunReport {
        let report = agent.run_cancellable(task, None, &self.cancel).await;
        self.reports.push(serde_json::to_value(&report).unwrap());
        report
    }

    async fn run_plan(&mut self, agent: &Agent, task: &str, plan: Value) -> RunReport {
        let plan: Plan = serde_json::from_value(plan).unwrap();
        let report = agent.run_cancellable(task, Some(plan), &self.cancel).await;
        self.reports.push(serde_json::to_value(&report).unwrap());
        report
    }

    async fn resume(&mut self, agent: &Agent, run_id: &str, options: &ResumeOptions) -> RunReport {
        let report = agent.resume(run_id, options, &CancelToken::new()).await.unwrap();
        self.reports.push(serde_json::to_value(&report).unwrap());
        report
    }

    fn snapshot(&self) -> Value {
        let mut texts = BTreeMap::new();
        let ledger: Vec<Value> = self
            .store
            .journal
            .lock()
            .unwrap()
            .iter()
            .map(|e| fold_schemas(e.clone(), &mut texts))
            .collect();
        let snapshot = json!({
            "events": *self.events.lock().unwrap(),
            "ledger": ledger,
            "reports": self.reports,
        });
        let mut snapshot = fold_long_strings(normalise(snapshot), &mut texts);
        snapshot["texts"] = json!(texts);
        snapshot
    }
}

/// A 64-bit FNV-1a hash, to name a long text once.
fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("#{h:016x}")
}

/// Keep structured-output schemas once, by hash.
fn fold_schemas(mut entry: Value, texts: &mut BTreeMap<String, Value>) -> Value {
    if let Some(schema) = entry.pointer_mut("/exchange/request/response_format/schema") {
        let key = hash(&schema.to_string());
        texts.insert(key.clone(), schema.clone());
        *schema = json!(key);
    }
    entry
}

/// Keep long strings (system prompts, documents, prompts that hold them) once, by hash.
fn fold_long_strings(value: Value, texts: &mut BTreeMap<String, Value>) -> Value {
    match value {
        Value::String(s) if s.len() > 400 => {
            let key = hash(&s);
            texts.insert(key.clone(), json!(s));
            json!(key)
        }
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, fold_long_strings(v, texts))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| fold_long_strings(v, texts)).collect()),
        other => other,
    }
}

/// Zero the times and name the run ids by order of appearance.
fn normalise(value: Value) -> Value {
    let mut ids: Vec<String> = Vec::new();
    normalise_value(value, &mut ids)
}

const TIME_KEYS: [&str; 7] = [
    "started_at",
    "finished_at",
    "at",
    "latency_ms",
    "elapsed_ms",
    "updated_at",
    "time_ms",
];

fn normalise_value(value: Value, ids: &mut Vec<String>) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = if TIME_KEYS.contains(&k.as_str()) && v.is_number() {
                        json!(0)
                    } else if k == "latency_ms" || k == "elapsed_ms" {
                        v
                    } else {
                        normalise_value(v, ids)
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| normalise_value(v, ids)).collect()),
        Value::String(s) => Value::String(replace_run_ids(&s, ids)),
        other => other,
    }
}

/// `run-<11 hex>-<4 hex>` becomes `<run 1>`, `<run 2>`, ... in order of appearance.
fn replace_run_ids(s: &str, ids: &mut Vec<String>) -> String {
    let is_id = |t: &str| {
        let b = t.as_bytes();
        b.len() == 20
            && t.starts_with("run-")
            && b[15] == b'-'
            && t[4..15].bytes().all(|c| c.is_ascii_hexdigit())
            && t[16..20].bytes().all(|c| c.is_ascii_hexdigit())
    };
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with("run-") && s.len() >= i + 20 && s.is_char_boundary(i + 20) && is_id(&s[i..i + 20]) {
            let id = s[i..i + 20].to_string();
            let n = match ids.iter().position(|x| *x == id) {
                Some(n) => n,
                None => {
                    ids.push(id);
                    ids.len() - 1
                }
            };
            out.push_str(&format!("<run {}>", n + 1));
            i += 20;
        } else {
            let c = s[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/behaviour")
        .join(format!("{name}.json"))
}

/// The first place two JSON values differ, as a JSON pointer with both sides.
fn first_difference(expected: &Value, actual: &Value, at: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys()) {
                let path = format!("{at}/{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, &path) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some(format!("{path}: expected {x:?}, got {y:?}")),
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if let Some(d) = first_difference(x, y, &format!("{at}/{i}")) {
                    return Some(d);
                }
            }
            (a.len() != b.len()).then(|| format!("{at}: expected {} items, got {}", a.len(), b.len()))
        }
        (x, y) if x != y => Some(format!("{at}: expected {x}, got {y}")),
        _ => None,
    }
}

fn check(name: &str, harness: &Harness) {
    let actual = harness.snapshot();
    let path = snapshot_path(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&actual).unwrap() + "\n").unwrap();
        panic!(
            "{name}: snapshot written to {}; run again without UPDATE_SNAPSHOTS to check it",
            path.display()
        );
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{name}: no snapshot at {}; write it with UPDATE_SNAPSHOTS=1",
            path.display()
        )
    });
    let expected: Value = serde_json::from_str(&text).unwrap();
    if let Some(difference) = first_difference(&expected, &actual, "") {
        let actual_path = std::env::temp_dir().join(format!("planexec-behaviour-{name}.json"));
        std::fs::write(&actual_path, serde_json::to_string_pretty(&actual).unwrap()).unwrap();
        panic!(
            "{name}: behaviour changed at {difference}\n(the whole run is in {})",
            actual_path.display()
        );
    }
}

// ---------------------------------------------------------------------------
// Scripts.
// ---------------------------------------------------------------------------

fn step(id: &str, tool: Option<&str>, args: Value, deps: &[&str]) -> Value {
    json!({"id": id, "description": format!("do {id}"), "tool": tool, "args": args, "depends_on": deps})
}

fn echo(id: &str, input: &str, deps: &[&str]) -> Value {
    step(id, Some("echo"), json!({ "input": input }), deps)
}

fn plan(steps: Vec<Value>) -> Value {
    json!({"goal": "test goal", "steps": steps})
}

fn text(s: &str) -> ScriptedReply {
    ScriptedReply::text(s)
}

fn planned(p: &Value) -> ScriptedReply {
    ScriptedReply::json(p).streamed(6)
}

/// The strategies benchmark's task: an index, four regions in parallel, a
/// merge, an audit and a report.
fn fanout_steps() -> Vec<Value> {
    let fetch = |id: &str, input: &str, deps: &[&str]| json!({"id": id, "description": format!("fetch {input}"), "tool": "fetch", "args": {"input": input}, "depends_on": deps});
    vec![
        fetch("s1", "the index", &[]),
        fetch("s2", "north region", &["s1"]),
        fetch("s3", "south region", &["s1"]),
        fetch("s4", "east region", &["s1"]),
        fetch("s5", "west region", &["s1"]),
        fetch("s6", "merged totals", &["s2", "s3", "s4", "s5"]),
        fetch("s7", "the audit", &["s6"]),
        fetch("s8", "the final figures", &["s7"]),
    ]
}

async fn fanout(strategy: Strategy) {
    let mut h = Harness::new();
    let m = &h.model;
    let all = fanout_steps();
    let whole = |from: usize| json!({"goal": "Write the regional report", "steps": all[from..].to_vec()});
    match strategy {
        Strategy::React => {
            let mut replies: Vec<ScriptedReply> = all
                .iter()
                .map(|s| ScriptedReply::tool_call("fetch", &s["args"]))
                .collect();
            replies.push(text("The regional report: all four regions merged and audited."));
            m.replies(Role::Executor, replies);
        }
        _ => {
            m.always(Role::Planner, ScriptedReply::json(&whole(0)).streamed(16));
            m.replies(
                Role::Replanner,
                (1..8).map(|k| ScriptedReply::json(&whole(k))).collect(),
            );
            m.always(
                Role::Synthesizer,
                text("The regional report: all four regions merged and audited."),
            );
        }
    }
    let agent = h.agent(RunOptions {
        max_replans: 8,
        ..options(strategy)
    });
    let report = h
        .run(&agent, "Write the regional report from the index and the four regions")
        .await;
    assert!(report.succeeded(), "{strategy}: {:?}", report.error);
    check(&format!("fanout-{strategy}"), &h);
}

async fn failure(strategy: Strategy) {
    let mut h = Harness::new();
    let m = &h.model;
    let failing = vec![
        echo("s1", "a", &[]),
        echo("s2", "broken b", &["s1"]),
        echo("s3", "{{s2}}", &["s2"]),
    ];
    match strategy {
        Strategy::React => m.replies(
            Role::Executor,
            vec![
                ScriptedReply::tool_call("echo", &json!({"input": "a"})),
                ScriptedReply::tool_call("echo", &json!({"input": "broken b"})),
                ScriptedReply::tool_call("no_such_tool", &json!({"input": "b"})),
                ScriptedReply::tool_call("echo", &json!({"input": "b again"})),
                text("Recovered: echo b again."),
            ],
        ),
        _ => {
            m.reply(Role::Planner, planned(&plan(failing)));
            m.replies_containing(
                Role::Replanner,
                "has just completed",
                vec![ScriptedReply::json(&plan(vec![
                    echo("s2", "broken b", &["s1"]),
                    echo("s3", "{{s2}}", &["s2"]),
                ]))],
            );
            m.always_containing(
                Role::Replanner,
                "Error: broken is broken",
                ScriptedReply::json(&plan(vec![echo("s4", "b again", &[]), echo("s5", "{{s4}}", &["s4"])])),
            );
            m.always(
                Role::Replanner,
                ScriptedReply::json(&plan(vec![echo("s5", "{{s4}}", &["s4"])])),
            );
            m.reply(Role::Synthesizer, text("Recovered: echo b again."));
        }
    }
    // The replanner's path: a failed step goes to it at once.
    let agent = h.agent(RunOptions {
        max_replans: 3,
        recover: planexec::Recover::Replan,
        ..options(strategy)
    });
    let report = h.run(&agent, "get b").await;
    assert!(report.succeeded(), "{strategy}: {:?}", report.error);
    check(&format!("failure-{strategy}"), &h);
}

/// The replan bound is reached; then the run is resumed with a larger bound.
async fn bound_then_resume(strategy: Strategy) {
    let mut h = Harness::new();
    let m = &h.model;
    match strategy {
        Strategy::React => m.replies(
            Role::Executor,
            vec![
                ScriptedReply::tool_call("echo", &json!({"input": "broken 1"})),
                ScriptedReply::tool_call("echo", &json!({"input": "broken 2"})),
                ScriptedReply::tool_call("echo", &json!({"input": "fine 3"})),
                text("done with fine 3"),
            ],
        ),
        _ => {
            m.reply(
                Role::Planner,
                planned(&plan(vec![echo("s1", "broken 1", &[]), echo("s2", "x", &[])])),
            );
            m.replies(
                Role::Replanner,
                vec![
                    ScriptedReply::json(&plan(vec![echo("s3", "broken 2", &[])])),
                    ScriptedReply::json(&plan(vec![echo("s4", "fine 3", &[])])),
                ],
            );
            m.always(Role::Synthesizer, text("done with fine 3"));
        }
    }
    let agent = h.agent(RunOptions {
        max_replans: 1,
        recover: planexec::Recover::Replan,
        ..options(strategy)
    });
    let report = h.run(&agent, "try").await;
    assert_eq!(report.status, planexec::RunStatus::Failed, "{strategy}");
    let more = h.agent(RunOptions {
        max_replans: 3,
        recover: planexec::Recover::Replan,
        ..options(strategy)
    });
    let resumed = h.resume(&more, &report.run_id, &ResumeOptions::default()).await;
    assert!(resumed.succeeded(), "{strategy}: {:?}", resumed.error);
    check(&format!("bound-resume-{strategy}"), &h);
}

/// A call with bad arguments recovered by an agent step, a retried flaky
/// call, and a reasoning step whose result is checked against `expected`.
async fn repair_and_reasoning(strategy: Strategy) {
    let mut h = Harness::new();
    let m = &h.model;
    let mut reasoning = step("s3", None, json!({}), &["s1", "s2"]);
    reasoning["expected"] = json!("both results named");
    let steps = vec![echo("s1", "bad input", &[]), echo("s2", "flaky", &[]), reasoning];
    m.reply(Role::Planner, planned(&plan(steps)));
    // The failed call is recovered by an agent step (`recover`); a react
    // run's one model makes the call again itself.
    let again = ScriptedReply::tool_call("echo", &json!({"input": "good input"}));
    let mut executor = vec![
        text("echo good input, echo flaky"),
        ScriptedReply::json(&json!({"meets": true, "reason": "both are there"})),
    ];
    match strategy {
        Strategy::React => executor.insert(0, again),
        _ => m.replies(Role::Agent, vec![again]),
    }
    m.replies(Role::Executor, executor);
    m.reply(
        Role::Replanner,
        ScriptedReply::json(&plan(vec![echo("s9", "instead", &[])])),
    );
    m.always(Role::Synthesizer, text("Both: echo good input, echo flaky [s3]."));
    let agent = h.agent(options(strategy));
    h.run(&agent, "combine").await;
    check(&format!("repair-reasoning-{strategy}"), &h);
}

// ---------------------------------------------------------------------------
// The cases.
// ---------------------------------------------------------------------------

macro_rules! per_strategy {
    ($($case:ident),*) => {
        $(
            mod $case {
                use super::*;
                #[tokio::test]
                async fn plan_execute() {
                    super::$case(Strategy::PlanExecute).await
                }
                #[tokio::test]
                async fn replan_each_step() {
                    super::$case(Strategy::ReplanEachStep).await
                }
                #[tokio::test]
                async fn rewoo() {
                    super::$case(Strategy::Rewoo).await
                }
                #[tokio::test]
                async fn compiler() {
                    super::$case(Strategy::Compiler).await
                }
                #[tokio::test]
                async fn react() {
                    super::$case(Strategy::React).await
                }
            }
        )*
    };
}

per_strategy!(fanout, failure, bound_then_resume, repair_and_reasoning);

#[tokio::test]
async fn replan_each_step_revises_then_finishes_early() {
    let mut h = Harness::new();
    let m = &h.model;
    m.reply(
        Role::Planner,
        planned(&plan(vec![
            echo("s1", "a", &[]),
            echo("s2", "b", &["s1"]),
            echo("s3", "c", &["s2"]),
        ])),
    );
    m.replies(
        Role::Replanner,
        vec![
            ScriptedReply::json(&plan(vec![echo("x1", "x {{s1}}", &["s1"]), echo("x2", "y", &["x1"])])),
            ScriptedReply::json(&json!({"goal": "g", "steps": []})),
        ],
    );
    m.reply(Role::Synthesizer, text("done"));
    let agent = h.agent(options(Strategy::ReplanEachStep));
    let report = h.run(&agent, "go").await;
    assert!(report.succeeded(), "{:?}", report.error);
    check("replan-each-step-revise-finish", &h);
}

#[tokio::test]
async fn compiler_joiner_replans_and_a_cut_short_stream_is_planned_again() {
    let mut h = Harness::new();
    let m = &h.model;
    m.reply(
        Role::Planner,
        planned(&plan(vec![
            echo("s1", "a", &[]),
            step("s2", Some("no_such_tool"), json!({}), &["s1"]),
        ])),
    );
    m.replies(
        Role::Replanner,
        vec![
            ScriptedReply::json(&plan(vec![echo("s3", "{{s1}} again", &["s1"])])),
            ScriptedReply::json(&plan(vec![echo("s4", "more", &[])])),
        ],
    );
    m.replies(
        Role::Synthesizer,
        vec![text("REPLAN: more is missing"), text("a, again and more")],
    );
    let agent = h.agent(RunOptions {
        max_replans: 3,
        ..options(Strategy::Compiler)
    });
    let report = h.run(&agent, "go").await;
    assert!(report.succeeded(), "{:?}", report.error);
    check("compiler-cut-short-joiner", &h);
}

#[tokio::test]
async fn rewoo_sends_a_reasoning_step_back() {
    let mut h = Harness::new();
    let m = &h.model;
    m.replies(
        Role::Planner,
        vec![
            ScriptedReply::json(&plan(vec![echo("s1", "a", &[]), step("s2", None, json!({}), &["s1"])])),
            ScriptedReply::json(&plan(vec![echo("s1", "a", &[]), echo("s2", "{{s1}}!", &["s1"])])),
        ],
    );
    m.reply(Role::Synthesizer, text("echo echo a!"));
    let agent = h.agent(options(Strategy::Rewoo));
    h.run(&agent, "go").await;
    check("rewoo-reasoning-sent-back", &h);
}

#[tokio::test]
async fn given_plans_invalid_plans_and_react() {
    let mut h = Harness::new();
    h.model.always(Role::Synthesizer, text("ran the given plan"));
    let given = plan(vec![echo("s1", "a", &[]), echo("s2", "{{s1}}", &["s1"])]);
    let agent = h.agent(options(Strategy::PlanExecute));
    h.run_plan(&agent, "given", given.clone()).await;
    let bad = plan(vec![
        echo("s1", "{{s9}}", &[]),
        step("s2", Some("nope"), json!({}), &["s2"]),
    ]);
    h.run_plan(&agent, "invalid", bad).await;
    let react = h.agent(options(Strategy::React));
    h.run_plan(&react, "react given", given).await;
    check("given-plans", &h);
}

#[tokio::test]
async fn approval_feedback_edit_and_reject() {
    let mut h = Harness::new();
    let m = &h.model;
    m.replies(
        Role::Planner,
        vec![
            ScriptedReply::json(&plan(vec![echo("s1", "first", &[])])),
            ScriptedReply::json(&plan(vec![echo("s1", "rejected", &[])])),
        ],
    );
    m.reply(
        Role::Replanner,
        ScriptedReply::json(&plan(vec![echo("s1", "after feedback", &[])])),
    );
    m.always(Role::Synthesizer, text("edited plan ran"));
    let person = Person {
        reviews: Mutex::new(VecDeque::from([
            Approval::Feedback("use another input".to_string()),
            Approval::Edit(serde_json::from_value(plan(vec![echo("e1", "edited", &[])])).unwrap()),
            Approval::Approve,
            Approval::Reject,
        ])),
        confirm: true,
        ..Person::default()
    };
    let agent = h
        .builder(options(Strategy::PlanExecute))
        .approver(Arc::new(person))
        .build();
    let first = h.run(&agent, "reviewed").await;
    assert!(first.succeeded(), "{:?}", first.error);
    let second = h.run(&agent, "rejected").await;
    assert_eq!(second.status, planexec::RunStatus::Rejected);
    check("approval-feedback-edit-reject", &h);
}

#[tokio::test]
async fn clarifying_questions_and_an_infeasible_task() {
    let mut h = Harness::new();
    let m = &h.model;
    m.replies(
        Role::Planner,
        vec![
            ScriptedReply::json(&json!({"goal": "g", "steps": [], "questions": ["Which file?"]})),
            ScriptedReply::json(&plan(vec![echo("s1", "notes.txt", &[])])),
            ScriptedReply::json(&json!({"goal": "g", "steps": [], "infeasible": "no tool can fly"})),
        ],
    );
    m.always(Role::Synthesizer, text("read notes.txt"));
    let person = Person {
        answers: Some(vec!["notes.txt".to_string()]),
        confirm: true,
        ..Person::default()
    };
    let agent = h
        .builder(options(Strategy::PlanExecute))
        .approver(Arc::new(person))
        .build();
    h.run(&agent, "read the file").await;
    h.run(&agent, "fly").await;
    check("questions-infeasible", &h);
}

#[tokio::test]
async fn plan_mode_and_a_declined_confirmation() {
    let mut h = Harness::new();
    let m = &h.model;
    m.replies(
        Role::Planner,
        vec![
            ScriptedReply::json(&plan(vec![step("s1", Some("save"), json!({"text": "x"}), &[])])),
            ScriptedReply::json(&plan(vec![echo("s1", "a", &[])])),
            ScriptedReply::json(&plan(vec![
                echo("s1", "a", &[]),
                step("s2", Some("save"), json!({"text": "{{s1}}"}), &["s1"]),
            ])),
        ],
    );
    m.always(
        Role::Replanner,
        ScriptedReply::json(&plan(vec![echo("s3", "instead", &[])])),
    );
    m.always(Role::Synthesizer, text("read a"));
    let plan_mode = h.agent(RunOptions {
        mode: Mode::Plan,
        ..options(Strategy::PlanExecute)
    });
    h.run(&plan_mode, "read only").await;
    let person = Person {
        confirm: false,
        ..Person::default()
    };
    let ask = h
        .builder(RunOptions {
            mode: Mode::Ask,
            ..options(Strategy::PlanExecute)
        })
        .approver(Arc::new(person))
        .build();
    h.run(&ask, "save it").await;
    check("plan-mode-declined", &h);
}

#[tokio::test]
async fn a_token_budget_stops_the_run_and_a_resume_with_more_finishes_it() {
    let mut h = Harness::new();
    let m = &h.model;
    m.reply(
        Role::Planner,
        ScriptedReply::json(&plan(vec![echo("s1", "a", &[]), step("s2", None, json!({}), &["s1"])])),
    );
    m.always(Role::Executor, text("thought about echo a"));
    m.always(Role::Synthesizer, text("thought about it"));
    let tight = h.agent(RunOptions {
        budget: Budget {
            max_tokens: Some(1200),
            ..Budget::default()
        },
        ..options(Strategy::PlanExecute)
    });
    let report = h.run(&tight, "think").await;
    assert_eq!(
        report.status,
        planexec::RunStatus::BudgetExhausted,
        "{:?}",
        report.error
    );
    let roomy = h.agent(RunOptions {
        budget: Budget {
            max_tokens: Some(100_000),
            ..Budget::default()
        },
        ..options(Strategy::PlanExecute)
    });
    let resumed = h.resume(&roomy, &report.run_id, &ResumeOptions::default()).await;
    assert!(resumed.succeeded(), "{:?}", resumed.error);
    check("budget-resume", &h);
}

async fn stopped_mid_effect(name: &str, rerun: bool) {
    let mut h = Harness::new();
    let m = &h.model;
    m.reply(
        Role::Planner,
        ScriptedReply::json(&plan(vec![
            echo("s1", "a", &[]),
            step("s2", Some("save"), json!({"text": "stall {{s1}}"}), &["s1"]),
            echo("s3", "{{s2}}", &["s2"]),
        ])),
    );
    // Taken as done, s2's output is unknown: s3, which uses it, fails with
    // that reason instead of running on `null`, and the replanner routes around it.
    m.always(
        Role::Replanner,
        ScriptedReply::json(&plan(vec![
            echo("s1", "a", &[]),
            step("s2", Some("save"), json!({"text": "stall {{s1}}"}), &["s1"]),
            echo("s4", "saved after {{s1}}", &["s1", "s2"]),
        ])),
    );
    m.always(Role::Synthesizer, text("saved"));
    let agent = h.agent(options(Strategy::PlanExecute));
    let report = h.run(&agent, "save").await;
    assert_eq!(report.status, planexec::RunStatus::Interrupted);
    let selection = if rerun {
        ResumeOptions {
            rerun_inflight: StepSelection::All,
            ..ResumeOptions::default()
        }
    } else {
        ResumeOptions {
            skip_inflight: StepSelection::All,
            ..ResumeOptions::default()
        }
    };
    let resumer = h.agent(options(Strategy::PlanExecute));
    let resumed = h.resume(&resumer, &report.run_id, &selection).await;
    assert_eq!(resumed.status, planexec::RunStatus::Succeeded, "{:?}", resumed.error);
    let s3 = resumed.steps.iter().find(|s| s.id == "s3").expect("s3 is reported");
    if rerun {
        let output = s3.output.as_ref().and_then(Value::as_str).unwrap_or_default();
        assert!(
            output.contains("stall echo a"),
            "s3 got what s2 really returned: {s3:?}"
        );
    } else {
        let error = s3.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("args.input uses the output of s2, which is unknown"),
            "{s3:?}"
        );
        assert!(
            resumed.steps.iter().all(|s| s.output != Some(Value::Null)),
            "no step ran on null"
        );
    }
    check(name, &h);
}

#[tokio::test]
async fn a_run_stopped_mid_effect_resumes_with_the_step_run_again() {
    stopped_mid_effect("inflight-rerun", true).await;
}

#[tokio::test]
async fn a_run_stopped_mid_effect_resumes_with_the_step_taken_as_done() {
    stopped_mid_effect("inflight-skip", false).await;
}

#[tokio::test]
async fn a_model_that_fails_ends_the_run_with_its_error() {
    let mut h = Harness::new();
    h.model.reply(
        Role::Planner,
        ScriptedReply::error(LlmError::Auth("the API key was refused (401)".to_string())),
    );
    h.model.reply(Role::Planner, ScriptedReply::text("not a plan at all"));
    h.model.reply(Role::Planner, ScriptedReply::text("{\"goal\": 3}"));
    h.model.reply(Role::Planner, ScriptedReply::text("still not"));
    let agent = h.agent(options(Strategy::PlanExecute));
    h.run(&agent, "first").await;
    h.run(&agent, "second").await;
    check("model-errors", &h);
}
