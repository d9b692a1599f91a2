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
    /// Retries for timeouts, broken connections, unreadable replies, 408,
    /// 409, 429 and 5xx.
    pub max_retries: u32,
    /// First backoff delay; doubles each retry, plus jitter.
    pub retry_base: Duration,
    /// The server answers 529 when overloaded (Anthropic): honour its
    /// `retry-after` and say so in the error.
    pub overloaded_529: bool,
}

/// The longest a server's `retry-after` is waited for, and the longest backoff.
const MAX_WAIT: Duration = Duration::from_secs(60);

impl Endpoint<'_> {
    /// The wait before retry `attempt` (from 0): exponential from
    /// `retry_base`, with jitter so that clients that failed together do not
    /// all come back at once.
    fn backoff(&self, attempt: u32) -> Duration {
        use backon::BackoffBuilder as _;
        backon::ExponentialBuilder::new()
            .with_min_delay(self.retry_base)
            .with_max_delay(MAX_WAIT)
            .with_factor(2.0)
            .with_jitter()
            .with_max_times(attempt as usize + 1)
            .build()
            .nth(attempt as usize)
            .unwrap_or(self.retry_base)
    }

    /// Wait before the next attempt (as the server asked, or the backoff) and count it.
    async fn pause(&self, attempt: &mut u32, asked: Option<Duration>) {
        let delay = asked.unwrap_or_else(|| self.backoff(*attempt));
        tracing::debug!(?delay, attempt = *attempt + 1, "retrying model call");
        tokio::time::sleep(delay).await;
        *attempt += 1;
    }
}

/// Whether a reply with `status` is worth sending again: 408, 409, 429 and
/// 5xx are, unless the server says otherwise in `x-should-retry`.
fn worth_retrying(status: u16, headers: &reqwest::header::HeaderMap) -> bool {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => status >= 400,
        Some("false") => false,
        _ => matches!(status, 408 | 409 | 429 | 500..=599),
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

/// Send `request()` until the answer is one retrying cannot change:
/// timeouts, broken connections, unreadable replies, 408, 409, 429 and 5xx
/// (or what `x-should-retry` says) are retried, waiting as `retry-after-ms` or
/// `retry-after` ask, else with jittered exponential backoff, and end as
/// errors once retries run out. Returns a 2xx or 4xx status with its body.
/// `attempt` counts across calls, so a provider that re-sends a changed
/// request keeps one retry budget. A refused connection is not retried: the
/// server is not there.
pub(crate) async fn send(
    ep: &Endpoint<'_>,
    attempt: &mut u32,
    request: impl Fn() -> reqwest::RequestBuilder,
) -> Result<(u16, String), LlmError> {
    let url = ep.url;
    loop {
        let retries_left = *attempt < ep.max_retries;
        let response = match request().send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => {
                return Err(LlmError::Connection(format!(
                    "cannot connect to {} (connection refused or unreachable); is the server running? Set --base-url or {}",
                    ep.base_url, ep.base_url_env
                )));
            }
            Err(_) if retries_left => {
                ep.pause(attempt, None).await;
                continue;
            }
            Err(e) if e.is_timeout() => {
                return Err(LlmError::Timeout(format!(
                    "{url} did not answer within {:?} ({} attempts); raise --timeout or check the server",
                    ep.timeout,
                    *attempt + 1
                )));
            }
            Err(e) => return Err(LlmError::Connection(format!("request to {url} failed: {e}"))),
        };
        let status = response.status().as_u16();
        let asked = retry_after(response.headers());
        let retry = worth_retrying(status, response.headers());
        let text = match response.text().await {
            Ok(t) => t,
            Err(_) if retries_left => {
                ep.pause(attempt, None).await;
                continue;
            }
            Err(e) => {
                return Err(LlmError::Connection(format!(
                    "reading the reply from {url} failed: {e}"
                )))
            }
        };
        if retry && retries_left {
            ep.pause(attempt, asked).await;
            continue;
        }
        return final_status(ep, status, text, *attempt + 1);
    }
}

