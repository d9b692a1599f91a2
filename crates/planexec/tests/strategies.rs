//! Every strategy against the scripted OpenAI-compatible server over real
//! HTTP: the happy path, a failing tool, and the replan bound; the compiler
//! dispatching steps from a plan that is still streaming in.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use common::*;
use planexec::{Effect, RunOptions, RunStatus, Strategy, Tool, ToolError, ToolRegistry};
use planexec_testkit::{Reply, ScriptedServer};
use serde_json::{json, Value};

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A tool that records when each call started, and echoes its input.
struct Stamp {
    name: &'static str,
    calls: Arc<Mutex<Vec<(String, u64)>>>,
    sleep: Duration,
    /// Fail every call whose input contains this.
    fail_on: Option<&'static str>,
}

#[async_trait]
impl Tool for Stamp {
    fn name(&self) -> &str {
        self.name
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
        self.calls.lock().unwrap().push((input.clone(), now_ms()));
        tokio::time::sleep(self.sleep).await;
        match self.fail_on {
            Some(bad) if input.contains(bad) => Err(ToolError::failed(format!("{bad} is broken"))),
            _ => Ok(json!(format!("echo {input}"))),
        }
    }
}

type Calls = Arc<Mutex<Vec<(String, u64)>>>;

fn tools(fail_on: Option<&'static str>, sleep: Duration) -> (ToolRegistry, Calls) {
    let calls: Calls = Arc::default();
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(Stamp {
        name: "echo",
        calls: calls.clone(),
        sleep,
        fail_on,
    }))
    .unwrap();
    (reg, calls)
}

fn echo(id: &str, input: &str, deps: &[&str]) -> Value {
    step(id, Some("echo"), json!({ "input": input }), deps)
}

/// s1 and s2 in parallel, s3 joins them.
fn three_steps() -> Vec<Value> {
    vec![
        echo("s1", "a", &[]),
        echo("s2", "b", &[]),
        echo("s3", "{{s1}} and {{s2}}", &["s1", "s2"]),
    ]
}

fn run_options(strategy: Strategy, max_replans: u32) -> RunOptions {
    RunOptions {
        strategy,
        max_replans,
        ..options()
    }
}

fn calls_from(server: &ScriptedServer, role: &str) -> usize {
    server.requests_from(role).len()
}

/// What the server must answer for the happy path of each strategy.
fn script_happy_path(server: &ScriptedServer, strategy: Strategy) {
    match strategy {
        Strategy::React => {
            server.role("executor").replies(vec![
                Reply::tool_call("echo", &json!({"input": "a"})),
                Reply::tool_call("echo", &json!({"input": "b"})),
                Reply::tool_call("echo", &json!({"input": "echo a and echo b"})),
                Reply::content("It says echo a and echo b."),
            ]);
        }
        _ => {
            server
                .role("planner")
                .reply(Reply::json(&plan_json(three_steps())).streamed(4));
            // replan-each-step: the replanner keeps the rest after s1 and after s2.
            server.role("replanner").replies(vec![
                Reply::json(&plan_json(three_steps()[1..].to_vec())),
                Reply::json(&plan_json(three_steps()[2..].to_vec())),
            ]);
            server
                .role("synthesizer")
                .reply(Reply::content("It says echo a and echo b [s3]."));
        }
    }
}

#[tokio::test]
async fn every_strategy_answers_on_the_happy_path_with_its_own_number_of_model_calls() {
    for strategy in Strategy::ALL {
        let server = ScriptedServer::start();
        script_happy_path(&server, strategy);
        let (reg, calls) = tools(None, Duration::ZERO);
        let agent = builder(&server, reg).options(run_options(strategy, 2)).build();
        let report = agent.run("join a and b").await;
        assert_eq!(report.status, RunStatus::Succeeded, "{strategy}: {:?}", report.error);
        assert!(
            report.answer.as_deref().unwrap().contains("echo a and echo b"),
            "{strategy}"
        );
        let inputs: Vec<String> = calls.lock().unwrap().iter().map(|(i, _)| i.clone()).collect();
        assert_eq!(inputs.len(), 3, "{strategy}: {inputs:?}");
        assert!(
            inputs.contains(&"echo a and echo b".to_string()),
            "{strategy}: {inputs:?}"
        );
        let total = server.requests().len();
        let (planner, replanner, executor, synthesizer) = (
            calls_from(&server, "planner"),
            calls_from(&server, "replanner"),
            calls_from(&server, "executor"),
            calls_from(&server, "synthesizer"),
        );
        match strategy {
            // Plan once, answer once: no model between the tools.
            Strategy::PlanExecute | Strategy::Rewoo | Strategy::Compiler => {
                assert_eq!((planner, synthesizer, total), (1, 1, 2), "{strategy}")
            }
            // The replanner looks after s1 and s2 (after s3 nothing is left).
            Strategy::ReplanEachStep => {
                assert_eq!((planner, replanner, synthesizer, total), (1, 2, 1, 4), "{strategy}");
                assert_eq!(report.replans, 0, "unchanged plans are not revisions");
            }
            // One turn per tool call, and one to answer.
            Strategy::React => assert_eq!((executor, total), (4, 4), "{strategy}"),
        }
        let usage = report.usage.total();
        assert_eq!(usage.calls as usize, total, "{strategy}: every call is metered");
        // The same events and report shape for all strategies.
        assert_eq!(report.steps.iter().filter(|s| s.succeeded()).count(), 3, "{strategy}");
    }
}

