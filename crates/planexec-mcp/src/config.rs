//! How to reach one MCP server: from `planexec.toml` (`[[mcp_servers]]`) or
//! from `--mcp 'name=command args…'` / `--mcp 'name=http://…'`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::error::McpError;

/// One MCP server.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// Prefix of its tools' names (`name.tool`).
    pub name: String,
    pub transport: McpTransport,
    /// Time limit of one tool call; the call is cancelled past it.
    pub timeout: Duration,
    /// Time limit for starting and the MCP handshake.
    pub startup_timeout: Duration,
}

/// Where the server runs.
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransport {
    /// A child process speaking MCP over its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Variables set for the child. It does not inherit planexec's
        /// environment (API keys live there): only [`BASE_ENV`], these, and
        /// the names in `env_passthrough`.
        env: BTreeMap<String, String>,
        /// Names of planexec's own variables the child may see, e.g. `GITHUB_TOKEN`.
        env_passthrough: Vec<String>,
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl McpTransport {
    /// `npx -y pkg` or `http://host/mcp`, for messages.
    pub fn describe(&self) -> String {
        match self {
            McpTransport::Stdio { command, args, .. } => {
                let mut parts = vec![command.clone()];
                parts.extend(args.iter().cloned());
                format!("`{}`", parts.join(" "))
            }
            McpTransport::Http { url, .. } => url.clone(),
        }
    }
}

/// `[[mcp_servers]]` as written in `planexec.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerToml {
    pub name: String,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub env_passthrough: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub timeout_secs: Option<f64>,
    pub startup_timeout_secs: Option<f64>,
}

/// What a stdio server inherits from planexec's environment: enough to find
/// programs, a home, temporary files and the locale, nothing that holds a
/// secret. (`LC_*` variables are passed too.)
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    // Windows needs these to start most programs.
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
];

impl McpTransport {
    /// The whole environment a stdio child starts with: the inherited part
    /// (from `inherited`, planexec's own variables) and the configured `env`.
    pub fn child_env(&self, inherited: impl Iterator<Item = (String, String)>) -> BTreeMap<String, String> {
        let McpTransport::Stdio {
            env, env_passthrough, ..
        } = self
        else {
            return BTreeMap::new();
        };
        let mut out: BTreeMap<String, String> = inherited
            .filter(|(name, _)| {
                BASE_ENV.contains(&name.to_ascii_uppercase().as_str())
                    || name.starts_with("LC_")
                    || env_passthrough.iter().any(|p| p == name)
            })
            .collect();
        out.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
        out
    }
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

impl McpServerConfig {
    pub fn stdio(name: &str, command: &str, args: &[&str]) -> McpServerConfig {
        McpServerConfig {
            name: name.to_string(),
            transport: McpTransport::Stdio {
                command: command.to_string(),
                args: args.iter().map(|s| s.to_string()).collect(),
                env: BTreeMap::new(),
                env_passthrough: Vec::new(),
                cwd: None,
            },
            timeout: DEFAULT_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        }
    }

    pub fn http(name: &str, url: &str) -> McpServerConfig {
        McpServerConfig {
            name: name.to_string(),
            transport: McpTransport::Http {
                url: url.to_string(),
                headers: BTreeMap::new(),
            },
            timeout: DEFAULT_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        }
    }

    /// From a `planexec.toml` entry: exactly one of `command` and `url`.
    pub fn from_toml(t: McpServerToml) -> Result<McpServerConfig, McpError> {
        let mut config = match (t.command, t.url) {
            (Some(command), None) => McpServerConfig {
                transport: McpTransport::Stdio {
                    command,
                    args: t.args,
                    env: t.env,
                    env_passthrough: t.env_passthrough,
                    cwd: t.cwd,
                },
                ..McpServerConfig::stdio(&t.name, "", &[])
            },
            (None, Some(url)) => McpServerConfig {
                transport: McpTransport::Http {
                    url,
                    headers: t.headers,
                },
                ..McpServerConfig::http(&t.name, "")
            },
            (Some(_), Some(_)) => {
                return Err(McpError(format!(
                    "MCP server `{}` has both `command` and `url`: give `command` (and `args`) for a server over stdio, or `url` for streamable HTTP",
                    t.name
                )))
            }
            (None, None) => {
                return Err(McpError(format!(
                    "MCP server `{}` has neither `command` nor `url`: give `command` (and `args`) for a server over stdio, or `url` for streamable HTTP",
                    t.name
                )))
            }
        };
        let secs = |v: Option<f64>, default: Duration, what: &str| match v {
            None => Ok(default),
            Some(s) if s > 0.0 => Duration::try_from_secs_f64(s)
                .map_err(|_| McpError(format!("MCP server `{}`: {what} = {s} is too large", t.name))),
            Some(s) => Err(McpError(format!(
                "MCP server `{}`: {what} must be a positive number of seconds, not {s}",
                t.name
            ))),
        };
        config.timeout = secs(t.timeout_secs, DEFAULT_TIMEOUT, "timeout_secs")?;
        config.startup_timeout = secs(t.startup_timeout_secs, DEFAULT_STARTUP_TIMEOUT, "startup_timeout_secs")?;
        config.check()?;
        Ok(config)
    }

