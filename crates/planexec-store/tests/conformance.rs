//! One conformance suite for every `RunStore`: the in-memory store, SQLite, and
//! a real PostgreSQL (`PLANEXEC_TEST_POSTGRES_URL`, started by `.ci/run`).
//! Each store must give back exactly what was written, in order, and refuse
//! what makes no sense with an error instead of a panic.

mod common;

use std::sync::Arc;

use planexec::report::{Clarification, PlanVersion, RunStatus};
use planexec::result::{StepResult, StepStatus};
use planexec::store::{ModelExchange, RunEnd, RunFilter, RunHeader, RunStore, StepStart};
use planexec::{MemoryStore, Plan, Role};
use serde_json::json;

fn plan(ids: &[&str]) -> Plan {
    serde_json::from_value(json!({
        "goal": "test",
        "steps": ids.iter().map(|id| json!({"id": id, "description": format!("step {id}"), "tool": "echo", "args": {"input": id}, "depends_on": []})).collect::<Vec<_>>()
    }))
    .unwrap()
}

fn header(id: &str, started_at: u64) -> RunHeader {
    RunHeader {
        run_id: id.to_string(),
        task: format!("task of {id}"),
        options: json!({"max_replans": 2}),
        started_at,
    }
}

fn result(id: &str, status: StepStatus, output: Option<serde_json::Value>) -> StepResult {
    StepResult {
        id: id.to_string(),
        tool: Some("echo".into()),
        agent: None,
        status,
        attempts: 1,
        args: Some(json!({"input": id})),
        output,
        error: (status == StepStatus::Failed).then(|| "boom".to_string()),
        started_at: Some(1_000),
        finished_at: Some(1_050),
        model_calls: 0,
        calls: Vec::new(),
        refused: false,
        worker: None,
    }
}

fn exchange(seq: u64, role: Role, prompt: u64) -> ModelExchange {
    ModelExchange {
        seq,
        role,
        step_id: (role == Role::Executor).then(|| "s2".to_string()),
        model: "m".into(),
        request: json!({"role": role, "model": "m", "messages": [
            {"role": "system", "content": "the same long system prompt every call repeats"},
            {"role": "user", "content": format!("call {seq}")}
        ]}),
        response: Some(
            json!({"content": format!("reply {seq}"), "tool_calls": [], "usage": {"prompt_tokens": prompt, "completion_tokens": 5}}),
        ),
        error: None,
        prompt_tokens: prompt,
        completion_tokens: 5,
        cost: Some(0.25),
        latency_ms: 30,
        at: 2_000 + seq,
    }
}

/// An agent step and its inner calls (`<step>.<n>` rows): the step comes back
/// with its agent, the calls apart from the steps, attached to the step in the
/// report, and an inner call in flight is in flight.
async fn agent_steps(store: &dyn RunStore) {
    store.create_run(&header("run-agent", 20)).await.unwrap();
    let started = |seq, id: &str, tool: Option<&str>, agent: Option<&str>| StepStart {
        seq,
        plan_version: 1,
        step_id: id.into(),
        tool: tool.map(str::to_string),
        agent: agent.map(str::to_string),
        args: tool.map(|_| json!({"input": id})),
        started_at: 1_000 + seq,
    };
    store
        .step_started("run-agent", &started(1, "s1", None, Some("worker")))
        .await
        .unwrap();
    store
        .step_started("run-agent", &started(2, "s1.1", Some("echo"), None))
        .await
        .unwrap();
    store
        .step_finished(
            "run-agent",
            2,
            1,
            &result("s1.1", StepStatus::Succeeded, Some(json!("one"))),
        )
        .await
        .unwrap();
    store
        .step_started("run-agent", &started(3, "s1.2", Some("echo"), None))
        .await
        .unwrap();
    let run = store.load_run("run-agent").await.unwrap().unwrap();
    let ids = |steps: &[planexec::store::StoredStep]| steps.iter().map(|s| s.result.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&run.steps), ["s1"]);
    assert_eq!(run.steps[0].result.agent.as_deref(), Some("worker"));
    assert_eq!(ids(&run.calls), ["s1.1", "s1.2"]);
    let in_flight: Vec<&str> = run.in_flight().iter().map(|s| s.result.id.as_str()).collect();
    assert_eq!(in_flight, ["s1", "s1.2"]);
    let mut finished = result("s1", StepStatus::Succeeded, Some(json!("done")));
    finished.tool = None;
    finished.agent = Some("worker".into());
    store.step_finished("run-agent", 1, 1, &finished).await.unwrap();
    let report = store.load_run("run-agent").await.unwrap().unwrap().report();
    let step = report.step("s1").unwrap();
    assert_eq!(step.agent.as_deref(), Some("worker"));
    let calls: Vec<&str> = step.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(calls, ["s1.1", "s1.2"], "the report puts the calls under their step");
    assert!(report.steps.iter().all(|s| !s.is_inner_call()));
}

