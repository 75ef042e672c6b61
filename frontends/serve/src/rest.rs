//! The REST API under `/api`: sessions (create, list, delete), their turns, a headless chat,
//! cancellation. Errors are JSON `{message, session_id, code, detail}` with a 4xx / 5xx status.

use crate::chat::{self, ChatRequest};
use crate::error::ServeError;
use crate::live::Sessions;
use crate::protocol::TurnProjection;
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::sync::lock;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(self.to_json(None))).into_response()
    }
}

/// The body of `POST /api/sessions`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// The session's working directory (absolute, existing); the server's by default.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The permission mode: `default`, `accept_edits`, `plan` or `bypass`.
    #[serde(default)]
    pub mode: Option<String>,
}

/// `POST /api/sessions`.
pub async fn create(
    State(sessions): State<Arc<Sessions>>,
    body: Option<Json<CreateSession>>,
) -> Result<(StatusCode, Json<Value>), ServeError> {
    let Json(body) = body.unwrap_or_default();
    let policy = match body.mode.as_deref() {
        None => None,
        Some(mode) => {
            let mode: PermissionMode = mode.parse().map_err(|e| ServeError::Invalid {
                message: format!("{e}"),
                detail: Some("mode".to_owned()),
            })?;
            Some(PermissionPolicy {
                mode,
                ..sessions.defaults().policy.clone()
            })
        }
    };
    let live = sessions.create(body.cwd, policy)?;
    let session = live.session.lock().await;
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "session_id": live.id,
            "cwd": session.options().cwd,
            "model": session.model().name(),
            "mode": session.options().policy.mode,
        })),
    ))
}

/// `GET /api/sessions`: every stored session, most recently updated first.
pub async fn list(State(sessions): State<Arc<Sessions>>) -> Result<Json<Value>, ServeError> {
    let Some(store) = sessions.agent().store() else {
        return Ok(Json(json!({"sessions": []})));
    };
    let metas = store
        .list()
        .map_err(|e| ServeError::Internal(e.to_string()))?;
    let listed: Vec<Value> = metas
        .into_iter()
        .map(|meta| {
            json!({
                "session_id": meta.id,
                "cwd": meta.cwd,
                "title": meta.title,
                "created_at": meta.created_at,
                "updated_at": meta.updated_at,
            })
        })
        .collect();
    Ok(Json(json!({"sessions": listed})))
}

/// `GET /api/sessions/{session_id}/messages`: every turn, in order.
pub async fn messages(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
) -> Result<Json<Value>, ServeError> {
    let live = sessions.get(&session_id)?;
    let projector = lock(&live.projector);
    let turns: &[TurnProjection] = projector.turns();
    Ok(Json(json!({
        "session_id": session_id,
        "sequence": projector.last_sequence(),
        "turns": turns,
    })))
}

/// `POST /api/sessions/{session_id}/chat`: runs a chat to its end and returns `chat:end`'s data.
pub async fn chat(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
    Json(request): Json<ChatRequest>,
) -> Result<Json<Value>, ServeError> {
    let outcome = chat::start(&sessions, &session_id, request)?;
    let end = outcome
        .await
        .map_err(|_| ServeError::Internal("the chat was dropped".to_owned()))??;
    Ok(Json(end))
}

/// `POST /api/sessions/{session_id}/cancel`: cancels the running chat, if any.
pub async fn cancel(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
) -> Result<Json<Value>, ServeError> {
    let cancelled = sessions.get(&session_id)?.cancel();
    Ok(Json(
        json!({"session_id": session_id, "cancelled": cancelled}),
    ))
}

/// `DELETE /api/sessions/{session_id}`.
pub async fn delete(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
) -> Result<StatusCode, ServeError> {
    sessions.delete(&session_id)?;
    Ok(StatusCode::NO_CONTENT)
}
