//! A tool whose argument schema planexec's own grammar subset cannot express
//! (a `pattern`, as MCP servers write them) is called by the real embedded
//! model through llama.cpp's general schema converter: the arguments it
//! writes match the pattern.

mod common;

use planexec::llm::{ChatModel, ChatRequest, Message, ToolChoice, ToolSpec};
use planexec_local::{EngineConfig, LocalModel};
use serde_json::json;

#[test]
fn a_call_follows_a_pattern_in_the_tools_schema() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let model = LocalModel::load(EngineConfig::new(common::model())).unwrap();
        let mut request = ChatRequest::new(
            planexec::Role::Agent,
            "local",
            vec![
                Message::system("You book meetings by calling tools."),
                Message::user("Book the review meeting on the first of March 2027."),
            ],
        );
        request.tools = vec![ToolSpec {
            name: "book".into(),
            description: "Book a meeting on a day".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "day": {"type": "string", "description": "the day", "pattern": "^D20[0-9]{6}$"},
                    "title": {"type": "string"}
                },
                "required": ["day", "title"]
            }),
        }];
        request.tool_choice = ToolChoice::Required;
        let reply = model.chat(request).await.unwrap();
        let call = reply.tool_calls.first().expect("a tool call");
        assert_eq!(call.name, "book");
        let day = call.arguments["day"].as_str().unwrap_or_default();
        // An unusual shape the model would not write unless the grammar made it.
        let shape = day.len() == 9 && day.starts_with("D20") && day[1..].chars().all(|c| c.is_ascii_digit());
        assert!(shape, "the day follows the pattern: {:?}", call.arguments);
    });
}
