//! The API's handlers: each reads its JSON, calls the library (`Agent`,
//! `planexec::decisions`, the `RunStore`) and answers JSON. Bad input is a 400
//! that says what was wrong; nothing is changed then.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use futures::stream::{self, Stream, StreamExt};
use planexec::decisions::{self, DecisionError};
use planexec::store::RunFilter;
use planexec::{Agent, CancelToken, ResumeOptions, RunStatus};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::bodies::{
    ApiError, Approved, Cancelled, Decide, Edited, ListQuery, NewRun, Rejected, RunList, RunShown, RunStarted, Steered,
};
use super::server::Server;
use crate::setup::{server_agent, Recorded};

type Shared = State<Arc<Server>>;

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    let body = ApiError {
        error: message.to_string(),
    };
    (status, Json(body)).into_response()
}

/// The body as `T`; an empty body reads as `{}`. The error is a 400's message.
fn parse<T: DeserializeOwned>(body: &Bytes) -> Result<T, String> {
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    serde_json::from_slice(text).map_err(|e| format!("the request body is not what this endpoint takes: {e}"))
}

fn refused(e: DecisionError) -> Response {
    let status = match &e {
        DecisionError::NotFound { .. } => StatusCode::NOT_FOUND,
        DecisionError::InvalidPlan(_) => StatusCode::BAD_REQUEST,
        DecisionError::Store(_) | DecisionError::NoStore => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::CONFLICT,
    };
    error(status, e)
}

#[utoipa::path(get, path = "/", tag = "viewer",
    responses((status = 200, description = "The run viewer: one page, its assets embedded", content_type = "text/html")))]
pub async fn viewer() -> Html<&'static str> {
    Html(include_str!("viewer.html"))
}

/// An agent for one run. Its events are published to the hub under the
/// run's id; from its first event until `run_finished` the run is registered
/// with `cancel` (so `POST /cancel` stops it at once), and the id is sent on
/// the returned channel.
fn agent_for(
    server: &Arc<Server>,
    later: bool,
    known_id: Option<String>,
    cancel: CancelToken,
) -> Result<(Agent, tokio::sync::oneshot::Receiver<String>), String> {
    let options = server.config.run_options()?;
    let recorded = Recorded {
        store: server.store.clone(),
        workspace: server.workspace.clone(),
    };
    let models = server
        .models
        .as_ref()
        .ok_or("this server's runs are made by Restate's workers, not here")?;
    let agent =
        server_agent(&server.config, models, options, server.tools.clone(), recorded, later).map_err(|e| e.0)?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let id = std::sync::Mutex::new(known_id);
    let server = server.clone();
    agent.events().on_event(move |event| {
        if let planexec::Event::RunStarted { run_id, .. } = event {
            *id.lock().unwrap() = Some(run_id.clone());
        }
        let Some(run_id) = id.lock().unwrap().clone() else {
            return;
        };
        if let Some(tx) = tx.lock().unwrap().take() {
            server.running.lock().unwrap().insert(run_id.clone(), cancel.clone());
            let _ = tx.send(run_id.clone());
        }
        if let planexec::Event::RunFinished { .. } = event {
            server.running.lock().unwrap().remove(&run_id);
        }
        server
            .hub
            .publish(&run_id, serde_json::to_value(event).unwrap_or_default());
    });
    Ok((agent, rx))
}

/// Run `task` on a task of its own and return its id once it has one; or
/// resume `run_id` (a resume that cannot start publishes `resume_failed`).
async fn spawn(
    server: &Arc<Server>,
    task: Option<String>,
    run_id: Option<String>,
    later: bool,
) -> Result<String, String> {
    let cancel = CancelToken::new();
    let (agent, started) = agent_for(server, later, run_id.clone(), cancel.clone())?;
    let hub = server.clone();
    let resumed = run_id.clone();
    tokio::spawn(async move {
        match (task, resumed) {
            (Some(task), _) => {
                agent.run_cancellable(&task, None, &cancel).await;
            }
            (None, Some(id)) => {
                if let Err(e) = agent.resume(&id, &ResumeOptions::default(), &cancel).await {
                    let failed = json!({"event": "resume_failed", "error": e.to_string()});
                    hub.hub.publish(&id, failed);
                }
            }
            (None, None) => {}
        }
    });
    match run_id {
        Some(id) => Ok(id),
        None => started.await.map_err(|_| "the run did not start".to_string()),
    }
}

/// Start a run. Nobody is at a terminal here: unless `approve` is `auto`,
/// the run plans and then waits for a decision (`awaiting_approval`).
#[utoipa::path(post, path = "/runs", tag = "runs", request_body = NewRun,
    responses(
        (status = 202, description = "The run started", body = RunStarted),
        (status = 400, description = "What was wrong with the request", body = ApiError),
        (status = 500, description = "The run could not start", body = ApiError)))]
