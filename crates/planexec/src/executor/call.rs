//! One tool call, checked: its `{{sN}}` references resolved against the
//! dependencies' outputs, its arguments validated, the run's mode asked
//! (run, refuse, or confirm with a person), then called with retries, its
//! output within the run's caps. Every call a step or an agent step makes
//! passes here.

use serde_json::{Map, Value};

use crate::context::{Control, Recording, Setting};
use crate::events::Event;
use crate::plan::{self, Step};
use crate::policy::Permission;
use crate::schedule::DependencyOutputs;
use crate::tools::{output, ToolEntry, ToolError, ToolErrorKind};

use super::tally::Tally;

/// `" (because …)"` when the tool says which rule made the call not read-only.
pub(super) fn because(entry: &ToolEntry, args: &Value) -> String {
    entry
        .tool
        .why_not_read_only(args)
        .map(|why| format!(" (because {why})"))
        .unwrap_or_default()
}

/// The run's mode decides whether this call may run: run it, refuse it, or ask
/// the approver with the resolved arguments. Every tool call passes here.
pub(super) async fn permit(
    setting: &Setting,
    control: &Control,
    step: &Step,
    entry: &ToolEntry,
    args: &Value,
    tally: &mut Tally,
) -> Result<(), ToolError> {
    let name = entry.tool.name();
    let effect = entry.effect(args);
    match setting.options.permission(name, effect) {
        Permission::Run => Ok(()),
        Permission::Refuse => Err(ToolError::denied(format!(
            "refused to run `{name}`, which {effect}{}: this run is in plan mode, where only read-only tools run",
            because(entry, args)
        ))),
        Permission::Confirm if tally.confirmed.as_ref() == Some(args) => Ok(()),
        Permission::Confirm if control.inbox.is_approved(&step.id, args) => Ok(()),
        Permission::Confirm if control.approver.decides_later() => {
            control.inbox.pause(crate::store::Waiting::Step {
                plan_version: tally.version,
                step_id: step.id.clone(),
                tool: name.to_string(),
                args: args.clone(),
                also: Vec::new(),
            });
            Err(ToolError::denied(format!(
                "not run yet: `{name}` with {args} waits for a person's approval"
            )))
        }
        Permission::Confirm => {
            if control.approver.confirm_step(step, args, effect).await {
                tally.confirmed = Some(args.clone());
                Ok(())
            } else {
                Err(ToolError::denied(format!(
                    "the user declined to run `{name}` with {args}"
                )))
            }
        }
    }
}

/// The output of dependency `id`, for `{{id}}` references.
pub(crate) fn dep_output(deps: &DependencyOutputs, id: &str) -> Option<Value> {
    deps.iter().find(|(d, _)| d == id).map(|(_, v)| v.clone())
}

/// Resolve references, keeping a whole-string reference's JSON type when the
/// tool's schema accepts it and splicing it as text when only text fits.
pub(super) fn resolve_for(
    entry: &ToolEntry,
    args: &Map<String, Value>,
    lookup: plan::OutputLookup<'_>,
) -> Result<Map<String, Value>, plan::ResolveError> {
    let typed = plan::resolve_args(args, lookup)?;
    if entry.check_args(&Value::Object(typed.clone()), false).is_empty() {
        return Ok(typed);
    }
    let text = plan::resolve_args_as_text(args, lookup)?;
    if entry.check_args(&Value::Object(text.clone()), false).is_empty() {
        Ok(text)
    } else {
        Ok(typed)
    }
}

/// Validate resolved arguments, ask the mode, then call the tool, retrying
/// retryable errors. The output comes back within the run's output caps.
pub(super) async fn call_checked(
    (setting, recording, control): (&Setting, &Recording, &Control),
    step: &Step,
    entry: &ToolEntry,
    args: Value,
    (asker, inputs): (&dyn crate::tools::asking::Asker, &DependencyOutputs),
    tally: &mut Tally,
) -> Result<Value, ToolError> {
    let problems = entry.check_args(&args, false);
    if !problems.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "arguments for `{}` are invalid: {}",
            entry.tool.name(),
            problems.join("; ")
        )));
    }
    permit(setting, control, step, entry, &args, tally).await?;
    let args = with_inputs(entry, args, inputs);
    let mut retry = 0;
    loop {
        tally.attempts += 1;
        match entry.tool.call_asking(args.clone(), asker).await {
            Ok(v) => return Ok(output::cap_value(v, setting.options.output_caps)),
            Err(e) if e.kind == ToolErrorKind::Retryable && retry < setting.options.tool_retries => {
                let delay = setting.options.retry_backoff.saturating_mul(1 << retry.min(10));
                retry += 1;
                recording.events.emit(Event::StepRetried {
                    step_id: step.id.clone(),
                    attempt: tally.attempts + 1,
                    error: e.message.clone(),
                    delay_ms: delay.as_millis() as u64,
                });
                tokio::time::sleep(delay).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// `args` with the dependencies' results under the tool's
/// [`inputs_argument`](crate::tools::Tool::inputs_argument), when it has one.
fn with_inputs(entry: &ToolEntry, mut args: Value, inputs: &DependencyOutputs) -> Value {
    if let (Some(name), Some(map)) = (entry.tool.inputs_argument(), args.as_object_mut()) {
        let given: Map<String, Value> = inputs.iter().cloned().collect();
        map.insert(name.to_string(), Value::Object(given));
    }
    args
}