/// The whole contract, on one store.
async fn conformance(store: Arc<dyn RunStore>) {
    // A run is created running, with what it was started with.
    store.create_run(&header("run-a", 10)).await.unwrap();
    let run = store.load_run("run-a").await.unwrap().expect("created run is found");
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.task, "task of run-a");
    assert_eq!(run.options, json!({"max_replans": 2}));
    assert_eq!(run.started_at, 10);
    assert!(run.plans.is_empty() && run.steps.is_empty() && run.exchanges.is_empty());
    let again = store.create_run(&header("run-a", 10)).await;
    assert!(again.is_err(), "a second run with the same id is refused");

    // Plan versions, in order, with reasons, the replan count and the approval.
    // A version keeps what the runtime changed in the plan the model wrote.
    let merged = plan(&["s1", "s2"]);
    let v1 = PlanVersion {
        version: 1,
        reason: "initial plan".into(),
        plan: merged.clone(),
        mends: vec![planexec::Mend {
            rule: "same-call".into(),
            step: "s1".into(),
            before: plan(&["s0"]).steps,
            after: Vec::new(),
            note: None,
            agreement: Some(planexec::Agreement {
                programs: 3,
                agreeing: 2,
            }),
            others: plan(&["s9"]).steps,
            kept_flaw: Some("'97' and '121' compared as text".into()),
            list_test: Some(planexec::ListTest {
                file: "out.txt".into(),
                order: planexec::ListOrder::AsInInput,
                each_once: true,
                only_some: false,
            }),
        }],
    };
    let v2 = PlanVersion {
        version: 2,
        reason: "step s2 failed: boom".into(),
        plan: plan(&["s1", "s3"]),
        mends: Vec::new(),
    };
    store.add_plan("run-a", &v1, 0).await.unwrap();
    store.approve_plan("run-a", 1).await.unwrap();
    store.add_plan("run-a", &v2, 1).await.unwrap();
    let clarifications = vec![Clarification {
        question: "Which file?".into(),
        answer: "a.txt".into(),
    }];
    store.set_clarifications("run-a", &clarifications).await.unwrap();

    // Steps: a side-effect step is recorded as started, then finished; a
    // read-only step is recorded once finished.
    let start = StepStart {
        seq: 1,
        plan_version: 1,
        step_id: "s1".into(),
        tool: Some("echo".into()),
        agent: None,
        args: Some(json!({"input": "s1"})),
        started_at: 1_000,
    };
    store.step_started("run-a", &start).await.unwrap();
    let mid = store.load_run("run-a").await.unwrap().unwrap();
    let in_flight: Vec<&str> = mid.in_flight().iter().map(|s| s.result.id.as_str()).collect();
    assert_eq!(in_flight, ["s1"], "a started, unfinished step is in flight");
    assert_eq!(mid.steps[0].result.args, Some(json!({"input": "s1"})));

    let big = json!({"text": "x".repeat(50_000)});
    store
        .step_finished("run-a", 1, 1, &result("s1", StepStatus::Succeeded, Some(big.clone())))
        .await
        .unwrap();
    store
        .step_finished("run-a", 2, 1, &result("s2", StepStatus::Failed, None))
        .await
        .unwrap();
    store
        .step_finished("run-a", 3, 2, &result("s3", StepStatus::Succeeded, Some(big.clone())))
        .await
        .unwrap();

    for (seq, role, prompt) in [
        (1, Role::Planner, 100),
        (2, Role::Executor, 120),
        (3, Role::Synthesizer, 80),
    ] {
        store
            .record_exchange("run-a", &exchange(seq, role, prompt))
            .await
            .unwrap();
    }

    let run = store.load_run("run-a").await.unwrap().unwrap();
    assert_eq!(run.plans, vec![v1.clone(), v2.clone()]);
    assert_eq!(run.replans, 1);
    assert_eq!(run.approved_version, Some(1));
    assert_eq!(run.clarifications, clarifications);
    assert!(run.in_flight().is_empty(), "a finished step is no longer in flight");
    let steps: Vec<(u64, u32, &str, StepStatus)> = run
        .steps
        .iter()
        .map(|s| (s.seq, s.plan_version, s.result.id.as_str(), s.result.status))
        .collect();
    assert_eq!(
        steps,
        [
            (1, 1, "s1", StepStatus::Succeeded),
            (2, 1, "s2", StepStatus::Failed),
            (3, 2, "s3", StepStatus::Succeeded)
        ]
    );
    assert_eq!(
        run.steps[0].result,
        result("s1", StepStatus::Succeeded, Some(big.clone()))
    );
    assert_eq!(run.steps[1].result.error.as_deref(), Some("boom"));
    assert_eq!(run.exchanges.len(), 3);
    assert_eq!(
        run.exchanges[1],
        exchange(2, Role::Executor, 120),
        "exchanges come back as written"
    );
    let usage = run.usage();
    assert_eq!(usage.total().prompt_tokens, 300);
    assert_eq!(usage.role(Role::Planner).calls, 1);
    assert_eq!(usage.total().cost, Some(0.75));

    // The report view: pending/superseded steps are derived from the plans.
    let report = run.report();
    assert_eq!(report.plan.as_ref().map(|p| p.steps.len()), Some(2));
    assert_eq!(report.step("s2").map(|s| s.status), Some(StepStatus::Failed));

    // End, reopen for a resume, end again.
    let end = RunEnd {
        status: RunStatus::Failed,
        answer: None,
        error: Some("step s2 failed".into()),
        finished_at: 5_000,
        elapsed_ms: 4_990,
    };
    store.finish_run("run-a", &end).await.unwrap();
    let run = store.load_run("run-a").await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.finished_at, run.elapsed_ms),
        (RunStatus::Failed, Some(5_000), 4_990)
    );
    assert_eq!(run.error.as_deref(), Some("step s2 failed"));
    store.reopen_run("run-a").await.unwrap();
    let run = store.load_run("run-a").await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.resumes, run.finished_at),
        (RunStatus::Running, 1, None)
    );
    let end = RunEnd {
        status: RunStatus::Succeeded,
        answer: Some("42".into()),
        error: None,
        finished_at: 9_000,
        elapsed_ms: 6_000,
    };
    store.finish_run("run-a", &end).await.unwrap();

    // Listing: newest first, filtered by status, limited.
    store.create_run(&header("run-b", 20)).await.unwrap();
    store.create_run(&header("run-c", 30)).await.unwrap();
    store
        .finish_run(
            "run-c",
            &RunEnd {
                status: RunStatus::Interrupted,
                answer: None,
                error: Some("interrupted".into()),
                finished_at: 31,
                elapsed_ms: 1,
            },
        )
        .await
        .unwrap();
    let all = store.list_runs(&RunFilter::default()).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["run-c", "run-b", "run-a"]);
    let a = &all[2];
    assert_eq!(
        (a.status, a.steps_done, a.prompt_tokens, a.completion_tokens, a.replans),
        (RunStatus::Succeeded, 2, 300, 15, 1)
    );
    let interrupted = store
        .list_runs(&RunFilter {
            status: Some(RunStatus::Interrupted),
            limit: None,
        })
        .await
        .unwrap();
    assert_eq!(
        interrupted.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        ["run-c"]
    );
    let first = store
        .list_runs(&RunFilter {
            status: None,
            limit: Some(1),
        })
        .await
        .unwrap();
    assert_eq!(first.len(), 1);

    // Writing to a run that does not exist is an error, not a panic.
    assert!(store.add_plan("no-such-run", &v1, 0).await.is_err());
    assert!(store.load_run("no-such-run").await.unwrap().is_none());

    // Deleting takes the run and everything recorded for it, and nothing else.
    assert!(store.delete_run("run-a").await.unwrap());
    assert!(store.load_run("run-a").await.unwrap().is_none());
    assert!(!store.delete_run("run-a").await.unwrap());
    let left: Vec<String> = store
        .list_runs(&RunFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(left, ["run-c", "run-b"]);
    // A new run may now reuse the id and starts empty.
    store.create_run(&header("run-a", 40)).await.unwrap();
    let fresh = store.load_run("run-a").await.unwrap().unwrap();
    assert!(fresh.steps.is_empty() && fresh.plans.is_empty() && fresh.exchanges.is_empty());
    agent_steps(store.as_ref()).await;
    waiting_decisions_and_leases(store.as_ref()).await;
    plan_templates(store.as_ref()).await;
}

