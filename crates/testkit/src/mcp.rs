//! Where `scripts/mcp-servers.sh` installed the real MCP servers the tests use.

use std::path::PathBuf;

/// The installed servers, or `None` (after a note) to skip a test. With
/// PLANEXEC_REQUIRE_MCP=1, as in CI, missing servers fail the test instead.
pub fn mcp_home() -> Option<McpHome> {
    let dir = std::env::var_os("PLANEXEC_MCP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/planexec/mcp"));
    let home = McpHome(dir);
    if home.npm("mcp-server-everything").exists() && home.python("mcp-server-git").exists() {
        return Some(home);
    }
    if std::env::var("PLANEXEC_REQUIRE_MCP").as_deref() == Ok("1") {
        panic!(
            "the MCP servers are not installed in {}: run scripts/mcp-servers.sh",
            home.0.display()
        );
    }
    eprintln!("skipped: MCP servers not installed (run scripts/mcp-servers.sh)");
    None
}

pub struct McpHome(pub PathBuf);

impl McpHome {
    /// An npm server's executable, e.g. `mcp-server-filesystem`.
    pub fn npm(&self, name: &str) -> PathBuf {
        self.0.join("npm/node_modules/.bin").join(name)
    }

    /// server-everything as MCP server `ev` in the user's own (trusted)
    /// config of a test workspace (`.no-user-config/planexec/config.toml`,
    /// which the tests' `XDG_CONFIG_HOME` points at), followed by `more`.
    /// Returns the config file's path.
    pub fn everything_in_user_config(&self, workspace: &std::path::Path, more: &str) -> PathBuf {
        let dir = workspace.join(".no-user-config/planexec");
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "{more}\n[[mcp_servers]]\nname = \"ev\"\ncommand = \"{}\"\n",
            self.npm("mcp-server-everything").display()
        );
        let file = dir.join("config.toml");
        std::fs::write(&file, text).unwrap();
        file
    }

    /// A PyPI server's executable, e.g. `mcp-server-git`.
    pub fn python(&self, name: &str) -> PathBuf {
        self.0.join("venv/bin").join(name)
    }
}
