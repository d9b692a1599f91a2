//! `planexec plans list|show|forget`: the plan templates in the ledger that
//! plan reuse runs from (`plan_reuse`, `--plan-reuse`). A template is the
//! plan of a run that succeeded, with its task's literals as parameters.

use planexec::render::{self, Annotations};
use planexec::templates::PlanTemplate;

use crate::args::{LedgerArgs, PlansCommand};
use crate::outcome::{BadInput, EXIT_OK};
use crate::runs::{open, utc};

pub async fn command(command: PlansCommand, ledger: LedgerArgs) -> Result<u8, BadInput> {
    let store = open(ledger.db.as_deref()).await?;
    let templates = store.list_templates().await.map_err(|e| e.to_string())?;
    match command {
        PlansCommand::List { json } if json => {
            outln!("{}", serde_json::to_string_pretty(&templates).unwrap_or_default());
        }
        PlansCommand::List { .. } => out!("{}", list(&templates)),
        PlansCommand::Show { id, json } => {
            let template = find(&templates, &id)?;
            match json {
                true => outln!("{}", serde_json::to_string_pretty(template).unwrap_or_default()),
                false => out!("{}", show(template)),
            }
        }
        PlansCommand::Forget { ids } => {
            // Resolve every id first, so a typo forgets nothing (a whole id
            // is taken as it is: its row may be one that cannot be read).
            let found: Vec<String> = ids
                .iter()
                .map(|id| match find(&templates, id) {
                    Ok(t) => Ok(t.id.clone()),
                    Err(_) if id.len() == 16 => Ok(id.clone()),
                    Err(e) => Err(e),
                })
                .collect::<Result<_, _>>()?;
            for id in found {
                match store.delete_template(&id).await.map_err(|e| e.to_string())? {
                    true => outln!("forgot plan template {id}"),
                    false => return Err(BadInput(format!("no plan template {id} in the ledger"))),
                }
            }
        }
    }
    Ok(EXIT_OK)
}

/// The template whose id is or starts with `id`; an error says what there is.
fn find<'a>(templates: &'a [PlanTemplate], id: &str) -> Result<&'a PlanTemplate, BadInput> {
    let matches: Vec<&PlanTemplate> = templates.iter().filter(|t| t.id.starts_with(id)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(BadInput(format!(
            "no plan template {id} in the ledger; `planexec plans list` shows them"
        ))),
        many => Err(BadInput(format!(
            "{id} names {} plan templates ({}); give more of the id",
            many.len(),
            many.iter().map(|t| t.id.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

fn status(template: &PlanTemplate) -> String {
    match &template.failed {
        Some(_) => "failed".to_string(),
        None => format!("reused {}x", template.reused),
    }
}

/// One line a template: id, status, steps, the run it came from, its shape.
fn list(templates: &[PlanTemplate]) -> String {
    if templates.is_empty() {
        return "no plan templates yet: a run that succeeds leaves one (plan_reuse = \"similar\" or \"exact\")\n"
            .to_string();
    }
    let mut out = format!(
        "{:<16}  {:<10}  {:>5}  {:<22}  shape\n",
        "id", "status", "steps", "from run"
    );
    for t in templates {
        out.push_str(&format!(
            "{:<16}  {:<10}  {:>5}  {:<22}  {}\n",
            t.id,
            status(t),
            t.plan.steps.len(),
            t.run_id,
            planexec::text::truncate_chars(&t.shape(), 80)
        ));
    }
    out
}

/// A template in full: where it came from, its parameters, its plan.
fn show(t: &PlanTemplate) -> String {
    let mut out = format!(
        "plan template {}\nfrom run {} ({})\ntask: {}\nshape: {}\n",
        t.id,
        t.run_id,
        utc(t.created_at),
        t.task,
        t.shape()
    );
    for (i, value) in t.params.iter().enumerate() {
        out.push_str(&format!("  {{{i}}} = {value}  (written ⟦{i}⟧ in the plan)\n"));
    }
    out.push_str(&format!("tools: {}\n", t.tools.join(", ")));
    match &t.failed {
        Some(why) => out.push_str(&format!("not reused: {why}\n")),
        None => out.push_str(&format!("reused by {} run(s)\n", t.reused)),
    }
    out.push('\n');
    out.push_str(&render::text(&t.plan, &Annotations::default()));
    out
}