/// The answer once retrying is over: 2xx and 4xx (but 408, 409 and 429) go
/// to the provider to read; the rest are errors that say how often it was tried.
fn final_status(ep: &Endpoint<'_>, status: u16, text: String, attempts: u32) -> Result<(u16, String), LlmError> {
    let base_url = ep.base_url;
    match status {
        429 => Err(LlmError::RateLimited(format!(
            "{base_url} is rate limiting requests (HTTP 429) after {attempts} attempts: {}",
            error_message(&text)
        ))),
        529 if ep.overloaded_529 => Err(LlmError::Server(format!(
            "{base_url} is overloaded (HTTP 529) after {attempts} attempts: {}; try again later",
            error_message(&text)
        ))),
        408 | 409 | 500..=599 => Err(LlmError::Server(format!(
            "{base_url} failed with HTTP {status} after {attempts} attempts: {}",
            error_message(&text)
        ))),
        _ => Ok((status, text)),
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

/// How long the server asks to wait: `retry-after-ms` (milliseconds), or
/// `retry-after` in seconds or as an HTTP date; at most a minute.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let wait = if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        (ms >= 0.0 && ms.is_finite()).then(|| Duration::from_secs_f64(ms / 1000.0))?
    } else {
        let value = header("retry-after")?;
        match value.parse::<f64>() {
            Ok(secs) => (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs.min(60.0)))?,
            Err(_) => {
                let at = httpdate::parse_http_date(value).ok()?;
                at.duration_since(std::time::SystemTime::now()).unwrap_or_default()
            }
        }
    };
    Some(wait.min(MAX_WAIT))
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

/// What came of reading a streamed reply with [`read_text_events`].
pub(crate) enum Streamed {
    /// An event stream, read to its end.
    Events,
    /// The server ignored `stream` and sent this whole body.
    Whole(String),
    /// The stream broke off before any text was handed on, so nothing acted
    /// on it yet: the call may be made again.
    CutEarly,
}

/// [`read_events`] for a provider whose `event` turns each event's data into
/// the text it adds (if any), which goes on to `on_text` at once.
pub(crate) async fn read_text_events(
    response: reqwest::Response,
    url: &str,
    event: &mut (dyn FnMut(&str) -> Result<Option<String>, LlmError> + Send),
    on_text: super::TextSink<'_>,
) -> Result<Streamed, LlmError> {
    let mut handed_on = false;
    let read = read_events(response, url, &mut |data| {
        if let Some(text) = event(data)? {
            handed_on = true;
            on_text(&text);
        }
        Ok(())
    })
    .await;
    match read {
        Ok(None) => Ok(Streamed::Events),
        Ok(Some(body)) => Ok(Streamed::Whole(body)),
        Err(LlmError::Connection(why)) if !handed_on => {
            tracing::debug!(%why, "the stream broke off before any text");
            Ok(Streamed::CutEarly)
        }
        Err(e) => Err(e),
    }
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

    fn headers(pairs: &[(&'static str, String)]) -> reqwest::header::HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (reqwest::header::HeaderName::from_static(k), v.parse().unwrap()))
            .collect()
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_http_dates() {
        let ms = headers(&[("retry-after-ms", "250".into()), ("retry-after", "9".into())]);
        assert_eq!(retry_after(&ms), Some(Duration::from_millis(250)), "ms wins");
        assert_eq!(
            retry_after(&headers(&[("retry-after", "1.5".into())])),
            Some(Duration::from_millis(1500))
        );
        let later = std::time::SystemTime::now() + Duration::from_secs(30);
        let date = retry_after(&headers(&[("retry-after", httpdate::fmt_http_date(later))])).unwrap();
        assert!(
            date > Duration::from_secs(27) && date <= Duration::from_secs(30),
            "{date:?}"
        );
        let past = httpdate::fmt_http_date(std::time::SystemTime::now() - Duration::from_secs(30));
        assert_eq!(retry_after(&headers(&[("retry-after", past)])), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "3600".into())])), Some(MAX_WAIT));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon".into())])), None);
        assert_eq!(retry_after(&headers(&[("retry-after-ms", "-1".into())])), None);
    }

    #[test]
    fn what_is_retried() {
        let none = headers(&[]);
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(worth_retrying(status, &none), "{status}");
        }
        for status in [200, 400, 401, 404, 422] {
            assert!(!worth_retrying(status, &none), "{status}");
        }
        assert!(!worth_retrying(503, &headers(&[("x-should-retry", "false".into())])));
        assert!(worth_retrying(400, &headers(&[("x-should-retry", "true".into())])));
    }

    #[test]
    fn backoff_doubles_with_jitter() {
        let ep = Endpoint {
            url: "u",
            base_url: "b",
            base_url_env: "E",
            timeout: Duration::from_secs(1),
            max_retries: 5,
            retry_base: Duration::from_millis(100),
            overloaded_529: false,
        };
        for attempt in 0..4u32 {
            let floor = Duration::from_millis(100 * (1 << attempt));
            let waits: Vec<Duration> = (0..20).map(|_| ep.backoff(attempt)).collect();
            assert!(
                waits.iter().all(|w| *w >= floor && *w < floor * 2),
                "{attempt}: {waits:?}"
            );
            assert!(
                waits.iter().any(|w| *w != waits[0]),
                "jitter varies the wait: {waits:?}"
            );
        }
    }
}
