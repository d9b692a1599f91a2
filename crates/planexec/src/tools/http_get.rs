//! `http_get`: fetch a URL (with the `http` feature, which brings reqwest).

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::args::{str_arg, string_args, MAX_READ_BYTES};
use super::{Effect, Tool, ToolError};

pub(crate) struct HttpGet {
    client: reqwest::Client,
}

impl HttpGet {
    pub(crate) fn new() -> HttpGet {
        HttpGet {
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .user_agent(concat!("planexec/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default(),
        }
    }
}

#[async_trait]
impl Tool for HttpGet {
    fn name(&self) -> &str {
        "http_get"
    }
    fn description(&self) -> &str {
        "Fetch a URL with HTTP GET and return the response body as text. Fails on a non-2xx status."
    }
    fn parameters(&self) -> Value {
        string_args(&[("url", "an http:// or https:// URL")])
    }
    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }
    async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let url = str_arg(&args, "url")?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ToolError::invalid_args(format!(
                "`{url}` is not an http:// or https:// URL"
            )));
        }
        let mut response = self.client.get(url).send().await.map_err(|e| {
            if e.is_timeout() || e.is_connect() {
                ToolError::retryable(format!("GET {url} failed: {e}"))
            } else {
                ToolError::failed(format!("GET {url} failed: {e}"))
            }
        })?;
        let status = response.status();
        // Read in chunks and stop past the cap, so a huge body cannot exhaust memory.
        let mut body: Vec<u8> = Vec::new();
        let mut total = 0usize;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ToolError::retryable(format!("GET {url}: reading the body failed: {e}")))?
        {
            total += chunk.len();
            let room = (MAX_READ_BYTES + 1).saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() > MAX_READ_BYTES {
                break;
            }
        }
        if !status.is_success() {
            let msg = format!(
                "GET {url} returned HTTP {status}: {}",
                crate::text::truncate_chars(&String::from_utf8_lossy(&body), 200)
            );
            return Err(if status.is_server_error() || status.as_u16() == 429 {
                ToolError::retryable(msg)
            } else if status.as_u16() == 404 {
                ToolError::not_found(msg)
            } else {
                ToolError::failed(msg)
            });
        }
        let text = String::from_utf8_lossy(&body[..body.len().min(MAX_READ_BYTES)]).into_owned();
        if body.len() > MAX_READ_BYTES {
            Ok(Value::String(format!(
                "{text}\n[... truncated: the body is more than {MAX_READ_BYTES} bytes ({total} read before stopping); showing the first {MAX_READ_BYTES}]"
            )))
        } else {
            Ok(Value::String(text))
        }
    }
}
