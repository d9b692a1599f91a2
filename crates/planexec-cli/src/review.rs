//! Plan review on a terminal: approve, reject, edit in `$VISUAL`/`$EDITOR`, or
//! give feedback to the replanner; answer the planner's clarifying questions;
//! confirm steps with side effects (as `--mode` says).
//!
//! Only used when standard input is a terminal. An edited plan is validated
//! again; on any error the error is shown and the editor reopens on the user's
//! own text (nothing is silently dropped). Saving an empty file cancels the edit.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use async_trait::async_trait;
use planexec::plan;
use planexec::policy::PlanCheck;
use planexec::{Approval, Approver, Effect, Plan, Step};
use serde_json::Value;

use crate::display::Display;

pub struct TerminalReviewer {
    pub display: Arc<Display>,
}

/// One prompt at a time: parallel steps asking for confirmation must not read
/// each other's answers.
static PROMPT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Print `prompt` on stderr and read one line from stdin; `None` at end of input.
async fn ask(display: &Display, prompt: String) -> Option<String> {
    let _turn = PROMPT.lock().await;
    display.pause();
    let line = tokio::task::spawn_blocking(move || {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_string()),
        }
    })
    .await
    .ok()
    .flatten();
    display.resume();
    line
}

fn editor_command() -> String {
    std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| std::env::var("EDITOR").ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string())
}

impl TerminalReviewer {
    /// Edit the plan as JSON until it is valid. `None`: the user cancelled.
    pub async fn edit(&self, current: &Plan, check: PlanCheck<'_>) -> Option<Plan> {
        let file = match tempfile::Builder::new()
            .prefix("planexec-plan-")
            .suffix(".json")
            .tempfile()
        {
            Ok(f) => f,
            Err(e) => {
                self.display.println(&format!("cannot create a file to edit: {e}"));
                return None;
            }
        };
        let path = file.path().to_path_buf();
        if let Err(e) = std::fs::write(&path, current.to_json_pretty() + "\n") {
            self.display.println(&format!("cannot write {}: {e}", path.display()));
            return None;
        }
        loop {
            let editor = editor_command();
            let target = path.clone();
            self.display.pause();
            // Through the shell, so EDITOR may carry arguments ("code --wait").
            // If stdout is piped (e.g. `--json | jq`), the editor draws on the terminal instead.
            let status = tokio::task::spawn_blocking(move || {
                let mut cmd = std::process::Command::new("sh");
                cmd.arg("-c").arg(format!("{editor} \"$1\"")).arg("sh").arg(&target);
                if !std::io::stdout().is_terminal() {
                    if let Ok(tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
                        cmd.stdout(tty);
                    }
                }
                cmd.status()
            })
            .await;
            self.display.resume();
            match status {
                Ok(Ok(s)) if s.success() => {}
                Ok(Ok(s)) => {
                    self.display.println(&format!(
                        "the editor `{}` exited with {s}; the edit is cancelled",
                        editor_command()
                    ));
                    return None;
                }
                _ => {
                    self.display.println(&format!(
                        "cannot start the editor `{}`; set $VISUAL or $EDITOR",
                        editor_command()
                    ));
                    return None;
                }
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.trim().is_empty() {
                self.display
                    .println("the file is empty: edit cancelled, the plan is unchanged");
                return None;
            }
            let problem = match plan::parse_plan_file(&text) {
                Err(e) => e.to_string(),
                Ok(edited) => match check(&edited) {
                    Ok(()) => return Some(edited),
                    Err(errors) => format!("the edited plan is invalid:\n{errors}"),
                },
            };
            self.display.println(&format!(
                "{problem}\nreopening the editor on your text (save an empty file to cancel the edit)"
            ));
        }
    }
}

#[async_trait]
impl Approver for TerminalReviewer {
    async fn review(&self, plan: &Plan, check: PlanCheck<'_>) -> Approval {
        loop {
            let Some(answer) = ask(
                &self.display,
                "Run this plan? [a]pprove, [r]eject, [e]dit, give [f]eedback: ".to_string(),
            )
            .await
            else {
                // End of input: nobody is there to approve.
                return Approval::Reject;
            };
            match answer.to_ascii_lowercase().as_str() {
                "a" | "approve" | "y" | "yes" => return Approval::Approve,
                "r" | "reject" | "n" | "no" => return Approval::Reject,
                "e" | "edit" => {
                    if let Some(edited) = self.edit(plan, check).await {
                        return Approval::Edit(edited);
                    }
                    self.display.println(self.display.render_plan(plan, &[]).trim_end());
                }
                "f" | "feedback" => match ask(&self.display, "Feedback for the planner: ".to_string()).await {
                    Some(text) if !text.is_empty() => return Approval::Feedback(text),
                    Some(_) => self.display.println("no feedback given"),
                    None => return Approval::Reject,
                },
                _ => self.display.println("please answer a, r, e or f"),
            }
        }
    }

    fn can_answer_questions(&self) -> bool {
        true
    }

    async fn answer_questions(&self, questions: &[String]) -> Option<Vec<String>> {
        let mut answers = Vec::new();
        for q in questions {
            answers.push(ask(&self.display, format!("? {q}\n> ")).await?);
        }
        Some(answers)
    }

    async fn confirm_step(&self, step: &Step, args: &Value, effect: Effect) -> bool {
        let prompt = format!(
            "Step {} ({}) runs {}, which {effect}. Run it with {}? [y/N] ",
            step.id,
            step.description,
            step.tool.as_deref().unwrap_or("?"),
            serde_json::to_string_pretty(args).unwrap_or_default()
        );
        matches!(
            ask(&self.display, prompt)
                .await
                .map(|a| a.to_ascii_lowercase())
                .as_deref(),
            Some("y" | "yes")
        )
    }

    /// An MCP server's question: shown, then each field of its form asked
    /// in turn; declined unless the person says to answer.
    async fn elicit(&self, step: &Step, question: &planexec::tools::asking::Question) -> Option<Value> {
        let tool = step.tool.as_deref().unwrap_or("?");
        let opening = format!(
            "Step {} ({tool}) asks: {}
Answer it? [y/N] ",
            step.id, question.message
        );
        if !matches!(
            ask(&self.display, opening).await?.to_ascii_lowercase().as_str(),
            "y" | "yes"
        ) {
            return None;
        }
        let mut answers = Vec::new();
        for field in crate::form::fields(&question.schema) {
            let mut tries = 0;
            loop {
                match crate::form::parse(&field, &ask(&self.display, crate::form::prompt(&field)).await?) {
                    Ok(Some(value)) => break answers.push((field.name.clone(), value)),
                    Ok(None) => break,
                    Err(why) if tries < 2 => {
                        tries += 1;
                        self.display.println(&format!("  {why}"));
                    }
                    Err(_) => return None,
                }
            }
        }
        Some(crate::form::object(answers))
    }

    async fn rerun_inflight(&self, step: &Step, args: Option<&Value>) -> Option<bool> {
        let prompt = format!(
            "Step {} ({}) was running {} with {} when the run stopped, so its effect may or may not have happened.\nRun it again [r], or take it as done [d]? ",
            step.id,
            step.description,
            step.tool.as_deref().unwrap_or("?"),
            args.map(|a| serde_json::to_string_pretty(a).unwrap_or_default())
                .unwrap_or_else(|| "its arguments".to_string())
        );
        match ask(&self.display, prompt).await?.trim().to_ascii_lowercase().as_str() {
            "r" | "run" | "rerun" | "again" => Some(true),
            "d" | "done" | "skip" => Some(false),
            _ => None,
        }
    }
}
