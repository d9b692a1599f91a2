//! The `shell` tool: one command, run by `sh -c` in the workspace folder, with
//! no standard input, a time limit and capped output.
//!
//! A command can do anything, so the tool is an external side effect, unless
//! the whole command matches a pattern on the configured allowlist (`git
//! status`, `ls *`, ...) and has no shell operators that could chain another
//! command onto it: then it is read-only, runs in plan mode and is not confirmed.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::output::{cap_text, text_or_description, OutputCaps};
use super::workspace::Workspace;
use super::{Effect, Tool, ToolError};

/// How the shell tool runs commands.
#[derive(Debug, Clone)]
pub struct ShellConfig {
    /// Patterns of read-only commands; `*` matches any text (`git log *`).
    pub allow: Vec<String>,
    /// Time limit of one command; it is killed (with its children) past it.
    pub timeout: Duration,
    pub caps: OutputCaps,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            allow: Vec::new(),
            timeout: Duration::from_secs(60),
            caps: OutputCaps::default(),
        }
    }
}

pub struct Shell {
    workspace: Arc<Workspace>,
    config: ShellConfig,
    description: String,
}

impl Shell {
    pub fn new(workspace: Arc<Workspace>, config: ShellConfig) -> Shell {
        let mut description = format!(
            "Run a shell command (sh -c) in the workspace folder, with no input and a {}s time limit. Returns exit_code, stdout and stderr; fails when the command exits non-zero.",
            config.timeout.as_secs().max(1)
        );
        if !config.allow.is_empty() {
            description.push_str(&format!(
                " Read-only commands (no pipes, redirections or `;`): {}.",
                config.allow.join(", ")
            ));
        }
        Shell {
            workspace,
            config,
            description,
        }
    }

    /// Whether `command` is on the allowlist.
    pub fn allowed(&self, command: &str) -> bool {
        is_allowed(command, &self.config.allow)
    }
}

/// A command is allowed when it has no shell operators (which could chain,
/// redirect or substitute another command) and matches one pattern whole.
pub fn is_allowed(command: &str, patterns: &[String]) -> bool {
    const OPERATORS: &[char] = &[';', '&', '|', '<', '>', '`', '$', '(', ')', '\n', '\r', '\\'];
    if command.contains(OPERATORS) {
        return false;
    }
    let command = command.split_whitespace().collect::<Vec<_>>().join(" ");
    patterns.iter().any(|p| {
        let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
        glob(&p, &command) || p.strip_suffix(" *").is_some_and(|bare| bare == command)
    })
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Read all of `stream`, keeping at most `keep` bytes; returns them and the total.
async fn read_capped(mut stream: impl AsyncRead + Unpin, keep: usize) -> (Vec<u8>, usize) {
    let mut kept = Vec::new();
    let mut total = 0;
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        total += n;
        let room = keep.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    (kept, total)
}

fn render(bytes: &[u8], total: usize, caps: OutputCaps) -> String {
    let text = text_or_description(bytes);
    let mut text = cap_text(&text, caps);
    if total > bytes.len() && !text.starts_with("[binary") {
        text.push_str(&format!("\n[... {} more bytes not kept]", total - bytes.len()));
    }
    text
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &str {
        "shell"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command line, run by sh -c in the workspace"}},
            "required": ["command"],
            "additionalProperties": false
        })
    }
    fn effect(&self) -> Effect {
        Effect::External
    }
    fn effect_for(&self, args: &Value) -> Effect {
        match args.get("command").and_then(Value::as_str) {
            Some(command) if self.allowed(command) => Effect::ReadOnly,
            _ => Effect::External,
        }
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::invalid_args("argument `command` must be a string"))?;
        if command.trim().is_empty() {
            return Err(ToolError::invalid_args("the command is empty"));
        }
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(self.workspace.root())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group, so a timeout stops what the command started too.
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| ToolError::failed(format!("cannot start `sh`: {e}")))?;
        // Whatever ends this call (exit, time limit, the step dropped on Ctrl-C),
        // nothing the command started outlives it.
        let _group = GroupKill(child.id());
        let keep = self.config.caps.max_bytes + 1;
        let stdout = read_capped(child.stdout.take().expect("piped"), keep);
        let stderr = read_capped(child.stderr.take().expect("piped"), keep);
        let run = async {
            let ((out, out_total), (err, err_total)) = tokio::join!(stdout, stderr);
            let status = child.wait().await;
            (out, out_total, err, err_total, status)
        };
        let (out, out_total, err, err_total, status) = match tokio::time::timeout(self.config.timeout, run).await {
            Ok(done) => done,
            Err(_) => {
                return Err(ToolError::failed(format!(
                    "`{command}` did not finish within {}s and was stopped",
                    self.config.timeout.as_secs_f64()
                )));
            }
        };
        let status = status.map_err(|e| ToolError::failed(format!("waiting for `{command}` failed: {e}")))?;
        let stdout = render(&out, out_total, self.config.caps);
        let stderr = render(&err, err_total, self.config.caps);
        let code = status.code();
        if status.success() {
            return Ok(json!({"exit_code": 0, "stdout": stdout, "stderr": stderr}));
        }
        let how = match code {
            Some(code) => format!("exited with code {code}"),
            None => "was killed by a signal".to_string(),
        };
        let said = if stderr.trim().is_empty() { &stdout } else { &stderr };
        Err(ToolError::failed(format!(
            "`{command}` {how}: {}",
            crate::text::truncate_chars(said.trim(), 500)
        )))
    }
}

/// Kills the command's process group when dropped.
struct GroupKill(Option<u32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0 {
            // SAFETY: kill(2) with a negative pid signals the process group the
            // child leads (its own, from `process_group(0)`); no memory is involved.
            unsafe {
                libc::kill(-(pid as i32), libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(patterns: &[&str], command: &str) -> bool {
        is_allowed(command, &patterns.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn allowlist_matches_whole_commands() {
        assert!(allow(&["git status"], "git status"));
        assert!(allow(&["git status"], "  git   status "));
        assert!(!allow(&["git status"], "git status --short"));
        assert!(allow(&["ls *"], "ls -la src"));
        assert!(allow(&["ls *"], "ls"));
        assert!(!allow(&["ls *"], "lsblk"));
        assert!(allow(&["git log * --oneline"], "git log -5 --oneline"));
        assert!(!allow(&[], "ls"));
    }

    #[test]
    fn allowlist_refuses_chained_commands() {
        for command in [
            "ls; rm -rf x",
            "ls && rm x",
            "ls | sh",
            "ls > f",
            "ls $(rm x)",
            "ls `rm x`",
            "ls\nrm x",
        ] {
            assert!(!allow(&["ls *"], command), "{command}");
        }
    }
}
