//! The resources MCP servers offer, as one built-in tool, `mcp_resource`:
//! the planner reads the list in its description, picks a `uri` (constrained
//! to the listed ones by its schema when they are few), and the executor
//! reads it from the server that offered it.

use std::sync::Arc;

use async_trait::async_trait;
use planexec::{Effect, Tool, ToolError};
use serde_json::{json, Value};

/// The name of the tool.
pub const NAME: &str = "mcp_resource";

/// Most resources listed in the description and its schema's `enum`.
const LISTED: usize = 40;

/// A resource one server offers.
#[derive(Debug, Clone)]
pub struct Offered {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
}

/// Where a resource is read from: the server that offered it.
#[async_trait]
pub trait ReadResource: Send + Sync {
    fn server_name(&self) -> &str;
    /// The resource's contents as text (binary parts described, not dumped).
    async fn read(&self, uri: &str) -> Result<String, ToolError>;
}

/// `mcp_resource`: read one resource an MCP server of the run offers.
pub struct ResourceTool {
    offered: Vec<Offered>,
    readers: Vec<Arc<dyn ReadResource>>,
    description: String,
}

impl ResourceTool {
    /// The tool over `offered` resources, read through `readers` (one per
    /// server); `None` when no server offers any.
    pub fn new(offered: Vec<Offered>, readers: Vec<Arc<dyn ReadResource>>) -> Option<ResourceTool> {
        if offered.is_empty() {
            return None;
        }
        let mut description = String::from(
            "Read a resource an MCP server offers (a document, a record, a file of the server's), by its uri:",
        );
        for r in offered.iter().take(LISTED) {
            let about = r.description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
            description.push_str(&format!(" {} ({} from {}{about});", r.uri, r.name, r.server));
        }
        if offered.len() > LISTED {
            description.push_str(&format!(" and {} more.", offered.len() - LISTED));
        }
        Some(ResourceTool {
            offered,
            readers,
            description,
        })
    }
}

#[async_trait]
impl Tool for ResourceTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn summary(&self) -> &str {
        "Read a resource an MCP server offers, by its uri (the uris are listed in the uri argument)."
    }

    fn parameters(&self) -> Value {
        let mut uri = json!({"type": "string", "description": "the resource's uri, as listed"});
        if self.offered.len() <= LISTED {
            uri["enum"] = json!(self.offered.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>());
        }
        json!({"type": "object", "properties": {"uri": uri}, "required": ["uri"], "additionalProperties": false})
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let uri = args["uri"].as_str().unwrap_or_default();
        // The server that listed it; a uri no one listed goes to the only
        // server with resources, if there is one (it may be a template's).
        let server = match self.offered.iter().find(|r| r.uri == uri) {
            Some(r) => r.server.as_str(),
            None if self.readers.len() == 1 => self.readers[0].server_name(),
            None => {
                return Err(ToolError::not_found(format!(
                    "no MCP server offers the resource {uri}; the resources are: {}",
                    self.offered
                        .iter()
                        .map(|r| r.uri.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        };
        let reader = self
            .readers
            .iter()
            .find(|r| r.server_name() == server)
            .ok_or_else(|| ToolError::not_found(format!("MCP server `{server}` is not running")))?;
        reader.read(uri).await.map(Value::String)
    }
}
