//! Every plan validation error, with the message a user sees, plus parsing and schema.

mod common;

use common::*;
use planexec::plan::{self, PlanLimits};
use planexec::{Plan, PlanError};
use serde_json::{json, Value};

fn errors_of(plan: Value) -> Vec<PlanError> {
    let (_dir, tools) = workspace_tools();
    let plan: Plan = serde_json::from_value(plan).unwrap();
    match plan::validate(&plan, &tools, &PlanLimits::default()) {
        Ok(()) => Vec::new(),
        Err(e) => e.0,
    }
}

fn messages_of(plan: Value) -> Vec<String> {
    errors_of(plan).iter().map(ToString::to_string).collect()
}

fn read(id: &str, deps: &[&str]) -> Value {
    step(id, Some("read_file"), json!({"path": "a.txt"}), deps)
}

#[test]
fn a_good_plan_passes() {
    assert!(errors_of(plan_json(vec![
        read("s1", &[]),
        step("s2", Some("calculator"), json!({"expression": "{{s1}} * 2"}), &["s1"]),
        step("s3", None, json!({}), &["s2"]),
    ]))
    .is_empty());
}

#[test]
fn duplicate_ids() {
    assert_eq!(
        messages_of(plan_json(vec![read("s1", &[]), read("s1", &[])])),
        ["step id `s1` is used by more than one step"]
    );
}

#[test]
fn unknown_and_self_dependencies() {
    assert_eq!(
        messages_of(plan_json(vec![read("s1", &["s9"]), read("s2", &["s2"])])),
        [
            "step s1 depends on `s9`, which is not a step of this plan",
            "step s2 depends on itself"
        ]
    );
}

#[test]
fn a_cycle_names_its_steps() {
    let errors = messages_of(plan_json(vec![
        read("s1", &["s3"]),
        read("s2", &["s1"]),
        read("s3", &["s2"]),
        read("s4", &[]),
    ]));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("the steps "), "{}", errors[0]);
    assert!(errors[0].ends_with(" form a cycle"));
    for id in ["s1", "s2", "s3"] {
        assert!(errors[0].contains(id));
    }
    assert!(!errors[0].contains("s4"));
}

#[test]
fn references_must_be_declared_dependencies() {
    assert_eq!(
        messages_of(plan_json(vec![
            read("s1", &[]),
            step(
                "s2",
                Some("calculator"),
                json!({"expression": "{{s1}} + {{s7.total}}"}),
                &[]
            ),
        ])),
        [
            "step s2 uses {{s1}} in args.expression, but `s1` is not in its depends_on",
            "step s2 uses {{s7}} in args.expression, but `s7` is not a step of this plan"
        ]
    );
}

#[test]
fn unknown_tools_list_the_available_ones() {
    assert_eq!(
        messages_of(plan_json(vec![step("s1", Some("send_email"), json!({}), &[])])),
        ["step s1 uses tool `send_email`, which does not exist (available: calculator, glob, http_get, list_dir, read_csv, read_file, read_json, replace_in_file, reverse_text, search, set_value, sort_lines, write_file)"]
    );
}

#[test]
fn arguments_are_checked_against_the_tool_schema() {
    let errors = messages_of(plan_json(vec![
        step("s1", Some("read_file"), json!({"path": 42}), &[]),
        step("s2", Some("write_file"), json!({"path": "x"}), &[]),
        step("s3", Some("read_file"), json!({"path": "a", "mode": "r"}), &[]),
    ]));
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("step s1: arguments for `read_file` are invalid: /path: 42 is not of type \"string\""),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("step s2") && errors[1].contains("\"content\" is a required property"),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].contains("step s3") && errors[2].contains("mode"),
        "{}",
        errors[2]
    );
}

#[test]
fn a_whole_reference_may_stand_for_a_non_string_argument() {
    // A number-typed argument can be fed by a reference; it is checked again once resolved.
    let (_dir, mut tools) = workspace_tools();
    struct Typed;
    #[async_trait::async_trait]
    impl planexec::Tool for Typed {
        fn name(&self) -> &str {
            "typed"
        }
        fn description(&self) -> &str {
            "needs a number"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"], "additionalProperties": false})
        }
        fn effect(&self) -> planexec::Effect {
            planexec::Effect::ReadOnly
        }
        async fn call(&self, args: Value) -> Result<Value, planexec::ToolError> {
            Ok(args["n"].clone())
        }
    }
    tools.register(std::sync::Arc::new(Typed)).unwrap();
    let p: Plan = serde_json::from_value(plan_json(vec![
        step("s1", Some("calculator"), json!({"expression": "1+1"}), &[]),
        step("s2", Some("typed"), json!({"n": "{{s1}}"}), &["s1"]),
    ]))
    .unwrap();
    plan::validate(&p, &tools, &PlanLimits::default()).unwrap();
    let bad: Plan =
        serde_json::from_value(plan_json(vec![step("s2", Some("typed"), json!({"n": "two"}), &[])])).unwrap();
    assert!(plan::validate(&bad, &tools, &PlanLimits::default()).is_err());
    // Resolution keeps the referenced value's type.
    let resolved = plan::resolve_args(&p.steps[1].args, &|_| Some(json!(2))).unwrap();
    assert_eq!(resolved["n"], json!(2));
}

