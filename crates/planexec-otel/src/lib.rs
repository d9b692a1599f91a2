//! OpenTelemetry traces and metrics of planexec runs, exported over OTLP/HTTP.
//!
//! [`Tracing::from_env`] is `None` (and costs nothing) unless
//! `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is
//! set; the other standard variables (`OTEL_EXPORTER_OTLP_PROTOCOL`,
//! `_HEADERS`, `_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_SDK_DISABLED`) apply. [`Tracing::attach`] turns an agent's events into
//! spans, following OpenTelemetry's GenAI semantic conventions:
//!
//! ```text
//! invoke_agent planexec            one per run (or resumed session)
//! ├── chat MODEL                   planner, replanner, synthesizer calls
//! ├── plan v1                      each plan version, while it is in force
//! │   └── execute_tool TOOL        each step (reason STEP for a reasoning step)
//! │       └── chat MODEL           the executor's calls for that step
//! └── plan v2 ...
//! ```
//!
//! with `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`,
//! `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`,
//! `gen_ai.response.finish_reasons`, `gen_ai.tool.name`, and planexec's own
//! `planexec.run.id`, `planexec.step.id`, `planexec.step.attempts`,
//! `planexec.plan.version`, `planexec.replan`, `planexec.role`. Prompts and
//! replies (`gen_ai.input.messages`, `gen_ai.output.messages`) are recorded
//! only with [`TraceOptions::content`].
//!
//! A model call that failed is a `chat MODEL` span with `error.type` (`auth`,
//! `rate_limited`, `timeout`, ...) and an error status. Where a metrics
//! endpoint is known, the GenAI client metrics `gen_ai.client.token.usage`
//! and `gen_ai.client.operation.duration` are exported too (see `metrics.rs`).
//!
//! Spans are built from the events with their real start and end times, so
//! the core never depends on OpenTelemetry. One agent's event bus is read as
//! one run at a time (how the CLI runs); concurrent runs on one agent would
//! share a parent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use planexec::events::{Event, EventBus};

mod metrics;

/// What to put in spans beyond the defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceOptions {
    /// Record prompts and replies (they can hold anything the user's files hold).
    pub content: bool,
}

/// An OTLP/HTTP trace pipeline, and a metrics one where an endpoint for it is known.
pub struct Tracing {
    provider: SdkTracerProvider,
    meters: Option<SdkMeterProvider>,
}

impl Tracing {
    /// From the standard environment variables; `Ok(None)` when no endpoint is
    /// set or `OTEL_SDK_DISABLED=true`.
    pub fn from_env() -> Result<Option<Tracing>, String> {
        let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.trim().is_empty());
        if std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            return Ok(None);
        }
        // The exporter reads the endpoint, protocol, headers and timeout itself.
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
            .map_err(|e| format!("cannot set up the OTLP trace exporter: {e}"))?;
        // Metrics go where the base or the metrics endpoint says, never to a
        // guessed default when only a traces endpoint was given.
        let metrics = if set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .build()
                .map_err(|e| format!("cannot set up the OTLP metrics exporter: {e}"))?;
            Some(exporter)
        } else {
            None
        };
        Ok(Some(Tracing::with_exporters(exporter, metrics)))
    }

    /// To a collector at `traces_url` (the full `/v1/traces` URL), as JSON or
    /// protobuf; metrics to its `/v1/metrics` beside it.
    pub fn to(traces_url: &str, json: bool) -> Result<Tracing, String> {
        let protocol = if json { Protocol::HttpJson } else { Protocol::HttpBinary };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(traces_url)
            .with_protocol(protocol)
            .build()
            .map_err(|e| format!("cannot set up the OTLP trace exporter: {e}"))?;
        let metrics = match traces_url.strip_suffix("/v1/traces") {
            Some(base) => Some(
                opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_endpoint(format!("{base}/v1/metrics"))
                    .with_protocol(protocol)
                    .build()
                    .map_err(|e| format!("cannot set up the OTLP metrics exporter: {e}"))?,
            ),
            None => None,
        };
        Ok(Tracing::with_exporters(exporter, metrics))
    }

    fn with_exporters(
        exporter: opentelemetry_otlp::SpanExporter,
        metrics: Option<opentelemetry_otlp::MetricExporter>,
    ) -> Tracing {
        let mut resource = Resource::builder();
        if std::env::var("OTEL_SERVICE_NAME").is_err() {
            resource = resource.with_service_name("planexec");
        }
        let resource = resource.build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.clone())
            .build();
        let meters = metrics.map(|exporter| {
            SdkMeterProvider::builder()
                .with_periodic_exporter(exporter)
                .with_resource(resource)
                .build()
        });
        Tracing { provider, meters }
    }

    /// Turn `events` into spans from now on.
    pub fn attach(&self, events: &EventBus, options: TraceOptions) {
        if options.content {
            events.include_content(true);
        }
        let recorder = Arc::new(Recorder {
            tracer: self.provider.tracer("planexec"),
            options,
            state: Mutex::default(),
        });
        events.on_event(move |event| recorder.handle(event));
        if let Some(meters) = &self.meters {
            let metrics = metrics::ModelMetrics::new(meters);
            events.on_event(move |event| metrics.record(event));
        }
    }

    /// Export what is buffered and stop. Call before the process exits.
    pub fn shutdown(self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown_with_timeout(Duration::from_secs(5));
        // Shutting down exports what was measured (a flush first would send
        // the same cumulative totals twice).
        if let Some(meters) = self.meters {
            let _ = meters.shutdown_with_timeout(Duration::from_secs(5));
        }
    }
}