pub async fn start_run(State(server): Shared, body: Bytes) -> Response {
    let request: NewRun = match parse(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    if request.task.trim().is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "`task` is empty: say in words what the run should do",
        );
    }
    // Nobody is at a terminal here: unless asked otherwise, the run waits for a decision.
    let later = match request.approve.as_deref() {
        None | Some("later") => true,
        Some("auto") => false,
        Some(other) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("`approve` is {other:?}: use \"auto\" or \"later\""),
            )
        }
    };
    if let Some(ingress) = &server.restate {
        return match super::on_restate::start(ingress, request.task, later).await {
            Ok(started) => (StatusCode::ACCEPTED, Json(started)).into_response(),
            Err(e) => error(StatusCode::BAD_GATEWAY, e),
        };
    }
    match spawn(&server, Some(request.task), None, later).await {
        Ok(run_id) => (
            StatusCode::ACCEPTED,
            Json(RunStarted {
                events: format!("/runs/{run_id}/events"),
                run_id,
            }),
        )
            .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// The ledger's runs, newest first.
#[utoipa::path(get, path = "/runs", tag = "runs", params(ListQuery),
    responses(
        (status = 200, description = "The runs", body = RunList),
        (status = 400, description = "An unknown status", body = ApiError)))]
pub async fn list_runs(State(server): Shared, Query(q): Query<ListQuery>) -> Response {
    let status = match q.status.as_deref().map(|s| RunStatus::parse(s).ok_or(s)) {
        Some(Err(s)) => return error(StatusCode::BAD_REQUEST, format!("unknown status {s:?}")),
        Some(Ok(s)) => Some(s),
        None => None,
    };
    let filter = RunFilter {
        status,
        limit: q.limit.or(Some(100)),
    };
    match server.store.list_runs(&filter).await {
        Ok(runs) => Json(RunList { runs }).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// One run: its status, what it waits for, decisions, lease and report.
#[utoipa::path(get, path = "/runs/{id}", tag = "runs", params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "The run", body = RunShown),
        (status = 404, description = "There is no such run", body = ApiError)))]
pub async fn show_run(State(server): Shared, Path(id): Path<String>) -> Response {
    match server.store.load_run(&id).await {
        Ok(Some(run)) => {
            let report = run.report();
            let shown = RunShown {
                run_id: run.run_id,
                task: run.task,
                status: run.status,
                waiting: run.waiting,
                decisions: run.decisions,
                lease: run.lease,
                resumes: run.resumes,
                report,
            };
            let shown = match &server.restate {
                Some(ingress) => super::on_restate::with_waiting(ingress, shown).await,
                None => shown,
            };
            Json(shown).into_response()
        }
        Ok(None) => error(StatusCode::NOT_FOUND, format!("there is no run {id}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// Server-sent events of a run executed by this server: those after
/// `Last-Event-ID` (or `?after=N`), then live ones.
#[utoipa::path(get, path = "/runs/{id}/events", tag = "runs",
    params(
        ("id" = String, Path, description = "The run's id"),
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this event"),
        ("after" = Option<u64>, Query, description = "Resume after this event (for clients that cannot set headers)")),
    responses((status = 200, description = "The run's events, one JSON object each, named by their `event` field", content_type = "text/event-stream")))]
pub async fn events(
    State(server): Shared,
    Path(id): Path<String>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .or(q.get("after").map(String::as_str))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let (missed, live) = server.hub.follow(&id, after);
    let live = stream::unfold(live, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(item) => return Some((item, rx)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let all = stream::iter(missed).chain(live).map(|(n, event)| {
        let kind = event["event"].as_str().unwrap_or("message").to_string();
        Ok(SseEvent::default()
            .id(n.to_string())
            .event(kind)
            .data(event.to_string()))
    });
    Sse::new(all).keep_alive(KeepAlive::default())
}

fn decider(d: &Decide) -> String {
    d.by.clone()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "api".to_string())
}

/// Approve what the run waits for (its plan, or a step); the run goes on here.
#[utoipa::path(post, path = "/runs/{id}/approve", tag = "decisions", request_body = Decide,
    params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "Approved; the run resumed in this server", body = Approved),
        (status = 400, description = "What was wrong with the request", body = ApiError),
        (status = 404, description = "There is no such run", body = ApiError),
        (status = 409, description = "The run does not wait for this decision", body = ApiError)))]
