//! The REST API under `/api`: sessions (create, list, delete), their turns, a headless chat,
//! cancellation, and Markdown rendered as the page shows it. Errors are JSON `{message, session_id, code, detail}` with a 4xx / 5xx status.

use crate::chat::{self, ChatRequest};
use crate::error::ServeError;
use crate::live::Sessions;
use crate::protocol::TurnProjection;
use agentry::cost::Spending;
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::sync::lock;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// A JSON body whose problems are answered as [`ServeError`]s (JSON, like every other error).
pub struct Body<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for Body<T>
where
    Json<T>: axum::extract::FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ServeError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ServeError> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(Body(value)),
            Err(JsonRejection::JsonDataError(error)) => Err(ServeError::Invalid {
                message: error.body_text(),
                detail: None,
            }),
            Err(other) if other.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ServeError::TooLarge(other.body_text()))
            }
            Err(other) => Err(ServeError::BadRequest(other.body_text())),
        }
    }
}

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

/// A session, as `POST /api/sessions` created it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionCreated {
    /// Its id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its model.
    pub model: String,
    /// Its permission mode.
    pub mode: String,
}

/// A stored session, as `GET /api/sessions` lists it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionInfo {
    /// Its id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its title (the start of its first message).
    pub title: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// `GET /api/sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionList {
    /// Every stored session, most recently updated first.
    pub sessions: Vec<SessionInfo>,
}

/// `GET /api/sessions/{session_id}/messages`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Messages {
    /// The session.
    pub session_id: String,
    /// Its model (`null` while a chat runs).
    pub model: Option<String>,
    /// Its permission mode (`null` while a chat runs).
    pub mode: Option<String>,
    /// The session's last sequence number: live events after it are new.
    pub sequence: u64,
    /// What the session has cost so far, in US dollars (its sub-agents' requests included);
    /// `null` while none of its requests was priced.
    pub cost_usd: Option<f64>,
    /// Its model requests' tokens and cost by model: `{MODEL: {input_tokens, output_tokens,
    /// cache_read_tokens, cache_write_tokens, requests, cost_usd}}`, `cost_usd` `null` for a
    /// model without a price.
    #[schemars(with = "serde_json::Value")]
    pub spending: Spending,
    /// Every turn, in order.
    pub turns: Vec<TurnProjection>,
}

/// `GET /api/options`: what the server offers sessions.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionChoices {
    /// The models a chat may switch its session to (`model` in `chat:send`), the server's own
    /// first.
    pub models: Vec<String>,
    /// The permission modes a session may be given.
    pub modes: Vec<String>,
    /// The mode new sessions get.
    pub mode: String,
}

/// The body of `PATCH /api/sessions/{session_id}`: what to change.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSession {
    /// A title the user chose.
    #[serde(default)]
    pub title: Option<String>,
    /// The permission mode from the next tool call on: `default`, `accept_edits`, `plan` or
    /// `bypass`.
    #[serde(default)]
    pub mode: Option<String>,
}

/// The body of `POST /api/render`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderRequest {
    /// Markdown (an answer, as far as it has streamed).
    pub markdown: String,
}

/// `POST /api/render`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Rendered {
    /// The Markdown as sanitised HTML, its code highlighted with `hl-` classes
    /// (`/highlight.css` colours them).
    pub html: String,
}

/// `POST /api/sessions/{session_id}/cancel`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Cancelled {
    /// The session.
    pub session_id: String,
    /// Whether a chat was running (and is now cancelled).
    pub cancelled: bool,
}

/// `POST /api/sessions`.
pub async fn create(
    State(sessions): State<Arc<Sessions>>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<SessionCreated>), ServeError> {
    // The body is optional: an empty one creates a session with the defaults.
    let body: CreateSession = if body.iter().all(u8::is_ascii_whitespace) {
        CreateSession::default()
    } else {
        serde_json::from_slice(&body).map_err(|error| match error.classify() {
            serde_json::error::Category::Data => ServeError::Invalid {
                message: error.to_string(),
                detail: None,
            },
            _ => ServeError::BadRequest(format!("the body is not JSON: {error}")),
        })?
    };
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
        Json(SessionCreated {
            session_id: live.id.to_string(),
            cwd: session.options().cwd.clone(),
            model: session.model().name().to_owned(),
            mode: session.options().policy.mode.to_string(),
        }),
    ))
}

/// `GET /api/sessions`: every stored session, most recently updated first.
pub async fn list(State(sessions): State<Arc<Sessions>>) -> Result<Json<SessionList>, ServeError> {
    let metas = match sessions.agent().store() {
        Some(store) => store
            .list()
            .map_err(|e| ServeError::Internal(e.to_string()))?,
        None => Vec::new(),
    };
    let sessions = metas
        .into_iter()
        .map(|meta| SessionInfo {
            session_id: meta.id.to_string(),
            cwd: meta.cwd,
            title: meta.title,
            created_at: meta.created_at,
            updated_at: meta.updated_at,
        })
        .collect();
    Ok(Json(SessionList { sessions }))
}

