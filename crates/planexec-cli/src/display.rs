//! What the user sees on stderr while a run goes: the plan, a line per step
//! (with a spinner while it runs, on a terminal), retries, replans, and a final
//! summary of tokens, cost and time per role.
//!
//! On a terminal, steps get live spinners and every other line (including log
//! lines) is printed above them, so nothing tears. Elsewhere (CI logs, pipes)
//! the same events are plain lines. `NO_COLOR` turns colour off.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use console::Style;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use planexec::render::{self, Annotations};
use planexec::{Event, Plan, Role, RunReport, RunStatus};

pub struct Display {
    quiet: bool,
    live: Option<MultiProgress>,
    bars: Mutex<HashMap<String, ProgressBar>>,
    side_effect_tools: Vec<String>,
}

fn style(color: &str) -> Style {
    Style::from_dotted_str(color).for_stderr()
}

impl Display {
    pub fn new(quiet: bool, side_effect_tools: Vec<String>) -> Arc<Display> {
        let colors = std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal();
        console::set_colors_enabled_stderr(colors);
        let live = (!quiet && std::io::stderr().is_terminal() && std::env::var_os("PLANEXEC_PLAIN").is_none())
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Arc::new(Display {
            quiet,
            live,
            bars: Mutex::default(),
            side_effect_tools,
        })
    }

    /// Print a line above any live spinners.
    pub fn println(&self, line: &str) {
        match &self.live {
            Some(multi) => {
                let _ = multi.println(line);
            }
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
        }
    }

    /// Print a line unless `--quiet`.
    pub fn info(&self, line: &str) {
        if !self.quiet {
            self.println(line);
        }
    }

