//! Providers from model references.
//!
//! A model reference is `provider/model`: `openai/gpt-4o-mini`,
//! `anthropic/claude-sonnet-4-5`, `openai-compatible/qwen2.5-coder:7b`,
//! `local/small` (a pulled embedded model, or `local/PATH.gguf`). A bare name
//! is a model on the configured provider. Every provider the CLI uses is built
//! by [`Providers::get`] from a reference; one instance serves every role
//! that names it (the embedded model is loaded once per file).
//!
//! The configured provider (`provider`, env `PLANEXEC_PROVIDER`) is `auto`
//! unless set: the embedded model when `--model-path` or `--local-model` is
//! given (whatever keys are set), else an OpenAI-compatible server when a base
//! URL or `OPENAI_API_KEY` is set, else Anthropic when `ANTHROPIC_API_KEY` is,
//! else the embedded model. [`configured`] says which and why.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use planexec::llm::anthropic::{Anthropic, AnthropicConfig};
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::ChatModel;

use crate::config::{self, Config, Source};
use crate::outcome::BadInput;

/// A kind of provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    OpenAiCompatible,
    Anthropic,
    Local,
}

impl Provider {
    fn parse(name: &str) -> Option<Provider> {
        match name {
            "openai" | "openai-compatible" => Some(Provider::OpenAiCompatible),
            "anthropic" => Some(Provider::Anthropic),
            "local" => Some(Provider::Local),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAiCompatible => "openai-compatible",
            Provider::Anthropic => "anthropic",
            Provider::Local => "local",
        }
    }
}

/// Which provider, and which model on it (`None`: the provider's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelReference {
    pub provider: Provider,
    pub model: Option<String>,
}

impl ModelReference {
    /// `provider/model` when `text` starts with a provider's name, else the
    /// model `text` on `default`. A model whose own name starts with a
    /// provider's name is written with its provider first
    /// (`openai-compatible/anthropic/claude-3.5-sonnet` on OpenRouter).
    pub fn parse(text: &str, default: Provider) -> ModelReference {
        let text = text.trim();
        match text.split_once('/').and_then(|(p, m)| Some((Provider::parse(p)?, m))) {
            Some((provider, model)) => ModelReference {
                provider,
                model: Some(model.to_string()).filter(|m| !m.is_empty()),
            },
            None => ModelReference {
                provider: default,
                model: Some(text.to_string()),
            },
        }
    }

    /// Whether `text` names its provider.
    pub fn names_provider(text: &str) -> bool {
        text.split_once('/').is_some_and(|(p, _)| Provider::parse(p).is_some())
    }
}

/// The provider for bare model names, and why it is the one.
pub fn configured(config: &Config) -> Result<(Provider, String), BadInput> {
    let set = |key: &str| {
        config
            .entry(key)
            .filter(|e| e.source != Source::Default && !e.value.is_empty())
    };
    let chosen = config.entry("provider").filter(|e| e.value != "auto");
    if let Some(entry) = chosen {
        let provider = Provider::parse(&entry.value).ok_or_else(|| {
            BadInput(format!(
                "provider `{}` (from {}) is not supported; use auto, local, openai-compatible or anthropic",
                entry.value, entry.source
            ))
        })?;
        return Ok((provider, format!("provider = {} from {}", entry.value, entry.source)));
    }
    let why = |key: &str, what: &str| set(key).map(|e| format!("{what} from {}", e.source));
    if let Some(why) = why("model_path", "a model file").or_else(|| why("local_model", "a local model")) {
        return Ok((Provider::Local, why));
    }
    if let Some(why) = why("base_url", "a server URL").or_else(|| why("api_key", "an OpenAI API key")) {
        return Ok((Provider::OpenAiCompatible, why));
    }
    if let Some(why) = why("anthropic_api_key", "an Anthropic API key") {
        return Ok((Provider::Anthropic, why));
    }
    Ok((Provider::Local, "no server or API key is configured".to_string()))
}

/// The providers of one command, built once each.
#[derive(Default)]
pub struct Providers {
    built: HashMap<&'static str, Arc<dyn ChatModel>>,
    /// Embedded models by file, with the name each goes by.
    local: HashMap<PathBuf, (Arc<dyn ChatModel>, String)>,
}

impl Providers {
    /// The provider `reference` names and the model name to ask it for.
    pub fn get(
        &mut self,
        config: &Config,
        reference: &ModelReference,
        timeout: Duration,
    ) -> Result<(Arc<dyn ChatModel>, String), BadInput> {
        match reference.provider {
            Provider::OpenAiCompatible => {
                let model = reference.model.clone().unwrap_or_else(|| "gpt-4o-mini".to_string());
                let provider = match self.built.get("openai") {
                    Some(p) => p.clone(),
                    None => openai(config, timeout)?,
                };
                self.built.insert("openai", provider.clone());
                Ok((provider, model))
            }
            Provider::Anthropic => {
                let model = reference
                    .model
                    .clone()
                    .unwrap_or_else(|| "claude-sonnet-4-5".to_string());
                let provider = match self.built.get("anthropic") {
                    Some(p) => p.clone(),
                    None => anthropic(config, timeout)?,
                };
                self.built.insert("anthropic", provider.clone());
                Ok((provider, model))
            }
            Provider::Local => {
                let path = local_path(config, reference.model.as_deref())?;
                if let Some((provider, name)) = self.local.get(&path) {
                    return Ok((provider.clone(), name.clone()));
                }
                let local = load_local(&path)?;
                let name = local.name().to_string();
                let provider: Arc<dyn ChatModel> = Arc::new(local);
                self.local.insert(path, (provider.clone(), name.clone()));
                Ok((provider, name))
            }
        }
    }
}