#[test]
fn a_commands_result_used_whole_is_what_it_printed() {
    let args = json!({"content": "{{s1}}", "code": "{{s1.exit_code}}"});
    let shell = json!({"exit_code": 0, "stdout": "Amara\nBea\n", "stderr": ""});
    let resolved = plan::resolve_args(args.as_object().unwrap(), &|_| Some(shell.clone())).unwrap();
    assert_eq!(resolved["content"], json!("Amara\nBea\n"));
    assert_eq!(resolved["code"], json!(0));
    // A failed command, or another object, is passed as it is.
    let failed = json!({"exit_code": 1, "stdout": "", "stderr": "no such file"});
    let resolved = plan::resolve_args(args.as_object().unwrap(), &|_| Some(failed.clone())).unwrap();
    assert_eq!(resolved["content"], failed);
}

#[test]
fn too_many_steps() {
    let steps: Vec<Value> = (1..=9).map(|i| read(&format!("s{i}"), &[])).collect();
    assert_eq!(
        messages_of(plan_json(steps)),
        ["the plan has 9 steps, more than the limit of 8 (raise --max-steps or plan fewer, larger steps)"]
    );
}

#[test]
fn empty_plans_need_an_infeasible_reason() {
    assert_eq!(
        messages_of(json!({"goal": "g", "steps": []})),
        ["the plan has no steps; an empty plan is only allowed with \"infeasible\" set to the reason the task cannot be done, or with \"questions\" for the user"]
    );
    assert!(errors_of(json!({"goal": "g", "steps": [], "infeasible": "no tool for that"})).is_empty());
}

#[test]
fn reasoning_steps_take_no_arguments() {
    assert_eq!(
        messages_of(plan_json(vec![step("s1", None, json!({"x": 1}), &[])])),
        ["step s1 is a reasoning step (tool null) but has arguments; put what it needs in depends_on"]
    );
}

#[test]
fn all_problems_are_reported_at_once() {
    let errors = errors_of(plan_json(vec![
        read("s1", &["s1"]),
        step("s2", Some("nope"), json!({}), &["zz"]),
    ]));
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn file_parsing_reports_positions_and_unknown_fields() {
    let err =
        plan::parse_plan_file("{\n  \"goal\": \"g\",\n  \"steps\": [\n    {\"id\": \"s1\",}\n  ]\n}").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("the JSON is malformed at line 4, column"), "{msg}");
    let err = plan::parse_plan_file(
        r#"{"goal": "g", "steps": [{"id": "s1", "description": "d", "tool": null, "depnds_on": []}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `depnds_on`"), "{err}");
}

#[test]
fn replies_are_extracted_and_repaired() {
    let p = plan::parse_plan_reply("Plan below.\n```json\n{\"goal\": \"g\", \"steps\": [],}\n```").unwrap();
    assert_eq!(p.goal, "g");
    let p = plan::parse_plan_reply("{\"plan\": {\"goal\": \"wrapped\", \"steps\": []}}").unwrap();
    assert_eq!(p.goal, "wrapped");
    let p = plan::parse_plan_reply("ok: {'goal': 'say \"hi\"', 'steps': [], 'infeasible': None} // done").unwrap();
    assert_eq!(p.goal, "say \"hi\"");
    assert_eq!(p.infeasible, None);
    assert!(matches!(
        plan::parse_plan_reply("no json here"),
        Err(plan::ParseError::NoJson)
    ));
}

#[test]
fn the_structured_output_schema_is_specialised_and_strict() {
    let (_dir, tools) = workspace_tools();
    let (schema, strict) = plan::plan_schema_for_tools(&tools, 8);
    assert!(strict, "built-in tools all have strict-compatible schemas");
    assert!(plan::is_strict_compatible(&schema));
    let variants = schema
        .pointer("/properties/steps/items/anyOf")
        .unwrap()
        .as_array()
        .unwrap();
    assert_eq!(variants.len(), 14, "a reasoning variant plus one per tool");
    let calc = variants
        .iter()
        .find(|v| v.pointer("/properties/tool/enum/0") == Some(&json!("calculator")))
        .unwrap();
    assert_eq!(calc.pointer("/properties/args/required/0"), Some(&json!("expression")));
    // The base schema is derived from the Rust types.
    let base = plan::plan_schema();
    assert!(base.pointer("/$defs/Step/properties/depends_on").is_some(), "{base}");

    // A tool with an optional property makes the schema non-strict, still specialised.
    let mut loose = planexec::ToolRegistry::new();
    loose.register(std::sync::Arc::new(TestTool::new("echo"))).unwrap();
    assert!(plan::plan_schema_for_tools(&loose, 8).1);
    assert!(!plan::is_strict_compatible(
        &json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})
    ));
}

