//! Text the output grammar forces is fed to the real embedded model in
//! batches instead of being sampled one decode per token: a plan written that
//! way is still a whole plan in the grammar's shape, and a good part of its
//! tokens were forced.

mod common;

use planexec::llm::{ChatModel, ChatRequest, JsonSchemaFormat, Message};
use planexec::tools::{builtin, workspace::Workspace};
use planexec_local::{EngineConfig, LocalModel};

#[test]
fn a_plan_is_whole_and_valid_with_its_forced_text_fed_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "17").unwrap();
    std::fs::write(dir.path().join("b.txt"), "25").unwrap();
    let tools = builtin::registry(Workspace::new(dir.path()).unwrap());
    let (schema, strict) = planexec::plan::plan_schema_for_tools(&tools, 6);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut config = EngineConfig::new(common::model());
        config.prefix_states = None;
        let model = LocalModel::load(config).unwrap();
        let mut request = ChatRequest::new(
            planexec::Role::Planner,
            "local",
            vec![
                Message::system(
                    "You write plans as JSON: {\"goal\": \"...\", \"steps\": [{\"id\": \"s1\", \"description\": \"...\", \"tool\": \"read_file\", \"args\": {\"path\": \"a.txt\"}, \"depends_on\": []}]}. Tools: read_file, write_file, calculator. Pass a result on with {{s1}}.",
                ),
                Message::user("Task: Read a.txt and b.txt, add the two numbers, and write the sum to sum.txt."),
            ],
        );
        request.response_format = Some(JsonSchemaFormat {
            name: "plan".into(),
            schema,
            strict,
        });
        let reply = model.chat(request).await.unwrap();
        let text = reply.content.unwrap_or_default();
        let plan = planexec::plan::parse_plan_reply(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert!(!plan.steps.is_empty(), "{text}");
        // What the grammar fixes held: positional ids, offered tools, and the
        // arguments each tool requires (how good the plan is is the model's part).
        for (k, step) in plan.steps.iter().enumerate() {
            assert_eq!(step.id, format!("s{}", k + 1), "{text}");
            let tool = step.tool.as_deref().unwrap_or("(reasoning)");
            match tools.get(tool) {
                Some(entry) => assert!(entry.check_args(&serde_json::Value::Object(step.args.clone()), true).is_empty(), "{text}"),
                None => assert!(step.tool.is_none(), "{tool} is not offered: {text}"),
            }
        }
        let stats = model.stats();
        assert!(
            stats.forced_tokens * 3 >= stats.generated_tokens && stats.forced_tokens < stats.generated_tokens,
            "forced {} of {} tokens: {text}",
            stats.forced_tokens,
            stats.generated_tokens
        );
    });
}