    /// Hide spinners while the user is asked something.
    pub fn pause(&self) {
        if let Some(multi) = &self.live {
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
    }

    pub fn resume(&self) {
        if let Some(multi) = &self.live {
            multi.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    pub fn render_plan(&self, plan: &Plan, mends: &[planexec::Mend]) -> String {
        let notes = Annotations {
            side_effect_tools: self.side_effect_tools.clone(),
            mends,
            ..Annotations::default()
        };
        render::text(plan, &notes)
    }

    pub fn handle(&self, event: &Event) {
        if self.quiet {
            return;
        }
        let dim = style("dim");
        match event {
            Event::PlanProposed { version, plan, mends } => {
                if *version > 1 {
                    self.println(&dim.apply_to(format!("plan version {version}:")).to_string());
                }
                self.println(self.render_plan(plan, mends).trim_end());
            }
            Event::PlanReused { template, from_run } => self.println(
                &dim.apply_to(format!(
                    "plan reused from run {from_run} (plan template {template}, no planner call; --plan-reuse off plans anew)"
                ))
                .to_string(),
            ),
            Event::StepRecovering { step_id, tool, error } => self.println(
                &style("yellow")
                    .apply_to(format!("~ {step_id} {tool} failed: {error}; an agent step recovers it"))
                    .to_string(),
            ),
            Event::RunResumed { run_id, steps_done, .. } => self.println(
                &dim.apply_to(format!("resuming {run_id}: {steps_done} finished step(s) kept"))
                    .to_string(),
            ),
            Event::QuestionsAsked { questions } => self.println(&format!(
                "The planner needs to know {} thing(s) first.",
                questions.len()
            )),
            Event::PlanRejectedByValidation { attempt, errors } => self.println(
                &style("yellow")
                    .apply_to(format!("plan attempt {attempt} was unusable; asking again:\n{errors}"))
                    .to_string(),
            ),
            Event::StepStarted { step_id, tool, agent } => {
                let what = match (tool, agent) {
                    (Some(tool), _) => format!("{step_id} {tool}"),
                    (None, Some(agent)) => format!("{step_id} agent {agent}"),
                    (None, None) => format!("{step_id} reasoning"),
                };
                match &self.live {
                    Some(multi) => {
                        let bar = multi.add(ProgressBar::new_spinner());
                        bar.set_style(
                            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                        );
                        bar.set_message(what);
                        bar.enable_steady_tick(Duration::from_millis(100));
                        self.bars.lock().unwrap().insert(step_id.clone(), bar);
                    }
                    None => self.println(&format!("> {what} started")),
                }
            }
            Event::StepRetried {
                step_id,
                attempt,
                error,
                delay_ms,
            } => self.println(
                &style("yellow")
                    .apply_to(format!(
                        "~ {step_id} retrying (attempt {attempt}) in {delay_ms} ms: {error}"
                    ))
                    .to_string(),
            ),
            Event::StepFinished {
                step_id,
                elapsed_ms,
                summary,
                ..
            } => {
                self.clear_bar(step_id);
                self.println(&format!(
                    "{} {step_id} {} {summary}",
                    style("green").apply_to("✓"),
                    dim.apply_to(format!("{elapsed_ms} ms"))
                ));
            }
            Event::StepFailed {
                step_id,
                elapsed_ms,
                error,
                ..
            } => {
                self.clear_bar(step_id);
                self.println(&format!(
                    "{} {step_id} {} {error}",
                    style("red").apply_to("✗"),
                    dim.apply_to(format!("{elapsed_ms} ms"))
                ));
            }
            Event::OutputMended { step_id, note, .. } => self.println(&format!(
                "  {} {step_id}: {note}",
                style("magenta").apply_to("↳")
            )),
            // An agent step's inner calls, indented under their step.
            Event::AgentCallStarted { .. } | Event::AgentCallFinished { .. } => self.agent_call(event),
            Event::FellBack { reason } => self.println(
                &style("magenta")
                    .apply_to(format!("↪ no progress; a ReAct loop takes over the rest: {reason}"))
                    .to_string(),
            ),
            Event::Replanned {
                version,
                reason,
                replans,
            } => self.println(
                &style("magenta")
                    .apply_to(format!("↻ replan {replans} (plan version {version}): {reason}"))
                    .to_string(),
            ),
            _ => {}
        }
    }

    /// An agent step's inner call: its step's spinner names it while it runs;
    /// when it ends, a line under the step says how it went.
    fn agent_call(&self, event: &Event) {
        let dim = style("dim");
        match event {
            Event::AgentCallStarted {
                step_id, call_id, tool, ..
            } => {
                if let Some(bar) = self.bars.lock().unwrap().get(step_id) {
                    bar.set_message(format!("{step_id} → {call_id} {tool}"));
                }
            }
            Event::AgentCallFinished {
                call_id,
                tool,
                elapsed_ms,
                error,
                summary,
                replayed,
                ..
            } => {
                let (mark, what) = match error {
                    Some(error) => (style("red").apply_to("✗"), error.clone()),
                    None => (style("green").apply_to("✓"), summary.clone()),
                };
                let how = if *replayed {
                    "replayed".to_string()
                } else {
                    format!("{elapsed_ms} ms")
                };
                self.println(&format!("   {mark} {call_id} {tool} {} {what}", dim.apply_to(how)));
            }
            _ => {}
        }
    }

    fn clear_bar(&self, step_id: &str) {
        if let Some(bar) = self.bars.lock().unwrap().remove(step_id) {
            bar.finish_and_clear();
            if let Some(multi) = &self.live {
                multi.remove(&bar);
            }
        }
    }

    /// Clear every spinner (a run ended, perhaps interrupted).
    pub fn finish(&self) {
        let bars: Vec<(String, ProgressBar)> = self.bars.lock().unwrap().drain().collect();
        for (_, bar) in bars {
            bar.finish_and_clear();
        }
    }

    /// The closing lines: why the run stopped (if it did not succeed) and the usage table.
    pub fn summary(&self, report: &RunReport) {
        self.finish();
        if let Some(error) = &report.error {
            let color = if report.status == RunStatus::Interrupted {
                "yellow"
            } else {
                "red"
            };
            self.println(
                &style(color)
                    .apply_to(format!("run {} {}: {error}", report.run_id, report.status.as_str()))
                    .to_string(),
            );
        }
        if self.quiet {
            return;
        }
        for line in usage_table(report).lines() {
            self.println(&style("dim").apply_to(line).to_string());
        }
    }
}

pub fn usage_table(report: &RunReport) -> String {
    let mut out = format!(
        "{:<12} {:>5} {:>10} {:>10} {:>10} {:>9}\n",
        "role", "calls", "prompt", "completion", "cost", "time"
    );
    let cost = |c: Option<f64>| c.map(|c| format!("${c:.4}")).unwrap_or_else(|| "-".to_string());
    for role in Role::ALL {
        let u = report.usage.role(role);
        if u.calls > 0 {
            out.push_str(&format!(
                "{:<12} {:>5} {:>10} {:>10} {:>10} {:>8.1}s\n",
                role.as_str(),
                u.calls,
                u.prompt_tokens,
                u.completion_tokens,
                cost(u.cost),
                u.latency_ms as f64 / 1000.0
            ));
        }
    }
    let t = report.usage.total();
    out.push_str(&format!(
        "{:<12} {:>5} {:>10} {:>10} {:>10} {:>8.1}s wall",
        "total",
        t.calls,
        t.prompt_tokens,
        t.completion_tokens,
        cost(t.cost),
        report.elapsed_ms as f64 / 1000.0
    ));
    if t.cache_read_tokens + t.cache_write_tokens > 0 {
        out.push_str(&format!(
            "\nprompt cache: {} tokens read, {} written",
            t.cache_read_tokens, t.cache_write_tokens
        ));
    }
    let b = report.budget;
    let mut spend = Vec::new();
    if let Some(max) = b.max_tokens {
        spend.push(format!("tokens {} / {max}", t.prompt_tokens + t.completion_tokens));
    }
    if let Some(max) = b.max_cost {
        spend.push(format!("cost ${:.4} / ${max:.4}", t.cost.unwrap_or(0.0)));
    }
    if let Some(max) = b.max_time_ms {
        spend.push(format!(
            "time {:.1}s / {:.1}s",
            report.elapsed_ms as f64 / 1000.0,
            max as f64 / 1000.0
        ));
    }
    if !spend.is_empty() {
        out.push_str(&format!("\nbudget: {}", spend.join(", ")));
    }
    out
}

/// A `tracing` writer that prints through the display, so log lines never tear spinners.
#[derive(Clone)]
pub struct LogWriter(pub Arc<Display>);

pub struct LineBuffer(Arc<Display>, Vec<u8>);

impl Write for LineBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.1.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineBuffer {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.1);
        let text = text.trim_end();
        if !text.is_empty() {
            self.0.println(text);
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LineBuffer;
    fn make_writer(&'a self) -> LineBuffer {
        LineBuffer(self.0.clone(), Vec::new())
    }
}

/// Logs (`-v`, `PLANEXEC_LOG`) go through the display, so they never tear a progress line.
pub(crate) fn init_logging(verbose: u8, display: &Arc<Display>) {
    let default = match verbose {
        0 => "warn",
        1 => "planexec=debug,info",
        _ => "planexec=trace,debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PLANEXEC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(LogWriter(display.clone()))
        .with_target(false)
        .without_time()
        .try_init();
}
