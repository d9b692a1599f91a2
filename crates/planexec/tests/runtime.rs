//! End-to-end runs of the agent against a scripted OpenAI-compatible server over real HTTP.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use planexec::{Approval, Approver, Event, Plan, RunStatus, StepStatus, ToolError};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

#[tokio::test]
async fn happy_path_reads_computes_explains() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/prices.txt"), "12.5\n").unwrap();
    let plan = json!({"goal": "price with VAT", "steps": [
        {"id": "s1", "description": "read the price list", "tool": "read_file", "args": {"path": "data/prices.txt"}, "depends_on": []},
        {"id": "s2", "description": "add VAT", "tool": "calculator", "args": {"expression": "{{s1}} * 1.17"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "explain the result", "tool": null, "args": {}, "depends_on": ["s2"], "expected": "a sentence with the total"}
    ]});
    server.role("planner").reply(Reply::json(&plan).with_usage(300, 80));
    server
        .role("executor")
        .containing("Does the result meet")
        .reply(Reply::content(r#"{"meets": true, "reason": "it states the total"}"#));
    server
        .role("executor")
        .reply(Reply::content("The total with VAT is 14.625."));
    server
        .role("synthesizer")
        .reply(Reply::content("The total is 14.625 [s2] [s3]."));

    let report = agent(&server, tools).run("What is the price with 17% VAT?").await;

    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.answer.as_deref(), Some("The total is 14.625 [s2] [s3]."));
    assert_eq!(report.step("s1").unwrap().output, Some(json!("12.5\n")));
    assert_eq!(report.step("s2").unwrap().output, Some(json!(14.625)));
    assert_eq!(
        report.step("s2").unwrap().args,
        // The file's closing newline is not spliced into the middle of a text.
        Some(json!({"expression": "12.5 * 1.17"}))
    );
    // Resolved tool steps run with no model call; the reasoning step makes two (do + check).
    assert_eq!(report.step("s1").unwrap().model_calls, 0);
    assert_eq!(report.step("s2").unwrap().model_calls, 0);
    assert_eq!(report.step("s3").unwrap().model_calls, 2);
    assert_eq!(server.requests_from("executor").len(), 2);

    // The executor sees the goal, its step and its dependency's result, not the whole plan.
    let exec_prompt = server.requests_from("executor")[0].prompt_text();
    assert!(exec_prompt.contains("[s2] add VAT"), "{exec_prompt}");
    assert!(exec_prompt.contains("14.625"));
    assert!(!exec_prompt.contains("read the price list"));

    // Every request names its role; the planner asked for structured output with the tool names.
    assert!(server.requests().iter().all(|r| r.role.is_some()));
    assert!(server
        .requests()
        .iter()
        .all(|r| r.authorization.as_deref() == Some("Bearer test-key")));
    let planner_req = &server.requests_from("planner")[0];
    let format = &planner_req.body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert!(format.to_string().contains("\"calculator\""));
    assert_eq!(format["json_schema"]["strict"], true);

    let planner = report.usage.role(planexec::Role::Planner);
    assert_eq!(
        (planner.calls, planner.prompt_tokens, planner.completion_tokens),
        (1, 300, 80)
    );
    assert_eq!(report.usage.role(planexec::Role::Executor).calls, 2);
    assert_eq!(report.usage.total().calls, 4);
    assert_eq!(report.plans.len(), 1);
    assert_eq!(report.replans, 0);
}

#[tokio::test]
async fn independent_steps_run_in_parallel_up_to_the_limit() {
    for parallelism in [4, 1] {
        let server = ScriptedServer::start();
        let tool = TestTool::new("slow").sleeping(Duration::from_millis(150));
        let plan = plan_json(vec![
            step("a", Some("slow"), json!({"input": "1"}), &[]),
            step("b", Some("slow"), json!({"input": "2"}), &[]),
            step("c", Some("slow"), json!({"input": "3"}), &[]),
            step(
                "d",
                Some("slow"),
                json!({"input": "{{a}} {{b}} {{c}}"}),
                &["a", "b", "c"],
            ),
        ]);
        server.role("planner").reply(Reply::json(&plan));
        server.role("synthesizer").reply(Reply::content("done"));
        let mut options = options();
        options.parallelism = parallelism;
        let report = builder(&server, registry(vec![tool]))
            .options(options)
            .build()
            .run("t")
            .await;
        assert!(report.succeeded(), "{:?}", report.error);

        let span = |id: &str| {
            let s = report.step(id).unwrap();
            (s.started_at.unwrap(), s.finished_at.unwrap())
        };
        let (a, b, c, d) = (span("a"), span("b"), span("c"), span("d"));
        let latest_start = a.0.max(b.0).max(c.0);
        let earliest_finish = a.1.min(b.1).min(c.1);
        if parallelism == 4 {
            assert!(
                latest_start < earliest_finish,
                "a, b, c should overlap: {a:?} {b:?} {c:?}"
            );
        } else {
            let mut spans = [a, b, c];
            spans.sort();
            assert!(
                spans[0].1 <= spans[1].0 && spans[1].1 <= spans[2].0,
                "parallelism 1 must not overlap: {spans:?}"
            );
        }
        // The join step starts only after all of its dependencies finished.
        assert!(d.0 >= a.1.max(b.1).max(c.1));
    }
}

#[tokio::test]
async fn plan_wrapped_in_fences_or_prose_is_accepted() {
    let replies = [
        "Here is the plan:\n```json\n{\"goal\": \"g\", \"steps\": [{\"id\": \"s1\", \"description\": \"x\", \"tool\": \"echo\", \"args\": {\"input\": \"hi\"}, \"depends_on\": []}]}\n```\nLet me know!",
        "Sure. {'goal': 'g', 'steps': [{'id': 's1', 'description': \"it's x\", 'tool': 'echo', 'args': {'input': 'hi'}, 'depends_on': [],},],} That is all.",
    ];
    for reply in replies {
        let server = ScriptedServer::start();
        server.role("planner").reply(Reply::content(reply));
        server.role("synthesizer").reply(Reply::content("ok"));
        let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
        assert!(report.succeeded(), "{reply}: {:?}", report.error);
        assert_eq!(server.requests_from("planner").len(), 1, "no re-ask needed for {reply}");
        assert_eq!(
            report.step("s1").unwrap().output,
            Some(json!({"tool": "echo", "input": "hi"}))
        );
    }
}

#[tokio::test]
async fn invalid_plan_is_sent_back_with_its_errors_then_fixed() {
    let server = ScriptedServer::start();
    let bad = plan_json(vec![step("s1", Some("nope"), json!({}), &[])]);
    let good = plan_json(vec![step("s1", Some("echo"), json!({"input": "x"}), &[])]);
    server
        .role("planner")
        .replies(vec![Reply::json(&bad), Reply::json(&good)]);
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    let asks = server.requests_from("planner");
    assert_eq!(asks.len(), 2);
    let second = asks[1].prompt_text();
    assert!(
        second.contains("step s1 uses tool `nope`, which does not exist (available: echo)"),
        "{second}"
    );
}

#[tokio::test]
async fn planner_gives_up_after_the_reasks_and_shows_the_last_reply() {
    let server = ScriptedServer::start();
    server
        .role("planner")
        .always(Reply::content("I would rather not make a plan."));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.unwrap();
    assert!(error.contains("no usable plan after 3 attempts"), "{error}");
    assert!(error.contains("no JSON object found"), "{error}");
    assert!(error.contains("I would rather not make a plan."), "{error}");
    assert_eq!(server.requests_from("planner").len(), 3);
}

#[tokio::test]
async fn tool_failure_replans_without_rerunning_completed_steps() {
    let server = ScriptedServer::start();
    let good = TestTool::new("good");
    let good_calls = good.counter();
    let bad = TestTool::new("bad").failing(u32::MAX, ToolError::failed("disk on fire"));
    let bad_calls = bad.counter();
    let plan = plan_json(vec![
        step("s1", Some("good"), json!({"input": "first"}), &[]),
        step("s2", Some("bad"), json!({"input": "{{s1.input}}"}), &["s1"]),
        step("s3", Some("good"), json!({"input": "after {{s2}}"}), &["s2"]),
    ]);
    let revised = plan_json(vec![step(
        "s4",
        Some("good"),
        json!({"input": "{{s1.input}} again"}),
        &["s1"],
    )]);
    server.role("planner").reply(Reply::json(&plan));
    server.role("replanner").reply(Reply::json(&revised));
    server.role("synthesizer").reply(Reply::content("ok"));

    let replan_at_once = planexec::RunOptions {
        recover: planexec::Recover::Replan,
        ..options()
    };
    let report = builder(&server, registry(vec![good, bad]))
        .options(replan_at_once)
        .build()
        .run("t")
        .await;

    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(report.replans, 1);
    assert_eq!(
        good_calls.load(Ordering::SeqCst),
        2,
        "s1 once, s4 once; s1 is not re-run"
    );
    assert_eq!(
        bad_calls.load(Ordering::SeqCst),
        1,
        "a non-retryable failure is not retried"
    );
    assert_eq!(
        report.step("s4").unwrap().output,
        Some(json!({"tool": "good", "input": "first again"}))
    );
    let final_ids: Vec<&str> = report
        .plan
        .as_ref()
        .unwrap()
        .steps
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(final_ids, ["s1", "s4"]);
    assert_eq!(report.plans.len(), 2);
    assert_eq!(report.plans[1].reason, "step s2 failed: disk on fire");
    assert_eq!(report.step("s2").unwrap().status, StepStatus::Failed);
    assert_eq!(report.step("s3").unwrap().status, StepStatus::Superseded);

    // The replanner saw the completed result, the failure and the remaining steps.
    let prompt = server.requests_from("replanner")[0].prompt_text();
    assert!(
        prompt.contains("[s1] do s1 -> {\"input\":\"first\",\"tool\":\"good\"}") || prompt.contains("[s1] do s1 ->")
    );
    assert!(prompt.contains("Error: disk on fire"), "{prompt}");
    assert!(prompt.contains("Steps not yet run: s2, s3"), "{prompt}");
}

#[tokio::test]
async fn replans_stop_at_the_bound() {
    let server = ScriptedServer::start();
    let bad = TestTool::new("bad").failing(u32::MAX, ToolError::failed("nope"));
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("bad"),
        json!({"input": "0"}),
        &[],
    )])));
    server.role("replanner").replies(
        (1..=5)
            .map(|i| {
                Reply::json(&plan_json(vec![step(
                    &format!("r{i}"),
                    Some("bad"),
                    json!({"input": i.to_string()}),
                    &[],
                )]))
            })
            .collect(),
    );
    let mut options = options();
    options.max_replans = 1;
    options.recover = planexec::Recover::Replan;
    let report = builder(&server, registry(vec![bad]))
        .options(options)
        .build()
        .run("t")
        .await;
    assert_eq!(report.status, RunStatus::Failed);
    assert_eq!(report.replans, 1);
    assert_eq!(server.requests_from("replanner").len(), 1);
    let error = report.error.unwrap();
    assert!(
        error.contains("step r1 failed: nope; the replan limit (1) is reached"),
        "{error}"
    );
}

