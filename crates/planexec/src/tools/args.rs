//! Small helpers the built-in tools share: flat string-argument schemas,
//! reading an argument, the read size limit, file errors.

use serde_json::{json, Value};

use super::ToolError;

/// Largest file `read_file` returns, and largest body `http_get` returns.
pub const MAX_READ_BYTES: usize = 1024 * 1024;

pub(crate) fn string_args(names: &[(&str, &str)]) -> Value {
    let props: serde_json::Map<String, Value> = names
        .iter()
        .map(|(n, d)| (n.to_string(), json!({"type": "string", "description": d})))
        .collect();
    json!({
        "type": "object",
        "properties": props,
        "required": names.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "additionalProperties": false
    })
}

pub(crate) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::invalid_args(format!("argument `{name}` must be a string")))
}

/// A file tool's I/O error as the tool error a planner can act on.
pub(crate) fn io_error(path: &str, e: std::io::Error) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::not_found(format!("`{path}` does not exist")),
        std::io::ErrorKind::PermissionDenied => ToolError::denied(format!("`{path}`: permission denied")),
        _ => ToolError::failed(format!("`{path}`: {e}")),
    }
}