#[tokio::test]
async fn only_compiler_streams_and_the_compiler_request_asks_for_a_stream() {
    let server = ScriptedServer::start();
    script_happy_path(&server, Strategy::Compiler);
    let (reg, _) = tools(None, Duration::ZERO);
    builder(&server, reg)
        .options(run_options(Strategy::Compiler, 2))
        .build()
        .run("join a and b")
        .await;
    assert_eq!(server.requests_from("planner")[0].body["stream"], json!(true));
    assert_ne!(server.requests_from("synthesizer")[0].body["stream"], json!(true));
}

/// A plan whose s2 fails, and the revision the replanner gives: s4 instead.
fn script_failure_and_recovery(server: &ScriptedServer, strategy: Strategy) {
    let failing = vec![
        echo("s1", "a", &[]),
        echo("s2", "broken b", &["s1"]),
        echo("s3", "{{s2}}", &["s2"]),
    ];
    let recovery = plan_json(vec![echo("s4", "b again", &[]), echo("s5", "{{s4}}", &["s4"])]);
    match strategy {
        Strategy::React => server.role("executor").replies(vec![
            Reply::tool_call("echo", &json!({"input": "a"})),
            Reply::tool_call("echo", &json!({"input": "broken b"})),
            Reply::tool_call("echo", &json!({"input": "b again"})),
            Reply::content("Recovered: echo b again."),
        ]),
        _ => {
            server
                .role("planner")
                .reply(Reply::json(&plan_json(failing)).streamed(3));
            // replan-each-step is first asked after s1 (keep the rest), then after the failure.
            if strategy == Strategy::ReplanEachStep {
                server
                    .role("replanner")
                    .containing("has just completed")
                    .reply(Reply::json(&plan_json(vec![
                        echo("s2", "broken b", &["s1"]),
                        echo("s3", "{{s2}}", &["s2"]),
                    ])));
            }
            server
                .role("replanner")
                .containing("Error: broken is broken")
                .always(Reply::json(&recovery));
            server
                .role("replanner")
                .always(Reply::json(&plan_json(vec![echo("s5", "{{s4}}", &["s4"])])));
            server
                .role("synthesizer")
                .reply(Reply::content("Recovered: echo b again."));
        }
    }
}

#[tokio::test]
async fn every_strategy_recovers_from_a_failing_tool() {
    for strategy in Strategy::ALL {
        let server = ScriptedServer::start();
        script_failure_and_recovery(&server, strategy);
        let (reg, calls) = tools(Some("broken"), Duration::ZERO);
        let agent = builder(&server, reg).options(run_options(strategy, 2)).build();
        let report = agent.run("get b").await;
        assert_eq!(report.status, RunStatus::Succeeded, "{strategy}: {:?}", report.error);
        assert_eq!(report.replans, 1, "{strategy}");
        let inputs: Vec<String> = calls.lock().unwrap().iter().map(|(i, _)| i.clone()).collect();
        // a ran once and was never run again; the broken call was not retried.
        assert_eq!(inputs.iter().filter(|i| *i == "a").count(), 1, "{strategy}: {inputs:?}");
        assert_eq!(
            inputs.iter().filter(|i| *i == "broken b").count(),
            1,
            "{strategy}: {inputs:?}"
        );
        assert!(inputs.contains(&"b again".to_string()), "{strategy}: {inputs:?}");
        let failed = report
            .steps
            .iter()
            .find(|s| !s.succeeded() && s.error.is_some())
            .unwrap();
        assert!(
            failed.error.as_deref().unwrap().contains("broken is broken"),
            "{strategy}"
        );
        if strategy == Strategy::React {
            // The one model saw the error in its history.
            let last = server.requests_from("executor").pop().unwrap();
            assert!(
                last.prompt_text().contains("error: `echo` failed") || last.prompt_text().contains("broken is broken"),
                "{strategy}"
            );
        } else {
            let replanner = server.requests_from("replanner");
            assert!(
                replanner.iter().any(|r| r.prompt_text().contains("broken is broken")),
                "{strategy}"
            );
        }
    }
}