/// `GET /api/sessions/{session_id}/messages`: every turn, in order.
pub async fn messages(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
) -> Result<Json<Messages>, ServeError> {
    let live = sessions.get(&session_id)?;
    let (model, mode) = match live.session.try_lock() {
        Ok(session) => (
            Some(session.model().name().to_owned()),
            Some(session.options().policy.mode.to_string()),
        ),
        Err(_) => (None, None),
    };
    let projector = lock(&live.projector);
    Ok(Json(Messages {
        session_id,
        model,
        mode,
        sequence: projector.last_sequence(),
        cost_usd: projector.spending().cost_usd(),
        spending: projector.spending().clone(),
        turns: projector.turns().to_vec(),
    }))
}

/// `POST /api/sessions/{session_id}/chat`: runs a chat to its end and returns `chat:end`'s data.
pub async fn chat(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
    Body(request): Body<ChatRequest>,
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
) -> Result<Json<Cancelled>, ServeError> {
    let cancelled = crate::control::stop(&sessions, &session_id).await?;
    Ok(Json(Cancelled {
        session_id,
        cancelled,
    }))
}

/// `GET /api/options`.
pub async fn options(State(sessions): State<Arc<Sessions>>) -> Json<SessionChoices> {
    let mut models = vec![sessions.agent().model().name().to_owned()];
    if let Some(offered) = sessions.models() {
        for model in offered.offered() {
            if !models.contains(&model) {
                models.push(model);
            }
        }
    }
    Json(SessionChoices {
        models,
        modes: PermissionMode::ALL
            .iter()
            .map(ToString::to_string)
            .collect(),
        mode: sessions.defaults().policy.mode.to_string(),
    })
}

/// `PATCH /api/sessions/{session_id}`: renames the session and / or sets its mode.
pub async fn update(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
    Body(update): Body<UpdateSession>,
) -> Result<StatusCode, ServeError> {
    let live = sessions.get(&session_id)?;
    if let Some(mode) = update.mode.as_deref() {
        let mode: PermissionMode = mode.parse().map_err(|e| ServeError::Invalid {
            message: format!("{e}"),
            detail: Some("mode".to_owned()),
        })?;
        let mut session = live.session.try_lock().map_err(|_| {
            ServeError::ChatRunning("the mode changes once the running chat ends".to_owned())
        })?;
        session.set_mode(mode);
    }
    if let Some(title) = update.title.as_deref().map(str::trim) {
        if title.is_empty() {
            return Err(ServeError::Invalid {
                message: "a title is not empty".to_owned(),
                detail: Some("title".to_owned()),
            });
        }
        if let Some(store) = sessions.agent().store() {
            store
                .rename(&live.id, title)
                .map_err(|_| ServeError::Invalid {
                    message: "a session gets a title once it has a message".to_owned(),
                    detail: Some("title".to_owned()),
                })?;
        }
    }
    Ok(StatusCode::NO_CONTENT)
}

/// The most bytes of Markdown `POST /api/render` renders (the page shows a longer answer as
/// plain text).
pub const MAX_RENDER_BYTES: usize = 512 * 1024;

/// `POST /api/render`: Markdown as the page shows it, safe to insert as HTML. Rendering runs
/// off the async workers, a few at a time, so that renders never hold up other requests.
pub async fn render(Body(request): Body<RenderRequest>) -> Result<Json<Rendered>, ServeError> {
    static RENDERING: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    if request.markdown.len() > MAX_RENDER_BYTES {
        return Err(ServeError::TooLarge(format!(
            "the Markdown is {} bytes; /api/render takes at most {MAX_RENDER_BYTES}",
            request.markdown.len()
        )));
    }
    let rendering = RENDERING.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        tokio::sync::Semaphore::new(cores.max(1))
    });
    let _turn = rendering
        .acquire()
        .await
        .map_err(|_| ServeError::BadRequest("the server is stopping".to_owned()))?;
    let html = tokio::task::spawn_blocking(move || crate::markdown::to_html(&request.markdown))
        .await
        .map_err(|error| ServeError::BadRequest(format!("the rendering failed: {error}")))?;
    Ok(Json(Rendered { html }))
}

/// `DELETE /api/sessions/{session_id}`.
pub async fn delete(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
) -> Result<StatusCode, ServeError> {
    sessions.delete(&session_id)?;
    Ok(StatusCode::NO_CONTENT)
}
