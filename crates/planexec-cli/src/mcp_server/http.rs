//! `planexec mcp-server --http ADDR`: the same server on MCP's streamable
//! HTTP transport at `/mcp`, one session per client. Off loopback a bearer
//! token is required, as for `planexec serve`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::outcome::BadInput;
use crate::serve::{needs_token, same_secret};

/// The address to listen on, refused off loopback without a token.
pub fn checked(addr: &str, token: Option<&str>) -> Result<SocketAddr, BadInput> {
    let parsed: SocketAddr = addr
        .parse()
        .map_err(|e| BadInput(format!("--http {addr} is not HOST:PORT ({e}); e.g. 127.0.0.1:8788")))?;
    if needs_token(&parsed) && token.is_none_or(|t| t.trim().is_empty()) {
        return Err(BadInput(format!(
            "{parsed} is reachable from other machines, so the MCP server needs a bearer token: pass --token or set PLANEXEC_TOKEN (or listen on 127.0.0.1)"
        )));
    }
    Ok(parsed)
}

/// Serve `server` (a fresh clone of it for each client session) at
/// `http://ADDR/mcp` until Ctrl-C.
pub async fn serve<H>(server: H, addr: SocketAddr, token: Option<String>) -> Result<(), String>
where
    H: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    // Host checks guard a loopback server against DNS rebinding; off
    // loopback the token does, and clients name the machine as they like.
    let config = match needs_token(&addr) {
        true => StreamableHttpServerConfig::default().disable_allowed_hosts(),
        false => StreamableHttpServerConfig::default(),
    };
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions, config);
    let token = Arc::new(token.filter(|t| !t.trim().is_empty()));
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(token, authorize));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    // The first line says where: a script (or a test) reads the port from it.
    eprintln!("planexec mcp-server: listening on http://{bound}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}

async fn authorize(State(token): State<Arc<Option<String>>>, request: Request, next: Next) -> Response {
    let Some(token) = token.as_ref() else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(given) if same_secret(given.as_bytes(), token.as_bytes()) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            "a bearer token is required: Authorization: Bearer TOKEN",
        )
            .into_response(),
    }
}
