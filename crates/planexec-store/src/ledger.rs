//! [`SqlStore`]: the [`RunStore`] port on `sqlx`'s `Any` driver, the same SQL
//! for SQLite and PostgreSQL. Every write is one transaction; large values are
//! stored once by hash ([`crate::rows::Stored`]).

use async_trait::async_trait;
use planexec::report::{Clarification, PlanVersion, RunStatus};
use planexec::result::{now_ms, StepResult, StepStatus};
use planexec::store::{
    Decision, Lease, ModelExchange, RunEnd, RunFilter, RunHeader, RunStore, RunSummary, StepStart, StoreError,
    StoreErrorKind, StoredRun, StoredStep, Waiting,
};
use planexec::Role;
use serde_json::Value;
use sqlx::{AnyPool, Row};

use crate::error::classify;
use crate::rows::{
    get_opt_string, get_opt_u64, get_string, get_u64, opt_i64, parse_json, sha256, to_i64, AnyQuery, Stored, Tx,
};

/// A run ledger in a SQLite file or a PostgreSQL database.
pub struct SqlStore {
    pub(crate) pool: AnyPool,
    /// Where the ledger is, for messages (a PostgreSQL URL without its password).
    pub(crate) location: String,
}

impl SqlStore {
    fn fail(&self, e: sqlx::Error, doing: &str) -> StoreError {
        classify(e, &self.location, doing)
    }

