//! Agent profiles from configuration (`[agents.NAME]` in planexec.toml),
//! `--agent NAME=TOOLS` flags and the built-in `worker`, and
//! `planexec agents list`.

use planexec::{AgentProfile, Budget, ToolRegistry};
use serde::Deserialize;
use serde_json::json;

/// `[agents.NAME]`: a profile as configuration writes it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentToml {
    /// What the planner reads when it picks an agent for a step.
    pub description: Option<String>,
    /// The loop's system prompt.
    pub instructions: Option<String>,
    /// Tool names or globs (`fs.*`); default every tool of the run.
    pub tools: Option<Vec<String>>,
    /// A model reference (`provider/model`, or a model on the main provider).
    pub model: Option<String>,
    pub max_turns: Option<i64>,
    pub temperature: Option<f64>,
    /// Most tokens (prompt and completion) one step of this agent may spend.
    pub max_tokens: Option<i64>,
    /// Most cost (USD) one step may spend, priced like the run's.
    pub max_cost: Option<f64>,
    /// Most wall time one step may take, in seconds.
    pub max_seconds: Option<f64>,
}

/// A configured agent: its name, settings and the file (or flag) it came from.
#[derive(Debug, Clone)]
pub struct ConfiguredAgent {
    pub name: String,
    pub settings: AgentToml,
    pub source: String,
}

impl ConfiguredAgent {
    pub fn from_file(name: String, settings: AgentToml, path: &std::path::Path) -> ConfiguredAgent {
        ConfiguredAgent {
            name,
            settings,
            source: path.display().to_string(),
        }
    }

    /// `--agent NAME=TOOL,TOOL…`: an agent with these tools and the default instructions.
    pub fn from_flag(text: &str) -> Result<ConfiguredAgent, String> {
        let (name, tools) = text
            .split_once('=')
            .ok_or_else(|| format!("--agent {text}: expected NAME=TOOLS, e.g. --agent reader=read_file,list_dir"))?;
        let tools: Vec<String> = tools
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        if tools.is_empty() {
            return Err(format!("--agent {text}: name at least one tool (or `*` for all)"));
        }
        Ok(ConfiguredAgent {
            name: name.trim().to_string(),
            settings: AgentToml {
                tools: Some(tools),
                ..AgentToml::default()
            },
            source: "flag --agent".to_string(),
        })
    }

    /// The profile, checked; its `model` is resolved by the caller.
    pub fn profile(&self) -> Result<AgentProfile, String> {
        let name = &self.name;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!(
                "agent name `{name}` (from {}) may only use letters, digits, `_` and `-`",
                self.source
            ));
        }
        let s = &self.settings;
        let mut profile = if name == planexec::agents::WORKER {
            AgentProfile::worker()
        } else {
            AgentProfile::new(name.clone())
        };
        if let Some(d) = &s.description {
            profile = profile.description(d.clone());
        }
        if let Some(i) = &s.instructions {
            profile = profile.instructions(i.clone());
        }
        if let Some(tools) = &s.tools {
            profile = profile.tools(tools.clone());
        }
        if let Some(turns) = s.max_turns {
            if !(1..=100).contains(&turns) {
                return Err(format!(
                    "agents.{name}.max_turns must be between 1 and 100, not {turns} (from {})",
                    self.source
                ));
            }
            profile = profile.max_turns(turns as u32);
        }
        if let Some(t) = s.temperature {
            if !(0.0..=2.0).contains(&t) {
                return Err(format!(
                    "agents.{name}.temperature must be between 0 and 2, not {t} (from {})",
                    self.source
                ));
            }
            profile = profile.temperature(t as f32);
        }
        profile = profile.step_budget(self.step_budget()?);
        Ok(profile)
    }

    /// `max_tokens`, `max_cost` and `max_seconds`: limits for one step of this agent.
    fn step_budget(&self) -> Result<Budget, String> {
        let (name, s) = (&self.name, &self.settings);
        let positive = |key: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(v)
            } else {
                Err(format!(
                    "agents.{name}.{key} must be a number above 0, not {v} (from {})",
                    self.source
                ))
            }
        };
        Ok(Budget {
            max_tokens: s
                .max_tokens
                .map(|v| positive("max_tokens", v as f64))
                .transpose()?
                .map(|v| v as u64),
            max_cost: s.max_cost.map(|v| positive("max_cost", v)).transpose()?,
            max_time_ms: s
                .max_seconds
                .map(|v| positive("max_seconds", v))
                .transpose()?
                .map(|v| (v * 1000.0) as u64),
        })
    }
}

/// The run's agents: the built-in `worker`, then every configured one (a
/// configured `worker` changes the built-in; a later source replaces an
/// earlier agent of the same name).
pub fn profiles(configured: &[ConfiguredAgent]) -> Result<Vec<AgentProfile>, String> {
    let mut out = vec![AgentProfile::worker()];
    for agent in configured {
        let profile = agent.profile()?;
        out.retain(|p| p.name != profile.name);
        out.push(profile);
    }
    Ok(out)
}

/// `planexec agents list`: each agent, what the planner reads and the tools of
/// this workspace it may use.
pub fn listing(
    profiles: &[AgentProfile],
    configured: &[ConfiguredAgent],
    tools: &ToolRegistry,
    as_json: bool,
) -> String {
    let source = |name: &str| {
        configured
            .iter()
            .rev()
            .find(|a| a.name == name)
            .map_or("built-in".to_string(), |a| a.source.clone())
    };
    let model = |name: &str| {
        configured
            .iter()
            .rev()
            .find(|a| a.name == name)
            .and_then(|a| a.settings.model.clone())
    };
    let rows: Vec<(&AgentProfile, Vec<String>)> = profiles
        .iter()
        .map(|p| (p, tools.names().into_iter().filter(|t| p.allows(t)).collect()))
        .collect();
    if as_json {
        let list: Vec<_> = rows
            .iter()
            .map(|(p, names)| {
                json!({
                    "name": p.name,
                    "description": p.description,
                    "tools": p.tools,
                    "resolved_tools": names,
                    "model": model(&p.name),
                    "max_turns": p.max_turns,
                    "temperature": p.temperature,
                    "step_budget": p.step_budget,
                    "source": source(&p.name),
                })
            })
            .collect();
        return serde_json::to_string_pretty(&list).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for (p, names) in rows {
        out.push_str(&format!(
            "{}  ({}; {} turns{}{})\n  {}\n  tools: {}\n",
            p.name,
            source(&p.name),
            p.max_turns,
            model(&p.name).map(|m| format!("; model {m}")).unwrap_or_default(),
            step_limits(&p.step_budget),
            p.description,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    out
}

/// `; at most 500 tokens, $0.05, 30 s a step`, or nothing.
fn step_limits(budget: &Budget) -> String {
    let mut parts = Vec::new();
    if let Some(t) = budget.max_tokens {
        parts.push(format!("{t} tokens"));
    }
    if let Some(c) = budget.max_cost {
        parts.push(format!("${c}"));
    }
    if let Some(ms) = budget.max_time_ms {
        parts.push(format!("{} s", ms as f64 / 1000.0));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!("; at most {} a step", parts.join(", ")),
    }
}
