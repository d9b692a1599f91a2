//! `planexec model pull|list`: the embedded model's weights.

use crate::{BadInput, EXIT_OK, EXIT_RUN_FAILED};

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

/// `model pull`: fetch the weights with a progress bar.
pub async fn pull(name: &str, quiet: bool) -> Result<u8, BadInput> {
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
            Ok(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(EXIT_RUN_FAILED)
        }
    }
}
