//! Helpers shared by the tests of the `planexec` binary.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};

/// The binary in `workspace`, isolated from the user's configuration, models,
/// ledger and provider environment, with no standard input.
pub fn planexec(workspace: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planexec"));
    cmd.current_dir(workspace)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("PLANEXEC_PROVIDER")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("PLANEXEC_MODEL")
        .env("XDG_CONFIG_HOME", workspace.join(".no-user-config"))
        .env("XDG_DATA_HOME", workspace.join(".no-user-config").join("data"))
        .env_remove("PLANEXEC_DB")
        .env_remove("PLANEXEC_MODE")
        .env_remove("PLANEXEC_APPROVAL")
        .env_remove("PLANEXEC_CONFIG")
        .env("PLANEXEC_MODEL_DIR", workspace.join(".no-models"))
        .env_remove("PLANEXEC_MODEL_PATH")
        .stdin(Stdio::null());
    cmd
}

pub fn run(cmd: &mut Command) -> (Output, String, String) {
    let out = cmd.output().expect("run planexec");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

/// Step `id` of a JSON run report (panics, naming the report, when it has none).
pub fn report_step(report: &serde_json::Value, id: &str) -> serde_json::Value {
    report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no step {id} in {report}"))
}
