//! Pictures of a plan: text, JSON, Mermaid and Graphviz DOT.
//!
//! Every format groups the steps in *waves* (steps of one wave depend only on
//! earlier waves, so they can run in parallel), marks steps whose tool has side
//! effects, and can show each step's status, so the same renderer serves the
//! plan review before a run and the display of a recorded run.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{Map, Value};

use crate::plan::{waves, Plan, Step, StepKind};
use crate::result::StepStatus;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Mermaid,
    Dot,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "mermaid" => Ok(Format::Mermaid),
            "dot" => Ok(Format::Dot),
            other => Err(format!("unknown format `{other}`: use text, json, mermaid or dot")),
        }
    }
}

/// What a renderer knows besides the plan.
#[derive(Default)]
pub struct Annotations<'a> {
    /// Tools with side effects (marked `!` in text, differently shaped in graphs).
    pub side_effect_tools: Vec<String>,
    /// Status of steps that have one (a recorded or running run).
    pub statuses: HashMap<&'a str, StepStatus>,
    /// What the runtime changed in the plan the model wrote: each mend is
    /// shown beside the step it acted at (in text), a worked plan on top.
    pub mends: &'a [crate::help::Mend],
}

impl Annotations<'_> {
    fn has_side_effects(&self, step: &Step) -> bool {
        step.tool.as_ref().is_some_and(|t| self.side_effect_tools.contains(t))
    }
}

pub fn render(plan: &Plan, format: Format, notes: &Annotations<'_>) -> String {
    match format {
        Format::Text => text(plan, notes),
        Format::Json => json(plan),
        Format::Mermaid => mermaid(plan, notes),
        Format::Dot => dot(plan, notes),
    }
}

fn status_word(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending => "pending",
        StepStatus::Succeeded => "done",
        StepStatus::Failed => "failed",
        StepStatus::Superseded => "superseded",
        StepStatus::Interrupted => "interrupted",
        StepStatus::Running => "running",
        StepStatus::Skipped => "skipped",
    }
}

