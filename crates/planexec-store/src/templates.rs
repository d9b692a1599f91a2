//! Plan templates in the ledger: one row each, its JSON body, keyed by its
//! shape's id, newest first. A template is small and read whole, so it is
//! stored as it is, not spread over columns.

use planexec::store::{StoreError, StoreErrorKind};
use planexec::templates::PlanTemplate;
use sqlx::AnyPool;

use crate::error::classify;
use crate::rows::{get_string, to_i64};

/// Keep `template`, replacing the one with its id.
pub(crate) async fn save(pool: &AnyPool, location: &str, template: &PlanTemplate) -> Result<(), StoreError> {
    let doing = "save a plan template";
    let fail = |e| classify(e, location, doing);
    let body = serde_json::to_string(template).unwrap_or_default();
    let mut tx = pool.begin().await.map_err(fail)?;
    sqlx::query("DELETE FROM plan_templates WHERE id = $1")
        .bind(&template.id)
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
    sqlx::query("INSERT INTO plan_templates (id, body, saved_at) VALUES ($1, $2, $3)")
        .bind(&template.id)
        .bind(body)
        .bind(to_i64(planexec::result::now_ms()))
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
    tx.commit().await.map_err(fail)
}

/// Every template, the most recently saved first.
pub(crate) async fn list(pool: &AnyPool, location: &str) -> Result<Vec<PlanTemplate>, StoreError> {
    let rows = sqlx::query("SELECT id, body FROM plan_templates ORDER BY saved_at DESC, id")
        .fetch_all(pool)
        .await
        .map_err(|e| classify(e, location, "read the plan templates"))?;
    rows.iter()
        .map(|row| {
            serde_json::from_str(&get_string(row, "body")).map_err(|e| {
                let id = get_string(row, "id");
                StoreError::new(
                    StoreErrorKind::Corrupt,
                    format!(
                        "plan template {id} in {location} cannot be read: {e}; `planexec plans forget {id}` removes it"
                    ),
                )
            })
        })
        .collect()
}

/// Forget the template `id`; `false` if there was none.
pub(crate) async fn delete(pool: &AnyPool, location: &str, id: &str) -> Result<bool, StoreError> {
    let deleted = sqlx::query("DELETE FROM plan_templates WHERE id = $1")
        .bind(id)
        .execute(pool)
        .await
        .map_err(|e| classify(e, location, "forget a plan template"))?
        .rows_affected();
    Ok(deleted > 0)
}
