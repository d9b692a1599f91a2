//! A worker: the Restate endpoint (HTTP/2, as Restate speaks to services)
//! with planexec's handlers (the run workflow and the steps service), and its registration with the server's admin API.

use std::sync::Arc;

use planexec::Agent;
use restate_sdk::prelude::{Endpoint, HttpServer};
use tokio::net::TcpListener;

use crate::workflow::Runs;
use crate::Steps;

/// Serve this worker's handlers on `listener` until `stop` completes.
pub async fn serve(agent: Arc<Agent>, name: String, listener: TcpListener, stop: impl std::future::Future) {
    let endpoint = Endpoint::builder()
        .bind(Steps::new(agent.clone(), name))
        .bind(Runs::new(agent))
        .build();
    HttpServer::new(endpoint).serve_with_cancel(listener, stop).await;
}

/// Register the worker at `endpoint_url` with the Restate server whose admin
/// API is at `admin_url`, so the server sends it work. Registering again
/// (a restarted worker) replaces the earlier registration.
pub async fn register(admin_url: &str, endpoint_url: &str) -> Result<(), String> {
    let url = format!("{}/deployments", admin_url.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .json(&serde_json::json!({"uri": endpoint_url, "force": true}))
        .send()
        .await
        .map_err(|e| format!("cannot reach Restate's admin API at {admin_url}: {e}; start the server (scripts/restate.sh) or pass its admin URL"))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(format!(
            "Restate's admin API refused to register {endpoint_url} (HTTP {status}): {body}"
        ));
    }
    Ok(())
}
