//! The tools of a run: [`ToolRegistry`] holds each [`Tool`] with its compiled
//! argument validator and the effect class configuration gives it.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::tool::{Effect, Tool};
use super::workspace;

/// A registered tool with its compiled argument validator and, when the user's
/// configuration says so, an effect class that overrides the tool's own.
pub struct ToolEntry {
    pub tool: Arc<dyn Tool>,
    validator: Option<jsonschema::Validator>,
    effect_override: Option<Effect>,
}

impl ToolEntry {
    /// Problems with `args` against the tool's schema. With `allow_references`, a
    /// problem located at a string that still holds a `{{sN}}` reference is not
    /// counted: its value is only known once the step it names has run.
    pub fn check_args(&self, args: &Value, allow_references: bool) -> Vec<String> {
        let Some(validator) = &self.validator else {
            return Vec::new();
        };
        validator
            .iter_errors(args)
            .filter(|e| {
                !(allow_references
                    && e.instance()
                        .as_str()
                        .is_some_and(|s| !crate::refs::find_references(s).is_empty()))
            })
            .map(|e| {
                let at = e.instance_path().as_str().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect()
    }

    /// The effect class the runtime enforces for a call with `args`.
    pub fn effect(&self, args: &Value) -> Effect {
        self.effect_override.unwrap_or_else(|| self.tool.effect_for(args))
    }

    /// The effect class shown in listings and prompts (the class of a call whose
    /// arguments are not known yet).
    pub fn declared_effect(&self) -> Effect {
        self.effect_override.unwrap_or_else(|| self.tool.effect())
    }

    /// Whether a second run with the same arguments is harmless. A configured
    /// effect class wins over the tool's own claim.
    pub fn idempotent(&self) -> bool {
        match self.effect_override {
            Some(effect) => effect == Effect::ReadOnly,
            None => self.tool.idempotent(),
        }
    }

    /// Whether the effect class comes from the user's configuration.
    pub fn effect_overridden(&self) -> bool {
        self.effect_override.is_some()
    }
}

/// The tools of a run, by name.
///
/// The set can change while a run is going on (an MCP server announces that its
/// tool list changed), so the map sits behind a lock and lookups hand out
/// `Arc`s; a step that already looked its tool up keeps it for the call.
#[derive(Default)]
pub struct ToolRegistry {
    tools: RwLock<BTreeMap<String, Arc<ToolEntry>>>,
    /// Effect classes set by configuration, applied to tools registered later too.
    effects: RwLock<BTreeMap<String, Effect>>,
    /// The folder the file tools work in, when they do: the planner is shown
    /// what it holds, so that it reads files that exist.
    workspace: Option<Arc<workspace::Workspace>>,
}

fn entry(tool: Arc<dyn Tool>, effect_override: Option<Effect>) -> Result<Arc<ToolEntry>, String> {
    let schema = tool.parameters();
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| format!("tool `{}` has an invalid argument schema: {e}", tool.name()))?;
    Ok(Arc::new(ToolEntry {
        tool,
        validator: Some(validator),
        effect_override,
    }))
}

impl ToolRegistry {
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<ToolEntry>>> {
        self.tools.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<ToolEntry>>> {
        self.tools.write().unwrap_or_else(|e| e.into_inner())
    }

    fn effect_override(&self, name: &str) -> Option<Effect> {
        self.effects
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
    }

    /// The folder the file tools work in, shown to the planner (names and
    /// sizes, not contents). [`super::builtin::registry`] sets it.
    pub fn set_workspace(&mut self, workspace: Arc<workspace::Workspace>) {
        self.workspace = Some(workspace);
    }

    pub fn workspace(&self) -> Option<&workspace::Workspace> {
        self.workspace.as_deref()
    }

    /// Add a tool, replacing any tool of the same name. Fails if its schema is not valid JSON Schema.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), String> {
        self.insert(tool)
    }

    /// [`ToolRegistry::register`] through a shared reference, for tool sets that
    /// grow while the registry is in use.
    pub fn insert(&self, tool: Arc<dyn Tool>) -> Result<(), String> {
        let entry = entry(tool.clone(), self.effect_override(tool.name()))?;
        self.write().insert(tool.name().to_string(), entry);
        Ok(())
    }

    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<ToolRegistry, String> {
        self.register(tool)?;
        Ok(self)
    }

    /// Replace every tool whose name starts with `prefix` (e.g. `"git."`, one MCP
    /// server's tools) by `tools`, at once: a lookup sees the old set or the new one.
    pub fn replace_prefixed(&self, prefix: &str, tools: Vec<Arc<dyn Tool>>) -> Result<(), String> {
        let mut entries = Vec::with_capacity(tools.len());
        for tool in tools {
            entries.push(entry(tool.clone(), self.effect_override(tool.name()))?);
        }
        let mut map = self.write();
        map.retain(|name, _| !name.starts_with(prefix));
        for e in entries {
            map.insert(e.tool.name().to_string(), e);
        }
        Ok(())
    }

    /// Set the effect class of the tool `name`, now or when it is registered
    /// (configuration knows better than a server's hints).
    pub fn override_effect(&self, name: &str, effect: Effect) {
        self.effects
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), effect);
        let mut map = self.write();
        if let Some(old) = map.get(name).cloned() {
            if let Ok(e) = entry(old.tool.clone(), Some(effect)) {
                map.insert(name.to_string(), e);
            }
        }
    }

    /// Remove a tool; `false` if there was none of that name.
    pub fn remove(&mut self, name: &str) -> bool {
        self.write().remove(name).is_some()
    }

    pub fn get(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.read().get(name).cloned()
    }

    pub fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Every tool, by name.
    pub fn entries(&self) -> Vec<Arc<ToolEntry>> {
        self.read().values().cloned().collect()
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Whether the named tool may safely run twice (unknown tools are assumed not).
    pub fn is_idempotent(&self, name: &str) -> bool {
        self.get(name).is_some_and(|e| e.idempotent())
    }

    /// Whether the named tool has side effects (unknown tools are assumed to).
    pub fn has_side_effects(&self, name: &str) -> bool {
        self.get(name).is_none_or(|e| e.declared_effect().has_side_effects())
    }
}

/// A tool's name as a model's function name: OpenAI allows only letters,
/// digits, `_` and `-`, so `server.tool` goes as `server__tool`. Used by the
/// executor's repair loop and the ReAct baseline.
pub(crate) fn function_name(name: &str) -> String {
    name.replace(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'), "__")
}
