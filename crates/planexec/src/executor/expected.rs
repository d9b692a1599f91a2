//! Checking a step's result against its `expected`: the executor model says
//! whether it is met; an unmet expectation fails the step (and so replans).

use serde_json::Value;

use super::tally::Tally;
use crate::context::{ModelCalls, Setting};
use crate::llm::Role;
use crate::plan::{self, Plan, Step};
use crate::verdict;

pub(super) async fn check_expected(
    calls: &ModelCalls,
    setting: &Setting,
    plan: &Plan,
    step: &Step,
    expected: &str,
    output: &Value,
    tally: &mut Tally,
) -> Result<(), String> {
    let prompt = format!(
        "Goal of the whole task: {}\nStep: [{}] {}\nExpected: {expected}\nResult:\n{}\n\nDoes the result meet the expectation? Reply with JSON: {{\"meets\": true or false, \"reason\": \"<one sentence>\"}}",
        plan.goal,
        step.id,
        step.description,
        crate::text::cut_to_budget(&plan::value_as_text(output), setting.options.dependency_budget)
    );
    let question = format!(
        "You are the checker: decide whether a step's result meets what was expected of it. Be strict about facts, lenient about wording.\n\n{prompt}"
    );
    let fields = ("meets", "reason");
    let mut request = verdict::request(Role::Executor, setting.system(), question, "expectation_check", fields);
    request.step_id = Some(step.id.clone());
    tally.model_calls += 1;
    let response = match calls.chat(request).await {
        Ok(r) => r,
        // The tool has run: failing the step would have a resume run it again.
        Err(crate::llm::LlmError::BudgetExhausted(reason)) => {
            tracing::warn!(step = %step.id, "expectation not checked: {reason}");
            return Ok(());
        }
        Err(e) => return Err(e.to_string()),
    };
    let text = response.content.unwrap_or_default();
    match verdict::read(&text, fields) {
        Some((false, reason)) => Err(format!(
            "the result does not meet the expectation \"{expected}\": {}",
            if reason.is_empty() {
                "no reason given"
            } else {
                reason.as_str()
            }
        )),
        Some((true, _)) => Ok(()),
        // An unreadable verdict should not derail a run whose step worked.
        None => {
            tracing::warn!(step = %step.id, reply = %text, "unreadable expectation check; accepting the result");
            Ok(())
        }
    }
}