    /// From `--mcp 'name=command arg…'` or `--mcp 'name=http://…'`. Arguments are
    /// split on whitespace, with single or double quotes grouping words.
    pub fn parse_flag(spec: &str) -> Result<McpServerConfig, McpError> {
        let usage = "use --mcp 'NAME=COMMAND ARGS…' for a server over stdio or --mcp 'NAME=http://HOST/PATH' for streamable HTTP";
        let Some((name, rest)) = spec.split_once('=') else {
            return Err(McpError(format!("`--mcp {spec}` has no `NAME=`: {usage}")));
        };
        let rest = rest.trim();
        let config = if rest.starts_with("http://") || rest.starts_with("https://") {
            McpServerConfig::http(name.trim(), rest)
        } else {
            let words = split_words(rest).map_err(|e| McpError(format!("`--mcp {spec}`: {e}")))?;
            let Some((command, args)) = words.split_first() else {
                return Err(McpError(format!("`--mcp {spec}` has no command: {usage}")));
            };
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            McpServerConfig::stdio(name.trim(), command, &args)
        };
        config.check()?;
        Ok(config)
    }

    /// A name that can prefix tool names.
    pub(crate) fn check(&self) -> Result<(), McpError> {
        let ok = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok {
            return Err(McpError(format!(
                "MCP server name `{}` may only use letters, digits, `_` and `-` (it prefixes its tools: `{}.tool`)",
                self.name, self.name
            )));
        }
        if let McpTransport::Http { url, .. } = &self.transport {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(McpError(format!(
                    "MCP server `{}`: `{url}` is not an http:// or https:// URL",
                    self.name
                )));
            }
        }
        Ok(())
    }
}

/// Shell-like word splitting: whitespace separates, quotes group.
fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("a {q} quote is not closed"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_into_stdio_and_http_servers() {
        let c = McpServerConfig::parse_flag("fs=npx -y '@scope/server files' /tmp").unwrap();
        assert_eq!(c.name, "fs");
        assert_eq!(
            c.transport,
            McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "@scope/server files".into(), "/tmp".into()],
                env: BTreeMap::new(),
                env_passthrough: Vec::new(),
                cwd: None
            }
        );
        let c = McpServerConfig::parse_flag("web=http://127.0.0.1:3001/mcp").unwrap();
        assert!(matches!(c.transport, McpTransport::Http { ref url, .. } if url == "http://127.0.0.1:3001/mcp"));
    }

    #[test]
    fn bad_flags_say_what_to_write() {
        let e = McpServerConfig::parse_flag("npx server").unwrap_err().0;
        assert!(e.contains("has no `NAME=`") && e.contains("--mcp 'NAME=COMMAND"), "{e}");
        let e = McpServerConfig::parse_flag("a.b=cmd").unwrap_err().0;
        assert!(e.contains("may only use letters"), "{e}");
        let e = McpServerConfig::parse_flag("x=cmd 'open").unwrap_err().0;
        assert!(e.contains("quote is not closed"), "{e}");
    }

    #[test]
    fn toml_needs_exactly_one_transport() {
        let t: McpServerToml = toml_like(r#"{"name": "x", "command": "a", "url": "http://b"}"#);
        assert!(McpServerConfig::from_toml(t)
            .unwrap_err()
            .0
            .contains("both `command` and `url`"));
        let t: McpServerToml = toml_like(r#"{"name": "x", "timeout_secs": 5}"#);
        assert!(McpServerConfig::from_toml(t).unwrap_err().0.contains("neither"));
        let t: McpServerToml = toml_like(r#"{"name": "x", "command": "a", "timeout_secs": 2.5}"#);
        assert_eq!(
            McpServerConfig::from_toml(t).unwrap().timeout,
            Duration::from_millis(2500)
        );
    }

    fn toml_like(json: &str) -> McpServerToml {
        serde_json::from_str(json).unwrap()
    }
}