/// A revision that repeats the failed step is no progress, not an unusable
/// plan: the run goes to its fallback at once, with no second replanner
/// call, and the repeated step never runs. With `fallback = "stop"` the run
/// ends and says why; with `react`, one ReAct loop takes over.
#[tokio::test]
async fn a_revision_that_repeats_the_failed_step_goes_straight_to_the_fallback() {
    for fallback in [planexec::Fallback::Stop, planexec::Fallback::React] {
        let server = ScriptedServer::start();
        let bad = TestTool::new("bad").failing(u32::MAX, ToolError::failed("nope"));
        let good = TestTool::new("good");
        let calls = bad.counter();
        server.role("planner").reply(Reply::json(&plan_json(vec![step(
            "s1",
            Some("bad"),
            json!({"input": "same"}),
            &[],
        )])));
        // Same tool, same arguments, new id: no progress.
        server.role("replanner").always(Reply::json(&plan_json(vec![step(
            "s1b",
            Some("bad"),
            json!({"input": "same"}),
            &[],
        )])));
        server.role("agent").replies(vec![
            Reply::tool_call("good", &json!({"input": "another way"})),
            Reply::content("done another way"),
        ]);
        server.role("synthesizer").reply(Reply::content("done another way"));
        let options = planexec::RunOptions {
            recover: planexec::Recover::Replan,
            fallback,
            ..options()
        };
        let report = builder(&server, registry(vec![bad, good]))
            .options(options)
            .build()
            .run("t")
            .await;
        assert_eq!(server.requests_from("replanner").len(), 1, "{fallback:?}: asked once");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the repeated step never ran");
        match fallback {
            planexec::Fallback::Stop => {
                assert_eq!(report.status, RunStatus::Failed);
                let error = report.error.unwrap();
                assert!(
                    error.contains("no progress: step s1 failed: nope, and the revised plan repeats the failed step s1 unchanged as s1b"),
                    "{error}"
                );
            }
            planexec::Fallback::React => {
                assert!(report.succeeded(), "{:?}", report.error);
                assert!(report.fell_back.is_some());
                assert_eq!(report.answer.as_deref(), Some("done another way"));
            }
        }
    }
}

#[tokio::test]
async fn retryable_tool_errors_are_retried_with_backoff() {
    let server = ScriptedServer::start();
    let flaky = TestTool::new("flaky").failing(2, ToolError::retryable("503 from upstream"));
    let calls = flaky.counter();
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("flaky"),
        json!({"input": "x"}),
        &[],
    )])));
    server.role("synthesizer").reply(Reply::content("ok"));
    let a = agent(&server, registry(vec![flaky]));
    let mut events = a.events().subscribe();
    let report = a.run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(report.step("s1").unwrap().attempts, 3);
    let mut retries = 0;
    while let Ok(e) = events.try_recv() {
        if matches!(e, Event::StepRetried { .. }) {
            retries += 1;
        }
    }
    assert_eq!(retries, 2);
}

