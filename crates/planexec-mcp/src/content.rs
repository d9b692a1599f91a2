//! A tool result's content blocks as a step output: structured content when
//! the server gives it, otherwise the text; images, audio and binary
//! resources are described, not dumped into prompts.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// The step output for a successful call.
pub(crate) fn to_value(result: CallToolResult) -> Value {
    if let Some(structured) = result.structured_content {
        return structured;
    }
    Value::String(text_of(&result.content))
}

/// The blocks as text, one block per paragraph.
pub(crate) fn text_of(blocks: &[ContentBlock]) -> String {
    blocks.iter().map(block_text).collect::<Vec<_>>().join("\n")
}

/// A resource's contents as text, one part per paragraph.
pub(crate) fn resources_text(contents: &[ResourceContents]) -> String {
    contents.iter().map(resource_text).collect::<Vec<_>>().join("\n")
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => described("image", &i.mime_type, i.data.len()),
        ContentBlock::Audio(a) => described("audio", &a.mime_type, a.data.len()),
        ContentBlock::Resource(r) => resource_text(&r.resource),
        ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
        _ => "[a content block of a kind planexec does not know; not shown]".to_string(),
    }
}

fn resource_text(resource: &ResourceContents) -> String {
    match resource {
        ResourceContents::TextResourceContents { uri, text, .. } => format!("[resource {uri}]\n{text}"),
        ResourceContents::BlobResourceContents {
            uri, mime_type, blob, ..
        } => format!(
            "[resource {uri}: {}]",
            described(
                "binary",
                mime_type.as_deref().unwrap_or("application/octet-stream"),
                blob.len()
            )
            .trim_matches(['[', ']'])
        ),
        _ => "[a resource of a kind planexec does not know; not shown]".to_string(),
    }
}

/// "[image/png image, about 4,035 bytes; not shown]" (base64 is 4/3 the size).
fn described(kind: &str, mime: &str, base64_len: usize) -> String {
    let bytes = base64_len / 4 * 3;
    let text = planexec::tools::output::describe_binary(bytes, Some(&format!("{mime} {kind}")));
    text.replace("[binary output: ", "[")
}
