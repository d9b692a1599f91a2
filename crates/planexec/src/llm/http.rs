//! What the HTTP providers share: reading error bodies and `retry-after`.

use std::time::Duration;

use serde_json::Value;

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