#[tokio::test]
async fn a_step_that_exceeds_its_timeout_fails() {
    let server = ScriptedServer::start();
    let slow = TestTool::new("slow").sleeping(Duration::from_secs(5));
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("slow"),
        json!({"input": "x"}),
        &[],
    )])));
    let mut options = options();
    options.step_timeout = Duration::from_millis(100);
    options.max_replans = 0;
    let report = builder(&server, registry(vec![slow]))
        .options(options)
        .build()
        .run("t")
        .await;
    assert_eq!(report.status, RunStatus::Failed);
    assert!(report
        .step("s1")
        .unwrap()
        .error
        .as_deref()
        .unwrap()
        .contains("timed out after 100ms"));
}

/// A tool step that fails is handed to a recovery loop (an agent step of
/// the `recover` profile) that sees the failed call and its error; its
/// corrected call's output is the step's output, recorded as an inner call,
/// and the replanner is never asked.
#[tokio::test]
async fn a_failed_call_is_recovered_by_an_agent_step_before_any_replan() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    std::fs::write(dir.path().join("price.txt"), "Price: 12").unwrap();
    let plan = plan_json(vec![
        step("s1", Some("read_file"), json!({"path": "price.txt"}), &[]),
        step("s2", Some("calculator"), json!({"expression": "{{s1}} * 2"}), &["s1"]),
    ]);
    server.role("planner").reply(Reply::json(&plan));
    // Its first try is no better; its second is the fix.
    server.role("agent").replies(vec![
        Reply::tool_call("calculator", &json!({"expression": "Price * 2"})),
        Reply::tool_call("calculator", &json!({"expression": "12 * 2"})),
    ]);
    server.role("synthesizer").reply(Reply::content("24"));
    let a = agent(&server, tools);
    let mut events = a.events().subscribe();
    let report = a.run("double the price").await;
    assert!(report.succeeded(), "{:?}", report.error);
    let s2 = report.step("s2").unwrap();
    assert_eq!(s2.output, Some(json!(24)));
    assert_eq!(s2.model_calls, 2);
    assert_eq!(s2.calls.len(), 2);
    assert_eq!(s2.calls[1].id, "s2.2");
    assert!(server.requests_from("replanner").is_empty());
    let req = &server.requests_from("agent")[0];
    assert!(
        req.prompt_text().contains("unknown name `Price`")
            && req.prompt_text().contains("The plan called `calculator`"),
        "{}",
        req.prompt_text()
    );
    // The first turn is the corrected call of the step's own tool; after
    // that, a read step's recovery may look and read, never write.
    let offered = |n: usize| -> Vec<String> {
        server.requests_from("agent")[n].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(offered(0), ["calculator"]);
    let second = offered(1);
    assert!(
        second.iter().any(|t| t == "calculator") && second.iter().any(|t| t == "read_file"),
        "{second:?}"
    );
    assert!(!second.iter().any(|t| t == "write_file"), "{second:?}");
    let mut recovering = false;
    while let Ok(e) = events.try_recv() {
        recovering |= matches!(&e, Event::StepRecovering { step_id, .. } if step_id == "s2");
    }
    assert!(recovering);
}

#[tokio::test]
async fn an_unmet_expectation_triggers_a_replan() {
    let server = ScriptedServer::start();
    let mut first = step("s1", Some("echo"), json!({"input": "wrong"}), &[]);
    first["expected"] = json!("the word right");
    server.role("planner").reply(Reply::json(&plan_json(vec![first])));
    server
        .role("executor")
        .replies(vec![Reply::content(r#"{"meets": false, "reason": "it says wrong"}"#)]);
    server.role("replanner").reply(Reply::json(&plan_json(vec![step(
        "s2",
        Some("echo"),
        json!({"input": "right"}),
        &[],
    )])));
    server.role("synthesizer").reply(Reply::content("right"));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(report.replans, 1);
    assert!(report.plans[1]
        .reason
        .contains("does not meet the expectation \"the word right\": it says wrong"));
}

#[tokio::test]
async fn large_dependency_outputs_are_cut_with_a_marker() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(50_000)).unwrap();
    let plan = plan_json(vec![
        step("s1", Some("read_file"), json!({"path": "big.txt"}), &[]),
        step("s2", None, json!({}), &["s1"]),
    ]);
    server.role("planner").reply(Reply::json(&plan));
    server.role("executor").reply(Reply::content("a lot of x"));
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, tools).run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    let request = &server.requests_from("executor")[0];
    assert!(request
        .prompt_text()
        .contains("of 50000 characters cut here to fit the budget"));
    // The step's own message (the shared system prompt aside) stays within the budget.
    let step_message = request.body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        step_message.len() < 5_000,
        "the step's message is {} bytes",
        step_message.len()
    );
}

#[tokio::test]
async fn rate_limited_then_success() {
    let server = ScriptedServer::start();
    server.role("planner").replies(vec![
        Reply::error(429, "slow down").with_header("retry-after", "0"),
        Reply::json(&plan_json(vec![step("s1", Some("echo"), json!({"input": "x"}), &[])])),
    ]);
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    let planner = server.requests_from("planner");
    assert_eq!(planner.iter().map(|r| r.status).collect::<Vec<_>>(), [429, 200]);
}

#[tokio::test]
async fn a_server_that_refuses_structured_output_gets_json_in_text() {
    let server = ScriptedServer::start();
    server
        .role("planner")
        .containing("\"json_schema\"")
        .reply(Reply::error(400, "response_format json_schema is not supported"));
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("echo"),
        json!({"input": "x"}),
        &[],
    )])));
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    let planner = server.requests_from("planner");
    assert_eq!(planner.len(), 2);
    assert!(planner[1].body.get("response_format").is_none());
    // The prompt itself states the format, so the fallback still gets a plan.
    assert!(planner[1].prompt_text().contains("Reply with one JSON plan object"));
    assert!(planner[1].prompt_text().contains("How plans are written"));
}

#[tokio::test]
async fn provider_errors_say_what_to_fix() {
    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::error(401, "Incorrect API key provided"));
    let report = agent(&server, registry(vec![])).run("t").await;
    let error = report.error.unwrap();
    assert!(
        error.contains("rejected the API key (HTTP 401: Incorrect API key provided); set OPENAI_API_KEY or --api-key"),
        "{error}"
    );

    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::error(404, "The model `nope` does not exist"));
    let report = agent(&server, registry(vec![])).run("t").await;
    let error = report.error.unwrap();
    assert!(
        error.contains("model `test-model` not found at http://127.0.0.1:"),
        "{error}"
    );
    assert!(error.contains("check --model"), "{error}");

    // A port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let refused = planexec::Agent::builder(provider_at(&format!("http://127.0.0.1:{port}/v1"), None), "m")
        .build()
        .run("t")
        .await;
    let error = refused.error.unwrap();
    assert!(
        error.contains(&format!("cannot connect to http://127.0.0.1:{port}/v1")),
        "{error}"
    );
    assert!(error.contains("is the server running?"), "{error}");
}

