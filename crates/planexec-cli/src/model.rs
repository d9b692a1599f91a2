//! `planexec model pull|list`: the embedded model's weights, and the state
//! of the prompt every run starts with, prepared once they are in place.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::args::ModelCommand;
use crate::config::{Config, Flags};
use crate::outcome::{BadInput, EXIT_OK, EXIT_RUN_FAILED};
use crate::{provider, setup};

/// `planexec model ...`.
pub async fn command(command: ModelCommand, quiet: bool) -> Result<u8, BadInput> {
    match command {
        ModelCommand::Pull {
            name,
            workspace,
            no_prepare,
        } => pull(&name, (!no_prepare).then_some(workspace.as_path()), quiet).await,
        ModelCommand::List { json } => Ok(list(json)),
    }
}

/// `model list`: the models planexec knows and which are installed.
pub fn list(json: bool) -> u8 {
    if json {
        let models: Vec<serde_json::Value> = planexec_local::weights::CATALOG
            .iter()
            .map(|spec| {
                let path = planexec_local::weights::installed(spec);
                serde_json::json!({
                    "name": spec.name,
                    "description": spec.description,
                    "file": spec.file_name,
                    "size_bytes": spec.size,
                    "installed": path.is_some(),
                    "path": path,
                })
            })
            .collect();
        let dir = planexec_local::weights::model_dir();
        outln!("{:#}", serde_json::json!({"dir": dir, "models": models}));
        return EXIT_OK;
    }
    outln!("models in {}", planexec_local::weights::model_dir().display());
    for spec in planexec_local::weights::CATALOG {
        let status = match planexec_local::weights::installed(&spec) {
            Some(path) => format!("installed  {}", path.display()),
            None => format!("not installed (planexec model pull {})", spec.name),
        };
        outln!(
            "{:<8} {:<38} {:>5} MB  {status}",
            spec.name,
            spec.description,
            spec.size / 1_000_000
        );
    }
    EXIT_OK
}

/// `model pull`: fetch the weights with a progress bar, then prepare the
/// system prompt of `prepare_for`'s tools, when given.
pub async fn pull(name: &str, prepare_for: Option<&Path>, quiet: bool) -> Result<u8, BadInput> {
    let spec = planexec_local::weights::spec(name)
        .ok_or_else(|| BadInput(format!("unknown model `{name}`: choose default or small")))?;
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(spec.parts as u64)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg:<28} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(format!("fetching {} ({})", spec.name, spec.description));
    let progress_bar = bar.clone();
    let result = tokio::task::spawn_blocking(move || {
        let mut joining = false;
        // Said even with --quiet: a file that had to be fetched again is worth knowing about.
        let warn = |text: String| progress_bar.suspend(|| eprintln!("warning: {text}"));
        planexec_local::weights::pull(&spec, &mut |p| match p {
            planexec_local::weights::Progress::BadPart { part, parts } => warn(format!(
                "part {part} of {parts} did not match its pinned sha256 (corrupt or cut short): deleted, fetching it again"
            )),
            planexec_local::weights::Progress::BadFile => warn(format!(
                "the installed {} model did not match its sha256: deleted, fetching it again",
                spec.name
            )),
            planexec_local::weights::Progress::Part { part, .. } => progress_bar.set_position(part as u64),
            planexec_local::weights::Progress::Joining { bytes, total } => {
                if !joining {
                    joining = true;
                    progress_bar.set_length(total);
                    progress_bar.set_position(0);
                    progress_bar.set_message("joining and checking");
                }
                progress_bar.set_position(bytes);
            }
        })
    })
    .await
    .map_err(|e| BadInput(format!("the pull stopped: {e}")))?;
    bar.finish_and_clear();
    match result {
        Ok(path) => {
            if !quiet {
                eprintln!("{} model ready: {}", spec.name, path.display());
            }
            if let Some(workspace) = prepare_for {
                // The weights are in place whatever happens here: a run would
                // evaluate the prompt itself.
                if let Err(BadInput(e)) = prepare(&path, workspace, quiet).await {
                    eprintln!("warning: the prompt was not prepared ({e}); the first run will evaluate it");
                }
            }
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_RUN_FAILED)
        }
    }
}

/// Evaluate the system prompt of `workspace`'s tools (built-ins and shell,
/// as its configuration sets them up; MCP servers' tools are left to the
/// first run that starts them) on the model at `path`, and save its state.
/// On 2 cores that is a minute or two the first run would otherwise spend,
/// inside the first step's time limit when the run starts from a plan file.
async fn prepare(path: &Path, workspace: &Path, quiet: bool) -> Result<(), BadInput> {
    let config = Config::load(workspace, &Flags::default())?;
    let tools = setup::local_tools(workspace, &config)?;
    let options = config.run_options()?;
    let count = tools.names().len();
    let model = provider::load_local(path)?;
    let name = model.name().to_string();
    let agent = planexec::Agent::builder(Arc::new(model), name)
        .tools(tools)
        .options(options)
        .build();
    if !quiet {
        let folder = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        eprintln!(
            "preparing the system prompt of the {count} tools in {} (once: later runs start from its saved state)",
            folder.display()
        );
    }
    let started = Instant::now();
    let prepared = agent.prepare().await.map_err(|e| BadInput(e.to_string()))?;
    if !quiet {
        match prepared.evaluated_tokens {
            0 => eprintln!("the prompt ({} tokens) was prepared already", prepared.kept_tokens),
            n => eprintln!(
                "prompt prepared: {n} tokens evaluated and saved in {:.1} s",
                started.elapsed().as_secs_f64()
            ),
        }
    }
    Ok(())
}
