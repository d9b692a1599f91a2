//! Plan templates in the ledger: one row each, its JSON body, keyed by its
//! shape's id, newest first. A template is small and read whole, so it is
//! stored as it is, not spread over columns.

use planexec::store::StoreError;
use planexec::templates::PlanTemplate;
use sqlx::AnyPool;

use crate::error::classify;
use crate::rows::{get_string, to_i64};

/// Keep `template`, replacing the one with its id, in one statement (two
/// runs saving the same template at once cannot collide).
pub(crate) async fn save(pool: &AnyPool, location: &str, template: &PlanTemplate) -> Result<(), StoreError> {
    let body = serde_json::to_string(template).unwrap_or_default();
    sqlx::query(
        "INSERT INTO plan_templates (id, body, saved_at) VALUES ($1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET body = excluded.body, saved_at = excluded.saved_at",
    )
    .bind(&template.id)
    .bind(body)
    .bind(to_i64(planexec::result::now_ms()))
    .execute(pool)
    .await
    .map_err(|e| classify(e, location, "save a plan template"))?;
    Ok(())
}

/// Every template, the most recently saved first.
pub(crate) async fn list(pool: &AnyPool, location: &str) -> Result<Vec<PlanTemplate>, StoreError> {
    let rows = sqlx::query("SELECT id, body FROM plan_templates ORDER BY saved_at DESC, id")
        .fetch_all(pool)
        .await
        .map_err(|e| classify(e, location, "read the plan templates"))?;
    // A row that cannot be read (written by another version, damaged) is
    // passed over, not allowed to stop reuse of every other template.
    Ok(rows
        .iter()
        .filter_map(|row| match serde_json::from_str(&get_string(row, "body")) {
            Ok(template) => Some(template),
            Err(e) => {
                let id = get_string(row, "id");
                tracing::warn!(
                    "plan template {id} in {location} cannot be read ({e}); `planexec plans forget {id}` removes it"
                );
                None
            }
        })
        .collect())
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