pub async fn approve(State(server): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let d: Decide = match parse(&body) {
        Ok(d) => d,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    if let Some(ingress) = &server.restate {
        return match super::on_restate::decide(ingress, &id, &d, decider(&d), true).await {
            Ok(approved) => Json(Approved {
                approved,
                run_id: id,
                resumed: true,
            })
            .into_response(),
            Err(e) => error(StatusCode::CONFLICT, e),
        };
    }
    let decided = match d.answer.clone() {
        Some(answer) => decisions::answer(server.store.as_ref(), &id, answer, &decider(&d)).await,
        None => decisions::approve(server.store.as_ref(), &id, d.step.as_deref(), &decider(&d)).await,
    };
    let waited = match decided {
        Ok(w) => w,
        Err(e) => return refused(e),
    };
    // Decided: the run goes on here (a later step in ask mode may wait again).
    match spawn(&server, None, Some(id.clone()), true).await {
        Ok(_) => Json(Approved {
            approved: waited.describe(),
            run_id: id,
            resumed: true,
        })
        .into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// Reject the run's plan, with a reason (`reason` is required).
#[utoipa::path(post, path = "/runs/{id}/reject", tag = "decisions", request_body = Decide,
    params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "Rejected", body = Rejected),
        (status = 400, description = "What was wrong with the request", body = ApiError),
        (status = 404, description = "There is no such run", body = ApiError),
        (status = 409, description = "The run does not wait for this decision", body = ApiError)))]
pub async fn reject(State(server): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let d: Decide = match parse(&body) {
        Ok(d) => d,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let Some(reason) = d.reason.clone().filter(|r| !r.trim().is_empty()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`reason` is missing: say why the run is rejected",
        );
    };
    if let Some(ingress) = &server.restate {
        return match super::on_restate::decide(ingress, &id, &d, decider(&d), false).await {
            Ok(_) => Json(Rejected { rejected: id, reason }).into_response(),
            Err(e) => error(StatusCode::CONFLICT, e),
        };
    }
    match decisions::reject(server.store.as_ref(), &id, &reason, &decider(&d)).await {
        Ok(()) => Json(Rejected { rejected: id, reason }).into_response(),
        Err(e) => refused(e),
    }
}

/// Replace the plan a run waits with (`plan` is required); the edit approves it.
#[utoipa::path(post, path = "/runs/{id}/edit", tag = "decisions", request_body = Decide,
    params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "The edited plan is the run's new, approved version", body = Edited),
        (status = 400, description = "What was wrong with the request", body = ApiError),
        (status = 404, description = "There is no such run", body = ApiError),
        (status = 409, description = "The run does not wait for this decision", body = ApiError)))]
pub async fn edit(State(server): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let d: Decide = match parse(&body) {
        Ok(d) => d,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let Some(plan) = d.plan.clone() else {
        return error(StatusCode::BAD_REQUEST, "`plan` is missing: send the edited plan");
    };
    let limits = match server.config.run_options() {
        Ok(o) => o.plan_limits(),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    let tools = server.tools.clone();
    let check = move |p: &planexec::Plan| planexec::plan::validate(p, &tools, &limits);
    match decisions::edit(server.store.as_ref(), &id, plan, &check, &decider(&d)).await {
        Ok(version) => Json(Edited {
            version,
            approved: true,
        })
        .into_response(),
        Err(e) => refused(e),
    }
}

/// A message for the run's replanner (`message` is required).
#[utoipa::path(post, path = "/runs/{id}/steer", tag = "decisions", request_body = Decide,
    params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "The message is in the run's inbox", body = Steered),
        (status = 400, description = "What was wrong with the request", body = ApiError),
        (status = 404, description = "There is no such run", body = ApiError),
        (status = 409, description = "The run does not wait for this decision", body = ApiError)))]
pub async fn steer(State(server): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let d: Decide = match parse(&body) {
        Ok(d) => d,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let Some(message) = d.message.clone().filter(|m| !m.trim().is_empty()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "`message` is missing: say what the run should do differently",
        );
    };
    if let Some(ingress) = &server.restate {
        return match ingress.steer(&id, &message).await {
            Ok(sent) => Json(Steered {
                steer: sent["steer"].as_u64().unwrap_or_default(),
            })
            .into_response(),
            Err(e) => error(StatusCode::CONFLICT, e),
        };
    }
    match decisions::steer(server.store.as_ref(), &id, &message, &decider(&d)).await {
        Ok(seq) => Json(Steered { steer: seq }).into_response(),
        Err(e) => refused(e),
    }
}

/// Cancel the run.
#[utoipa::path(post, path = "/runs/{id}/cancel", tag = "decisions", request_body = Decide,
    params(("id" = String, Path, description = "The run's id")),
    responses(
        (status = 200, description = "Cancelled", body = Cancelled),
        (status = 400, description = "What was wrong with the request", body = ApiError),
        (status = 404, description = "There is no such run", body = ApiError),
        (status = 409, description = "The run does not wait for this decision", body = ApiError)))]
pub async fn cancel(State(server): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let d: Decide = match parse(&body) {
        Ok(d) => d,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    if let Err(e) = decisions::cancel(server.store.as_ref(), &id, &decider(&d)).await {
        return refused(e);
    }
    // A run executing here stops now rather than at its next heartbeat.
    if let Some(token) = server.running.lock().unwrap().get(&id) {
        token.cancel();
    }
    (
        StatusCode::OK,
        [(header::CACHE_CONTROL, "no-store")],
        Json(Cancelled { cancelled: id }),
    )
        .into_response()
}