#[derive(Default)]
struct State {
    run: Option<Context>,
    run_id: String,
    plan: Option<Context>,
    steps: HashMap<String, Context>,
}

struct Recorder {
    tracer: SdkTracer,
    options: TraceOptions,
    state: Mutex<State>,
}

/// `error.type`: a low-cardinality class of a step's or call's error (the
/// full message goes in the span status).
fn error_type(error: &str) -> &'static str {
    let e = error.to_ascii_lowercase();
    if e.contains("refused") || e.contains("outside the workspace") || e.contains("declined") {
        "refused"
    } else if e.contains("timed out") || e.contains("did not finish within") {
        "timeout"
    } else if e.contains("invalid") || e.contains("must be") {
        "invalid_arguments"
    } else if e.contains("does not exist") || e.contains("not found") {
        "not_found"
    } else {
        "_OTHER"
    }
}

fn kv(key: &'static str, value: impl Into<opentelemetry::Value>) -> KeyValue {
    KeyValue::new(key, value)
}

impl Recorder {
    fn start(&self, name: String, parent: &Context, start: SystemTime, attributes: Vec<KeyValue>) -> Context {
        self.start_kind(name, SpanKind::Internal, parent, start, attributes)
    }

    /// A span of `kind`: `Client` for calls to a model server (as the GenAI
    /// conventions ask), `Internal` for the rest.
    fn start_kind(
        &self,
        name: String,
        kind: SpanKind,
        parent: &Context,
        start: SystemTime,
        attributes: Vec<KeyValue>,
    ) -> Context {
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_start_time(start)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        parent.with_span(span)
    }

    /// A step's span: `execute_tool TOOL`, `invoke_agent AGENT` or `reason ID`,
    /// under the plan version in force.
    fn step_span(
        &self,
        state: &State,
        step_id: &str,
        tool: Option<&str>,
        agent: Option<&str>,
        now: SystemTime,
    ) -> Context {
        let parent = state.plan.clone().or_else(|| state.run.clone()).unwrap_or_default();
        let mut attributes = vec![
            kv("planexec.run.id", state.run_id.clone()),
            kv("planexec.step.id", step_id.to_string()),
        ];
        let name = match (tool, agent) {
            (Some(tool), _) => {
                attributes.push(kv("gen_ai.operation.name", "execute_tool"));
                attributes.push(kv("gen_ai.tool.name", tool.to_string()));
                format!("execute_tool {tool}")
            }
            (None, Some(agent)) => {
                attributes.push(kv("gen_ai.operation.name", "invoke_agent"));
                attributes.push(kv("gen_ai.agent.name", agent.to_string()));
                attributes.push(kv("planexec.step.kind", "agent"));
                format!("invoke_agent {agent}")
            }
            (None, None) => {
                attributes.push(kv("planexec.step.kind", "reasoning"));
                format!("reason {step_id}")
            }
        };
        self.start(name, &parent, now, attributes)
    }