/// Plan templates: saved whole, newest first, one per id, forgotten on request.
async fn plan_templates(store: &dyn RunStore) {
    use planexec::templates::PlanTemplate;
    assert!(store.list_templates().await.unwrap().is_empty());
    let first = PlanTemplate::learn("Read a.txt and b.txt", &plan(&["s1"]), "run-1");
    let other = PlanTemplate::learn("Count the lines of c.txt", &plan(&["s1", "s2"]), "run-2");
    store.save_template(&first).await.unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    store.save_template(&other).await.unwrap();
    assert_eq!(store.list_templates().await.unwrap(), [other.clone(), first.clone()]);
    // Saving one with the same id replaces it, and it is now the newest.
    std::thread::sleep(std::time::Duration::from_millis(2));
    let marked = PlanTemplate {
        failed: Some("run-3 had to revise it".into()),
        reused: 4,
        ..first.clone()
    };
    store.save_template(&marked).await.unwrap();
    assert_eq!(store.list_templates().await.unwrap(), [marked.clone(), other.clone()]);
    assert!(store.delete_template(&first.id).await.unwrap());
    assert!(!store.delete_template(&first.id).await.unwrap());
    assert_eq!(store.list_templates().await.unwrap(), [other]);
}

/// What a paused run waits for, its decisions in order, and its lease.
async fn waiting_decisions_and_leases(store: &dyn RunStore) {
    use planexec::store::{Action, Decision, Lease, Waiting};
    store.create_run(&header("run-w", 50)).await.unwrap();
    let waits = Waiting::Step {
        plan_version: 1,
        step_id: "s2".into(),
        tool: "append".into(),
        args: json!({"input": "x"}),
        also: Vec::new(),
    };
    store.set_waiting("run-w", Some(&waits)).await.unwrap();
    assert_eq!(store.load_run("run-w").await.unwrap().unwrap().waiting, Some(waits));
    store.set_waiting("run-w", None).await.unwrap();
    assert_eq!(store.load_run("run-w").await.unwrap().unwrap().waiting, None);

    // Decisions are numbered by the store, in order, whatever seq they came with.
    let steer = Decision::new(
        "ann",
        Action::Steer {
            message: "faster".into(),
        },
    );
    assert_eq!(store.add_decision("run-w", &steer).await.unwrap(), 1);
    let approve = Decision {
        seq: 99,
        ..Decision::new(
            "bo",
            Action::Approve {
                version: 1,
                step: Some("s2".into()),
                args: Some(json!({"input": "x"})),
            },
        )
    };
    assert_eq!(store.add_decision("run-w", &approve).await.unwrap(), 2);
    let decisions = store.load_decisions("run-w").await.unwrap();
    assert_eq!(decisions.iter().map(|d| d.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(decisions[0].action, steer.action);
    assert_eq!(decisions[1].by, "bo");
    assert_eq!(store.load_run("run-w").await.unwrap().unwrap().decisions, decisions);
    assert!(store.add_decision("no-such-run", &steer).await.is_err());

    // One holder at a time; the holder renews; an expired lease is taken over.
    let a = Lease {
        owner: "a".into(),
        expires_at: 1_000,
    };
    let b = Lease {
        owner: "b".into(),
        expires_at: 2_000,
    };
    assert_eq!(store.take_lease("run-w", &a, 500).await.unwrap(), None);
    assert_eq!(store.take_lease("run-w", &b, 900).await.unwrap(), Some(a.clone()));
    let renewed = Lease {
        expires_at: 1_500,
        ..a.clone()
    };
    assert_eq!(store.take_lease("run-w", &renewed, 900).await.unwrap(), None);
    assert_eq!(
        store.take_lease("run-w", &b, 1_501).await.unwrap(),
        None,
        "expired: taken over"
    );
    assert_eq!(store.load_run("run-w").await.unwrap().unwrap().lease, Some(b.clone()));
    store.release_lease("run-w", "a").await.unwrap();
    assert_eq!(
        store.load_run("run-w").await.unwrap().unwrap().lease,
        Some(b),
        "only the holder releases"
    );
    store.release_lease("run-w", "b").await.unwrap();
    assert_eq!(store.load_run("run-w").await.unwrap().unwrap().lease, None);
    assert!(store.take_lease("no-such-run", &a, 0).await.is_err());

    assert!(store.delete_run("run-w").await.unwrap());
    assert!(
        store.load_decisions("run-w").await.unwrap().is_empty(),
        "decisions go with their run"
    );
}

#[tokio::test]
async fn memory_store_conforms() {
    conformance(Arc::new(MemoryStore::new())).await;
}

#[tokio::test]
async fn sqlite_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let store = planexec_store::SqlStore::open(dir.path().join("ledger.db").to_str().unwrap())
        .await
        .unwrap();
    conformance(Arc::new(store)).await;
}

#[tokio::test]
async fn postgres_store_conforms() {
    let Some(db) = common::postgres_database().await else {
        return;
    };
    let store = planexec_store::SqlStore::open(&db.url).await.unwrap();
    conformance(Arc::new(store)).await;
}
