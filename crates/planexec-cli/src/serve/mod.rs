//! `planexec serve`: an HTTP API (and the web run viewer) over the same
//! library calls the CLI makes. Runs are recorded in the ledger; a run started
//! here waits for approval in the ledger unless asked to run at once, and any
//! client (this API, the viewer, `planexec approve` in a terminal) decides.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the run viewer (one page, assets embedded) |
//! | `GET /openapi.json` | this API, described |
//! | `POST /runs` | `{"task": …, "approve": "auto"\|"later"}` starts a run |
//! | `GET /runs`, `GET /runs/{id}` | the ledger's runs; one run with plans, steps, usage, report |
//! | `GET /runs/{id}/events` | server-sent events, resumable with `Last-Event-ID` |
//! | `POST /runs/{id}/approve\|reject\|edit\|steer\|cancel` | decisions |
//!
//! It listens on loopback by default; any other address needs a bearer token.
//! With `--engine restate` runs start and are decided through Restate's
//! ingress and the workers make them ([`on_restate`]).

mod api;
mod bodies;
mod hub;
mod on_restate;
mod routes;
mod server;

pub use server::Server;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::args::{CommonArgs, EngineArgs, LedgerArgs};
use crate::config::Config;
use crate::display::{init_logging, Display};
use crate::outcome::{BadInput, EXIT_OK};
use crate::runs;
use crate::setup::{model_setup, open_tools, Cassette};

/// Largest request body accepted (a task, a plan, a message).
const BODY_LIMIT: usize = 256 * 1024;

/// Whether serving on `addr` needs a token: anything but loopback does.
pub fn needs_token(addr: &SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// The whole application: routes, auth, body limit.
pub fn router(server: Arc<Server>) -> Router {
    let (routes, _) = routes::api_routes().split_for_parts();
    routes
        .layer(middleware::from_fn_with_state(server.clone(), authorize))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(server)
}

/// Equal in time whatever the first differing byte (a token check must not leak it).
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn authorize(State(server): State<Arc<Server>>, request: Request, next: Next) -> Response {
    let Some(token) = &server.token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        // The viewer's EventSource cannot set headers: it passes the token in the query.
        .or_else(|| {
            request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")))
        });
    match given {
        Some(given) if same_secret(given.as_bytes(), token.as_bytes()) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            axum::Json(
                serde_json::json!({"error": "missing or wrong bearer token: send Authorization: Bearer <token>"}),
            ),
        )
            .into_response(),
    }
}

/// Serve until Ctrl-C.
pub async fn run(server: Arc<Server>, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    axum::serve(listener, router(server))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

/// `planexec serve`: open the ledger, tools and models once, then serve.
pub async fn command(
    listen: String,
    token: Option<String>,
    engine: EngineArgs,
    common: CommonArgs,
    ledger: LedgerArgs,
    quiet: bool,
    verbose: u8,
) -> Result<u8, BadInput> {
    let addr: SocketAddr = listen
        .parse()
        .map_err(|e| BadInput(format!("--listen {listen} is not HOST:PORT ({e}); e.g. 127.0.0.1:8787")))?;
    let token = token.filter(|t| !t.trim().is_empty());
    if needs_token(&addr) && token.is_none() {
        return Err(BadInput(format!(
            "{addr} is reachable from other machines, so the API needs a bearer token: pass --token or set PLANEXEC_TOKEN (or listen on 127.0.0.1)"
        )));
    }
    let workspace = common.workspace();
    let restate = crate::on_restate::target(&engine, &workspace)?;
    let config = Config::load(&workspace, &common.flags())?;
    let options = config.run_options()?;
    let display = Display::new(quiet, Vec::new());
    init_logging(verbose, &display);
    let store = runs::open(ledger.db.as_deref()).await?;
    // Runs on Restate are made by its workers, with their own models.
    let models = match restate {
        Some(_) => None,
        None => Some(model_setup(&config, &options, &Cassette::default())?),
    };
    let tools = open_tools(&workspace, &config, &common.mcp).await?;
    let bound = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| BadInput(format!("cannot listen on {addr}: {e}")));
    let listener = tools.or_shutdown(bound).await?;
    let server = Arc::new(Server {
        store,
        config,
        models,
        tools: tools.registry.clone(),
        workspace,
        hub: Default::default(),
        running: Default::default(),
        token,
        restate,
    });
    let bound = listener.local_addr().map(|a| a.to_string()).unwrap_or(listen);
    // The first line says where: a script (or a test) reads the port from it.
    eprintln!("planexec serve: listening on http://{bound}/ (the API is described at /openapi.json)");
    let served = run(server, listener).await;
    tools.shutdown().await;
    served.map_err(|e| BadInput(format!("the server stopped: {e}")))?;
    Ok(EXIT_OK)
}
