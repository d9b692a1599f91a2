//! Approvals through the MCP client: when the client can elicit (ask its
//! user a short form), a run of `planexec mcp-server` in `ask` mode asks it
//! to approve the plan and to confirm each call with side effects, instead
//! of waiting in the ledger for `approve`.

use async_trait::async_trait;
use planexec::render::{self, Annotations};
use planexec::{Approval, Approver, Effect, Plan, Step};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// An approver that asks the person behind the MCP client.
pub struct Eliciting {
    pub peer: Peer<RoleServer>,
    /// Tools with side effects, marked in the plan shown.
    pub side_effect_tools: Vec<String>,
}

/// Whether the client said it can elicit.
pub fn supported(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some())
}

impl Eliciting {
    /// Ask `message` with a yes/no field `yes` (and an optional text field
    /// `note`): the answer, or `None` when the person declined, cancelled or
    /// the client failed.
    async fn ask(&self, message: String, yes: &str, note: Option<&str>) -> Option<(bool, String)> {
        let mut schema = ElicitationSchema::builder().required_bool_property(yes, |b| b);
        if let Some(note) = note {
            schema = schema.optional_string(note);
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema.build_unchecked(),
        };
        let answer = match self.peer.create_elicitation(params).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, "the MCP client could not be asked");
                return None;
            }
        };
        if answer.action != ElicitationAction::Accept {
            return None;
        }
        let content = answer.content.unwrap_or(Value::Null);
        let said = content.get(yes).and_then(Value::as_bool).unwrap_or(false);
        let text = note
            .and_then(|n| content.get(n))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string();
        Some((said, text))
    }
}

#[async_trait]
impl Approver for Eliciting {
    async fn review(&self, plan: &Plan, _check: planexec::policy::PlanCheck<'_>) -> Approval {
        let notes = Annotations {
            side_effect_tools: self.side_effect_tools.clone(),
            ..Default::default()
        };
        let message = format!(
            "planexec planned this; run it?\n\n{}\nApprove it, or say what to change (feedback goes to the planner).",
            render::text(plan, &notes)
        );
        match self.ask(message, "approve", Some("feedback")).await {
            Some((true, _)) => Approval::Approve,
            Some((false, feedback)) if !feedback.is_empty() => Approval::Feedback(feedback),
            _ => Approval::Reject,
        }
    }

    async fn confirm_step(&self, step: &Step, args: &Value, effect: Effect) -> bool {
        let tool = step.tool.as_deref().unwrap_or("?");
        let message = format!(
            "Step {} ({}) calls {tool} with {args}; it {effect}. Run it?",
            step.id, step.description
        );
        matches!(self.ask(message, "confirm", None).await, Some((true, _)))
    }
}
