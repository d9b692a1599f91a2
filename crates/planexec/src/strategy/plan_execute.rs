//! `plan-execute`, the default: plan once, run the DAG in parallel, replan
//! only when a step fails (or misses its `expected`), then answer. The shared
//! loop with every hook at its default.

use async_trait::async_trait;

use super::{dag, Drive};
use crate::run::{Exit, Run, Start};

pub(crate) struct PlanExecute;

#[async_trait]
impl Drive for PlanExecute {
    async fn drive(&self, run: &mut Run, start: Start) -> Result<String, Exit> {
        dag::drive(self, run, start).await
    }
}
