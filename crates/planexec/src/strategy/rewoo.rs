//! `rewoo` (ReWOO): every step calls a tool and results pass through
//! `{{id}}`, so no model runs between tools; one solver call answers. The
//! loop is plan-execute's; what differs is in the profile: plans with a
//! reasoning step are sent back to the planner (`tools_only`), and the
//! executor calls no model (`runs_models_between_tools` is false). A failed
//! tool still goes to the replanner, within the bound.

use async_trait::async_trait;

use super::{dag, Drive};
use crate::run::{Exit, Run, Start};

pub(crate) struct Rewoo;

#[async_trait]
impl Drive for Rewoo {
    async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit> {
        dag::drive(self, run, start).await
    }
}