    /// A model call's `chat` span, under its step (or the run), ending now.
    fn chat_span(&self, state: &State, event: &Event, now: SystemTime) {
        let Event::ModelCalled {
            role,
            provider,
            model,
            step_id,
            prompt_tokens,
            completion_tokens,
            cache_read_tokens,
            latency_ms,
            finish_reason,
            prompt,
            completion,
        } = event
        else {
            return;
        };
        let (parent, start) = call_place(state, step_id.as_deref(), *latency_ms, now);
        let mut attributes = chat_attributes(provider, model);
        attributes.extend([
            kv("gen_ai.usage.input_tokens", *prompt_tokens as i64),
            kv("gen_ai.usage.output_tokens", *completion_tokens as i64),
            kv("gen_ai.usage.cache_read.input_tokens", *cache_read_tokens as i64),
            kv("planexec.role", role.as_str()),
            kv("planexec.run.id", state.run_id.clone()),
        ]);
        if let Some(reason) = finish_reason {
            attributes.push(KeyValue::new(
                "gen_ai.response.finish_reasons",
                opentelemetry::Value::Array(vec![opentelemetry::StringValue::from(reason.clone())].into()),
            ));
        }
        if let Some(id) = step_id {
            attributes.push(kv("planexec.step.id", id.clone()));
        }
        if self.options.content {
            if let Some(p) = prompt {
                attributes.push(kv("gen_ai.input.messages", p.clone()));
            }
            if let Some(c) = completion {
                attributes.push(kv("gen_ai.output.messages", c.clone()));
            }
        }
        let cx = self.start_kind(format!("chat {model}"), SpanKind::Client, &parent, start, attributes);
        cx.span().end_with_timestamp(now);
    }

    /// The `chat MODEL` span of a call that got no usable reply.
    fn failed_chat_span(&self, state: &State, event: &Event, now: SystemTime) {
        let Event::ModelFailed {
            role,
            provider,
            model,
            step_id,
            latency_ms,
            error_type,
            error,
        } = event
        else {
            return;
        };
        let (parent, start) = call_place(state, step_id.as_deref(), *latency_ms, now);
        let mut attributes = chat_attributes(provider, model);
        attributes.extend([
            kv("error.type", error_type.clone()),
            kv("planexec.role", role.as_str()),
            kv("planexec.run.id", state.run_id.clone()),
        ]);
        if let Some(id) = step_id {
            attributes.push(kv("planexec.step.id", id.clone()));
        }
        let cx = self.start_kind(format!("chat {model}"), SpanKind::Client, &parent, start, attributes);
        cx.span().set_status(Status::error(error.clone()));
        cx.span().end_with_timestamp(now);
    }

    /// Start or end the span of an agent step's inner call.
    fn inner_call_event(&self, state: &mut State, event: &Event, now: SystemTime) {
        match event {
            Event::AgentCallStarted {
                step_id, call_id, tool, ..
            } => {
                let cx = self.inner_call(state, step_id, call_id, tool, now);
                state.steps.insert(call_id.clone(), cx);
            }
            Event::AgentCallFinished {
                step_id,
                call_id,
                tool,
                error,
                replayed,
                ..
            } => {
                // A refused or replayed call has no start event: its span is instant.
                let cx = match state.steps.remove(call_id) {
                    Some(cx) => cx,
                    None => self.inner_call(state, step_id, call_id, tool, now),
                };
                cx.span().set_attribute(kv("planexec.call.replayed", *replayed));
                if let Some(error) = error {
                    cx.span().set_attribute(kv("error.type", error_type(error)));
                    cx.span().set_status(Status::error(error.clone()));
                }
                cx.span().end_with_timestamp(now);
            }
            _ => {}
        }
    }

    /// The `execute_tool` span of an agent step's inner call, under the step's span.
    fn inner_call(&self, state: &State, step_id: &str, call_id: &str, tool: &str, now: SystemTime) -> Context {
        let parent = state.steps.get(step_id).cloned().unwrap_or_default();
        let attributes = vec![
            kv("gen_ai.operation.name", "execute_tool"),
            kv("gen_ai.tool.name", tool.to_string()),
            kv("gen_ai.tool.call.id", call_id.to_string()),
            kv("planexec.run.id", state.run_id.clone()),
            kv("planexec.step.id", step_id.to_string()),
        ];
        self.start(format!("execute_tool {tool}"), &parent, now, attributes)
    }

