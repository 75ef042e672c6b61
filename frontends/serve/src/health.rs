//! `GET /healthz` and `GET /readyz`, for load balancers and orchestrators: they answer without a
//! token, from any `Host`, and say no more than what is wrong (`store`, `broker`, `draining`),
//! never an address or an error's text.

use crate::live::Sessions;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How long the store and the broker may take to answer a readiness check.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz`: the process answers.
pub async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// `GET /readyz`: 200 when the store and the broker answer and the server takes chats, else
/// 503 naming what does not.
pub async fn readyz(State(sessions): State<Arc<Sessions>>) -> (StatusCode, Json<Value>) {
    let mut failing = Vec::new();
    if sessions.is_draining() {
        failing.push("draining");
    }
    if let Some(store) = sessions.agent().store().cloned() {
        let pinged = tokio::time::timeout(
            CHECK_TIMEOUT,
            tokio::task::spawn_blocking(move || store.ping()),
        )
        .await;
        if !matches!(pinged, Ok(Ok(Ok(())))) {
            sessions.metrics().store_errors.inc();
            failing.push("store");
        }
    }
    let broker = tokio::time::timeout(CHECK_TIMEOUT, sessions.fanout().ping()).await;
    if !matches!(broker, Ok(Ok(()))) {
        sessions.metrics().broker_errors.inc();
        failing.push("broker");
    }
    if failing.is_empty() {
        (StatusCode::OK, Json(json!({"status": "ready"})))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unavailable", "failing": failing})),
        )
    }
}