#[tokio::test]
async fn every_strategy_stops_at_the_replan_bound() {
    for strategy in Strategy::ALL {
        let server = ScriptedServer::start();
        match strategy {
            Strategy::React => server.role("executor").replies(vec![
                Reply::tool_call("echo", &json!({"input": "broken 1"})),
                Reply::tool_call("echo", &json!({"input": "broken 2"})),
                Reply::tool_call("echo", &json!({"input": "broken 3"})),
                Reply::content("never reached"),
            ]),
            _ => {
                server
                    .role("planner")
                    .reply(Reply::json(&plan_json(vec![echo("s1", "broken 1", &[])])).streamed(2));
                // Every revision tries another broken input (so it is progress, and fails).
                server.role("replanner").replies(vec![
                    Reply::json(&plan_json(vec![echo("s2", "broken 2", &[])])),
                    Reply::json(&plan_json(vec![echo("s3", "broken 3", &[])])),
                ]);
                server.role("synthesizer").reply(Reply::content("never reached"));
            }
        }
        let (reg, calls) = tools(Some("broken"), Duration::ZERO);
        let agent = builder(&server, reg).options(run_options(strategy, 1)).build();
        let report = agent.run("try").await;
        assert_eq!(report.status, RunStatus::Failed, "{strategy}");
        let error = report.error.unwrap();
        assert!(error.contains("limit") && error.contains("(1)"), "{strategy}: {error}");
        assert_eq!(report.replans, 1, "{strategy}");
        assert_eq!(
            calls.lock().unwrap().len(),
            2,
            "{strategy}: the first try and one revision"
        );
        assert_eq!(calls_from(&server, "synthesizer"), 0, "{strategy}");
        if strategy != Strategy::React {
            assert_eq!(calls_from(&server, "replanner"), 1, "{strategy}");
        }
    }
}

#[tokio::test]
async fn replan_each_step_revises_after_a_step_and_stops_consulting_at_the_bound() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&plan_json(vec![
        echo("s1", "a", &[]),
        echo("s2", "b", &["s1"]),
        echo("s3", "c", &["s2"]),
    ])));
    // After s1 the replanner swaps the rest for x; the bound (1) then stops the consulting.
    server.role("replanner").always(Reply::json(&plan_json(vec![
        echo("x1", "x {{s1}}", &["s1"]),
        echo("x2", "y", &["x1"]),
    ])));
    server.role("synthesizer").reply(Reply::content("done"));
    let (reg, calls) = tools(None, Duration::ZERO);
    let agent = builder(&server, reg)
        .options(run_options(Strategy::ReplanEachStep, 1))
        .build();
    let report = agent.run("go").await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let inputs: Vec<String> = calls.lock().unwrap().iter().map(|(i, _)| i.clone()).collect();
    assert_eq!(inputs, ["a", "x echo a", "y"]);
    assert_eq!((report.replans, calls_from(&server, "replanner")), (1, 1));
    assert_eq!(report.plans.len(), 2);
    assert_eq!(report.plans[1].reason, "revised after step s1");
}

#[tokio::test]
async fn replan_each_step_finishes_early_when_the_replanner_says_the_task_is_done() {
    let server = ScriptedServer::start();
    server.role("planner").reply(Reply::json(&plan_json(vec![
        echo("s1", "a", &[]),
        echo("s2", "b", &["s1"]),
    ])));
    server
        .role("replanner")
        .reply(Reply::json(&json!({"goal": "g", "steps": []})));
    server.role("synthesizer").reply(Reply::content("a was enough"));
    let (reg, calls) = tools(None, Duration::ZERO);
    let report = builder(&server, reg)
        .options(run_options(Strategy::ReplanEachStep, 2))
        .build()
        .run("go")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(calls.lock().unwrap().len(), 1, "s2 never ran");
    assert!(
        report.plans[1].reason.contains("found the task done"),
        "{}",
        report.plans[1].reason
    );
}

#[tokio::test]
async fn rewoo_sends_reasoning_steps_back_and_runs_no_model_between_tools() {
    let server = ScriptedServer::start();
    server.role("planner").replies(vec![
        Reply::json(&plan_json(vec![
            echo("s1", "a", &[]),
            step("s2", None, json!({}), &["s1"]),
        ])),
        Reply::json(&plan_json(vec![echo("s1", "a", &[]), echo("s2", "{{s1}}!", &["s1"])])),
    ]);
    server.role("synthesizer").reply(Reply::content("echo echo a!"));
    let (reg, _) = tools(None, Duration::ZERO);
    let report = builder(&server, reg)
        .options(run_options(Strategy::Rewoo, 2))
        .build()
        .run("go")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let planner = server.requests_from("planner");
    assert!(planner[0].prompt_text().contains("Every step must call a tool"));
    assert!(planner[1]
        .prompt_text()
        .contains("with the rewoo strategy every step calls a tool"));
    assert_eq!(calls_from(&server, "executor"), 0);
}

