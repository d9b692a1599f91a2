//! Plan reuse: the plan of a run that succeeded is kept in the ledger as a
//! [`PlanTemplate`]; a later task of the same shape gets it, filled with its
//! own literals, instead of a planner call. The plan is still checked
//! against the tools and limits of the run, and still reviewed and approved.
//! `plan_reuse` ([`PlanReuse`]) says whether the literals may differ.

mod template;

use std::sync::Arc;

pub use template::PlanTemplate;

use crate::plan::{self, Plan};
use crate::policy::{PlanReuse, RunOptions};
use crate::store::RunStore;
use crate::tools::ToolRegistry;

/// A stored plan that fits a task, filled in for it.
pub(crate) struct Reused {
    pub plan: Plan,
    pub template: PlanTemplate,
}

/// The stored plan that fits `task`, when `reuse` allows one: a template of
/// its shape that has not failed, whose tools this run has, filled with the
/// task's literals (`exact`: only with the same literals), and valid for
/// this run. A store that cannot be read gives none (the planner plans).
pub(crate) async fn find(
    store: &Arc<dyn RunStore>,
    task: &str,
    tools: &ToolRegistry,
    options: &RunOptions,
) -> Option<Reused> {
    if options.plan_reuse == PlanReuse::Off {
        return None;
    }
    let templates = match store.list_templates().await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "the plan templates could not be read; planning anew");
            return None;
        }
    };
    let limits = options.plan_limits();
    let here = workspace_of(tools);
    templates.into_iter().find_map(|template| {
        let usable = template.failed.is_none()
            && template.workspace == here
            && template.tools.iter().all(|t| tools.get(t).is_some());
        if !usable {
            return None;
        }
        let values = template.match_task(task)?;
        if options.plan_reuse == PlanReuse::Exact && values != template.params {
            return None;
        }
        let plan = template.fill(&values);
        plan::validate(&plan, tools, &limits).ok()?;
        Some(Reused { plan, template })
    })
}

/// The workspace folder of a run's tools, as a template records it.
fn workspace_of(tools: &ToolRegistry) -> Option<String> {
    tools.workspace().map(|w| w.root().to_string_lossy().into_owned())
}

/// How a run that kept a template ended: `Ok(revised)` when it succeeded
/// (`revised`: its plan at the end is not the one it began with), or why not.
pub(crate) type Outcome = Result<bool, String>;

/// After a run with these `tools`: learn the plan it succeeded with, or
/// record how a reused template did. `reused` is the template the run began
/// with; `plan` the plan in force at its end.
pub(crate) async fn after_run(
    store: &Arc<dyn RunStore>,
    (task, run_id, tools): (&str, &str, &ToolRegistry),
    plan: Option<&Plan>,
    reused: Option<&PlanTemplate>,
    outcome: Outcome,
) {
    let template = match (reused, outcome, plan) {
        // Reused as it was and done: one more success.
        (Some(template), Ok(false), _) => PlanTemplate {
            reused: template.reused + 1,
            ..template.clone()
        },
        // Reused, and it needed revising or the run failed: marked.
        (Some(template), Ok(true), _) => PlanTemplate {
            failed: Some(format!("run {run_id} had to revise it")),
            ..template.clone()
        },
        (Some(template), Err(why), _) => PlanTemplate {
            failed: Some(format!("run {run_id}: {why}")),
            ..template.clone()
        },
        (None, Ok(_), Some(plan)) if !plan.steps.is_empty() => {
            PlanTemplate::learn(task, plan, run_id).in_workspace(workspace_of(tools))
        }
        _ => return,
    };
    if let Err(e) = store.save_template(&template).await {
        tracing::warn!(error = %e, "the plan template could not be saved");
    }
}
