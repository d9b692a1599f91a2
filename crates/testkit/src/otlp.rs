//! A local OTLP/HTTP receiver of traces and metrics (JSON encoding) on
//! loopback, on its own thread, and the spans and histogram points it
//! received in a form tests can check.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::routing::post;
use serde_json::{json, Value};

/// One received span.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    pub id: String,
    pub parent: String,
    pub trace: String,
    pub name: String,
    /// Strings, integers (as numbers), booleans and arrays, by key.
    pub attributes: HashMap<String, Value>,
    pub error: bool,
    /// OTLP's span kind: 1 internal, 2 server, 3 client, ...
    pub kind: i64,
}

/// One received histogram data point.
#[derive(Debug, Clone)]
pub struct ReceivedPoint {
    /// The metric's name, e.g. `gen_ai.client.token.usage`.
    pub metric: String,
    pub unit: String,
    pub attributes: HashMap<String, Value>,
    pub count: u64,
    pub sum: f64,
}

/// Collects every `POST /v1/traces` and `/v1/metrics` body. Stops when dropped.
pub struct OtlpReceiver {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<Value>>>,
    metric_bodies: Arc<Mutex<Vec<Value>>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// A handler that keeps each JSON body it is posted in `sink`.
fn collect(sink: Arc<Mutex<Vec<Value>>>) -> axum::routing::MethodRouter {
    post(move |body: String| {
        let sink = sink.clone();
        async move {
            sink.lock()
                .unwrap()
                .push(serde_json::from_str(&body).unwrap_or(Value::Null));
            "{}"
        }
    })
}

impl OtlpReceiver {
    pub fn start() -> OtlpReceiver {
        let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let metric_bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let (sink, metric_sink) = (bodies.clone(), metric_bodies.clone());
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("receiver runtime");
            rt.block_on(async move {
                let app = axum::Router::new()
                    .route("/v1/traces", collect(sink))
                    .route("/v1/metrics", collect(metric_sink));
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        OtlpReceiver {
            addr: addr_rx.recv().expect("receiver address"),
            bodies,
            metric_bodies,
            _shutdown: shutdown,
        }
    }

    /// The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The full traces URL.
    pub fn traces_url(&self) -> String {
        format!("http://{}/v1/traces", self.addr)
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        let bodies = self.bodies.lock().unwrap().clone();
        let mut out = Vec::new();
        for body in &bodies {
            for rs in body["resourceSpans"].as_array().into_iter().flatten() {
                for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                    for s in ss["spans"].as_array().into_iter().flatten() {
                        out.push(span(s));
                    }
                }
            }
        }
        out
    }
}

impl OtlpReceiver {
    /// Every histogram data point received so far.
    pub fn histogram_points(&self) -> Vec<ReceivedPoint> {
        let bodies = self.metric_bodies.lock().unwrap().clone();
        let mut out = Vec::new();
        for body in &bodies {
            for rm in body["resourceMetrics"].as_array().into_iter().flatten() {
                for sm in rm["scopeMetrics"].as_array().into_iter().flatten() {
                    for m in sm["metrics"].as_array().into_iter().flatten() {
                        for p in m
                            .pointer("/histogram/dataPoints")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            out.push(ReceivedPoint {
                                metric: m["name"].as_str().unwrap_or("").to_string(),
                                unit: m["unit"].as_str().unwrap_or("").to_string(),
                                attributes: attributes(p),
                                count: value(&json!({"intValue": p["count"]})).as_u64().unwrap_or(0),
                                sum: p["sum"].as_f64().unwrap_or(0.0),
                            });
                        }
                    }
                }
            }
        }
        out
    }
}

fn attributes(item: &Value) -> HashMap<String, Value> {
    item["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| (a["key"].as_str().unwrap_or("").to_string(), value(&a["value"])))
        .collect()
}

/// An OTLP/JSON attribute value as plain JSON (int64 arrives as a string).
fn value(v: &Value) -> Value {
    if let Some(s) = v.get("stringValue") {
        return s.clone();
    }
    if let Some(i) = v.get("intValue") {
        return json!(i
            .as_str()
            .and_then(|s| s.parse::<i64>().ok())
            .or(i.as_i64())
            .unwrap_or(0));
    }
    if let Some(b) = v.get("boolValue") {
        return b.clone();
    }
    if let Some(values) = v.pointer("/arrayValue/values").and_then(Value::as_array) {
        return Value::Array(values.iter().map(value).collect());
    }
    v.clone()
}

fn span(s: &Value) -> ReceivedSpan {
    let text = |k: &str| s[k].as_str().unwrap_or("").to_string();
    ReceivedSpan {
        id: text("spanId"),
        parent: text("parentSpanId"),
        trace: text("traceId"),
        name: text("name"),
        attributes: attributes(s),
        error: s["status"]["code"] == json!(2) || s["status"]["code"] == json!("STATUS_CODE_ERROR"),
        kind: match &s["kind"] {
            Value::Number(n) => n.as_i64().unwrap_or(0),
            Value::String(k) => match k.as_str() {
                "SPAN_KIND_INTERNAL" => 1,
                "SPAN_KIND_SERVER" => 2,
                "SPAN_KIND_CLIENT" => 3,
                _ => 0,
            },
            _ => 0,
        },
    }
}