    /// Close the pool (waits for connections to be returned).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl SqlStore {
    async fn begin(&self, doing: &str) -> Result<Tx<'_>, StoreError> {
        self.pool.begin().await.map_err(|e| self.fail(e, doing))
    }

    async fn commit(&self, tx: Tx<'_>, doing: &str) -> Result<(), StoreError> {
        tx.commit().await.map_err(|e| self.fail(e, doing))
    }

    /// Store `value` once under its hash, referenced by `run_id`; returns the hash.
    async fn put_blob(&self, tx: &mut Tx<'_>, run_id: &str, value: &Value) -> Result<String, StoreError> {
        let body = value.to_string();
        let hash = sha256(&body);
        self.put_blob_text(tx, run_id, &hash, &body).await?;
        Ok(hash)
    }

    async fn put_blob_text(&self, tx: &mut Tx<'_>, run_id: &str, hash: &str, body: &str) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO blobs (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING")
            .bind(hash.to_string())
            .bind(body.to_string())
            .execute(&mut **tx)
            .await
            .map_err(|e| self.fail(e, "store a value"))?;
        sqlx::query("INSERT INTO blob_refs (run_id, hash) VALUES ($1, $2) ON CONFLICT (run_id, hash) DO NOTHING")
            .bind(run_id.to_string())
            .bind(hash.to_string())
            .execute(&mut **tx)
            .await
            .map_err(|e| self.fail(e, "store a value"))?;
        Ok(())
    }

    async fn put_opt_blob(
        &self,
        tx: &mut Tx<'_>,
        run_id: &str,
        value: Option<&Value>,
    ) -> Result<Option<String>, StoreError> {
        match value {
            Some(v) => Ok(Some(self.put_blob(tx, run_id, v).await?)),
            None => Ok(None),
        }
    }

    /// Run `query`, storing the large values it refers to first. A write with
    /// only inline values is a single statement (one commit); with blobs it is
    /// one transaction.
    async fn write_with_blobs(
        &self,
        run_id: &str,
        values: &[&Stored],
        query: AnyQuery<'_>,
        doing: &str,
    ) -> Result<(), StoreError> {
        if values.iter().all(|v| v.body.is_none()) {
            query.execute(&self.pool).await.map_err(|e| self.fail(e, doing))?;
            return Ok(());
        }
        let mut tx = self.begin(doing).await?;
        for v in values {
            if let (Some(hash), Some(body)) = (&v.hash, &v.body) {
                self.put_blob_text(&mut tx, run_id, hash, body).await?;
            }
        }
        query.execute(&mut *tx).await.map_err(|e| self.fail(e, doing))?;
        self.commit(tx, doing).await
    }

    /// Set the run's `updated_at` (for writes that change other tables).
    async fn touch(&self, tx: &mut Tx<'_>, run_id: &str, doing: &str) -> Result<(), StoreError> {
        let updated = sqlx::query("UPDATE runs SET updated_at = $1 WHERE run_id = $2")
            .bind(to_i64(now_ms()))
            .bind(run_id)
            .execute(&mut **tx)
            .await
            .map_err(|e| self.fail(e, doing))?;
        self.found(updated, run_id)
    }

    /// An UPDATE of a run's row that matched nothing: the run does not exist.
    fn found(&self, updated: sqlx::any::AnyQueryResult, run_id: &str) -> Result<(), StoreError> {
        if updated.rows_affected() == 0 {
            return Err(StoreError::new(
                StoreErrorKind::Other,
                format!("there is no run {run_id} in the ledger {}", self.location),
            ));
        }
        Ok(())
    }

    /// One UPDATE of a run's row, which also sets its `updated_at` (the last
    /// parameter before the run id, as `update_run`'s callers write it).
    async fn update_run(&self, run_id: &str, query: AnyQuery<'_>, doing: &str) -> Result<(), StoreError> {
        let updated = query
            .bind(to_i64(now_ms()))
            .bind(run_id.to_string())
            .execute(&self.pool)
            .await
            .map_err(|e| self.fail(e, doing))?;
        self.found(updated, run_id)
    }

    async fn blob(&self, hash: Option<String>) -> Result<Option<Value>, StoreError> {
        let Some(hash) = hash else { return Ok(None) };
        let row = sqlx::query("SELECT body FROM blobs WHERE hash = $1")
            .bind(&hash)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.fail(e, "read a stored value"))?;
        Ok(row.and_then(|r| parse_json(get_opt_string(&r, "body"))))
    }

    /// A request with each message replaced by the hash of its stored copy.
    async fn put_request(&self, tx: &mut Tx<'_>, run_id: &str, request: &Value) -> Result<String, StoreError> {
        let mut skeleton = request.clone();
        if let Some(messages) = skeleton.get_mut("messages").and_then(Value::as_array_mut) {
            for m in messages.iter_mut() {
                let hash = self.put_blob(tx, run_id, m).await?;
                *m = serde_json::json!({ "$blob": hash });
            }
        }
        self.put_blob(tx, run_id, &skeleton).await
    }

    async fn get_request(&self, hash: String) -> Result<Value, StoreError> {
        let mut request = self.blob(Some(hash)).await?.unwrap_or(Value::Null);
        if let Some(messages) = request.get_mut("messages").and_then(Value::as_array_mut) {
            for m in messages.iter_mut() {
                if let Some(h) = m.get("$blob").and_then(Value::as_str) {
                    *m = self.blob(Some(h.to_string())).await?.unwrap_or(Value::Null);
                }
            }
        }
        Ok(request)
    }

    /// A run's step executions (and agent steps' inner calls), in the order they started.
    async fn load_steps(&self, run_id: &str) -> Result<Vec<StoredStep>, StoreError> {
        let doing = "read a run's steps";
        let mut out = Vec::new();
        let steps = sqlx::query(
            "SELECT seq, step_id, plan_version, tool, agent, status, attempts, COALESCE(s.args_json, a.body) AS args, \
                    COALESCE(s.output_json, o.body) AS output, error, \
                    started_at, finished_at, model_calls \
             FROM step_runs s LEFT JOIN blobs a ON a.hash = s.args_hash LEFT JOIN blobs o ON o.hash = s.output_hash \
             WHERE s.run_id = $1 ORDER BY seq",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.fail(e, doing))?;
        for s in steps {
            out.push(StoredStep {
                seq: get_u64(&s, "seq"),
                plan_version: get_u64(&s, "plan_version") as u32,
                result: StepResult {
                    id: get_string(&s, "step_id"),
                    tool: get_opt_string(&s, "tool"),
                    agent: get_opt_string(&s, "agent"),
                    status: StepStatus::parse(&get_string(&s, "status")).unwrap_or(StepStatus::Failed),
                    attempts: get_u64(&s, "attempts") as u32,
                    args: parse_json(get_opt_string(&s, "args")),
                    output: parse_json(get_opt_string(&s, "output")),
                    error: get_opt_string(&s, "error"),
                    started_at: get_opt_u64(&s, "started_at"),
                    finished_at: get_opt_u64(&s, "finished_at"),
                    model_calls: get_u64(&s, "model_calls") as u32,
                    calls: Vec::new(),
                    refused: false,
                    // Not kept in the SQL ledger: the Restate run's report has it.
                    worker: None,
                },
            });
        }

        Ok(out)
    }

    /// A run's model exchanges, in order.
    async fn load_exchanges(&self, run_id: &str) -> Result<Vec<ModelExchange>, StoreError> {
        let doing = "read a run's model exchanges";
        let mut out = Vec::new();
        let exchanges = sqlx::query(
            "SELECT seq, role, step_id, model, request_hash, response_hash, error, prompt_tokens, completion_tokens, cost, latency_ms, at \
             FROM model_exchanges WHERE run_id = $1 ORDER BY seq",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.fail(e, doing))?;
        for x in exchanges {
            let role_text = get_string(&x, "role");
            let role = Role::ALL
                .into_iter()
                .find(|r| r.as_str() == role_text)
                .unwrap_or(Role::Executor);
            out.push(ModelExchange {
                seq: get_u64(&x, "seq"),
                role,
                step_id: get_opt_string(&x, "step_id"),
                model: get_string(&x, "model"),
                request: self.get_request(get_string(&x, "request_hash")).await?,
                response: self.blob(get_opt_string(&x, "response_hash")).await?,
                error: get_opt_string(&x, "error"),
                prompt_tokens: get_u64(&x, "prompt_tokens"),
                completion_tokens: get_u64(&x, "completion_tokens"),
                cost: get_opt_string(&x, "cost").and_then(|c| c.parse().ok()),
                latency_ms: get_u64(&x, "latency_ms"),
                at: get_u64(&x, "at"),
            });
        }
        Ok(out)
    }
}