#[tokio::test]
async fn file_tools_refuse_paths_outside_the_workspace() {
    let server = ScriptedServer::start();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let (dir, tools) = workspace_tools();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let secret = outside.path().join("secret.txt");
    let plan = plan_json(vec![
        step("a", Some("read_file"), json!({"path": "../secret.txt"}), &[]),
        step("b", Some("read_file"), json!({"path": secret.to_str().unwrap()}), &[]),
        step("c", Some("read_file"), json!({"path": "link/secret.txt"}), &[]),
        step(
            "d",
            Some("write_file"),
            json!({"path": "link/new.txt", "content": "x"}),
            &[],
        ),
    ]);
    server.role("planner").reply(Reply::json(&plan));
    let mut options = options();
    options.max_replans = 0;
    let report = builder(&server, tools).options(options).build().run("t").await;
    assert_eq!(report.status, RunStatus::Failed);
    // The first failure stops new dispatches; check every step through the tool directly too.
    let first = report.steps.iter().find(|s| s.status == StepStatus::Failed).unwrap();
    assert!(first.error.as_deref().unwrap().contains("outside the workspace"));
    assert!(!outside.path().join("new.txt").exists());
    assert_eq!(
        server.requests_from("executor").len(),
        0,
        "a denied path is not handed to a model to work around"
    );

    let tools = planexec::tools::builtin::registry(planexec::tools::workspace::Workspace::new(dir.path()).unwrap());
    let read = tools.get("read_file").unwrap();
    for (path, needle) in [
        ("../secret.txt", "outside the workspace"),
        (secret.to_str().unwrap(), "outside the workspace"),
        ("link/secret.txt", "through a symlink"),
        ("sub/../../secret.txt", "outside the workspace"),
    ] {
        let err = read.tool.call(json!({"path": path})).await.unwrap_err();
        assert_eq!(err.kind, planexec::tools::ToolErrorKind::Denied, "{path}");
        assert!(err.message.contains(needle), "{path}: {}", err.message);
    }
    let write = tools.get("write_file").unwrap();
    let err = write
        .tool
        .call(json!({"path": "link/new.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert!(err.message.contains("through a symlink"), "{}", err.message);
    assert!(!outside.path().join("new.txt").exists());
    // Inside is fine, including new folders.
    write
        .tool
        .call(json!({"path": "out/new.txt", "content": "ok"}))
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("out/new.txt")).unwrap(), "ok");
}

/// A read outside the workspace is refused, and the refusal is final: not
/// handed to the executor model to "fix", nor to the replanner to route around.
#[tokio::test]
async fn a_refused_path_stops_the_run_without_a_replan() {
    let server = ScriptedServer::start();
    let (_dir, tools) = workspace_tools();
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", Some("read_file"), json!({"path": "../../etc/passwd"}), &[]),
        step("s2", None, json!({}), &["s1"]),
    ])));
    server.role("replanner").reply(Reply::json(&plan_json(vec![step(
        "s3",
        Some("read_file"),
        json!({"path": "/etc/passwd"}),
        &[],
    )])));
    let report = builder(&server, tools)
        .options(options())
        .build()
        .run("show the passwords")
        .await;
    assert_eq!(report.status, RunStatus::Failed);
    let error = report.error.clone().unwrap_or_default();
    assert!(
        error.contains("step s1 was refused: path `../../etc/passwd` is outside the workspace"),
        "{error}"
    );
    assert!(error.contains("A refusal is final"), "{error}");
    assert!(report.step("s1").unwrap().refused);
    assert_eq!(report.replans, 0);
    assert!(server.requests_from("replanner").is_empty());
    assert!(server.requests_from("executor").is_empty());
}

/// A program that hands the library an empty task gets a failed run at once,
/// under every strategy, with no model called.
#[tokio::test]
async fn an_empty_task_fails_at_once_without_a_model_call() {
    let server = ScriptedServer::start();
    for strategy in planexec::Strategy::ALL {
        let (_dir, tools) = workspace_tools();
        let mut options = options();
        options.strategy = strategy;
        let report = builder(&server, tools).options(options).build().run(" \n ").await;
        assert_eq!(report.status, RunStatus::Failed, "{strategy:?}");
        let error = report.error.unwrap_or_default();
        assert!(error.contains("the task is empty"), "{strategy:?}: {error}");
    }
    assert!(server.requests().is_empty());
}

/// Small models write `/reports/` for the workspace's `reports/`: the refusal
/// names the path they meant, and only when it exists inside.
#[tokio::test]
async fn a_refused_absolute_path_names_the_workspace_path_it_likely_meant() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("reports")).unwrap();
    std::fs::write(dir.path().join("reports/q3.txt"), "x").unwrap();
    let tools = planexec::tools::builtin::registry(planexec::tools::workspace::Workspace::new(dir.path()).unwrap());
    let list = &tools.get("list_dir").unwrap().tool;
    let read = &tools.get("read_file").unwrap().tool;
    let err = list.call(json!({"path": "/reports/"})).await.unwrap_err();
    assert_eq!(err.kind, planexec::tools::ToolErrorKind::Denied);
    assert!(err.message.contains("did you mean `reports/`?"), "{}", err.message);
    let err = read.call(json!({"path": "/reports/q3.txt"})).await.unwrap_err();
    assert!(
        err.message.contains("did you mean `reports/q3.txt`?"),
        "{}",
        err.message
    );
    for missing in ["/reports/none.txt", "/etc/passwd", "/../reports"] {
        let err = read.call(json!({"path": missing})).await.unwrap_err();
        assert_eq!(err.kind, planexec::tools::ToolErrorKind::Denied, "{missing}");
        assert!(!err.message.contains("did you mean"), "{missing}: {}", err.message);
        assert!(
            err.message.contains("use a relative path"),
            "{missing}: {}",
            err.message
        );
    }
}

struct Scripted(Mutex<Vec<Approval>>);

#[async_trait]
impl Approver for Scripted {
    async fn review(&self, _plan: &Plan, _check: planexec::policy::PlanCheck<'_>) -> Approval {
        self.0.lock().unwrap().remove(0)
    }
}