fn summarize_args(args: &Map<String, Value>, width: usize) -> String {
    args.iter()
        .map(|(k, v)| format!("{k}={}", crate::text::truncate_chars(&v.to_string(), width)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A readable tree: waves, then one line per step with tool, key arguments and dependencies.
pub fn text(plan: &Plan, notes: &Annotations<'_>) -> String {
    let mut out = format!("Plan: {}\n", plan.goal);
    for a in &plan.assumptions {
        let _ = writeln!(out, "  assuming: {a}");
    }
    for m in notes.mends.iter().filter(|m| plan.step(&m.step).is_none()) {
        let _ = writeln!(out, "  {}", m.describe());
    }
    if let Some(reason) = &plan.infeasible {
        let _ = writeln!(out, "  infeasible: {reason}");
        return out;
    }
    for (w, wave) in waves(plan).iter().enumerate() {
        let parallel = if wave.len() > 1 { " (in parallel)" } else { "" };
        let _ = writeln!(out, "  wave {}{parallel}", w + 1);
        for step in wave {
            let mark = notes
                .statuses
                .get(step.id.as_str())
                .map(|s| format!("[{}] ", status_word(*s)))
                .unwrap_or_default();
            let tool = match step.kind() {
                StepKind::Tool(t) => {
                    let fx = if notes.has_side_effects(step) { " !" } else { "" };
                    format!("{t}({}){fx}", summarize_args(&step.args, 40))
                }
                StepKind::Agent(agent) => format!("agent {agent}"),
                StepKind::Reasoning => "reasoning".to_string(),
            };
            let deps = if step.depends_on.is_empty() {
                String::new()
            } else {
                format!("  <- {}", step.depends_on.join(", "))
            };
            let _ = writeln!(out, "    {mark}{}  {}  — {tool}{deps}", step.id, step.description);
            if let Some(expected) = &step.expected {
                let _ = writeln!(out, "        expect: {expected}");
            }
            for m in notes.mends.iter().filter(|m| m.step == step.id) {
                let _ = writeln!(out, "        mended: {}", m.describe());
            }
        }
    }
    if !notes.side_effect_tools.is_empty() && plan.steps.iter().any(|s| notes.has_side_effects(s)) {
        out.push_str("  (! = has side effects)\n");
    }
    out
}

fn json(plan: &Plan) -> String {
    plan.to_json_pretty() + "\n"
}

fn label(step: &Step, width: usize) -> String {
    let tool = match step.kind() {
        StepKind::Tool(t) if step.args.is_empty() => t.to_string(),
        StepKind::Tool(t) => format!("{t}({})", summarize_args(&step.args, width)),
        StepKind::Agent(agent) => format!("agent {agent}"),
        StepKind::Reasoning => "reasoning".to_string(),
    };
    format!(
        "{}: {}\n{tool}",
        step.id,
        crate::text::truncate_chars(&step.description, 48)
    )
}

/// Mermaid flowchart: one subgraph per wave (parallel steps side by side), edges for dependencies.
pub fn mermaid(plan: &Plan, notes: &Annotations<'_>) -> String {
    let id = |s: &str| format!("n_{}", s.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
    let escape = |s: &str| s.replace('"', "#quot;").replace('\n', "<br/>");
    let mut out = String::from("flowchart TD\n");
    for (w, wave) in waves(plan).iter().enumerate() {
        let _ = writeln!(out, "  subgraph wave{}[\"wave {}\"]", w + 1, w + 1);
        let _ = writeln!(out, "    direction LR");
        for step in wave {
            let text = escape(&label(step, 24));
            // Side effects get a hexagon so they stand out even without colour.
            let shape = if notes.has_side_effects(step) {
                format!("{{{{\"{text}\"}}}}")
            } else {
                format!("[\"{text}\"]")
            };
            let _ = writeln!(out, "    {}{shape}", id(&step.id));
        }
        out.push_str("  end\n");
    }
    for step in &plan.steps {
        for dep in &step.depends_on {
            let _ = writeln!(out, "  {} --> {}", id(dep), id(&step.id));
        }
    }
    let mut classes: Vec<(StepStatus, Vec<String>)> = Vec::new();
    for step in &plan.steps {
        if let Some(&status) = notes.statuses.get(step.id.as_str()) {
            match classes.iter_mut().find(|(s, _)| *s == status) {
                Some((_, ids)) => ids.push(id(&step.id)),
                None => classes.push((status, vec![id(&step.id)])),
            }
        }
    }
    for (status, ids) in classes {
        let (name, style) = match status {
            StepStatus::Succeeded => ("done", "fill:#d4edda,stroke:#28a745"),
            StepStatus::Failed => ("failed", "fill:#f8d7da,stroke:#dc3545"),
            StepStatus::Pending => ("pending", "fill:#fff,stroke:#999,stroke-dasharray:4"),
            StepStatus::Superseded => ("superseded", "fill:#eee,stroke:#999,color:#999"),
            StepStatus::Interrupted => ("interrupted", "fill:#fff3cd,stroke:#ffc107"),
            StepStatus::Running => ("running", "fill:#cce5ff,stroke:#007bff"),
            StepStatus::Skipped => ("skipped", "fill:#eee,stroke:#28a745,stroke-dasharray:4"),
        };
        let _ = writeln!(out, "  classDef {name} {style}");
        let _ = writeln!(out, "  class {} {name}", ids.join(","));
    }
    out
}

/// Graphviz DOT: steps of one wave share a rank, so parallel branches line up.
pub fn dot(plan: &Plan, notes: &Annotations<'_>) -> String {
    let quote = |s: &str| {
        format!(
            "\"{}\"",
            s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
        )
    };
    let mut out =
        String::from("digraph plan {\n  rankdir=TB;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n");
    let _ = writeln!(out, "  label={};\n  labelloc=t;", quote(&plan.goal));
    for (w, wave) in waves(plan).iter().enumerate() {
        let _ = writeln!(out, "  subgraph wave{} {{\n    rank=same;", w + 1);
        for step in wave {
            let mut attrs = vec![format!("label={}", quote(&label(step, 24)))];
            if notes.has_side_effects(step) {
                attrs.push("shape=hexagon".to_string());
            }
            if let Some(&status) = notes.statuses.get(step.id.as_str()) {
                let color = match status {
                    StepStatus::Succeeded => "palegreen",
                    StepStatus::Failed => "lightpink",
                    StepStatus::Pending => "white",
                    StepStatus::Superseded => "lightgray",
                    StepStatus::Interrupted => "lightyellow",
                    StepStatus::Running => "lightblue",
                    StepStatus::Skipped => "honeydew",
                };
                attrs.push(format!("style=\"rounded,filled\", fillcolor={color}"));
            }
            let _ = writeln!(out, "    {} [{}];", quote(&step.id), attrs.join(", "));
        }
        out.push_str("  }\n");
    }
    for step in &plan.steps {
        for dep in &step.depends_on {
            let _ = writeln!(out, "  {} -> {};", quote(dep), quote(&step.id));
        }
    }
    out.push_str("}\n");
    out
}