#[test]
fn text_rendering_shows_waves_and_side_effects() {
    let (_dir, tools) = workspace_tools();
    let p: Plan = serde_json::from_value(plan_json(vec![
        read("s1", &[]),
        read("s2", &[]),
        step(
            "s3",
            Some("write_file"),
            json!({"path": "out.txt", "content": "{{s1}}{{s2}}"}),
            &["s1", "s2"],
        ),
    ]))
    .unwrap();
    let notes = planexec::render::Annotations {
        side_effect_tools: tools
            .names()
            .into_iter()
            .filter(|t| tools.has_side_effects(t))
            .collect(),
        ..Default::default()
    };
    let text = planexec::render::text(&p, &notes);
    assert!(text.contains("wave 1 (in parallel)"), "{text}");
    assert!(text.contains("wave 2\n"), "{text}");
    assert!(
        text.contains("write_file(path=\"out.txt\", content=\"{{s1}}{{s2}}\") !  <- s1, s2"),
        "{text}"
    );
    assert!(!text.contains("read_file(path=\"a.txt\") !"), "{text}");
}

#[test]
fn renderings_name_the_agent_of_an_agent_step() {
    let p: Plan = serde_json::from_value(json!({
        "goal": "g",
        "steps": [
            {"id": "s1", "description": "find the supplier", "agent": "worker", "depends_on": []},
            {"id": "s2", "description": "say it", "depends_on": ["s1"]}
        ]
    }))
    .unwrap();
    let text = planexec::render::text(&p, &Default::default());
    assert!(text.contains("s1  find the supplier  — agent worker"), "{text}");
    assert!(text.contains("s2  say it  — reasoning  <- s1"), "{text}");
    for format in [planexec::render::Format::Mermaid, planexec::render::Format::Dot] {
        let drawn = planexec::render::render(&p, format, &Default::default());
        assert!(drawn.contains("agent worker"), "{drawn}");
    }
}

#[test]
fn ids_must_be_usable_in_references_and_infeasible_means_no_steps() {
    assert_eq!(
        messages_of(plan_json(vec![read("step 1", &[])])),
        ["step id `step 1` may only use letters, digits, `_` and `-` (so {{step 1}} references work)"]
    );
    let mut p = plan_json(vec![read("s1", &[])]);
    p["infeasible"] = json!("cannot");
    assert_eq!(
        messages_of(p),
        ["the plan has steps but also says it is infeasible; either plan the steps or leave them out and give the reason"]
    );
    // Strict structured output fills optional fields with "": read as unset.
    let parsed = plan::parse_plan_reply(
        r#"{"goal": "g", "steps": [{"id": "s1", "description": "d", "tool": null, "args": {}, "depends_on": [], "expected": ""}], "infeasible": "", "questions": [""], "assumptions": []}"#,
    )
    .unwrap();
    assert_eq!(parsed.infeasible, None);
    assert!(parsed.questions.is_empty());
    assert_eq!(parsed.steps[0].expected, None);
}

#[test]
fn a_read_of_a_path_another_step_writes_must_depend_on_the_write() {
    let write = step(
        "s1",
        Some("write_file"),
        json!({"path": "a.txt", "content": "new"}),
        &[],
    );
    assert_eq!(
        messages_of(plan_json(vec![write.clone(), read("s2", &[])])),
        ["step s1 writes `a.txt` and step s2 uses it too, but neither depends on the other, so they may run in either order; add s1 to s2's depends_on (or s2 to s1's, if s2 must see the old content)"]
    );
    assert!(errors_of(plan_json(vec![write, read("s2", &["s1"])])).is_empty());
}

#[test]
fn a_calculation_of_a_bare_output_is_sent_back() {
    let messages = messages_of(plan_json(vec![
        read("s1", &[]),
        step("s2", Some("calculator"), json!({"expression": "{{s1}}"}), &["s1"]),
    ]));
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("count({{s1}}) or sum({{s1}})") && messages[0].contains("reasoning step"),
        "{messages:?}"
    );
}
