//! Plan reuse: the plan of a run that succeeded is kept in the ledger as a
//! [`PlanTemplate`]; a later task of the same shape gets it, filled with its
//! own literals, instead of a planner call. The plan is still checked
//! against the tools and limits of the run, and still reviewed and approved.
//! `plan_reuse` ([`PlanReuse`]) says whether the literals may differ.

mod template;

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
    store: &dyn RunStore,
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
    store: &dyn RunStore,
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
        // Planned for this task alone and run as planned: learned. (A plan
        // that was revised, recovered or clarified holds what this run saw.)
        (None, Ok(false), Some(plan)) if !plan.steps.is_empty() => {
            PlanTemplate::learn(task, plan, run_id).in_workspace(workspace_of(tools))
        }
        _ => return,
    };
    if let Err(e) = store.save_template(&template).await {
        tracing::warn!(error = %e, "the plan template could not be saved");
    }
}

/// The plan version reason of a reused plan: it names the run and the
/// template, so a resumed run (or a decision taken in another process)
/// knows which template it began with.
pub(crate) fn reason(template: &PlanTemplate) -> String {
    format!("reused from run {} (plan template {})", template.run_id, template.id)
}

/// The template a plan version's `reason` says it was reused from.
pub fn reused_in(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("reused from run ")?;
    rest.split_once("(plan template ")?.1.strip_suffix(')')
}

/// The stored template `id`, if the store has it.
pub(crate) async fn load(store: &dyn RunStore, id: &str) -> Option<PlanTemplate> {
    let templates = store.list_templates().await.ok()?;
    templates.into_iter().find(|t| t.id == id)
}

/// Mark the template a run's first plan was reused from (if it was) as not
/// to be reused, saying why: the run was rejected or failed outside a run
/// loop (a decision taken later, from another process).
pub async fn mark_reused(store: &dyn RunStore, first_reason: &str, why: &str) {
    let Some(id) = reused_in(first_reason) else {
        return;
    };
    if let Some(template) = load(store, id).await {
        let marked = PlanTemplate {
            failed: Some(why.to_string()),
            ..template
        };
        if let Err(e) = store.save_template(&marked).await {
            tracing::warn!(error = %e, "the plan template could not be marked");
        }
    }
}
