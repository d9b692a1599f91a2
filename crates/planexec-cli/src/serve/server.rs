//! What every request of `planexec serve` shares: the ledger, the
//! configuration, the models and tools runs are built with, the hub their
//! events go out through, the runs executing here, and the token.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use planexec::{CancelToken, RunStore, ToolRegistry};

use super::hub;
use crate::config::Config;
use crate::setup::ModelSetup;

/// What every request shares.
pub struct Server {
    pub store: Arc<dyn RunStore>,
    pub config: Config,
    /// The models of runs made here (none when runs go to Restate's workers).
    pub models: Option<ModelSetup>,
    pub tools: Arc<ToolRegistry>,
    pub workspace: PathBuf,
    pub hub: hub::Hub,
    /// Runs executing in this process, to cancel at once.
    pub running: Mutex<HashMap<String, CancelToken>>,
    /// Required as `Authorization: Bearer …` when set.
    pub token: Option<String>,
    /// With `--engine restate`: runs start and are decided through this
    /// ingress, and the workers make them.
    pub restate: Option<planexec_restate::ingress::Ingress>,
}
