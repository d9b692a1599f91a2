//! The `shell` tool: one command, run in the workspace folder, with no
//! standard input, a time limit and capped output.
//!
//! A command can do anything, so the tool is an external side effect, unless
//! the whole command matches a pattern on the configured allowlist (`git
//! status`, `ls *`, ...), has no shell operators that could chain another
//! command onto it, and uses none of the writing options of common read-only
//! programs (`find -delete`, `sort -o`, `git diff --output`, ...): then it is
//! read-only, runs in plan mode and is not confirmed. [`read_only_verdict`]
//! says which rule decided. A command with no shell syntax at all runs as
//! argv, without `sh -c`.

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
    /// The one-line summary a compact prompt shows: its limit and allowlist.
    summary: String,
}

impl Shell {
    pub fn new(workspace: Arc<Workspace>, config: ShellConfig) -> Shell {
        let mut description = format!(
            "Run a command in the workspace folder (as is, or with sh -c when it uses shell syntax such as pipes), with no input and a {}s time limit. Returns exit_code, stdout and stderr; fails when the command exits non-zero.",
            config.timeout.as_secs().max(1)
        );
        let mut summary = format!(
            "Run a command in the workspace ({} s limit): exit_code, stdout, stderr.",
            config.timeout.as_secs().max(1)
        );
        if !config.allow.is_empty() {
            let allowed = format!(
                " Read-only commands (no pipes, redirections or `;`): {}.",
                config.allow.join(", ")
            );
            description.push_str(&allowed);
            summary.push_str(&allowed);
        }
        Shell {
            workspace,
            config,
            description,
            summary,
        }
    }

    /// Whether `command` is on the allowlist.
    pub fn allowed(&self, command: &str) -> bool {
        is_allowed(command, &self.config.allow)
    }

    /// Why `command` is not read-only (which rule), or `None` if it is.
    pub fn not_read_only_because(&self, command: &str) -> Option<String> {
        read_only_verdict(command, &self.config.allow).err()
    }
}

/// A command is allowed when it has no shell operators (which could chain,
/// redirect or substitute another command), matches one pattern whole, and
/// uses no writing option of its program.
pub fn is_allowed(command: &str, patterns: &[String]) -> bool {
    read_only_verdict(command, patterns).is_ok()
}

/// Options with which common read-only programs write or run something:
/// (program, options; an entry ending in `=` or a short `-x` also matches
/// `--opt=value` / `-xVALUE`).
const WRITING_OPTIONS: &[(&str, &[&str])] = &[
    (
        "find",
        &[
            "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
        ],
    ),
    ("sort", &["-o", "--output"]),
    ("sed", &["-i", "--in-place"]),
    ("git", &["--output"]),
    (
        "curl",
        &["-o", "-O", "--output", "--remote-name", "-T", "--upload-file"],
    ),
    ("wget", &[""]),
    ("tee", &[""]),
    ("xargs", &[""]),
    ("uniq", &["-"]),
    ("rg", &["--pre"]),
];

/// Whether `command` is read-only under `patterns`, or which rule says it is not.
pub fn read_only_verdict(command: &str, patterns: &[String]) -> Result<(), String> {
    const OPERATORS: &[char] = &[';', '&', '|', '<', '>', '`', '$', '(', ')', '\n', '\r', '\\'];
    if let Some(op) = command.chars().find(|c| OPERATORS.contains(c)) {
        return Err(format!(
            "it has the shell operator `{}`, which could chain or redirect another command",
            op.escape_default()
        ));
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let command = words.join(" ");
    let matched = patterns.iter().any(|p| {
        let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
        glob(&p, &command) || p.strip_suffix(" *").is_some_and(|bare| bare == command)
    });
    if !matched {
        return Err("it matches no pattern of the shell allowlist".to_string());
    }
    let program = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)).unwrap_or("");
    for (name, options) in WRITING_OPTIONS {
        if *name != program {
            continue;
        }
        if options == &[""] {
            return Err(format!("`{program}` writes or runs commands, so it is never read-only"));
        }
        let args = &words[1..];
        // `uniq IN OUT` writes OUT: a second operand is a file it writes.
        if *name == "uniq" {
            if args.iter().filter(|a| !a.starts_with('-')).count() > 1 {
                return Err("`uniq` with an output file writes it".to_string());
            }
            continue;
        }
        for &arg in args {
            let hit = options.iter().copied().find(|&o| {
                arg == o
                    || arg.starts_with(&format!("{o}="))
                    || (o.len() == 2 && !o.starts_with("--") && arg.starts_with(o) && !arg.starts_with("--"))
            });
            if let Some(option) = hit {
                return Err(format!("`{program}` with `{option}` writes files or runs commands"));
            }
        }
    }
    Ok(())
}

/// The command as argv, when it has no shell syntax at all (no quotes,
/// globs, variables, `~`, comments or assignments): then it runs without a
/// shell, so nothing in it can be read as shell code.
pub fn argv_of(command: &str) -> Option<Vec<String>> {
    const SYNTAX: &[char] = &[
        ';', '&', '|', '<', '>', '`', '$', '(', ')', '\n', '\r', '\\', '\'', '"', '*', '?', '[', ']', '{', '}', '~',
        '#', '=', '!',
    ];
    if command.contains(SYNTAX) {
        return None;
    }
    let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
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
    fn summary(&self) -> &str {
        &self.summary
    }
    fn parameters(&self) -> Value {
        super::args::string_args(&[("command", "the command line, run in the workspace")])
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
    fn why_not_read_only(&self, args: &Value) -> Option<String> {
        let command = args.get("command").and_then(Value::as_str)?;
        self.not_read_only_because(command)
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::invalid_args("argument `command` must be a string"))?;
        if command.trim().is_empty() {
            return Err(ToolError::invalid_args("the command is empty"));
        }
        let cmd = match argv_of(command) {
            Some(argv) => {
                let mut cmd = tokio::process::Command::new(&argv[0]);
                cmd.args(&argv[1..]);
                cmd
            }
            None => {
                let mut cmd = tokio::process::Command::new("sh");
                cmd.arg("-c").arg(command);
                cmd
            }
        };
        let finished = run_captured(
            cmd,
            self.workspace.root(),
            command,
            self.config.timeout,
            self.config.caps,
        )
        .await?;
        if finished.success {
            return Ok(json!({"exit_code": 0, "stdout": finished.stdout, "stderr": finished.stderr}));
        }
        let how = match finished.code {
            Some(code) => format!("exited with code {code}"),
            None => "was killed by a signal".to_string(),
        };
        Err(ToolError::failed(format!(
            "`{command}` {how}: {}",
            crate::text::truncate_chars(finished.said().trim(), 500)
        )))
    }
}

