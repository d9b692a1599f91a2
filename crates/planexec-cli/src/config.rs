//! Layered configuration with the source of every value.
//!
//! Layers, lowest precedence first: built-in defaults, `config.toml` in the
//! user's config folder (`$XDG_CONFIG_HOME/planexec/`, usually
//! `~/.config/planexec/`), `planexec.toml` in the workspace, environment
//! variables, then command-line flags. In a workspace file the user has not
//! trusted ([`crate::trust`]) the keys that act with the user's authority are
//! ignored, and a notice names them. Unknown keys are errors naming the key
//! and the file. `planexec config show` prints each effective value with where
//! it came from; secrets are never printed.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use planexec::accounting::{Price, Pricing};
use planexec::tools::shell::ShellConfig;
use planexec::{Budget, Effect, Mode, RunOptions};
use planexec_mcp::McpServerConfig;
use serde::Deserialize;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    File(PathBuf),
    Env(&'static str),
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Env(v) => write!(f, "env {v}"),
            Source::Flag(name) => write!(f, "flag --{name}"),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    provider: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
    model: Option<String>,
    model_path: Option<String>,
    local_model: Option<String>,
    models: Option<RoleModels>,
    prices: Option<BTreeMap<String, PriceEntry>>,
    limits: Option<Limits>,
    tools: Option<ToolsSection>,
    mode: Option<String>,
    approval: Option<String>,
    strategy: Option<String>,
    fallback: Option<String>,
    mend: Option<String>,
    prompt_style: Option<String>,
    plan_reuse: Option<String>,
    recover: Option<String>,
    verify: Option<bool>,
    sampling_in_plan_mode: Option<bool>,
    shell: Option<ShellSection>,
    http: Option<HttpSection>,
    mcp_servers: Option<Vec<planexec_mcp::McpServerToml>>,
    agents: Option<BTreeMap<String, crate::agents::AgentToml>>,
    engine: Option<String>,
    restate: Option<RestateSection>,
}

/// `[restate]`: where the Restate server of `engine = "restate"` answers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RestateSection {
    ingress: Option<String>,
    admin: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellSection {
    enabled: Option<bool>,
    allow: Option<Vec<String>>,
    timeout: Option<f64>,
    /// Offer the `python` tool beside the shell (where `python3` runs).
    python: Option<bool>,
}

/// `[http]`: hosts `http_get` may reach as a read-only call (plan mode runs it, ask mode does not confirm it).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpSection {
    allow_hosts: Option<Vec<String>>,
}