    fn handle(&self, event: &Event) {
        let now = SystemTime::now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::RunStarted { run_id, .. } | Event::RunResumed { run_id, .. } => {
                end_all(&mut state, now, "a new run started");
                let resumed = matches!(event, Event::RunResumed { .. });
                state.run_id = run_id.clone();
                state.run = Some(self.start(
                    "invoke_agent planexec".to_string(),
                    &Context::new(),
                    now,
                    vec![
                        kv("gen_ai.operation.name", "invoke_agent"),
                        kv("gen_ai.agent.name", "planexec"),
                        kv("planexec.run.id", run_id.clone()),
                        kv("planexec.run.resumed", resumed),
                    ],
                ));
            }
            Event::PlanProposed { version, plan, .. } => {
                if let Some(old) = state.plan.take() {
                    old.span().end_with_timestamp(now);
                }
                let parent = state.run.clone().unwrap_or_default();
                state.plan = Some(self.start(
                    format!("plan v{version}"),
                    &parent,
                    now,
                    vec![
                        kv("planexec.run.id", state.run_id.clone()),
                        kv("planexec.plan.version", *version as i64),
                        kv("planexec.plan.steps", plan.steps.len() as i64),
                        kv("planexec.replan", 0i64),
                    ],
                ));
            }
            Event::Replanned { replans, reason, .. } => {
                if let Some(plan) = &state.plan {
                    plan.span().set_attribute(kv("planexec.replan", *replans as i64));
                    plan.span().set_attribute(kv("planexec.replan.reason", reason.clone()));
                }
            }
            Event::StepStarted { step_id, tool, agent } => {
                let cx = self.step_span(&state, step_id, tool.as_deref(), agent.as_deref(), now);
                state.steps.insert(step_id.clone(), cx);
            }
            // An agent step's inner call: an `execute_tool` span under its step's
            // `invoke_agent`, next to the step's `chat` spans.
            Event::AgentCallStarted { .. } | Event::AgentCallFinished { .. } => {
                self.inner_call_event(&mut state, event, now)
            }
            Event::StepRetried {
                step_id,
                attempt,
                error,
                ..
            } => {
                if let Some(cx) = state.steps.get(step_id) {
                    cx.span().add_event(
                        "retry",
                        vec![
                            kv("planexec.step.attempt", *attempt as i64),
                            kv("error.message", error.clone()),
                        ],
                    );
                }
            }
            Event::StepFinished { step_id, attempts, .. } => {
                if let Some(cx) = state.steps.remove(step_id) {
                    cx.span().set_attribute(kv("planexec.step.attempts", *attempts as i64));
                    cx.span().end_with_timestamp(now);
                }
            }
            Event::StepFailed {
                step_id,
                attempts,
                error,
                ..
            } => {
                if let Some(cx) = state.steps.remove(step_id) {
                    cx.span().set_attribute(kv("planexec.step.attempts", *attempts as i64));
                    cx.span().set_attribute(kv("error.type", error_type(error)));
                    cx.span().set_status(Status::error(error.clone()));
                    cx.span().end_with_timestamp(now);
                }
            }
            Event::ModelCalled { .. } => self.chat_span(&state, event, now),
            Event::ModelFailed { .. } => self.failed_chat_span(&state, event, now),
            Event::RunFinished { status, .. } => {
                if let Some(run) = &state.run {
                    run.span().set_attribute(kv("planexec.run.status", status.clone()));
                    if status != "succeeded" {
                        run.span().set_status(Status::error(format!("the run ended {status}")));
                    }
                }
                end_all(&mut state, now, "the run ended");
            }
            _ => {}
        }
    }
}

/// End every open span: steps (as not finished), the plan, the run.
/// Where a model call's span goes (under its step, else under the run) and
/// when it started, for a call that took `latency_ms` up to `now`.
fn call_place(state: &State, step_id: Option<&str>, latency_ms: u64, now: SystemTime) -> (Context, SystemTime) {
    let parent = step_id
        .and_then(|id| state.steps.get(id).cloned())
        .or_else(|| state.run.clone())
        .unwrap_or_default();
    let start = now.checked_sub(Duration::from_millis(latency_ms)).unwrap_or(now);
    (parent, start)
}

/// The attributes every `chat` span has.
fn chat_attributes(provider: &str, model: &str) -> Vec<KeyValue> {
    vec![
        kv("gen_ai.operation.name", "chat"),
        kv("gen_ai.provider.name", provider.to_string()),
        kv("gen_ai.request.model", model.to_string()),
    ]
}

fn end_all(state: &mut State, now: SystemTime, why: &str) {
    for (_, cx) in state.steps.drain() {
        cx.span().set_status(Status::error(format!("not finished: {why}")));
        cx.span().end_with_timestamp(now);
    }
    if let Some(plan) = state.plan.take() {
        plan.span().end_with_timestamp(now);
    }
    if let Some(run) = state.run.take() {
        run.span().end_with_timestamp(now);
    }
}
