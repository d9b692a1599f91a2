//! A client of Restate's ingress for runs on Restate: submit one, wait for
//! its report, see what it waits for, decide on its plan. Any process that
//! reaches the ingress can do each of these (the CLI, `serve`).

use std::time::Duration;

use planexec::RunReport;
use serde_json::Value;

use crate::decision::{PlanDecision, StepDecision};
use crate::workflow::RunRequest;

/// The ingress at a URL (e.g. `http://127.0.0.1:8080`).
#[derive(Clone)]
pub struct Ingress {
    url: String,
    http: reqwest::Client,
}

impl Ingress {
    pub fn new(url: &str) -> Ingress {
        Ingress {
            url: url.trim_end_matches('/').to_string(),
            http: reqwest::Client::new(),
        }
    }

    /// Start a new run and return its id at once (the workflow runs on the workers).
    pub async fn start(&self, request: &RunRequest) -> Result<String, String> {
        let run_id = planexec::new_run_id();
        self.submit(&run_id, request).await?;
        Ok(run_id)
    }

    /// Start run `run_id` and return at once (the workflow runs on the workers).
    pub async fn submit(&self, run_id: &str, request: &RunRequest) -> Result<(), String> {
        let url = format!("{}/PlanexecRun/{run_id}/run/send", self.url);
        let body = serde_json::to_value(request).map_err(|e| e.to_string())?;
        self.post(&url, &body).await.map(drop)
    }

    /// Wait for run `run_id` to finish, and its report.
    pub async fn wait(&self, run_id: &str) -> Result<RunReport, String> {
        let url = format!("{}/restate/workflow/PlanexecRun/{run_id}/attach", self.url);
        let response = self.http.get(&url).send().await.map_err(|e| self.unreachable(e))?;
        let answer = read(response).await?;
        serde_json::from_value(answer).map_err(|e| format!("run {run_id}'s report cannot be read: {e}"))
    }

    /// The report of run `run_id` if it has finished; `None` while it runs.
    pub async fn report(&self, run_id: &str) -> Result<Option<RunReport>, String> {
        let url = format!("{}/restate/workflow/PlanexecRun/{run_id}/output", self.url);
        let response = self.http.get(&url).send().await.map_err(|e| self.unreachable(e))?;
        // Restate answers 470 for a workflow that has not finished.
        if response.status().as_u16() == 470 {
            return Ok(None);
        }
        let answer = read(response).await?;
        serde_json::from_value(answer)
            .map(Some)
            .map_err(|e| format!("run {run_id}'s report cannot be read: {e}"))
    }

    /// What run `run_id` waits for: `{"waiting": null}` while it runs.
    pub async fn status(&self, run_id: &str) -> Result<Value, String> {
        let url = format!("{}/PlanexecRun/{run_id}/status", self.url);
        self.post(&url, &Value::Null).await
    }

    /// Decide on the plan run `run_id` waits for.
    pub async fn decide(&self, run_id: &str, decision: &PlanDecision) -> Result<Value, String> {
        let url = format!("{}/PlanexecRun/{run_id}/decide", self.url);
        let body = serde_json::to_value(decision).map_err(|e| e.to_string())?;
        self.post(&url, &body).await
    }

    /// Decide on one call run `run_id` waits to make.
    pub async fn decide_step(&self, run_id: &str, decision: &StepDecision) -> Result<Value, String> {
        let url = format!("{}/PlanexecRun/{run_id}/decide_step", self.url);
        let body = serde_json::to_value(decision).map_err(|e| e.to_string())?;
        self.post(&url, &body).await
    }

    /// Send run `run_id` a steering message.
    pub async fn steer(&self, run_id: &str, message: &str) -> Result<Value, String> {
        let url = format!("{}/PlanexecRun/{run_id}/steer", self.url);
        self.post(&url, &Value::String(message.to_string())).await
    }

    /// POST `body`; a service Restate does not know yet (a worker registered
    /// a moment ago) is asked again for a few seconds.
    async fn post(&self, url: &str, body: &Value) -> Result<Value, String> {
        let mut tries = 0;
        loop {
            // A handler that takes no input refuses a body and its content type.
            let request = match body {
                Value::Null => self.http.post(url),
                body => self
                    .http
                    .post(url)
                    .header("content-type", "application/json")
                    .body(body.to_string()),
            };
            let response = request.send().await.map_err(|e| self.unreachable(e))?;
            if response.status().as_u16() == 404 && tries < 25 {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            return read(response).await;
        }
    }

    fn unreachable(&self, e: reqwest::Error) -> String {
        format!(
            "cannot reach Restate's ingress at {}: {e}; start the server (scripts/restate.sh) or pass --ingress",
            self.url
        )
    }
}

/// The JSON answer of a response, or what Restate said was wrong.
async fn read(response: reqwest::Response) -> Result<Value, String> {
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or(text);
        return Err(format!("Restate answered HTTP {status}: {message}"));
    }
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| format!("Restate's answer is not JSON ({e}): {text}"))
}
