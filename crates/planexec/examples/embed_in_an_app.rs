//! Embedding the runtime in an application: a provider from the environment,
//! the built-in tools over one folder, a policy of your own for approving
//! plans and confirming side effects, a ledger, a budget, the event stream,
//! and Ctrl-C as a cancellation.
//!
//! ```sh
//! OPENAI_BASE_URL=http://localhost:11434/v1 PLANEXEC_MODEL=qwen2.5-coder:1.5b \
//!   cargo run -p planexec --example embed_in_an_app -- "List the files here and say which is largest"
//! ```
//!
//! Any OpenAI-compatible server works (Ollama, vLLM, llama.cpp's server, or
//! OpenAI with `OPENAI_API_KEY`). The CLI (`planexec run`) is built from the
//! same calls.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use planexec::llm::openai::{OpenAiCompatible, OpenAiConfig};
use planexec::policy::{Approval, PlanCheck};
use planexec::tools::{builtin, workspace::Workspace};
use planexec::{Agent, Approver, Budget, CancelToken, Effect, Event, MemoryStore, Mode, Plan, RunOptions, Step};

/// The application's policy: a plan is approved when every step is one the
/// app allows, and a call with side effects runs only if it writes files
/// (never the shell). A real app would ask its user here.
struct AppPolicy;

#[async_trait]
impl Approver for AppPolicy {
    async fn review(&self, plan: &Plan, _check: PlanCheck<'_>) -> Approval {
        match plan.steps.iter().find(|s| s.tool.as_deref() == Some("shell")) {
            Some(step) => Approval::Feedback(format!(
                "step {} uses the shell, which this app does not allow; use the file tools",
                step.id
            )),
            None => Approval::Approve,
        }
    }

    async fn confirm_step(&self, step: &Step, _args: &serde_json::Value, effect: Effect) -> bool {
        eprintln!("confirm {} ({}): {}", step.id, effect.as_str(), step.description);
        step.tool.as_deref() == Some("write_file")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let task = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "List the files here".to_string());
    let Ok(base_url) = std::env::var("OPENAI_BASE_URL") else {
        eprintln!("set OPENAI_BASE_URL to an OpenAI-compatible server (e.g. http://localhost:11434/v1) and PLANEXEC_MODEL to its model");
        return Ok(());
    };
    let model = std::env::var("PLANEXEC_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_string());
    let provider = OpenAiCompatible::new(OpenAiConfig {
        base_url,
        api_key: std::env::var("OPENAI_API_KEY").ok(),
        timeout: Duration::from_secs(120),
        ..OpenAiConfig::default()
    })?;
    let agent = Agent::builder(Arc::new(provider), model)
        .tools(builtin::registry(Workspace::new(".")?))
        .approver(Arc::new(AppPolicy))
        .store(Arc::new(MemoryStore::new()))
        .options(RunOptions {
            mode: Mode::Ask,
            budget: Budget {
                max_tokens: Some(50_000),
                ..Budget::default()
            },
            ..RunOptions::default()
        })
        .build();
    agent.events().on_event(|e| match e {
        Event::PlanProposed { plan, .. } => eprintln!("plan: {} steps", plan.steps.len()),
        Event::StepFinished { step_id, summary, .. } => eprintln!("{step_id}: {summary}"),
        Event::StepFailed { step_id, error, .. } => eprintln!("{step_id} failed: {error}"),
        _ => {}
    });

    let cancel = CancelToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let report = agent.run_cancellable(&task, None, &cancel).await;
    println!("{}", report.answer.clone().unwrap_or_default());
    let total = report.usage.total();
    eprintln!(
        "{} in {} ms, {} model calls, {} tokens",
        report.status.as_str(),
        report.elapsed_ms,
        total.calls,
        total.prompt_tokens + total.completion_tokens
    );
    Ok(())
}