#[tokio::test]
async fn feedback_revises_the_plan_and_rejection_stops() {
    let server = ScriptedServer::start();
    let echo = TestTool::new("echo");
    let calls = echo.counter();
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("echo"),
        json!({"input": "v1"}),
        &[],
    )])));
    server.role("replanner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("echo"),
        json!({"input": "v2"}),
        &[],
    )])));
    server.role("synthesizer").reply(Reply::content("ok"));
    let approver = Arc::new(Scripted(Mutex::new(vec![
        Approval::Feedback("use v2".into()),
        Approval::Approve,
    ])));
    let report = builder(&server, registry(vec![echo]))
        .approver(approver)
        .build()
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(report.plans.len(), 2);
    assert_eq!(report.plans[1].reason, "user feedback: use v2");
    assert_eq!(
        report.step("s1").unwrap().output,
        Some(json!({"tool": "echo", "input": "v2"}))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(server.requests_from("replanner")[0].prompt_text().contains("use v2"));
    assert_eq!(report.replans, 0, "feedback is not a failure replan");

    let server = ScriptedServer::start();
    let echo = TestTool::new("echo");
    let calls = echo.counter();
    server.role("planner").reply(Reply::json(&plan_json(vec![step(
        "s1",
        Some("echo"),
        json!({"input": "v1"}),
        &[],
    )])));
    let approver = Arc::new(Scripted(Mutex::new(vec![Approval::Reject])));
    let report = builder(&server, registry(vec![echo]))
        .approver(approver)
        .build()
        .run("t")
        .await;
    assert_eq!(report.status, RunStatus::Rejected);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(report.step("s1").unwrap().status, StepStatus::Pending);
}

#[tokio::test]
async fn an_infeasible_plan_is_reported_with_its_reason() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(
        &json!({"goal": "fly", "steps": [], "infeasible": "no tool can book flights"}),
    ));
    let report = agent(&server, registry(vec![TestTool::new("echo")]))
        .run("book a flight")
        .await;
    assert_eq!(report.status, RunStatus::Infeasible);
    assert!(report.error.unwrap().contains("no tool can book flights"));
}

#[tokio::test]
async fn events_follow_the_run() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", Some("echo"), json!({"input": "x"}), &[]),
        step("s2", Some("echo"), json!({"input": "{{s1.input}}"}), &["s1"]),
    ])));
    server.role("synthesizer").reply(Reply::content("ok"));
    let a = agent(&server, registry(vec![TestTool::new("echo")]));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    a.events().on_event(move |e| {
        let name = serde_json::to_value(e).unwrap()["event"].as_str().unwrap().to_string();
        sink.lock().unwrap().push(name)
    });
    let report = a.run("t").await;
    assert!(report.succeeded());
    let seen = seen.lock().unwrap().clone();
    let kinds: Vec<&str> = seen
        .iter()
        .map(String::as_str)
        .filter(|k| *k != "model_called")
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "plan_proposed",
            "plan_approved",
            "step_started",
            "step_finished",
            "step_started",
            "step_finished",
            "run_finished"
        ]
    );
    assert_eq!(seen.iter().filter(|k| *k == "model_called").count(), 2);
}

#[tokio::test]
async fn a_plan_from_elsewhere_runs_without_the_planner() {
    let server = ScriptedServer::start();
    server.role("synthesizer").reply(Reply::content("ok"));
    let plan: Plan =
        serde_json::from_value(plan_json(vec![step("s1", Some("echo"), json!({"input": "x"}), &[])])).unwrap();
    let report = agent(&server, registry(vec![TestTool::new("echo")]))
        .run_plan("t", plan)
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert!(server.requests_from("planner").is_empty());
}

#[tokio::test]
async fn costs_are_counted_where_a_price_is_set() {
    let server = ScriptedServer::start();
    server.role("planner").reply(
        Reply::json(&plan_json(vec![step("s1", Some("echo"), json!({"input": "x"}), &[])])).with_usage(1_000_000, 0),
    );
    server
        .role("synthesizer")
        .reply(Reply::content("ok").with_usage(0, 500_000));
    let mut pricing = planexec::accounting::Pricing::default();
    pricing.models.insert(
        "test-model".into(),
        planexec::accounting::Price {
            input_per_million: 0.5,
            output_per_million: 2.0,
            ..Default::default()
        },
    );
    let report = builder(&server, registry(vec![TestTool::new("echo")]))
        .pricing(pricing)
        .build()
        .run("t")
        .await;
    assert_eq!(report.usage.role(planexec::Role::Planner).cost, Some(0.5));
    assert_eq!(report.usage.role(planexec::Role::Synthesizer).cost, Some(1.0));
    assert_eq!(report.usage.total().cost, Some(1.5));
}

/// An approver that answers questions and declines to confirm any step.
struct Answering {
    answers: Vec<String>,
    confirmations: Mutex<Vec<(String, serde_json::Value)>>,
}

#[async_trait]
impl Approver for Answering {
    async fn review(&self, _plan: &Plan, _check: planexec::policy::PlanCheck<'_>) -> Approval {
        Approval::Approve
    }
    fn can_answer_questions(&self) -> bool {
        true
    }
    async fn answer_questions(&self, questions: &[String]) -> Option<Vec<String>> {
        assert_eq!(questions.len(), self.answers.len());
        Some(self.answers.clone())
    }
    async fn confirm_step(&self, step: &planexec::Step, args: &serde_json::Value, _effect: planexec::Effect) -> bool {
        self.confirmations.lock().unwrap().push((step.id.clone(), args.clone()));
        false
    }
}

#[tokio::test]
async fn clarifying_questions_are_answered_and_added_to_the_task() {
    let server = ScriptedServer::start();
    server.role("planner").replies(vec![
        Reply::json(&json!({"goal": "g", "steps": [], "questions": ["Which file?", "Which currency?"]})),
        Reply::json(&plan_json(vec![step("s1", Some("echo"), json!({"input": "x"}), &[])])),
    ]);
    server.role("synthesizer").reply(Reply::content("ok"));
    let approver = Arc::new(Answering {
        answers: vec!["prices.txt".into(), "EUR".into()],
        confirmations: Mutex::default(),
    });
    let report = builder(&server, registry(vec![TestTool::new("echo")]))
        .approver(approver)
        .build()
        .run("convert the prices")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(report.clarifications.len(), 2);
    assert_eq!(report.clarifications[1].answer, "EUR");
    let asks = server.requests_from("planner");
    assert!(asks[0]
        .prompt_text()
        .contains("\"questions\": [at most 3 short questions"));
    let second = asks[1].prompt_text();
    assert!(second.contains("- Q: Which file?\n  A: prices.txt"), "{second}");
}

#[tokio::test]
async fn without_anyone_to_ask_the_planner_states_assumptions() {
    let server = ScriptedServer::start();
    server.role("planner").replies(vec![
        // Asking anyway is sent back: nobody can answer.
        Reply::json(&json!({"goal": "g", "steps": [], "questions": ["Which file?"]})),
        Reply::json(
            &json!({"goal": "g", "assumptions": ["the file is prices.txt"], "steps": [
            {"id": "s1", "description": "d", "tool": "echo", "args": {"input": "x"}, "depends_on": []}]}),
        ),
    ]);
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![TestTool::new("echo")]))
        .run("convert")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(report.plan.unwrap().assumptions, ["the file is prices.txt"]);
    let asks = server.requests_from("planner");
    assert!(asks[0].prompt_text().contains("Nobody can answer questions now"));
    assert!(asks[1]
        .prompt_text()
        .contains("nobody can answer questions in this run"));
}

