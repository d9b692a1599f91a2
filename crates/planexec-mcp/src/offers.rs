//! What a server offers besides tools: its resources (read by the built-in
//! `mcp_resource` tool) and its prompts (task templates: `planexec run
//! --mcp-prompt server/name arg=value`), listed when it starts.

use async_trait::async_trait;
use planexec::ToolError;
use rmcp::model::{GetPromptRequestParams, Prompt, ReadResourceRequestParams};
use rmcp::{Peer, RoleClient};
use serde_json::Value;

use crate::error::McpError;
use crate::resources::{Offered, ReadResource};
use crate::McpServer;

impl McpServer {
    /// List the resources and prompts the server says it has. A server that
    /// fails to list them still serves its tools: the failure is logged.
    pub(crate) async fn list_offers(&self, peer: &Peer<RoleClient>) {
        let Some(info) = peer.peer_info() else {
            return;
        };
        let name = self.name().to_string();
        if info.capabilities.resources.is_some() {
            match peer.list_all_resources().await {
                Ok(listed) => {
                    let offered = listed.into_iter().map(|r| Offered {
                        server: name.clone(),
                        uri: r.uri.clone(),
                        name: r.name.clone(),
                        description: r.description.clone(),
                    });
                    *self.resources.lock().unwrap_or_else(|e| e.into_inner()) = offered.collect();
                }
                Err(e) => tracing::warn!(server = %name, error = %e, "listing its resources failed"),
            }
        }
        if info.capabilities.prompts.is_some() {
            match peer.list_all_prompts().await {
                Ok(listed) => *self.prompts.lock().unwrap_or_else(|e| e.into_inner()) = listed,
                Err(e) => tracing::warn!(server = %name, error = %e, "listing its prompts failed"),
            }
        }
    }

    /// The resources it offered when it started.
    pub fn resources(&self) -> Vec<Offered> {
        self.resources.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The prompts it offered when it started.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.prompts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Prompt `name` with `arguments`, as one text: its messages' text, in
    /// order (embedded resources with their text). Errors say what the
    /// prompt takes.
    pub async fn prompt_text(&self, name: &str, arguments: &[(String, String)]) -> Result<String, McpError> {
        let prompts = self.prompts();
        let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
            let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
            return Err(McpError(format!(
                "MCP server `{}` has no prompt `{name}`; its prompts: {}",
                self.name(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        };
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !arguments.iter().any(|(k, _)| *k == a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(McpError(format!(
                "prompt `{}/{name}` needs {}: add NAME=VALUE for each after the prompt's name",
                self.name(),
                missing.join(", ")
            )));
        }
        let (peer, _) = self.peer().await.map_err(|e| McpError(e.message))?;
        let args: serde_json::Map<String, Value> = arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let got = peer
            .get_prompt(GetPromptRequestParams::new(name).with_arguments(args))
            .await
            .map_err(|e| McpError(format!("MCP server `{}`: prompt `{name}` failed: {e}", self.name())))?;
        let blocks: Vec<_> = got.messages.into_iter().map(|m| m.content).collect();
        Ok(crate::content::text_of(&blocks))
    }
}

#[async_trait]
impl ReadResource for McpServer {
    fn server_name(&self) -> &str {
        self.name()
    }

    async fn read(&self, uri: &str) -> Result<String, ToolError> {
        let (peer, _) = self.peer().await?;
        let read = peer
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| ToolError::not_found(format!("MCP server `{}`: reading {uri} failed: {e}", self.name())))?;
        Ok(crate::content::resources_text(&read.contents))
    }
}