/// How a process run by [`run_captured`] ended.
pub(crate) struct Finished {
    pub success: bool,
    /// Its exit code; `None` when a signal killed it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// What a failed process said about why: its standard error, or its
    /// standard output when it wrote nothing to the error stream.
    pub fn said(&self) -> &str {
        if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        }
    }
}

/// Run `cmd` in `dir` with no standard input, in its own process group,
/// keeping at most `caps` of its output, and stop it (with everything it
/// started) past `timeout`. `label` names it in errors.
pub(crate) async fn run_captured(
    cmd: tokio::process::Command,
    dir: &std::path::Path,
    label: &str,
    timeout: Duration,
    caps: OutputCaps,
) -> Result<Finished, ToolError> {
    run_fed(cmd, (dir, None), label, timeout, caps).await
}

/// [`run_captured`], with `input` (when given) as the process's standard input.
pub(crate) async fn run_fed(
    mut cmd: tokio::process::Command,
    (dir, input): (&std::path::Path, Option<Vec<u8>>),
    label: &str,
    timeout: Duration,
    caps: OutputCaps,
) -> Result<Finished, ToolError> {
    cmd.current_dir(dir)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so a timeout stops what the command started too.
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::not_found(format!("`{label}`: no such program")),
        _ => ToolError::failed(format!("cannot start `{label}`: {e}")),
    })?;
    // Whatever ends this call (exit, time limit, the step dropped on Ctrl-C),
    // nothing the command started outlives it.
    let _group = GroupKill(child.id());
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // Written while the output is read, so a large input cannot stall
        // on a full pipe; closed when written, so the program sees its end.
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = stdin.write_all(&input).await;
        });
    }
    let keep = caps.max_bytes + 1;
    let stdout = read_capped(child.stdout.take().expect("piped"), keep);
    let stderr = read_capped(child.stderr.take().expect("piped"), keep);
    let run = async {
        let ((out, out_total), (err, err_total)) = tokio::join!(stdout, stderr);
        let status = child.wait().await;
        (out, out_total, err, err_total, status)
    };
    let (out, out_total, err, err_total, status) = tokio::time::timeout(timeout, run).await.map_err(|_| {
        ToolError::failed(format!(
            "`{label}` did not finish within {}s and was stopped",
            timeout.as_secs_f64()
        ))
    })?;
    let status = status.map_err(|e| ToolError::failed(format!("waiting for `{label}` failed: {e}")))?;
    Ok(Finished {
        success: status.success(),
        code: status.code(),
        stdout: render(&out, out_total, caps),
        stderr: render(&err, err_total, caps),
    })
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

    /// Allowed patterns do not make the writing options of read-only programs
    /// read-only, and the verdict names the rule.
    #[test]
    fn writing_options_of_read_only_programs_are_refused_by_name() {
        let patterns: Vec<String> = [
            "find *",
            "sort *",
            "sed *",
            "git diff *",
            "git grep *",
            "curl *",
            "uniq *",
            "tee *",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for (command, rule) in [
            ("find . -name x -delete", "`find` with `-delete`"),
            ("find . -exec rm {} +", "`find` with `-exec`"),
            ("sort data.txt -o data.txt", "`sort` with `-o`"),
            ("sort --output=x data.txt", "`sort` with `--output`"),
            ("sed -i.bak s/a/b/ f", "`sed` with `-i`"),
            ("git diff --output=patch.txt", "`git` with `--output`"),
            ("curl -O https://x", "`curl` with `-O`"),
            ("uniq in.txt out.txt", "`uniq` with an output file"),
            ("tee log.txt", "`tee` writes or runs commands"),
            ("rm -rf .", "matches no pattern"),
            ("find . ; rm x", "the shell operator `;`"),
        ] {
            let why = read_only_verdict(command, &patterns).unwrap_err();
            assert!(why.contains(rule), "{command}: {why}");
        }
        for command in [
            "find . -name '*.rs'",
            "sort -n data.txt",
            "git grep -o TODO",
            "uniq -c data.txt",
            "sed -n 1,5p f",
        ] {
            assert_eq!(read_only_verdict(command, &patterns), Ok(()), "{command}");
        }
    }

    #[test]
    fn only_commands_with_no_shell_syntax_run_as_argv() {
        assert_eq!(
            argv_of("git status --short"),
            Some(vec!["git".into(), "status".into(), "--short".into()])
        );
        assert_eq!(
            argv_of("  ls   -la src "),
            Some(vec!["ls".into(), "-la".into(), "src".into()])
        );
        for command in [
            "ls *.txt",
            "echo 'a b'",
            "ls ~",
            "A=1 env",
            "echo $HOME",
            "ls # x",
            "ls && ls",
            "",
        ] {
            assert_eq!(argv_of(command), None, "{command}");
        }
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
