//! A worker: the Restate endpoint (HTTP/2, as Restate speaks to services)
//! with planexec's handlers (the run workflow and the steps service), and its registration with the server's admin API.

use std::sync::Arc;

use planexec::Agent;
use restate_sdk::prelude::{Endpoint, HttpServer};
use tokio::net::TcpListener;

use crate::pool::{self, Member, Pool};
use crate::workflow::Runs;
use crate::Steps;

/// Serve this worker's handlers on `listener` until `stop` completes,
/// running at most `capacity` steps at once.
pub async fn serve(
    agent: Arc<Agent>,
    name: String,
    capacity: usize,
    listener: TcpListener,
    stop: impl std::future::Future,
) {
    let endpoint = Endpoint::builder()
        .bind(Steps::new(agent.clone(), name, capacity))
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

/// Keep the worker named `name`, serving at `url`, in the pool at
/// `pool_addr`, for as long as the returned future runs: join it every
/// second and, when nobody serves the pool, serve it here and register it
/// with Restate's admin API at `admin` (if given). `on_ready` is called once
/// the worker is in a pool Restate knows of, with what happened.
pub async fn stay_in_pool(
    name: String,
    url: String,
    pool_addr: std::net::SocketAddr,
    admin: Option<String>,
    mut on_ready: impl FnMut(Result<String, String>),
) {
    let member = Member { name, url };
    let pool_url = format!("http://{pool_addr}");
    let http = reqwest::Client::new();
    let mut hosting = false;
    let mut ready = false;
    loop {
        let joined = pool::join(&http, &pool_url, &member).await.is_ok();
        if !joined {
            // Nobody serves the pool (its host stopped): serve it here.
            if let Ok(listener) = tokio::net::TcpListener::bind(pool_addr).await {
                tokio::spawn(pool::serve(Pool::new(), listener, std::future::pending::<()>()));
                hosting = true;
                ready = false;
                continue; // join it at once
            }
        }
        if joined && !ready {
            ready = true;
            let said = match (&admin, hosting) {
                // The pool is this worker's: Restate learns of it (again).
                (Some(admin), true) => register(admin, &pool_url)
                    .await
                    .map(|()| format!("registered with Restate at {admin}: the pool at {pool_url}")),
                _ => Ok(format!("joined the pool at {pool_url}")),
            };
            on_ready(said);
        }
        tokio::time::sleep(pool::JOIN_EVERY).await;
    }
}