/// Load the embedded model at `path` as every command does (a run, and
/// `model pull` preparing its prompt), so that the prompt state one saves is
/// the one the other finds. Blocks this worker thread while the weights load.
pub fn load_local(path: &Path) -> Result<planexec_local::LocalModel, BadInput> {
    tokio::task::block_in_place(|| {
        planexec_local::LocalModel::load(planexec_local::EngineConfig::new(path.to_path_buf()))
    })
    .map_err(|e| BadInput(e.to_string()))
}

/// The GGUF file of an embedded model: `model` from a `local/...` reference
/// (a pulled model's name or a path), else `model_path` or `local_model`.
fn local_path(config: &Config, model: Option<&str>) -> Result<PathBuf, BadInput> {
    let located = match model {
        Some(m) if planexec_local::weights::spec(m).is_some() => planexec_local::locate_model(None, m),
        Some(path) => planexec_local::locate_model(Some(Path::new(path)), "default"),
        None => planexec_local::locate_model(
            config.get("model_path").map(Path::new),
            config.get("local_model").unwrap_or("default"),
        ),
    };
    located.map_err(BadInput)
}

/// Refuse to send the user's key (config key `key`) to a `base_url` that a
/// workspace's `planexec.toml` chose.
fn key_stays_home(config: &Config, key: &str) -> Result<(), BadInput> {
    if let (Some(url_entry), Some(key_entry)) = (config.entry("base_url"), config.entry(key)) {
        let from_workspace = |e: &config::Entry| matches!(&e.source, Source::File(p) if p.ends_with("planexec.toml"));
        if from_workspace(url_entry) && !from_workspace(key_entry) {
            return Err(BadInput(format!(
                "{} sets base_url = {}, but your API key comes from {}; planexec will not send your key to a server named by a workspace file. Set base_url in your own config, the environment or --base-url to trust it",
                url_entry.source, url_entry.value, key_entry.source
            )));
        }
    }
    Ok(())
}

fn openai(config: &Config, timeout: Duration) -> Result<Arc<dyn ChatModel>, BadInput> {
    let base_url = config.get("base_url").map(str::to_string);
    let api_key = config.get("api_key").filter(|k| !k.is_empty()).map(str::to_string);
    key_stays_home(config, "api_key")?;
    if base_url.is_none() && api_key.is_none() {
        return Err(BadInput(
            "the openai-compatible provider needs a server: set OPENAI_API_KEY (or --api-key) to use OpenAI, or --base-url / OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama (http://localhost:11434/v1)".to_string(),
        ));
    }
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url: base_url.unwrap_or_else(|| OpenAiConfig::default().base_url),
        api_key,
        timeout,
        ..OpenAiConfig::default()
    })
    .map_err(|e| BadInput(e.to_string()))?;
    Ok(Arc::new(provider))
}

fn anthropic(config: &Config, timeout: Duration) -> Result<Arc<dyn ChatModel>, BadInput> {
    // --api-key / --base-url and the config file win over ANTHROPIC_*, but
    // OPENAI_API_KEY / OPENAI_BASE_URL from the environment are OpenAI's:
    // never sent to (or used for) Anthropic.
    let not_openai_env = |key: &str| config.entry(key).is_some_and(|e| !matches!(e.source, Source::Env(_)));
    let api_key = config
        .get("api_key")
        .filter(|k| !k.is_empty() && not_openai_env("api_key"))
        .map(str::to_string);
    let base_url = config
        .get("base_url")
        .filter(|_| not_openai_env("base_url"))
        .map(str::to_string);
    key_stays_home(
        config,
        if api_key.is_some() {
            "api_key"
        } else {
            "anthropic_api_key"
        },
    )?;
    let key = api_key.or_else(|| config.get("anthropic_api_key").map(str::to_string));
    if key.is_none() {
        return Err(BadInput(
            "the anthropic provider needs an API key: set ANTHROPIC_API_KEY (or --api-key)".to_string(),
        ));
    }
    let url = base_url
        .or_else(|| config.get("anthropic_base_url").map(str::to_string))
        .unwrap_or_else(|| AnthropicConfig::default().base_url);
    let provider = Anthropic::new(AnthropicConfig {
        base_url: url,
        api_key: key,
        timeout,
        ..AnthropicConfig::default()
    })
    .map_err(|e| BadInput(e.to_string()))?;
    Ok(Arc::new(provider))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_their_provider_or_take_the_configured_one() {
        let parse = ModelReference::parse;
        assert_eq!(
            parse("anthropic/claude-sonnet-4-5", Provider::Local),
            ModelReference {
                provider: Provider::Anthropic,
                model: Some("claude-sonnet-4-5".into())
            }
        );
        assert_eq!(parse("local/small", Provider::Anthropic).provider, Provider::Local);
        assert_eq!(
            parse("openai-compatible/anthropic/claude-3.5", Provider::Local)
                .model
                .as_deref(),
            Some("anthropic/claude-3.5")
        );
        assert_eq!(
            parse("qwen2.5-coder:7b", Provider::OpenAiCompatible),
            ModelReference {
                provider: Provider::OpenAiCompatible,
                model: Some("qwen2.5-coder:7b".into())
            }
        );
        // A slash that names no provider is part of the model's name.
        assert_eq!(
            parse("library/qwen", Provider::OpenAiCompatible).model.as_deref(),
            Some("library/qwen")
        );
        assert!(ModelReference::names_provider("local/small"));
        assert!(!ModelReference::names_provider("meta-llama/Llama-3"));
    }
}