#[tokio::test]
async fn cancelling_keeps_finished_steps_and_marks_running_ones_interrupted() {
    let server = ScriptedServer::start();
    let slow = TestTool::new("slow").sleeping(Duration::from_secs(30));
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("fast", Some("echo"), json!({"input": "x"}), &[]),
        step("long", Some("slow"), json!({"input": "y"}), &[]),
        step("after", Some("echo"), json!({"input": "{{long}}"}), &["long"]),
    ])));
    let a = agent(&server, registry(vec![TestTool::new("echo"), slow]));
    let cancel = planexec::CancelToken::new();
    let trigger = cancel.clone();
    a.events().on_event(move |e| {
        if matches!(e, Event::StepFinished { step_id, .. } if step_id == "fast") {
            trigger.cancel();
        }
    });
    let started = std::time::Instant::now();
    let report = a.run_cancellable("t", None, &cancel).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the 30 s step was dropped, not awaited"
    );
    assert_eq!(report.status, RunStatus::Interrupted);
    assert_eq!(report.step("fast").unwrap().status, StepStatus::Succeeded);
    assert_eq!(report.step("long").unwrap().status, StepStatus::Interrupted);
    assert_eq!(report.step("after").unwrap().status, StepStatus::Pending);
    assert!(server.requests_from("synthesizer").is_empty());
}

/// A server whose plan runs reasoning step s1 ("summary one"), then s2,
/// which calls the always-failing tool `bad` (returned), so the run replans
/// with s1 completed.
fn failing_after_a_reasoning_step() -> (ScriptedServer, TestTool) {
    let server = ScriptedServer::start();
    let bad = TestTool::new("bad").failing(u32::MAX, ToolError::failed("broken"));
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", None, json!({}), &[]),
        step("s2", Some("bad"), json!({"input": "{{s1}}"}), &["s1"]),
    ])));
    server.role("executor").reply(Reply::content("summary one"));
    (server, bad)
}

/// A small replanner numbers its steps from s1 again: its new step under the
/// completed s1's id is renamed, and its own references to s1 follow it,
/// instead of the whole revision being refused.
#[tokio::test]
async fn a_replans_new_step_under_a_completed_steps_id_is_renamed_with_its_references() {
    let (server, bad) = failing_after_a_reasoning_step();
    let mut reused = step("s1", None, json!({}), &[]);
    reused["description"] = json!("write a conclusion");
    server.role("replanner").reply(Reply::json(&plan_json(vec![
        reused,
        step("s3", Some("echo"), json!({"input": "{{s1}}"}), &["s1"]),
    ])));
    server.role("executor").reply(Reply::content("a conclusion"));
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![bad, TestTool::new("echo")]))
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(server.requests_from("replanner").len(), 1, "taken at once");
    // The completed s1 kept its result; the new step ran as r1, and s3 used it.
    assert_eq!(report.step("s1").unwrap().output, Some(json!("summary one")));
    assert_eq!(report.step("r1").unwrap().output, Some(json!("a conclusion")));
    assert_eq!(
        report.step("s3").unwrap().output,
        Some(json!({"tool": "echo", "input": "a conclusion"}))
    );
}

/// A small replanner copies a completed step with something changed (its
/// tool) but its id and description: that is the completed step, kept as it
/// ran, not new work under its id, so the revision is taken at once.
#[tokio::test]
async fn a_replan_that_copies_a_completed_step_loosely_keeps_it_as_it_ran() {
    let (server, bad) = failing_after_a_reasoning_step();
    server.role("replanner").replies(vec![Reply::json(&plan_json(vec![
        step("s1", Some("echo"), json!({"input": "again"}), &[]),
        step("s3", Some("echo"), json!({"input": "{{s1}}"}), &["s1"]),
    ]))]);
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![bad, TestTool::new("echo")]))
        .run("t")
        .await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert_eq!(server.requests_from("replanner").len(), 1);
    assert_eq!(report.step("s1").unwrap().output, Some(json!("summary one")));
    assert_eq!(
        report.step("s3").unwrap().output,
        Some(json!({"tool": "echo", "input": "summary one"}))
    );
}

#[tokio::test]
async fn references_in_model_corrected_arguments_are_resolved() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", Some("echo"), json!({"input": "hello"}), &[]),
        step("s2", Some("echo"), json!({"input": "{{s1.missing}}"}), &["s1"]),
    ])));
    server
        .role("agent")
        .reply(Reply::tool_call("echo", &json!({"input": "{{s1.input}} again"})));
    server.role("synthesizer").reply(Reply::content("ok"));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    assert!(report.succeeded(), "{:?}", report.error);
    assert!(server.requests_from("agent")[0]
        .prompt_text()
        .contains("the output of s1 has no field `missing`"));
    assert_eq!(
        report.step("s2").unwrap().output,
        Some(json!({"tool": "echo", "input": "hello again"}))
    );
}

#[tokio::test]
async fn an_unrelated_bad_request_does_not_switch_off_structured_output() {
    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::error(400, "This model's maximum context length is 8192 tokens"));
    let report = agent(&server, registry(vec![TestTool::new("echo")])).run("t").await;
    let error = report.error.unwrap();
    assert!(error.contains("maximum context length"), "{error}");
    assert_eq!(
        server.requests_from("planner").len(),
        1,
        "not retried without response_format"
    );
}

/// Server-sent events as the specification writes them: an event's `data:`
/// lines are joined with a newline, comments and `event:`/`id:` fields are
/// skipped, and CRLF line ends are fine.
#[tokio::test]
async fn a_streamed_event_split_over_several_data_lines_is_one_event() {
    use planexec::llm::{ChatRequest, Message, Role};
    let server = ScriptedServer::start();
    let stream = concat!(
        ": keep-alive\r\n",
        "event: message\r\nid: 1\r\n",
        "data: {\"choices\":[{\"index\":0,\r\n",
        "data: \"delta\":{\"role\":\"assistant\",\"content\":\"hel\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    server.on(None).reply(Reply::event_stream(stream));
    let pieces = Mutex::new(Vec::new());
    let sink = |text: &str| pieces.lock().unwrap().push(text.to_string());
    let request = ChatRequest::new(Role::Synthesizer, "m", vec![Message::user("hi")]);
    let response = provider(&server).chat_stream(request, &sink).await.unwrap();
    assert_eq!(response.content.as_deref(), Some("hello"));
    assert_eq!(*pieces.lock().unwrap(), vec!["hel".to_string(), "lo".to_string()]);
}

/// A flaky provider: the stream breaks before any text (asked again whole),
/// then 429 with `retry-after-ms` (waited for), then 503 (backed off), then
/// the answer. The caller sees the answer once, as if nothing had happened.
#[tokio::test]
async fn a_flaky_provider_is_retried_as_it_asks() {
    use planexec::llm::{ChatRequest, Message, Role};
    let server = ScriptedServer::start();
    server.on(None).replies(vec![
        Reply::cut_event_stream(": opening\n\n"),
        Reply::error(429, "slow down").with_header("retry-after-ms", "400"),
        Reply::error(503, "try later"),
        Reply::content("hello"),
    ]);
    let pieces = Mutex::new(Vec::new());
    let sink = |text: &str| pieces.lock().unwrap().push(text.to_string());
    let request = ChatRequest::new(Role::Synthesizer, "m", vec![Message::user("hi")]);
    let provider = provider_at(&server.base_url(), Some("k"));
    let response = provider.chat_stream(request, &sink).await.unwrap();
    assert_eq!(response.content.as_deref(), Some("hello"));
    assert_eq!(*pieces.lock().unwrap(), vec!["hello".to_string()]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].body["stream"], true);
    assert_ne!(requests[1].body["stream"], true, "asked again whole");
    let waited = requests[2].received_ms - requests[1].received_ms;
    assert!(waited >= 400, "retry-after-ms was honoured: {waited} ms");
}

