//! What the HTTP providers share: sending a request with retries, and reading
//! error bodies and `retry-after`. Each provider keeps only what differs: its
//! request body, its headers, and what its 2xx and 4xx replies mean.

use std::time::Duration;

use serde_json::Value;

use super::LlmError;

/// Where a provider sends its requests, and how patiently.
pub(crate) struct Endpoint<'a> {
    /// The full URL requests go to.
    pub url: &'a str,
    /// The base URL, as the user configured it (named in errors).
    pub base_url: &'a str,
    /// The environment variable that sets the base URL (named in errors).
    pub base_url_env: &'a str,
    pub timeout: Duration,
    /// Retries for timeouts, unreadable replies, 429 and 5xx.
    pub max_retries: u32,
    /// First backoff delay; doubles each retry.
    pub retry_base: Duration,
    /// The server answers 529 when overloaded (Anthropic): honour its
    /// `retry-after` and say so in the error.
    pub overloaded_529: bool,
}

impl Endpoint<'_> {
    fn backoff(&self, attempt: u32) -> Duration {
        self.retry_base.saturating_mul(1u32 << attempt.min(6))
    }
}

/// A provider's base URL without its trailing `/`, and its HTTP client.
/// `example` shows a good base URL in the error for a bad one.
pub(crate) fn client(base_url: &str, timeout: Duration, example: &str) -> Result<(String, reqwest::Client), LlmError> {
    let base_url = base_url.trim_end_matches('/').to_string();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(LlmError::BadRequest(format!(
            "base URL `{base_url}` must start with http:// or https:// (e.g. {example})"
        )));
    }
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .user_agent(concat!("planexec/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Connection(format!("cannot build an HTTP client: {e}")))?;
    Ok((base_url, client))
}

/// Send `request()` until the answer is one retrying cannot change: timeouts,
/// unreadable replies, 429 and 5xx are retried with backoff (429, and 529 where
/// it means overloaded, wait as `retry-after` says), and end as errors once
/// retries run out. Returns a 2xx or 4xx status with its body. `attempt`
/// counts across calls, so a provider that re-sends a changed request keeps
/// one retry budget.
pub(crate) async fn send(
    ep: &Endpoint<'_>,
    attempt: &mut u32,
    request: impl Fn() -> reqwest::RequestBuilder,
) -> Result<(u16, String), LlmError> {
    let url = ep.url;
    loop {
        let response = match request().send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                if *attempt < ep.max_retries {
                    tokio::time::sleep(ep.backoff(*attempt)).await;
                    *attempt += 1;
                    continue;
                }
                return Err(LlmError::Timeout(format!(
                    "{url} did not answer within {:?} ({} attempts); raise --timeout or check the server",
                    ep.timeout,
                    *attempt + 1
                )));
            }
            Err(e) if e.is_connect() => {
                return Err(LlmError::Connection(format!(
                    "cannot connect to {} (connection refused or unreachable); is the server running? Set --base-url or {}",
                    ep.base_url, ep.base_url_env
                )));
            }
            Err(e) => return Err(LlmError::Connection(format!("request to {url} failed: {e}"))),
        };
        let status = response.status().as_u16();
        let wait = retry_after(response.headers());
        let text = match response.text().await {
            Ok(t) => t,
            Err(e) if *attempt < ep.max_retries => {
                tracing::debug!(error = %e, "reading the reply failed; retrying");
                tokio::time::sleep(ep.backoff(*attempt)).await;
                *attempt += 1;
                continue;
            }
            Err(e) => {
                return Err(LlmError::Connection(format!(
                    "reading the reply from {url} failed: {e}"
                )))
            }
        };
        let overloaded = ep.overloaded_529 && status == 529;
        match status {
            429 | 500..=599 if *attempt < ep.max_retries => {
                let delay = if status == 429 || overloaded {
                    wait.unwrap_or(ep.backoff(*attempt))
                } else {
                    ep.backoff(*attempt)
                };
                tracing::debug!(status, ?delay, "retrying model call");
                tokio::time::sleep(delay).await;
                *attempt += 1;
            }
            429 => {
                return Err(LlmError::RateLimited(format!(
                    "{} is rate limiting requests (HTTP 429) after {} attempts: {}",
                    ep.base_url,
                    *attempt + 1,
                    error_message(&text)
                )))
            }
            529 if overloaded => {
                return Err(LlmError::Server(format!(
                    "{} is overloaded (HTTP 529) after {} attempts: {}; try again later",
                    ep.base_url,
                    *attempt + 1,
                    error_message(&text)
                )))
            }
            500..=599 => {
                return Err(LlmError::Server(format!(
                    "{} failed with HTTP {status} after {} attempts: {}",
                    ep.base_url,
                    *attempt + 1,
                    error_message(&text)
                )))
            }
            _ => return Ok((status, text)),
        }
    }
}

/// A 2xx body as JSON, or an error quoting what came instead.
pub(crate) fn json_body(url: &str, text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text).map_err(|e| {
        LlmError::InvalidResponse(format!(
            "{url} answered with something that is not JSON ({e}): {}",
            crate::text::truncate_chars(text, 200)
        ))
    })
}

/// The error message of an error body in OpenAI's shape, or the body itself.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
                .or_else(|| v.get("detail"))
        })
        .map(|m| m.as_str().map(str::to_string).unwrap_or_else(|| m.to_string()))
        .unwrap_or_else(|| body.trim().to_string());
    crate::text::truncate_chars(&msg, 300)
}

pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get("retry-after")?.to_str().ok()?;
    let secs: f64 = v.trim().parse().ok()?;
    (secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(60.0)))
}

/// Read a streamed reply: the data of each server-sent event (its `data:`
/// lines joined, as the SSE specification says) is handed to `on_data` as it
/// arrives. Returns `None` for an event stream, or the whole body when the
/// server sent something else (it ignored `stream`).
pub(crate) async fn read_events(
    response: reqwest::Response,
    url: &str,
    on_data: &mut (dyn FnMut(&str) -> Result<(), LlmError> + Send),
) -> Result<Option<String>, LlmError> {
    use eventsource_stream::{EventStreamError, Eventsource};
    use futures::StreamExt;

    let is_sse = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    let broke_off =
        |e: &dyn std::fmt::Display| LlmError::Connection(format!("the streamed reply from {url} broke off: {e}"));
    if !is_sse {
        return response.text().await.map(Some).map_err(|e| broke_off(&e));
    }
    let mut events = response.bytes_stream().eventsource();
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| match e {
            EventStreamError::Transport(e) => broke_off(&e),
            other => LlmError::InvalidResponse(format!("the event stream from {url} cannot be read: {other}")),
        })?;
        let data = event.data.trim();
        if !data.is_empty() && data != "[DONE]" {
            on_data(data)?;
        }
    }
    Ok(None)
}

/// One `data:` payload as JSON, or an error quoting it.
pub(crate) fn event_json(data: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data).map_err(|e| {
        LlmError::InvalidResponse(format!(
            "a streamed event is not JSON ({e}): {}",
            crate::text::truncate_chars(data, 200)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_reads_openai_and_anthropic_shapes() {
        assert_eq!(error_message(r#"{"error":{"message":"bad key"}}"#), "bad key");
        assert_eq!(
            error_message(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
            "Overloaded"
        );
        assert_eq!(error_message("plain text"), "plain text");
    }
}
