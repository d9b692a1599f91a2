//! The worker pool: one address in front of every worker. Restate sends a
//! deployment's invocations to the one URL it was registered with (and keeps
//! an invocation on its deployment), so workers that should share the work
//! share a deployment: the pool's URL. The pool passes each request (an
//! invocation's HTTP/2 stream, or a discovery) to the next live worker in
//! turn; a worker that cannot be reached is dropped and the request goes
//! to the next. Workers join by telling the pool their URL every second
//! ([`join`]); one not heard from for three seconds is dropped. When the
//! invocation of a worker that died is retried by Restate, it reaches a
//! live worker through the pool and replays there.
//!
//! Any worker started with the pool's address serves the pool itself when
//! nobody does ([`crate::worker`]), so the pool lives as long as one worker
//! on its machine does.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http2::SendRequest;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};

/// The path a worker joins the pool at.
pub const JOIN_PATH: &str = "/planexec/pool/join";

/// A worker is dropped when it has not joined again for this long.
const FORGET_AFTER: Duration = Duration::from_secs(3);

/// How often a worker tells the pool it is there.
pub const JOIN_EVERY: Duration = Duration::from_secs(1);

type Body = BoxBody<Bytes, hyper::Error>;

/// A worker's announcement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// Where the worker serves its handlers, `http://HOST:PORT`.
    pub url: String,
}

struct Backend {
    member: Member,
    seen: Instant,
    connection: Option<SendRequest<Incoming>>,
}

/// The pool's members and the next one in turn.
#[derive(Default)]
pub struct Pool {
    backends: Mutex<Vec<Backend>>,
    next: AtomicUsize,
}

impl Pool {
    pub fn new() -> Arc<Pool> {
        Arc::new(Pool::default())
    }

    /// The names of the live members.
    pub fn members(&self) -> Vec<String> {
        self.live().into_iter().map(|b| b.0.name).collect()
    }

    fn join(&self, member: Member) {
        let mut backends = self.backends.lock().unwrap();
        match backends.iter_mut().find(|b| b.member.url == member.url) {
            Some(known) => {
                known.seen = Instant::now();
                known.member = member;
            }
            None => backends.push(Backend {
                member,
                seen: Instant::now(),
                connection: None,
            }),
        }
    }

    /// The members heard from lately, with their open connections.
    fn live(&self) -> Vec<(Member, Option<SendRequest<Incoming>>)> {
        let mut backends = self.backends.lock().unwrap();
        backends.retain(|b| b.seen.elapsed() < FORGET_AFTER);
        backends
            .iter()
            .map(|b| (b.member.clone(), b.connection.clone()))
            .collect()
    }

    fn forget(&self, url: &str) {
        self.backends.lock().unwrap().retain(|b| b.member.url != url);
    }

    fn keep_connection(&self, url: &str, connection: SendRequest<Incoming>) {
        if let Some(b) = self.backends.lock().unwrap().iter_mut().find(|b| b.member.url == url) {
            b.connection = Some(connection);
        }
    }

    /// An HTTP/2 connection to the next live member in turn: its URL and sender.
    async fn next_connection(&self) -> Option<(String, SendRequest<Incoming>)> {
        let live = self.live();
        for _ in 0..live.len() {
            let (member, open) = &live[self.next.fetch_add(1, Ordering::Relaxed) % live.len()];
            if let Some(sender) = open.as_ref().filter(|s| !s.is_closed()) {
                return Some((member.url.clone(), sender.clone()));
            }
            match connect(&member.url).await {
                Ok(sender) => {
                    self.keep_connection(&member.url, sender.clone());
                    return Some((member.url.clone(), sender));
                }
                Err(e) => {
                    tracing::warn!(worker = %member.name, error = %e, "a pool member cannot be reached; it is dropped");
                    self.forget(&member.url);
                }
            }
        }
        None
    }

    /// Answer one request: a join, or one to pass on to a member.
    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
        if request.uri().path() == JOIN_PATH {
            let bytes = request
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            return Ok(match serde_json::from_slice::<Member>(&bytes) {
                Ok(member) => {
                    self.join(member);
                    text(StatusCode::OK, "joined")
                }
                Err(e) => text(
                    StatusCode::BAD_REQUEST,
                    &format!("not a pool member's announcement: {e}"),
                ),
            });
        }
        let Some((url, mut sender)) = self.next_connection().await else {
            return Ok(text(
                StatusCode::SERVICE_UNAVAILABLE,
                "no planexec worker is in the pool",
            ));
        };
        let mut request = request;
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
            .to_string();
        match format!("{url}{path}").parse() {
            Ok(uri) => *request.uri_mut() = uri,
            Err(e) => return Ok(text(StatusCode::BAD_GATEWAY, &format!("bad worker URL {url}: {e}"))),
        }
        Ok(match sender.send_request(request).await {
            Ok(response) => response.map(|b| b.boxed()),
            // Restate retries the invocation; the next try goes to another member.
            Err(e) => {
                self.forget(&url);
                text(StatusCode::BAD_GATEWAY, &format!("the worker at {url} failed: {e}"))
            }
        })
    }
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    let body = Full::new(Bytes::from(message.to_string()))
        .map_err(|never| match never {})
        .boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}

/// An HTTP/2 (prior knowledge, as Restate speaks) connection to `url`.
async fn connect(url: &str) -> Result<SendRequest<Incoming>, String> {
    let authority = url.trim_start_matches("http://").trim_end_matches('/');
    let stream = TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
    let (sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    Ok(sender)
}

/// Serve `pool` on `listener` (HTTP/2 for Restate, HTTP/1 for joins) until
/// `stop` completes.
pub async fn serve(pool: Arc<Pool>, listener: TcpListener, stop: impl std::future::Future) {
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else { continue };
        let pool = pool.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| pool.clone().handle(request));
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let _ = builder.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// Tell the pool at `pool_url` that `member` is there. `Err` when the pool
/// cannot be reached (no one serves it).
pub async fn join(http: &reqwest::Client, pool_url: &str, member: &Member) -> Result<(), String> {
    let url = format!("{}{JOIN_PATH}", pool_url.trim_end_matches('/'));
    let response = http
        .post(&url)
        .json(member)
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    match response.status().is_success() {
        true => Ok(()),
        false => Err(format!("the pool at {pool_url} answered HTTP {}", response.status())),
    }
}
