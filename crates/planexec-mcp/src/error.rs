//! The one error type of the MCP adapter: why a server could not be used,
//! in words a user can act on.

/// Why a server could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct McpError(pub String);
