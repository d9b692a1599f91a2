//! `http_get`: fetch a URL (with the `http` feature, which brings reqwest).

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::args::{str_arg, string_args, MAX_READ_BYTES};
use super::{Effect, Tool, ToolError};

pub(crate) struct HttpGet {
    client: reqwest::Client,
    /// Hosts the user trusts to receive requests: a call to one is read-only.
    allowed_hosts: Vec<String>,
}

impl HttpGet {
    pub(crate) fn new(allowed_hosts: Vec<String>) -> HttpGet {
        HttpGet {
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .user_agent(concat!("planexec/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default(),
            allowed_hosts: allowed_hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }

    /// Whether `url` goes to a host the user allowed (exactly, or a subdomain of one).
    fn allowed(&self, url: &str) -> bool {
        let Ok(parsed) = reqwest::Url::parse(url) else {
            return false;
        };
        let Some(host) = parsed.host_str().map(str::to_ascii_lowercase) else {
            return false;
        };
        self.allowed_hosts
            .iter()
            .any(|a| host == *a || host.strip_suffix(a.as_str()).is_some_and(|rest| rest.ends_with('.')))
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
    fn summary(&self) -> &str {
        "GET a URL; its body as text."
    }
    fn parameters(&self) -> Value {
        string_args(&[("url", "an http:// or https:// URL")])
    }
    fn effect(&self) -> Effect {
        Effect::Network
    }
    /// Read-only for the hosts in `[http] allow_hosts`; otherwise a request
    /// that could carry data out, confirmed in `ask` and refused in `plan`.
    fn effect_for(&self, args: &Value) -> Effect {
        match args.get("url").and_then(Value::as_str) {
            Some(url) if self.allowed(url) => Effect::ReadOnly,
            _ => Effect::Network,
        }
    }
    /// A GET twice is a GET once: a resume runs one in flight again.
    fn idempotent(&self) -> bool {
        true
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_hosts_and_their_subdomains_are_reads() {
        let tool = HttpGet::new(vec!["Example.com".into(), "127.0.0.1".into()]);
        let effect = |url: &str| tool.effect_for(&serde_json::json!({ "url": url }));
        for url in [
            "https://example.com/a",
            "https://docs.example.com/b?q=1",
            "http://127.0.0.1:8080/x",
        ] {
            assert_eq!(effect(url), Effect::ReadOnly, "{url}");
        }
        for url in [
            "https://notexample.com/",
            "https://example.com.evil.net/",
            "https://evil.net/?u=example.com",
            "not a url",
        ] {
            assert_eq!(effect(url), Effect::Network, "{url}");
        }
        assert_eq!(HttpGet::new(Vec::new()).effect(), Effect::Network);
    }
}