/// Once text from a stream has been handed on (the compiler may have started
/// steps from it), a cut is an error: asking again could do the work twice.
#[tokio::test]
async fn a_stream_cut_after_text_is_an_error_not_a_second_call() {
    use planexec::llm::{ChatRequest, Message, Role};
    let server = ScriptedServer::start();
    server.on(None).replies(vec![
        Reply::cut_event_stream("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n"),
        Reply::content("hello"),
    ]);
    let sink = |_: &str| {};
    let request = ChatRequest::new(Role::Synthesizer, "m", vec![Message::user("hi")]);
    let err = provider(&server).chat_stream(request, &sink).await.unwrap_err();
    assert!(err.to_string().contains("broke off"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

/// `--record` keeps a streamed call streamed (the compiler acts on a plan as
/// it arrives) and keeps its pieces; the replay streams the same pieces.
#[tokio::test]
async fn a_streamed_call_is_recorded_and_replayed_as_a_stream() {
    use planexec::llm::cassette::{Recorder, Replayer};
    use planexec::llm::{ChatRequest, Message, Role};
    use planexec::ChatModel as _;
    let server = ScriptedServer::start();
    server.on(None).reply(Reply::content("one two three four").streamed(4));
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("run.jsonl");
    let request = || ChatRequest::new(Role::Planner, "m", vec![Message::user("plan it")]);

    let recorder = Recorder::create(provider(&server), &cassette).unwrap();
    let live = Mutex::new(Vec::new());
    let sink = |t: &str| live.lock().unwrap().push(t.to_string());
    let response = recorder.chat_stream(request(), &sink).await.unwrap();
    assert_eq!(response.content.as_deref(), Some("one two three four"));
    let live = live.into_inner().unwrap();
    assert_eq!(live.len(), 4, "the provider streamed through the recorder: {live:?}");
    assert_eq!(server.requests()[0].body["stream"], true);

    let line: Value = serde_json::from_str(std::fs::read_to_string(&cassette).unwrap().trim()).unwrap();
    assert_eq!(line["chunks"], json!(live));

    let replayer = Replayer::open(&cassette).unwrap();
    let replayed = Mutex::new(Vec::new());
    let sink = |t: &str| replayed.lock().unwrap().push(t.to_string());
    let response = replayer.chat_stream(request(), &sink).await.unwrap();
    assert_eq!(response.content.as_deref(), Some("one two three four"));
    assert_eq!(replayed.into_inner().unwrap(), live);
}

/// After a step ran and the next failed, the replanner may find the rest
/// infeasible: the revision has no new steps but the reason, and the run ends
/// `infeasible` with it (the completed step does not make it "a plan with steps").
#[tokio::test]
async fn a_revision_may_find_the_rest_infeasible_after_steps_that_ran() {
    let server = ScriptedServer::start();
    let good = TestTool::new("good");
    let bad = TestTool::new("bad").failing(u32::MAX, ToolError::not_found("`budget.txt` does not exist"));
    server.role("planner").reply(Reply::json(&plan_json(vec![
        step("s1", Some("good"), json!({"input": "costs"}), &[]),
        step("s2", Some("bad"), json!({"input": "budget"}), &[]),
        step(
            "s3",
            Some("good"),
            json!({"input": "{{s1.input}} {{s2}}"}),
            &["s1", "s2"],
        ),
    ])));
    server.role("replanner").reply(Reply::json(
        &json!({"goal": "t", "steps": [], "infeasible": "budget.txt does not exist"}),
    ));
    let report = agent(&server, registry(vec![good, bad])).run("t").await;
    assert_eq!(report.status, RunStatus::Infeasible, "{:?}", report.error);
    assert!(report.error.unwrap().contains("budget.txt does not exist"));
    assert_eq!(server.requests_from("replanner").len(), 1, "accepted at once");
}

/// A provider that keeps prompt state, as the embedded model does: it logs
/// what it is asked to prepare and the system message each call starts with.
struct KeepsPrompts {
    inner: Arc<dyn planexec::ChatModel>,
    log: Mutex<Vec<(&'static str, String)>>,
}

#[async_trait]
impl planexec::ChatModel for KeepsPrompts {
    fn describe(&self) -> String {
        "keeps prompts".into()
    }

    async fn chat(
        &self,
        request: planexec::llm::ChatRequest,
    ) -> Result<planexec::llm::ChatResponse, planexec::LlmError> {
        let system = match request.messages.first() {
            Some(planexec::llm::Message::System { content }) => content.clone(),
            other => format!("{other:?}"),
        };
        self.log.lock().unwrap().push(("chat", system));
        self.inner.chat(request).await
    }

    // A model that keeps prompt state gets the shared prompt (prompt_style auto).
    fn keeps_prompt_state(&self) -> bool {
        true
    }

    async fn prepare(&self, system: &str) -> Result<planexec::Prepared, planexec::LlmError> {
        self.log.lock().unwrap().push(("prepare", system.to_string()));
        Ok(planexec::Prepared {
            kept_tokens: 100,
            evaluated_tokens: 100,
        })
    }
}

#[tokio::test]
async fn a_plan_run_without_a_planner_prepares_the_system_prompt_its_calls_start_with_first() {
    let server = ScriptedServer::start();
    server.role("executor").reply(Reply::content("Seventeen is prime."));
    server.role("synthesizer").reply(Reply::content("17 is prime [s1]."));
    let (_dir, tools) = workspace_tools();
    let model = Arc::new(KeepsPrompts {
        inner: provider(&server),
        log: Mutex::new(Vec::new()),
    });
    let agent = planexec::Agent::builder(model.clone(), "test-model")
        .tools(tools)
        .options(options())
        .build();
    let plan: Plan = serde_json::from_value(json!({"goal": "is 17 prime", "steps": [
        {"id": "s1", "description": "say whether 17 is prime", "tool": null, "args": {}, "depends_on": []}
    ]}))
    .unwrap();

    let report = agent.run_plan("Is 17 prime?", plan).await;

    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let log = model.log.lock().unwrap().clone();
    assert_eq!(log[0].0, "prepare", "{log:?}");
    assert!(log[0].1.contains("Tools available in this run"), "{}", log[0].1);
    // The step's call starts with exactly what was prepared, so its state is
    // used; the synthesizer's system message adds its instructions to it.
    assert_eq!(log[1], ("chat", log[0].1.clone()));
    assert!(log.len() >= 3, "{log:?}");
    assert!(log[1..]
        .iter()
        .all(|(kind, system)| *kind == "chat" && system.starts_with(&log[0].1)));

    // A run that plans first needs no preparing: its planner call evaluates it.
    server
        .role("planner")
        .reply(Reply::json(&json!({"goal": "17", "steps": [
            {"id": "s1", "description": "say whether 17 is prime", "tool": null, "args": {}, "depends_on": []}
        ]})));
    server.role("executor").reply(Reply::content("Seventeen is prime."));
    server.role("synthesizer").reply(Reply::content("17 is prime [s1]."));
    model.log.lock().unwrap().clear();
    let report = agent.run("Is 17 prime?").await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert!(model.log.lock().unwrap().iter().all(|(kind, _)| *kind == "chat"));

    // Agent::prepare asks each distinct model once.
    let prepared = agent.prepare().await.unwrap();
    assert_eq!(prepared.evaluated_tokens, 100);
}

/// A ~900 KB file read by one step reaches the next step's model clipped:
/// the tool's output cap, then the dependency budget, each saying what it
/// cut, so the request stays small however large the file.
#[tokio::test]
async fn a_900_kb_read_reaches_a_reasoning_step_clipped_with_a_note() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    let line = "2026-11-26 12:00:00 INFO a line of a long log, with nothing in it\n";
    let big = line.repeat(900 * 1024 / line.len());
    assert!(big.len() > 890 * 1024);
    std::fs::write(dir.path().join("big.log"), &big).unwrap();
    let plan = json!({"goal": "summarise the log", "steps": [
        {"id": "s1", "description": "read the log", "tool": "read_file", "args": {"path": "big.log"}, "depends_on": []},
        {"id": "s2", "description": "summarise it", "tool": null, "args": {}, "depends_on": ["s1"]}
    ]});
    server.role("planner").reply(Reply::json(&plan));
    server
        .role("executor")
        .always(Reply::content("Every line is the same INFO line."));
    server
        .role("synthesizer")
        .always(Reply::content("The log repeats one INFO line [s2]."));
    let options = planexec::RunOptions {
        verify: false,
        ..options()
    };
    let report = builder(&server, tools)
        .options(options)
        .build()
        .run("Summarise big.log")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);

    let requests = server.requests_from("executor");
    assert_eq!(requests.len(), 1);
    let sent = requests[0].body.to_string();
    let prompt = requests[0].prompt_text();
    assert!(
        prompt.contains("characters cut here to fit the budget"),
        "the cut is said: {}",
        &prompt[..prompt.len().min(2000)]
    );
    // The dependency budget (4,000 characters) and the prompt around it, not 900 KB.
    assert!(sent.len() < 40 * 1024, "the executor request is {} bytes", sent.len());
}

/// Runs one plan (a file read, then a reasoning step) with `style`, and
/// returns the prompts the planner, executor and synthesizer were sent.
async fn prompts_with(style: planexec::PromptStyle) -> [String; 3] {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&json!({"goal": "summarise", "steps": [
        {"id": "s1", "description": "read notes.txt", "tool": "read_file", "args": {"path": "notes.txt"}, "depends_on": []},
        {"id": "s2", "description": "summarise the notes", "tool": null, "args": {}, "depends_on": ["s1"]}
    ]})));
    server.role("executor").reply(Reply::content("Notes about birds."));
    server
        .role("synthesizer")
        .reply(Reply::content("The notes are about birds [s2]."));
    let (dir, tools) = workspace_tools();
    std::fs::write(dir.path().join("notes.txt"), "Birds sing.\n").unwrap();
    let report = builder(&server, tools)
        .options(planexec::RunOptions {
            prompt_style: style,
            ..options()
        })
        .build()
        .run("Summarise notes.txt")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    ["planner", "executor", "synthesizer"].map(|role| server.requests_from(role)[0].prompt_text())
}