#[async_trait]
impl RunStore for SqlStore {
    fn describe(&self) -> String {
        self.location.clone()
    }

    async fn create_run(&self, run: &RunHeader) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO runs (run_id, task, options, status, started_at, updated_at, elapsed_ms, replans, resumes, clarifications) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, 0, 0, '[]')",
        )
        .bind(&run.run_id)
        .bind(&run.task)
        .bind(run.options.to_string())
        .bind(RunStatus::Running.as_str())
        .bind(to_i64(run.started_at))
        .bind(to_i64(run.started_at))
        .execute(&self.pool)
        .await
        .map_err(|e| self.fail(e, "record a new run"))?;
        Ok(())
    }

    async fn add_plan(&self, run_id: &str, version: &PlanVersion, replans: u32) -> Result<(), StoreError> {
        let doing = "record a plan";
        let mut tx = self.begin(doing).await?;
        let plan = serde_json::to_string(&version.plan).unwrap_or_default();
        let mends = (!version.mends.is_empty()).then(|| serde_json::to_string(&version.mends).unwrap_or_default());
        sqlx::query(
            "INSERT INTO plan_versions (run_id, version, reason, plan, created_at, mends) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (run_id, version) DO UPDATE SET reason = excluded.reason, plan = excluded.plan, mends = excluded.mends",
        )
        .bind(run_id)
        .bind(version.version as i64)
        .bind(&version.reason)
        .bind(plan)
        .bind(to_i64(now_ms()))
        .bind(mends)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.fail(e, doing))?;
        let updated = sqlx::query("UPDATE runs SET replans = $1, updated_at = $2 WHERE run_id = $3")
            .bind(replans as i64)
            .bind(to_i64(now_ms()))
            .bind(run_id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e, doing))?;
        self.found(updated, run_id)?;
        self.commit(tx, doing).await
    }

    async fn approve_plan(&self, run_id: &str, version: u32) -> Result<(), StoreError> {
        let query = sqlx::query("UPDATE runs SET approved_version = $1, updated_at = $2 WHERE run_id = $3");
        self.update_run(run_id, query.bind(version as i64), "record a plan approval")
            .await
    }

    async fn set_clarifications(&self, run_id: &str, clarifications: &[Clarification]) -> Result<(), StoreError> {
        let query = sqlx::query("UPDATE runs SET clarifications = $1, updated_at = $2 WHERE run_id = $3")
            .bind(serde_json::to_string(clarifications).unwrap_or_else(|_| "[]".into()));
        self.update_run(run_id, query, "record clarifications").await
    }

    async fn step_started(&self, run_id: &str, start: &StepStart) -> Result<(), StoreError> {
        let doing = "record a step's start";
        let args = Stored::of(start.args.as_ref());
        let sql = "INSERT INTO step_runs (run_id, seq, step_id, plan_version, tool, status, attempts, args_json, args_hash, started_at, model_calls, agent) \
                   VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9, 0, $10)";
        let query = sqlx::query(sql)
            .bind(run_id.to_string())
            .bind(to_i64(start.seq))
            .bind(start.step_id.clone())
            .bind(start.plan_version as i64)
            .bind(start.tool.clone())
            .bind(StepStatus::Running.as_str())
            .bind(args.inline.clone())
            .bind(args.hash.clone())
            .bind(to_i64(start.started_at))
            .bind(start.agent.clone());
        self.write_with_blobs(run_id, &[&args], query, doing).await
    }

    async fn step_finished(
        &self,
        run_id: &str,
        seq: u64,
        plan_version: u32,
        result: &StepResult,
    ) -> Result<(), StoreError> {
        let doing = "record a step's result";
        let args = Stored::of(result.args.as_ref());
        let output = Stored::of(result.output.as_ref());
        let sql = "INSERT INTO step_runs (run_id, seq, step_id, plan_version, tool, status, attempts, args_json, args_hash, output_json, output_hash, error, started_at, finished_at, model_calls, agent) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) \
             ON CONFLICT (run_id, seq) DO UPDATE SET status = excluded.status, attempts = excluded.attempts, \
               args_json = COALESCE(excluded.args_json, step_runs.args_json), args_hash = COALESCE(excluded.args_hash, step_runs.args_hash), \
               output_json = excluded.output_json, output_hash = excluded.output_hash, \
               error = excluded.error, started_at = COALESCE(excluded.started_at, step_runs.started_at), \
               finished_at = excluded.finished_at, model_calls = excluded.model_calls";
        let query = sqlx::query(sql)
            .bind(run_id.to_string())
            .bind(to_i64(seq))
            .bind(result.id.clone())
            .bind(plan_version as i64)
            .bind(result.tool.clone())
            .bind(result.status.as_str())
            .bind(result.attempts as i64)
            .bind(args.inline.clone())
            .bind(args.hash.clone())
            .bind(output.inline.clone())
            .bind(output.hash.clone())
            .bind(result.error.clone())
            .bind(opt_i64(result.started_at))
            .bind(opt_i64(result.finished_at))
            .bind(result.model_calls as i64)
            .bind(result.agent.clone());
        self.write_with_blobs(run_id, &[&args, &output], query, doing).await
    }

    async fn record_exchange(&self, run_id: &str, x: &ModelExchange) -> Result<(), StoreError> {
        let doing = "record a model exchange";
        let mut tx = self.begin(doing).await?;
        let request = self.put_request(&mut tx, run_id, &x.request).await?;
        let response = self.put_opt_blob(&mut tx, run_id, x.response.as_ref()).await?;
        sqlx::query(
            "INSERT INTO model_exchanges (run_id, seq, role, step_id, model, request_hash, response_hash, error, prompt_tokens, completion_tokens, cost, latency_ms, at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(run_id)
        .bind(to_i64(x.seq))
        .bind(x.role.as_str())
        .bind(x.step_id.clone())
        .bind(&x.model)
        .bind(request)
        .bind(response)
        .bind(x.error.clone())
        .bind(to_i64(x.prompt_tokens))
        .bind(to_i64(x.completion_tokens))
        // Costs are stored as text: the `Any` driver cannot read Postgres' floats back portably.
        .bind(x.cost.map(|c| c.to_string()))
        .bind(to_i64(x.latency_ms))
        .bind(to_i64(x.at))
        .execute(&mut *tx)
        .await
        .map_err(|e| self.fail(e, doing))?;
        self.touch(&mut tx, run_id, doing).await?;
        self.commit(tx, doing).await
    }

    async fn finish_run(&self, run_id: &str, end: &RunEnd) -> Result<(), StoreError> {
        let query = sqlx::query(
            "UPDATE runs SET status = $1, answer = $2, error = $3, finished_at = $4, elapsed_ms = $5, updated_at = $6 \
             WHERE run_id = $7",
        )
        .bind(end.status.as_str())
        .bind(end.answer.clone())
        .bind(end.error.clone())
        .bind(to_i64(end.finished_at))
        .bind(to_i64(end.elapsed_ms));
        self.update_run(run_id, query, "record the end of a run").await
    }

    async fn reopen_run(&self, run_id: &str) -> Result<(), StoreError> {
        let query = sqlx::query(
            "UPDATE runs SET status = $1, resumes = resumes + 1, finished_at = NULL, updated_at = $2 WHERE run_id = $3",
        )
        .bind(RunStatus::Running.as_str());
        self.update_run(run_id, query, "reopen a run").await
    }

    async fn load_run(&self, run_id: &str) -> Result<Option<StoredRun>, StoreError> {
        let doing = "read a run";
        let Some(row) = sqlx::query(
            "SELECT run_id, task, options, status, started_at, updated_at, finished_at, elapsed_ms, answer, error, \
                    replans, resumes, approved_version, clarifications, waiting, lease_owner, lease_expires \
             FROM runs WHERE run_id = $1",
        )
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| self.fail(e, doing))?
        else {
            return Ok(None);
        };
        let status_text = get_string(&row, "status");
        let status = RunStatus::parse(&status_text).ok_or_else(|| {
            StoreError::new(
                StoreErrorKind::Corrupt,
                format!(
                    "run {run_id} in {} has an unknown status {status_text:?}",
                    self.location
                ),
            )
        })?;
        let mut run = StoredRun {
            run_id: get_string(&row, "run_id"),
            task: get_string(&row, "task"),
            options: parse_json(get_opt_string(&row, "options")).unwrap_or(Value::Null),
            status,
            started_at: get_u64(&row, "started_at"),
            updated_at: get_u64(&row, "updated_at"),
            finished_at: get_opt_u64(&row, "finished_at"),
            elapsed_ms: get_u64(&row, "elapsed_ms"),
            answer: get_opt_string(&row, "answer"),
            error: get_opt_string(&row, "error"),
            replans: get_u64(&row, "replans") as u32,
            resumes: get_u64(&row, "resumes") as u32,
            approved_version: get_opt_u64(&row, "approved_version").map(|v| v as u32),
            clarifications: serde_json::from_str(&get_string(&row, "clarifications")).unwrap_or_default(),
            plans: Vec::new(),
            steps: Vec::new(),
            calls: Vec::new(),
            exchanges: Vec::new(),
            waiting: get_opt_string(&row, "waiting").and_then(|w| serde_json::from_str(&w).ok()),
            decisions: Vec::new(),
            lease: get_opt_string(&row, "lease_owner").map(|owner| Lease {
                owner,
                expires_at: get_opt_u64(&row, "lease_expires").unwrap_or(0),
            }),
        };

        let plans =
            sqlx::query("SELECT version, reason, plan, mends FROM plan_versions WHERE run_id = $1 ORDER BY version")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.fail(e, doing))?;
        for p in plans {
            let plan = serde_json::from_str(&get_string(&p, "plan")).map_err(|e| {
                StoreError::new(
                    StoreErrorKind::Corrupt,
                    format!("a plan of run {run_id} in {} cannot be read: {e}", self.location),
                )
            })?;
            let mends = match p.try_get::<Option<String>, _>("mends").ok().flatten() {
                Some(text) => serde_json::from_str(&text).map_err(|e| {
                    StoreError::new(
                        StoreErrorKind::Corrupt,
                        format!(
                            "the mends of a plan of run {run_id} in {} cannot be read: {e}",
                            self.location
                        ),
                    )
                })?,
                None => Vec::new(),
            };
            run.plans.push(PlanVersion {
                version: get_u64(&p, "version") as u32,
                reason: get_string(&p, "reason"),
                plan,
                mends,
            });
        }

        run.steps = self.load_steps(run_id).await?;
        run.separate_calls();
        run.exchanges = self.load_exchanges(run_id).await?;
        run.decisions = self.load_decisions(run_id).await?;
        Ok(Some(run))
    }

    async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let rows = sqlx::query(
            "SELECT r.run_id, r.task, r.status, r.started_at, r.updated_at, r.replans, \
               (SELECT COUNT(*) FROM step_runs s WHERE s.run_id = r.run_id AND s.status IN ('succeeded', 'skipped')) AS steps_done, \
               (SELECT CAST(COALESCE(SUM(x.prompt_tokens), 0) AS BIGINT) FROM model_exchanges x WHERE x.run_id = r.run_id) AS prompt_tokens, \
               (SELECT CAST(COALESCE(SUM(x.completion_tokens), 0) AS BIGINT) FROM model_exchanges x WHERE x.run_id = r.run_id) AS completion_tokens \
             FROM runs r WHERE ($1 = '' OR r.status = $1) ORDER BY r.started_at DESC, r.run_id DESC LIMIT $2",
        )
        .bind(filter.status.map(|s| s.as_str()).unwrap_or(""))
        .bind(filter.limit.map(i64::from).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.fail(e, "list runs"))?;
        Ok(rows
            .iter()
            .map(|r| RunSummary {
                run_id: get_string(r, "run_id"),
                task: get_string(r, "task"),
                status: RunStatus::parse(&get_string(r, "status")).unwrap_or(RunStatus::Failed),
                started_at: get_u64(r, "started_at"),
                updated_at: get_u64(r, "updated_at"),
                replans: get_u64(r, "replans") as u32,
                steps_done: get_u64(r, "steps_done") as u32,
                prompt_tokens: get_u64(r, "prompt_tokens"),
                completion_tokens: get_u64(r, "completion_tokens"),
            })
            .collect())
    }

    async fn delete_run(&self, run_id: &str) -> Result<bool, StoreError> {
        let doing = "delete a run";
        let mut tx = self.begin(doing).await?;
        for sql in [
            "DELETE FROM step_runs WHERE run_id = $1",
            "DELETE FROM model_exchanges WHERE run_id = $1",
            "DELETE FROM plan_versions WHERE run_id = $1",
            "DELETE FROM blob_refs WHERE run_id = $1",
            "DELETE FROM decisions WHERE run_id = $1",
        ] {
            sqlx::query(sql)
                .bind(run_id)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.fail(e, doing))?;
        }
        let deleted = sqlx::query("DELETE FROM runs WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e, doing))?
            .rows_affected();
        // Values no other run refers to go with it.
        sqlx::query("DELETE FROM blobs WHERE NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.hash = blobs.hash)")
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e, doing))?;
        self.commit(tx, doing).await?;
        Ok(deleted > 0)
    }

    async fn set_waiting(&self, run_id: &str, waiting: Option<&Waiting>) -> Result<(), StoreError> {
        let body = waiting.map(|w| serde_json::to_string(w).unwrap_or_default());
        let query = sqlx::query("UPDATE runs SET waiting = $1, updated_at = $2 WHERE run_id = $3").bind(body);
        self.update_run(run_id, query, "record what a run waits for").await
    }

    async fn add_decision(&self, run_id: &str, decision: &Decision) -> Result<u64, StoreError> {
        let doing = "record a decision";
        let mut tx = self.begin(doing).await?;
        // The next number within the run, taken in the same transaction as the insert.
        let row = sqlx::query("SELECT CAST(COALESCE(MAX(seq), 0) AS BIGINT) AS last FROM decisions WHERE run_id = $1")
            .bind(run_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.fail(e, doing))?;
        let seq = get_u64(&row, "last") + 1;
        let body = serde_json::to_string(&Decision {
            seq,
            ..decision.clone()
        })
        .unwrap_or_default();
        sqlx::query("INSERT INTO decisions (run_id, seq, body, at) VALUES ($1, $2, $3, $4)")
            .bind(run_id)
            .bind(to_i64(seq))
            .bind(body)
            .bind(to_i64(decision.at))
            .execute(&mut *tx)
            .await
            .map_err(|e| self.fail(e, doing))?;
        self.touch(&mut tx, run_id, doing).await?;
        self.commit(tx, doing).await?;
        Ok(seq)
    }

    async fn load_decisions(&self, run_id: &str) -> Result<Vec<Decision>, StoreError> {
        let rows = sqlx::query("SELECT seq, body FROM decisions WHERE run_id = $1 ORDER BY seq")
            .bind(run_id)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.fail(e, "read a run's decisions"))?;
        rows.iter()
            .map(|r| {
                serde_json::from_str::<Decision>(&get_string(r, "body")).map_err(|e| {
                    StoreError::new(
                        StoreErrorKind::Corrupt,
                        format!("a decision of run {run_id} in {} cannot be read: {e}", self.location),
                    )
                })
            })
            .collect()
    }

    async fn save_template(&self, template: &planexec::templates::PlanTemplate) -> Result<(), StoreError> {
        crate::templates::save(&self.pool, &self.location, template).await
    }

    async fn list_templates(&self) -> Result<Vec<planexec::templates::PlanTemplate>, StoreError> {
        crate::templates::list(&self.pool, &self.location).await
    }

    async fn delete_template(&self, id: &str) -> Result<bool, StoreError> {
        crate::templates::delete(&self.pool, &self.location, id).await
    }

    async fn take_lease(&self, run_id: &str, lease: &Lease, now: u64) -> Result<Option<Lease>, StoreError> {
        let doing = "take a run's lease";
        // One conditional UPDATE: of two processes racing, exactly one matches.
        let updated = sqlx::query(
            "UPDATE runs SET lease_owner = $1, lease_expires = $2 WHERE run_id = $3 \
             AND (lease_owner IS NULL OR lease_owner = $1 OR lease_expires < $4)",
        )
        .bind(&lease.owner)
        .bind(to_i64(lease.expires_at))
        .bind(run_id)
        .bind(to_i64(now))
        .execute(&self.pool)
        .await
        .map_err(|e| self.fail(e, doing))?;
        if updated.rows_affected() > 0 {
            return Ok(None);
        }
        let row = sqlx::query("SELECT lease_owner, lease_expires FROM runs WHERE run_id = $1")
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.fail(e, doing))?;
        let Some(row) = row else {
            return Err(StoreError::new(
                StoreErrorKind::Other,
                format!("there is no run {run_id} in the ledger {}", self.location),
            ));
        };
        Ok(Some(Lease {
            owner: get_opt_string(&row, "lease_owner").unwrap_or_default(),
            expires_at: get_opt_u64(&row, "lease_expires").unwrap_or(0),
        }))
    }

    async fn release_lease(&self, run_id: &str, owner: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE runs SET lease_owner = NULL, lease_expires = NULL WHERE run_id = $1 AND lease_owner = $2")
            .bind(run_id)
            .bind(owner)
            .execute(&self.pool)
            .await
            .map_err(|e| self.fail(e, "release a run's lease"))?;
        Ok(())
    }
}