#[tokio::test]
async fn compiler_starts_tools_while_the_plan_is_still_streaming() {
    let server = ScriptedServer::start();
    // The plan arrives in 8 pieces over 1.6 s; s1's JSON is complete in the first few.
    let plan = plan_json(vec![
        echo("s1", "first", &[]),
        echo("s2", "second", &[]),
        echo("s3", "{{s1}} {{s2}}", &["s1", "s2"]),
        echo("s4", "{{s3}}", &["s3"]),
    ]);
    server
        .role("planner")
        .reply(Reply::json(&plan).streamed(8).with_delay(Duration::from_millis(1600)));
    server.role("synthesizer").reply(Reply::content("done"));
    let (reg, calls) = tools(None, Duration::from_millis(50));
    let report = builder(&server, reg)
        .options(run_options(Strategy::Compiler, 2))
        .build()
        .run("go")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let planner = &server.requests_from("planner")[0];
    let calls = calls.lock().unwrap().clone();
    let first_call = calls.iter().find(|(i, _)| i == "first").unwrap().1;
    let second_call = calls.iter().find(|(i, _)| i == "second").unwrap().1;
    assert!(
        first_call < planner.replied_ms,
        "s1 started at {first_call}, the plan was complete at {}",
        planner.replied_ms
    );
    assert!(first_call >= planner.received_ms);
    // s1 ran before s2's JSON had arrived: dispatch is per step, not per reply.
    assert!(first_call < second_call);
    assert_eq!(report.plans.len(), 1);
    assert_eq!(report.plans[0].reason, "initial plan (streamed)");
    assert_eq!(report.plan.unwrap().steps.len(), 4);
}

#[tokio::test]
async fn compiler_joiner_can_ask_for_more_work() {
    let server = ScriptedServer::start();
    server
        .role("planner")
        .reply(Reply::json(&plan_json(vec![echo("s1", "a", &[])])).streamed(3));
    server
        .role("synthesizer")
        .replies(vec![Reply::content("REPLAN: b is missing"), Reply::content("a and b")]);
    server
        .role("replanner")
        .reply(Reply::json(&plan_json(vec![echo("s2", "b", &[])])));
    let (reg, calls) = tools(None, Duration::ZERO);
    let report = builder(&server, reg)
        .options(run_options(Strategy::Compiler, 2))
        .build()
        .run("get a and b")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    assert_eq!(report.answer.as_deref(), Some("a and b"));
    assert_eq!(calls.lock().unwrap().len(), 2);
    assert_eq!(report.replans, 1);
    assert!(server.requests_from("replanner")[0]
        .prompt_text()
        .contains("b is missing"));
}

#[tokio::test]
async fn compiler_plans_the_rest_when_the_streamed_plan_breaks_off() {
    let server = ScriptedServer::start();
    // s1 is fine, then a step with an unknown tool: s1 runs, the rest is replanned.
    server.role("planner").reply(
        Reply::json(&plan_json(vec![
            echo("s1", "a", &[]),
            step("s2", Some("no_such_tool"), json!({}), &["s1"]),
        ]))
        .streamed(4),
    );
    server
        .role("replanner")
        .reply(Reply::json(&plan_json(vec![echo("s3", "{{s1}} again", &["s1"])])));
    server.role("synthesizer").reply(Reply::content("done"));
    let (reg, calls) = tools(None, Duration::ZERO);
    let report = builder(&server, reg)
        .options(run_options(Strategy::Compiler, 2))
        .build()
        .run("go")
        .await;
    assert_eq!(report.status, RunStatus::Succeeded, "{:?}", report.error);
    let inputs: Vec<String> = calls.lock().unwrap().iter().map(|(i, _)| i.clone()).collect();
    assert_eq!(inputs, ["a", "echo a again"]);
    assert!(server.requests_from("replanner")[0]
        .prompt_text()
        .contains("no_such_tool"));
    assert_eq!(report.plans[0].reason, "initial plan (streamed, cut short)");
}

#[tokio::test]
async fn react_refuses_a_given_plan_instead_of_ignoring_it() {
    let server = ScriptedServer::start();
    let (reg, calls) = tools(None, Duration::ZERO);
    let plan: planexec::Plan = serde_json::from_value(plan_json(vec![echo("s1", "a", &[])])).unwrap();
    let report = builder(&server, reg)
        .options(run_options(Strategy::React, 2))
        .build()
        .run_plan("go", plan)
        .await;
    assert_eq!(report.status, RunStatus::Failed);
    assert!(report.error.unwrap().contains("the react strategy makes no plan"));
    assert!(calls.lock().unwrap().is_empty());
    assert!(server.requests().is_empty());
}