#[tokio::test]
async fn compact_prompts_give_the_tool_catalogue_to_the_planner_only() {
    // A hosted provider (keeps no prompt state) gets compact prompts by default.
    let [planner, executor, synthesizer] = prompts_with(planexec::PromptStyle::Auto).await;
    assert!(
        planner.contains("read_file(path): A text file's contents. [read_only]"),
        "{planner}"
    );
    assert!(
        planner.contains("\"{{s1}}\" inside an argument is s1's output"),
        "{planner}"
    );
    assert!(!planner.contains("Example 1."), "no worked examples: {planner}");
    for (role, prompt) in [("executor", &executor), ("synthesizer", &synthesizer)] {
        assert!(!prompt.contains("read_file"), "{role} sees no tools: {prompt}");
        assert!(!prompt.contains("How plans are written"), "{role}: {prompt}");
    }
    assert!(
        executor.contains("Birds sing."),
        "the step's input is still there: {executor}"
    );
    assert!(synthesizer.contains("Notes about birds."), "{synthesizer}");

    // The shared style sends every call the same long prefix, examples and all.
    let shared = prompts_with(planexec::PromptStyle::Shared).await;
    for prompt in &shared {
        assert!(
            prompt.contains("Tools available in this run") && prompt.contains("Example 1."),
            "{prompt}"
        );
    }
    assert!(
        shared[2].len() > 4 * synthesizer.len(),
        "{} vs {}",
        shared[2].len(),
        synthesizer.len()
    );
}

/// The answer is written from the files the run wrote: a file whose
/// content no step printed is shown to the synthesizer as it is, and one
/// that holds a result already shown is not shown twice.
#[tokio::test]
async fn the_synthesizer_sees_a_written_file_no_result_shows_and_not_one_twice() {
    let server = ScriptedServer::start();
    let (dir, tools) = workspace_tools();
    let plan = plan_json(vec![
        step("s1", Some("calculator"), json!({"expression": "19 + 23"}), &[]),
        step(
            "s2",
            Some("write_file"),
            json!({"path": "total.txt", "content": "{{s1}}"}),
            &["s1"],
        ),
        step(
            "s3",
            Some("write_file"),
            json!({"path": "notes.txt", "content": "checked by the night shift"}),
            &[],
        ),
    ]);
    server.role("planner").reply(Reply::json(&plan));
    server
        .role("synthesizer")
        .always(Reply::content("The total is 42 [s1]."));
    let report = agent(&server, tools)
        .run("Add 19 and 23, write the sum to total.txt, and write a note to notes.txt.")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "checked by the night shift"
    );
    let prompt = server.requests_from("synthesizer")[0].prompt_text();
    assert!(
        prompt.contains("notes.txt:") && prompt.contains("checked by the night shift"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("total.txt:"),
        "total.txt holds s1's result, shown above\n{prompt}"
    );
}
