//! Hard budgets: a run stops with `budget_exhausted` before the model call or
//! step that would cross its token, cost or time limit, keeps what it finished,
//! tells the planner what is left, and resumes with a larger budget.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use planexec::accounting::{Price, Pricing};
use planexec::{Budget, CancelToken, MemoryStore, ResumeOptions, RunStatus, StepStatus};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::json;

fn with_budget(budget: Budget) -> planexec::RunOptions {
    planexec::RunOptions { budget, ..options() }
}

#[tokio::test]
async fn a_token_budget_stops_before_the_call_that_would_cross_it_and_resume_finishes() {
    let server = ScriptedServer::start();
    server.role("planner").reply(
        Reply::json(&plan_json(vec![
            step("s1", Some("echo"), json!({"input": "a"}), &[]),
            step("s2", Some("echo"), json!({"input": "b"}), &["s1"]),
        ]))
        .with_usage(1750, 200),
    );
    server
        .role("synthesizer")
        .reply(Reply::content("done").with_usage(900, 20));
    let store = Arc::new(MemoryStore::default());
    let echo = TestTool::new("echo");
    let calls = echo.counter();
    let tools = Arc::new(registry(vec![echo]));
    let small = Budget {
        max_tokens: Some(2000),
        ..Budget::default()
    };
    let report = builder(&server, planexec::ToolRegistry::new())
        .tools(tools.clone())
        .options(with_budget(small))
        .store(store.clone())
        .build()
        .run("t")
        .await;
    assert_eq!(report.status, RunStatus::BudgetExhausted, "{:?}", report.error);
    let error = report.error.clone().unwrap();
    assert!(
        error.starts_with(
            "the token budget (2,000) would be exceeded by the synthesizer call: 1,950 tokens used and about"
        ),
        "{error}"
    );
    assert_eq!(
        report.step("s2").unwrap().status,
        StepStatus::Succeeded,
        "the steps finished"
    );
    assert_eq!(
        server.requests_from("synthesizer").len(),
        0,
        "the crossing call was not made"
    );
    assert_eq!(report.budget, small);
    let planner_prompt = server.requests_from("planner")[0].prompt_text();
    assert!(
        planner_prompt.contains("Budget left for this whole run: 2,000 tokens."),
        "{planner_prompt}"
    );

    let larger = builder(&server, planexec::ToolRegistry::new())
        .tools(tools)
        .options(with_budget(Budget {
            max_tokens: Some(10_000),
            ..Budget::default()
        }))
        .store(store.clone())
        .build();
    let resumed = larger
        .resume(&report.run_id, &ResumeOptions::default(), &CancelToken::new())
        .await
        .unwrap();
    assert!(resumed.succeeded(), "{:?}", resumed.error);
    assert_eq!(resumed.answer.as_deref(), Some("done"));
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2, "no step ran twice");
    let total = resumed.usage.total();
    assert_eq!(
        total.prompt_tokens + total.completion_tokens,
        2870,
        "spend adds up across sessions"
    );
}

#[tokio::test]
async fn a_time_budget_stops_before_the_next_step() {
    let server = ScriptedServer::start();
    let slow = TestTool::new("slow").sleeping(Duration::from_millis(400));
    let after = TestTool::new("echo");
    let after_calls = after.counter();
    let plan = serde_json::from_value(plan_json(vec![
        step("s1", Some("slow"), json!({"input": "a"}), &[]),
        step("s2", Some("echo"), json!({"input": "{{s1.input}}"}), &["s1"]),
    ]))
    .unwrap();
    let report = builder(&server, registry(vec![slow, after]))
        .options(with_budget(Budget {
            max_time_ms: Some(200),
            ..Budget::default()
        }))
        .build()
        .run_plan("t", plan)
        .await;
    assert_eq!(report.status, RunStatus::BudgetExhausted);
    let error = report.error.clone().unwrap();
    assert!(
        error.starts_with("the time budget (0.2 s) is used up:") && error.contains("before step s2"),
        "{error}"
    );
    assert_eq!(after_calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(report.step("s1").unwrap().status, StepStatus::Succeeded);
}

#[tokio::test]
async fn a_cost_budget_counts_priced_tokens() {
    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::json(&plan_json(vec![step("s1", None, json!({}), &[])])).with_usage(100_000, 1_000));
    let pricing = Pricing {
        default: Some(Price {
            input_per_million: 1.0,
            output_per_million: 4.0,
            ..Price::default()
        }),
        ..Pricing::default()
    };
    let report = builder(&server, registry(vec![]))
        .options(with_budget(Budget {
            max_cost: Some(0.05),
            ..Budget::default()
        }))
        .pricing(pricing)
        .build()
        .run("t")
        .await;
    // The plan cost $0.104; the reasoning step's executor call is never made.
    assert_eq!(report.status, RunStatus::BudgetExhausted, "{:?}", report.error);
    let error = report.error.unwrap();
    assert!(
        error.starts_with("the cost budget ($0.0500) is used up: $0.1040 spent, before step s1"),
        "{error}"
    );
    assert!(server.requests_from("executor").is_empty());
}
