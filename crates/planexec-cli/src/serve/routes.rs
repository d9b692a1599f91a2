//! Every route of the API with its handler and its documentation, in one
//! list: the router and the OpenAPI document (`GET /openapi.json`) are both
//! made from it, so they cannot differ.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::api;
use super::server::Server;

/// The API's description; its paths and schemas are added from the handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "planexec serve",
        description = "Start runs, follow their events and decide about them (approve, reject, edit, steer, cancel). Runs are recorded in the ledger. Off loopback every request needs `Authorization: Bearer <token>`."
    ),
    modifiers(&BearerToken),
    security(("bearer" = []))
)]
struct ApiDoc;

/// The bearer token `planexec serve --token` asks for.
struct BearerToken;

impl utoipa::Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let scheme = SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build());
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", scheme);
    }
}

/// Every route with its handler and documentation, in one list: the router
/// and the OpenAPI document are both made from it, so they cannot differ.
pub fn api_routes() -> OpenApiRouter<Arc<Server>> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(api::viewer))
        .routes(routes!(openapi))
        .routes(routes!(api::start_run, api::list_runs))
        .routes(routes!(api::show_run))
        .routes(routes!(api::events))
        .routes(routes!(api::approve))
        .routes(routes!(api::reject))
        .routes(routes!(api::edit))
        .routes(routes!(api::steer))
        .routes(routes!(api::cancel))
}

/// The OpenAPI document `GET /openapi.json` serves, made once.
pub fn openapi_document() -> &'static serde_json::Value {
    static DOCUMENT: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    DOCUMENT.get_or_init(|| serde_json::to_value(api_routes().into_openapi()).unwrap_or_default())
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "api",
    responses((status = 200, description = "This document: the API, generated from its handlers", content_type = "application/json")))]
pub async fn openapi() -> Response {
    Json(openapi_document()).into_response()
}