/// `[tools."server.tool"]`: what configuration says about one tool.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSettings {
    /// Its effect class, overriding the tool's own (or its server's hints).
    effect: Option<String>,
    /// Run it without asking in `--mode auto`, even if irreversible.
    allow: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleModels {
    planner: Option<String>,
    executor: Option<String>,
    replanner: Option<String>,
    synthesizer: Option<String>,
    agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PriceEntry {
    input: f64,
    output: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Limits {
    max_steps: Option<i64>,
    max_replans: Option<i64>,
    stall_replans: Option<i64>,
    parallelism: Option<i64>,
    timeout: Option<f64>,
    tool_retries: Option<i64>,
    executor_turns: Option<i64>,
    max_tokens: Option<i64>,
    max_cost: Option<f64>,
    max_time: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
struct ToolsSection {
    disabled: Option<Vec<String>>,
    /// Every other key is a tool's name.
    #[serde(flatten)]
    settings: BTreeMap<String, ToolSettings>,
}

/// One configuration value as text, with its source.
#[derive(Debug, Clone)]
pub struct Entry {
    pub value: String,
    pub source: Source,
    pub secret: bool,
}

/// Values given on the command line (the top layer).
#[derive(Debug, Default, Clone)]
pub struct Flags {
    /// `--agent NAME=TOOLS`, repeatable.
    pub agents: Vec<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// Set by the library's other shells (the Python package's `api_key`
    /// for an `anthropic/…` model); the CLI reads `ANTHROPIC_*` only.
    pub anthropic_base_url: Option<String>,
    pub anthropic_api_key: Option<String>,
    pub model: Option<String>,
    pub model_path: Option<String>,
    pub local_model: Option<String>,
    pub planner_model: Option<String>,
    pub executor_model: Option<String>,
    pub replanner_model: Option<String>,
    pub synthesizer_model: Option<String>,
    pub agent_model: Option<String>,
    pub max_steps: Option<usize>,
    pub max_replans: Option<u32>,
    pub parallelism: Option<usize>,
    pub timeout: Option<f64>,
    pub prices: Vec<String>,
    pub mode: Option<String>,
    /// `--approve now|later`.
    pub approval: Option<String>,
    pub strategy: Option<String>,
    pub fallback: Option<String>,
    pub mend: Option<String>,
    pub prompt_style: Option<String>,
    pub plan_reuse: Option<String>,
    pub recover: Option<String>,
    pub verify: Option<String>,
    pub max_tokens: Option<u64>,
    pub max_cost: Option<f64>,
    pub max_time: Option<f64>,
}

/// Take out of `file` what only a trusted file may set: commands to start
/// (MCP servers), the shell allowlist and switch, tools' effect classes and
/// auto-approvals, the mode, and the engine runs go to. Returns the keys taken, for the notice.
fn without_authority(file: &mut FileConfig) -> Vec<String> {
    let mut ignored = Vec::new();
    if let Some(servers) = file.mcp_servers.take().filter(|s| !s.is_empty()) {
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        ignored.push(format!("mcp_servers ({})", names.join(", ")));
    }
    if let Some(shell) = file.shell.as_mut() {
        if shell.allow.take().is_some() {
            ignored.push("shell.allow".to_string());
        }
        if shell.enabled.take().is_some() {
            ignored.push("shell.enabled".to_string());
        }
        if shell.python.take().is_some() {
            ignored.push("shell.python".to_string());
        }
    }
    if let Some(tools) = file.tools.as_mut() {
        for (tool, settings) in tools.settings.iter_mut() {
            if settings.effect.take().is_some() {
                ignored.push(format!("tools.\"{tool}\".effect"));
            }
            if settings.allow.take().is_some() {
                ignored.push(format!("tools.\"{tool}\".allow"));
            }
        }
    }
    if file.mode.take().is_some() {
        ignored.push("mode".to_string());
    }
    if file.http.as_mut().and_then(|h| h.allow_hosts.take()).is_some() {
        ignored.push("http.allow_hosts".to_string());
    }
    // Where runs go (and with them the task and the workspace's files).
    if file.engine.take().is_some() {
        ignored.push("engine".to_string());
    }
    if file.restate.take().is_some() {
        ignored.push("restate".to_string());
    }
    ignored
}

/// The effective configuration: every key with its value and source.
#[derive(Debug, Default)]
pub struct Config {
    entries: BTreeMap<String, Entry>,
    /// Files that were read, in order.
    pub files: Vec<PathBuf>,
    /// `[[mcp_servers]]` of every file, with the file each came from. A later
    /// file's server replaces an earlier one of the same name.
    pub mcp_servers: Vec<(planexec_mcp::McpServerToml, PathBuf)>,
    /// `[agents.NAME]` of every file, then `--agent` flags, in order.
    pub agents: Vec<crate::agents::ConfiguredAgent>,
    /// The keys of an untrusted workspace file that were ignored, and the file.
    pub ignored: Option<(PathBuf, Vec<String>)>,
}

/// Every key a configuration may set, with its default (`None`: unset).
const KEYS: &[(&str, Option<&str>)] = &[
    ("provider", Some("auto")),
    ("base_url", None),
    ("api_key", None),
    ("anthropic_base_url", None),
    ("anthropic_api_key", None),
    ("model", Some("gpt-4o-mini")),
    ("model_path", None),
    ("local_model", Some("default")),
    ("models.planner", None),
    ("models.executor", None),
    ("models.replanner", None),
    ("models.synthesizer", None),
    ("models.agent", None),
    ("limits.max_steps", Some("8")),
    ("limits.max_replans", Some("2")),
    ("limits.stall_replans", Some("2")),
    ("limits.parallelism", Some("4")),
    ("limits.timeout", Some("120")),
    ("limits.tool_retries", Some("2")),
    ("limits.executor_turns", Some("4")),
    ("limits.max_tokens", None),
    ("limits.max_cost", None),
    ("limits.max_time", None),
    ("tools.disabled", Some("")),
    ("mode", Some("ask")),
    ("approval", Some("now")),
    ("strategy", Some("plan-execute")),
    ("fallback", Some("stop")),
    ("mend", Some("auto")),
    ("prompt_style", Some("auto")),
    ("plan_reuse", Some("similar")),
    ("recover", Some("agent")),
    ("verify", Some("true")),
    ("sampling_in_plan_mode", Some("false")),
    ("shell.enabled", Some("true")),
    ("shell.allow", Some("")),
    ("shell.timeout", Some("60")),
    ("shell.python", Some("true")),
    ("http.allow_hosts", Some("")),
    ("engine", Some("local")),
    ("restate.ingress", Some("http://127.0.0.1:8080")),
    ("restate.admin", Some("http://127.0.0.1:9070")),
];

/// Environment variables and the key each sets.
const ENV: &[(&str, &str)] = &[
    ("PLANEXEC_PROVIDER", "provider"),
    ("OPENAI_BASE_URL", "base_url"),
    ("OPENAI_API_KEY", "api_key"),
    ("ANTHROPIC_BASE_URL", "anthropic_base_url"),
    ("ANTHROPIC_API_KEY", "anthropic_api_key"),
    ("PLANEXEC_MODEL", "model"),
    ("PLANEXEC_MODEL_PATH", "model_path"),
    ("PLANEXEC_LOCAL_MODEL", "local_model"),
    ("PLANEXEC_PLANNER_MODEL", "models.planner"),
    ("PLANEXEC_EXECUTOR_MODEL", "models.executor"),
    ("PLANEXEC_REPLANNER_MODEL", "models.replanner"),
    ("PLANEXEC_SYNTHESIZER_MODEL", "models.synthesizer"),
    ("PLANEXEC_AGENT_MODEL", "models.agent"),
    ("PLANEXEC_MAX_STEPS", "limits.max_steps"),
    ("PLANEXEC_MAX_REPLANS", "limits.max_replans"),
    ("PLANEXEC_PARALLELISM", "limits.parallelism"),
    ("PLANEXEC_TIMEOUT", "limits.timeout"),
    ("PLANEXEC_MODE", "mode"),
    ("PLANEXEC_APPROVAL", "approval"),
    ("PLANEXEC_STRATEGY", "strategy"),
    ("PLANEXEC_FALLBACK", "fallback"),
    ("PLANEXEC_MEND", "mend"),
    ("PLANEXEC_PROMPT_STYLE", "prompt_style"),
    ("PLANEXEC_PLAN_REUSE", "plan_reuse"),
    ("PLANEXEC_RECOVER", "recover"),
    ("PLANEXEC_VERIFY", "verify"),
    ("PLANEXEC_ENGINE", "engine"),
    ("RESTATE_INGRESS", "restate.ingress"),
    ("RESTATE_ADMIN", "restate.admin"),
];

/// The user's config file: the one `--config` names, else
/// `$XDG_CONFIG_HOME/planexec/config.toml` (or the platform's equivalent).
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(named) = NAMED_FILE.get() {
        return Some(named.clone());
    }
    dirs::config_dir().map(|d| d.join("planexec").join("config.toml"))
}

/// The file `--config` (or `PLANEXEC_CONFIG`) names, set once at start.
static NAMED_FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Use `path` as the user's config file for this process. It must exist: a
/// mistyped name would otherwise run with defaults the user did not choose.
pub fn use_file(path: &Path) -> Result<(), String> {
    if !path.is_file() {
        return Err(format!(
            "--config {}: no such file; give the path of a TOML config file (see `planexec config show` for the keys)",
            path.display()
        ));
    }
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let _ = NAMED_FILE.set(path);
    Ok(())
}

impl Config {
    /// Read every layer. `workspace` is where `planexec.toml` is looked for.
    pub fn load(workspace: &Path, flags: &Flags) -> Result<Config, String> {
        let mut config = Config::default();
        for (key, default) in KEYS {
            if let Some(v) = default {
                config.set(key, v.to_string(), Source::Default);
            }
        }
        // Absolute, so messages and `config show` name the file unambiguously.
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
        if let Some(path) = user_config_path().filter(|p| p.is_file()) {
            config.read_file(&path, true)?;
        }
        let local = workspace.join("planexec.toml");
        if local.is_file() {
            config.read_file(&local, false)?;
        }
        for (var, key) in ENV {
            if let Ok(v) = std::env::var(var) {
                if !v.is_empty() {
                    config.set(key, v, Source::Env(var));
                }
            }
        }
        if let Some((path, keys)) = &config.ignored {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                eprintln!(
                    "notice: {} is not trusted, so these keys in it are ignored: {}. Review the file, then run `planexec trust` to use them.",
                    path.display(),
                    keys.join(", ")
                )
            });
        }
        config.apply_flags(flags);
        for text in &flags.agents {
            config.agents.push(crate::agents::ConfiguredAgent::from_flag(text)?);
        }
        crate::agents::profiles(&config.agents)?;
        Ok(config)
    }

    fn set(&mut self, key: &str, value: String, source: Source) {
        let secret = key == "api_key" || key == "anthropic_api_key";
        self.entries.insert(key.to_string(), Entry { value, source, secret });
    }

    /// Read one file. A workspace file (`users_own` false) that the user has
    /// not trusted loses the keys that act with the user's authority.
    fn read_file(&mut self, path: &Path, users_own: bool) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        // Only position and message: the error's usual excerpt could show an API key.
        let mut file: FileConfig = toml::from_str(&text).map_err(|e| match e.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!("{}: line {line}, column {column}: {}", path.display(), e.message())
            }
            None => format!("{}: {}", path.display(), e.message()),
        })?;
        if !users_own && !crate::trust::is_trusted(path, &text) {
            let ignored = without_authority(&mut file);
            if !ignored.is_empty() {
                self.ignored = Some((path.to_path_buf(), ignored));
            }
        }
        let src = || Source::File(path.to_path_buf());
        let mut put = |key: &str, value: Option<String>| {
            if let Some(v) = value {
                self.set(key, v, src());
            }
        };
        put("provider", file.provider);
        put("base_url", file.base_url);
        put("api_key", file.api_key);
        put("model", file.model);
        put("model_path", file.model_path);
        put("local_model", file.local_model);
        let models = file.models.unwrap_or_default();
        put("models.planner", models.planner);
        put("models.executor", models.executor);
        put("models.replanner", models.replanner);
        put("models.synthesizer", models.synthesizer);
        put("models.agent", models.agent);
        let limits = file.limits.unwrap_or_default();
        put("limits.max_steps", limits.max_steps.map(|v| v.to_string()));
        put("limits.max_replans", limits.max_replans.map(|v| v.to_string()));
        put("limits.stall_replans", limits.stall_replans.map(|v| v.to_string()));
        put("limits.parallelism", limits.parallelism.map(|v| v.to_string()));
        put("limits.timeout", limits.timeout.map(|v| v.to_string()));
        put("limits.tool_retries", limits.tool_retries.map(|v| v.to_string()));
        put("limits.executor_turns", limits.executor_turns.map(|v| v.to_string()));
        put("limits.max_tokens", limits.max_tokens.map(|v| v.to_string()));
        put("limits.max_cost", limits.max_cost.map(|v| v.to_string()));
        put("limits.max_time", limits.max_time.map(|v| v.to_string()));
        let tools = file.tools.unwrap_or_default();
        put("tools.disabled", tools.disabled.map(|d| d.join(",")));
        for (tool, settings) in tools.settings {
            put(&format!("tools.{tool}.effect"), settings.effect);
            put(&format!("tools.{tool}.allow"), settings.allow.map(|a| a.to_string()));
        }
        put("mode", file.mode);
        put("approval", file.approval);
        put("strategy", file.strategy);
        put("fallback", file.fallback);
        put("mend", file.mend);
        put("prompt_style", file.prompt_style);
        put("plan_reuse", file.plan_reuse);
        put("recover", file.recover);
        put("verify", file.verify.map(|v| v.to_string()));
        put(
            "sampling_in_plan_mode",
            file.sampling_in_plan_mode.map(|v| v.to_string()),
        );
        let shell = file.shell.unwrap_or_default();
        put("shell.enabled", shell.enabled.map(|v| v.to_string()));
        put("shell.allow", shell.allow.map(|v| v.join("\n")));
        put("shell.timeout", shell.timeout.map(|v| v.to_string()));
        put("shell.python", shell.python.map(|v| v.to_string()));
        let http = file.http.unwrap_or_default();
        put("http.allow_hosts", http.allow_hosts.map(|h| h.join(",")));
        put("engine", file.engine);
        let restate = file.restate.unwrap_or_default();
        put("restate.ingress", restate.ingress);
        put("restate.admin", restate.admin);

        for (model, price) in file.prices.unwrap_or_default() {
            put(
                &format!("prices.{model}"),
                Some(format!("{},{}", price.input, price.output)),
            );
        }
        for (name, settings) in file.agents.unwrap_or_default() {
            self.agents
                .push(crate::agents::ConfiguredAgent::from_file(name, settings, path));
        }
        for server in file.mcp_servers.unwrap_or_default() {
            self.mcp_servers.retain(|(s, _)| s.name != server.name);
            self.mcp_servers.push((server, path.to_path_buf()));
        }
        self.files.push(path.to_path_buf());
        Ok(())
    }

    fn apply_flags(&mut self, f: &Flags) {
        let pairs: [(&'static str, &str, Option<String>); 28] = [
            ("mode", "mode", f.mode.clone()),
            ("approve", "approval", f.approval.clone()),
            ("strategy", "strategy", f.strategy.clone()),
            ("fallback", "fallback", f.fallback.clone()),
            ("mend", "mend", f.mend.clone()),
            ("prompt-style", "prompt_style", f.prompt_style.clone()),
            ("plan-reuse", "plan_reuse", f.plan_reuse.clone()),
            ("recover", "recover", f.recover.clone()),
            ("verify", "verify", f.verify.clone()),
            ("max-tokens", "limits.max_tokens", f.max_tokens.map(|v| v.to_string())),
            ("max-cost", "limits.max_cost", f.max_cost.map(|v| v.to_string())),
            ("max-time", "limits.max_time", f.max_time.map(|v| v.to_string())),
            ("model-path", "model_path", f.model_path.clone()),
            ("local-model", "local_model", f.local_model.clone()),
            ("base-url", "base_url", f.base_url.clone()),
            ("api-key", "api_key", f.api_key.clone()),
            ("anthropic-base-url", "anthropic_base_url", f.anthropic_base_url.clone()),
            ("anthropic-api-key", "anthropic_api_key", f.anthropic_api_key.clone()),
            ("model", "model", f.model.clone()),
            ("planner-model", "models.planner", f.planner_model.clone()),
            ("executor-model", "models.executor", f.executor_model.clone()),
            ("replanner-model", "models.replanner", f.replanner_model.clone()),
            ("synthesizer-model", "models.synthesizer", f.synthesizer_model.clone()),
            ("agent-model", "models.agent", f.agent_model.clone()),
            ("max-steps", "limits.max_steps", f.max_steps.map(|v| v.to_string())),
            (
                "max-replans",
                "limits.max_replans",
                f.max_replans.map(|v| v.to_string()),
            ),
            (
                "parallelism",
                "limits.parallelism",
                f.parallelism.map(|v| v.to_string()),
            ),
            ("timeout", "limits.timeout", f.timeout.map(|v| v.to_string())),
        ];
        for (flag, key, value) in pairs {
            if let Some(v) = value {
                self.set(key, v, Source::Flag(flag));
            }
        }
        for spec in &f.prices {
            if let Some((model, rest)) = spec.split_once('=') {
                self.set(&format!("prices.{model}"), rest.to_string(), Source::Flag("price"));
            } else {
                // Kept so `pricing()` reports the malformed value.
                self.set(&format!("prices.{spec}"), String::new(), Source::Flag("price"));
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|e| e.value.as_str())
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// The model of a role (falls back to `model`).
    pub fn role_model(&self, role: &str) -> Option<&str> {
        self.get(&format!("models.{role}"))
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Result<T, String> {
        let entry = self.entries.get(key).ok_or_else(|| format!("{key} is not set"))?;
        entry.value.trim().parse().map_err(|_| {
            format!(
                "{key} = `{}` (from {}) is not a valid number",
                entry.value, entry.source
            )
        })
    }

    /// The run limits, checked.
    pub fn run_options(&self) -> Result<RunOptions, String> {
        let positive = |key: &str, v: i64| {
            if v >= 1 {
                Ok(v)
            } else {
                Err(format!("{key} must be at least 1 (from {})", self.entries[key].source))
            }
        };
        let timeout: f64 = self.number("limits.timeout")?;
        if !(timeout > 0.0 && timeout.is_finite()) {
            return Err(format!(
                "limits.timeout must be a positive number of seconds, not {timeout} (from {})",
                self.entries["limits.timeout"].source
            ));
        }
        let non_negative = |key: &str, v: i64| {
            if v >= 0 {
                Ok(v)
            } else {
                Err(format!("{key} cannot be negative (from {})", self.entries[key].source))
            }
        };
        Ok(RunOptions {
            max_steps: positive("limits.max_steps", self.number("limits.max_steps")?)? as usize,
            max_replans: non_negative("limits.max_replans", self.number("limits.max_replans")?)? as u32,
            stall_replans: non_negative("limits.stall_replans", self.number("limits.stall_replans")?)? as u32,
            fallback: self.fallback()?,
            mend: self.mend()?,
            prompt_style: self.prompt_style()?,
            plan_reuse: self.plan_reuse()?,
            recover: self.recover()?,
            verify: self.switch("verify")?,
            sampling_in_plan_mode: self.switch("sampling_in_plan_mode")?,
            parallelism: positive("limits.parallelism", self.number("limits.parallelism")?)? as usize,
            step_timeout: Duration::try_from_secs_f64(timeout).map_err(|_| {
                format!(
                    "limits.timeout = {timeout} (from {}) is too large",
                    self.entries["limits.timeout"].source
                )
            })?,
            tool_retries: non_negative("limits.tool_retries", self.number("limits.tool_retries")?)? as u32,
            executor_max_turns: non_negative("limits.executor_turns", self.number("limits.executor_turns")?)? as u32,
            mode: self.mode()?,
            strategy: self.strategy()?,
            budget: self.budget()?,
            allow_irreversible: self.allowed_tools()?,
            agents: crate::agents::profiles(&self.agents)?,
            ..RunOptions::default()
        })
    }

    /// `limits.max_tokens`, `max_cost` (USD) and `max_time` (seconds), each optional.
    pub fn budget(&self) -> Result<Budget, String> {
        let positive = |key: &str| -> Result<Option<f64>, String> {
            if self.get(key).is_none() {
                return Ok(None);
            }
            let v: f64 = self.number(key)?;
            if v > 0.0 && v.is_finite() {
                Ok(Some(v))
            } else {
                Err(format!(
                    "{key} must be a positive number, not {v} (from {})",
                    self.entries[key].source
                ))
            }
        };
        Ok(Budget {
            max_tokens: positive("limits.max_tokens")?.map(|v| v.ceil() as u64),
            max_cost: positive("limits.max_cost")?,
            max_time_ms: positive("limits.max_time")?.map(|v| (v * 1000.0).ceil().min(u64::MAX as f64) as u64),
        })
    }

    pub fn strategy(&self) -> Result<planexec::Strategy, String> {
        let entry = &self.entries["strategy"];
        planexec::Strategy::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// `approval`: `now` asks at the terminal (or `--yes` answers), `later`
    /// records a run that needs a decision as waiting and exits.
    pub fn approve_later(&self) -> Result<bool, String> {
        let entry = &self.entries["approval"];
        match entry.value.as_str() {
            "now" => Ok(false),
            "later" => Ok(true),
            other => Err(format!(
                "approval must be \"now\" or \"later\", not {other:?} (from {})",
                entry.source
            )),
        }
    }

    pub fn mode(&self) -> Result<Mode, String> {
        let entry = &self.entries["mode"];
        Mode::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// What a run that stopped making progress does: `stop` or `react`.
    pub fn fallback(&self) -> Result<planexec::Fallback, String> {
        let entry = &self.entries["fallback"];
        planexec::Fallback::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// Whether runs get the small-model help: `auto`, `on` or `off`.
    pub fn mend(&self) -> Result<planexec::MendMode, String> {
        let entry = &self.entries["mend"];
        planexec::MendMode::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// How runs lay out their prompts: `auto`, `shared` or `compact`.
    pub fn prompt_style(&self) -> Result<planexec::PromptStyle, String> {
        let entry = &self.entries["prompt_style"];
        planexec::PromptStyle::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// Whether runs may start from a stored plan: `off`, `exact` or `similar`.
    pub fn plan_reuse(&self) -> Result<planexec::PlanReuse, String> {
        let entry = &self.entries["plan_reuse"];
        planexec::PlanReuse::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// What a failed tool step gets first: `agent` (a recovery loop) or `replan`.
    pub fn recover(&self) -> Result<planexec::Recover, String> {
        let entry = &self.entries["recover"];
        planexec::Recover::parse(&entry.value).map_err(|e| format!("{e} (from {})", entry.source))
    }

    /// An on/off setting: `true`, `on`, `yes` or `false`, `off`, `no`.
    fn switch(&self, key: &str) -> Result<bool, String> {
        let entry = &self.entries[key];
        match entry.value.trim() {
            "true" | "on" | "yes" => Ok(true),
            "false" | "off" | "no" => Ok(false),
            other => Err(format!(
                "{key} must be on or off, not {other:?} (from {})",
                entry.source
            )),
        }
    }

    /// `tools.NAME.SETTING` entries, as (tool, value, source).
    fn tool_settings(&self, setting: &str) -> Vec<(&str, &Entry)> {
        let suffix = format!(".{setting}");
        self.entries
            .iter()
            .filter_map(|(k, e)| Some((k.strip_prefix("tools.")?.strip_suffix(suffix.as_str())?, e)))
            .collect()
    }

    /// Every tool a `[tools."NAME"]` section names, with where it was set.
    pub fn configured_tools(&self) -> Vec<(&str, &Entry)> {
        let mut named = self.tool_settings("effect");
        named.extend(self.tool_settings("allow"));
        named
    }

    /// Tools configured with `allow = true`.
    fn allowed_tools(&self) -> Result<Vec<String>, String> {
        let mut allowed = Vec::new();
        for (tool, entry) in self.tool_settings("allow") {
            match entry.value.as_str() {
                "true" => allowed.push(tool.to_string()),
                "false" => {}
                other => {
                    return Err(format!(
                        "tools.\"{tool}\".allow = {other} (from {}) should be true or false",
                        entry.source
                    ))
                }
            }
        }
        Ok(allowed)
    }

    /// Effect classes set per tool.
    pub fn effect_overrides(&self) -> Result<Vec<(String, Effect)>, String> {
        self.tool_settings("effect")
            .into_iter()
            .map(|(tool, entry)| {
                Effect::parse(&entry.value)
                    .map(|e| (tool.to_string(), e))
                    .map_err(|e| format!("tools.\"{tool}\".effect: {e} (from {})", entry.source))
            })
            .collect()
    }

    /// Whether the `python` tool is offered with the shell (`[shell] python`),
    /// and whether it was asked for (set in a file, the environment or a
    /// flag): on by default where `python3` runs, an error where it does not
    /// only when asked for.
    pub fn python(&self) -> Result<(bool, bool), String> {
        let asked = !matches!(self.entries["shell.python"].source, Source::Default);
        Ok((self.switch("shell.python")?, asked))
    }

    /// The shell tool's settings, or `None` when it is disabled.
    pub fn shell(&self) -> Result<Option<ShellConfig>, String> {
        let enabled = &self.entries["shell.enabled"];
        match enabled.value.as_str() {
            "true" => {}
            "false" => return Ok(None),
            other => {
                return Err(format!(
                    "shell.enabled = {other} (from {}) should be true or false",
                    enabled.source
                ))
            }
        }
        let timeout: f64 = self.number("shell.timeout")?;
        if !(timeout > 0.0 && timeout.is_finite()) {
            return Err(format!(
                "shell.timeout must be a positive number of seconds, not {timeout} (from {})",
                self.entries["shell.timeout"].source
            ));
        }
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            format!(
                "shell.timeout = {timeout} (from {}) is too large",
                self.entries["shell.timeout"].source
            )
        })?;
        Ok(Some(ShellConfig {
            // Patterns may hold commas, so the list is kept one per line.
            allow: self
                .get("shell.allow")
                .unwrap_or("")
                .lines()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            timeout,
            ..ShellConfig::default()
        }))
    }

    fn list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// The MCP servers of the config files, then of `--mcp` flags (a flag's
    /// server replaces a file's of the same name).
    pub fn mcp_servers(&self, flags: &[String]) -> Result<Vec<McpServerConfig>, String> {
        let mut servers = Vec::new();
        for (toml, path) in &self.mcp_servers {
            let config = McpServerConfig::from_toml(toml.clone()).map_err(|e| format!("{}: {e}", path.display()))?;
            servers.push(config);
        }
        for spec in flags {
            let config = McpServerConfig::parse_flag(spec).map_err(|e| e.to_string())?;
            servers.retain(|s: &McpServerConfig| s.name != config.name);
            servers.push(config);
        }
        Ok(servers)
    }

    /// Prices from `prices.MODEL` keys (`*` for any model).
    pub fn pricing(&self) -> Result<Pricing, String> {
        let mut pricing = Pricing::default();
        for (key, entry) in self.entries.range("prices.".to_string()..) {
            let Some(model) = key.strip_prefix("prices.") else {
                break;
            };
            let bad = || {
                format!(
                    "price for `{model}` (from {}) should be INPUT,OUTPUT in USD per million tokens, e.g. {model}=0.15,0.60",
                    entry.source
                )
            };
            let (input, output) = entry.value.split_once(',').ok_or_else(bad)?;
            let price = Price {
                input_per_million: input.trim().parse().map_err(|_| bad())?,
                output_per_million: output.trim().parse().map_err(|_| bad())?,
                ..Price::default()
            };
            if model == "*" {
                pricing.default = Some(price);
            } else {
                pricing.models.insert(model.to_string(), price);
            }
        }
        Ok(pricing)
    }

    /// `[http] allow_hosts`: hosts `http_get` reaches as a read-only call.
    pub fn http_hosts(&self) -> Vec<String> {
        self.list("http.allow_hosts")
    }

    pub fn disabled_tools(&self) -> Vec<String> {
        self.list("tools.disabled")
    }

    /// Every key `config show` lists: the known ones, then prices and tool settings.
    fn shown_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        keys.extend(
            self.entries
                .keys()
                .filter(|k| k.starts_with("prices.") || (k.starts_with("tools.") && k.as_str() != "tools.disabled"))
                .map(String::as_str),
        );
        keys
    }

    /// `config show --json`: each key's value and source (a secret's value is
    /// null, with `"set": true`), the MCP servers, the files read, and what an
    /// untrusted workspace file had ignored.
    pub fn show_json(&self) -> serde_json::Value {
        let values: serde_json::Map<String, serde_json::Value> = self
            .shown_keys()
            .into_iter()
            .map(|key| {
                let value = match self.entries.get(key) {
                    Some(e) if e.secret => {
                        serde_json::json!({"value": null, "set": true, "source": e.source.to_string()})
                    }
                    Some(e) => serde_json::json!({"value": e.value, "source": e.source.to_string()}),
                    None => serde_json::json!({"value": null, "source": null}),
                };
                (key.to_string(), value)
            })
            .collect();
        let servers: Vec<serde_json::Value> = self
            .mcp_servers
            .iter()
            .map(|(server, path)| {
                serde_json::json!({
                    "name": server.name, "command": server.command, "args": server.args,
                    "url": server.url, "source": path,
                })
            })
            .collect();
        serde_json::json!({
            "values": values,
            "mcp_servers": servers,
            "files": self.files,
            "ignored": self.ignored.as_ref().map(|(path, keys)| serde_json::json!({"file": path, "keys": keys})),
        })
    }

    /// `key = value  # source` lines; secrets show only whether they are set.
    pub fn show(&self) -> String {
        let keys = self.shown_keys();
        let width = keys.iter().map(|k| k.len()).max().unwrap_or(0);
        let mut out = String::new();
        for key in keys {
            let (value, source) = match self.entries.get(key) {
                Some(e) if e.secret => ("<set, hidden>".to_string(), e.source.to_string()),
                Some(e) => (format!("{:?}", e.value), e.source.to_string()),
                None => ("<unset>".to_string(), "-".to_string()),
            };
            out.push_str(&format!("{key:<width$} = {value:<28}  # {source}\n"));
        }
        for (server, path) in &self.mcp_servers {
            let how = match (&server.command, &server.url) {
                (Some(command), _) => std::iter::once(command.as_str())
                    .chain(server.args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                (None, Some(url)) => url.clone(),
                (None, None) => "<no command or url>".to_string(),
            };
            out.push_str(&format!(
                "{:<width$} = {:<28}  # {}\n",
                format!("mcp_servers.{}", server.name),
                format!("{how:?}"),
                path.display()
            ));
        }
        out
    }
}
