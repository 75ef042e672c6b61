//! [`ServeError`]: what a client did wrong, or what failed, as `system:error` and as REST errors.

use agentry::AgentError;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

/// Why a client's request was not carried out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ServeError {
    /// No session has that id.
    #[error("there is no session `{0}`")]
    UnknownSession(String),
    /// The session is running a chat already.
    #[error("session `{0}` is running a chat: wait for chat:end, or send chat:stop")]
    ChatRunning(String),
    /// The request could not be read (malformed JSON, an unknown event).
    #[error("{0}")]
    BadRequest(String),
    /// The request does not have the protocol's shape.
    #[error("{message}")]
    Invalid {
        /// What is wrong.
        message: String,
        /// Where (the field), when known.
        detail: Option<String>,
    },
    /// The session's working folder is not on this server: servers sharing a store must see
    /// the same workspaces (a shared volume mounted at the same path).
    #[error(
        "session `{session}` works in {cwd}, which is not a folder on this server: its chats run \
         only where that folder exists (servers sharing a store need the workspaces at the same \
         path)"
    )]
    WorkspaceMissing {
        /// The session.
        session: String,
        /// Its working folder.
        cwd: String,
    },
    /// An answer to a paused question that does not fit it.
    #[error("{0}")]
    InvalidAnswer(String),
    /// The request or message is larger than the server takes.
    #[error("{0}")]
    TooLarge(String),
    /// The request is not allowed (a missing or wrong token).
    #[error("{0}")]
    Forbidden(String),
    /// The server runs as many chats as it may (`--max-running-chats`, the number).
    #[error("this server runs {0} chats, its most: retry in a moment, or on another instance")]
    Busy(usize),
    /// A token holds as many open sessions in this server as it may
    /// (`--max-sessions-per-token`, the number).
    #[error("this token holds {0} open sessions here, its most: delete one to make another")]
    TooManySessions(usize),
    /// A connection sent more messages a second than it may.
    #[error("too many messages: this connection may send {0} a second; this one was dropped")]
    RateLimited(u32),
    /// The server is stopping and takes no new chat: another instance can.
    #[error("this server is stopping and takes no new chat: send it to another instance, or retry")]
    Draining,
    /// Live events from the other servers sharing the session stopped coming (the broker
    /// was lost): subscribing again catches up.
    #[error("{0}")]
    LiveEventsInterrupted(String),
    /// Something failed on the server's side.
    #[error("{0}")]
    Internal(String),
}

impl ServeError {
    /// The error's code, as `system:error` and REST errors carry it.
    pub fn code(&self) -> &'static str {
        match self {
            ServeError::UnknownSession(_) => "unknown_session",
            ServeError::ChatRunning(_) => "chat_running",
            ServeError::WorkspaceMissing { .. } => "workspace_missing",
            ServeError::BadRequest(_) => "bad_request",
            ServeError::Invalid { .. } => "invalid_message",
            ServeError::InvalidAnswer(_) => "invalid_answer",
            ServeError::TooLarge(_) => "too_large",
            ServeError::Forbidden(_) => "forbidden",
            ServeError::Draining => "draining",
            ServeError::Busy(_) => "busy",
            ServeError::RateLimited(_) => "rate_limited",
            ServeError::TooManySessions(_) => "too_many_sessions",
            ServeError::LiveEventsInterrupted(_) => "live_events_interrupted",
            ServeError::Internal(_) => "internal",
        }
    }

    /// The HTTP status of the error.
    pub fn http_status(&self) -> u16 {
        match self {
            ServeError::UnknownSession(_) => 404,
            ServeError::ChatRunning(_) | ServeError::WorkspaceMissing { .. } => 409,
            ServeError::BadRequest(_) => 400,
            ServeError::Invalid { .. } | ServeError::InvalidAnswer(_) => 422,
            ServeError::TooLarge(_) => 413,
            ServeError::Forbidden(_) => 401,
            ServeError::LiveEventsInterrupted(_) | ServeError::Draining | ServeError::Busy(_) => {
                503
            }
            ServeError::RateLimited(_) | ServeError::TooManySessions(_) => 429,
            ServeError::Internal(_) => 500,
        }
    }

    /// A failure of the framework, as the client should see it.
    pub fn agent(error: AgentError) -> Self {
        match error {
            AgentError::NoSuchQuestion(id) => ServeError::InvalidAnswer(format!(
                "no question of this session waits for an answer from tool call `{id}`"
            )),
            AgentError::InvalidAnswer(problem) => ServeError::InvalidAnswer(problem),
            AgentError::InvalidOutputSchema(problem) => ServeError::Invalid {
                message: format!("`output_schema` is not a valid JSON Schema: {problem}"),
                detail: Some("output_schema".to_owned()),
            },
            other => ServeError::Internal(other.to_string()),
        }
    }

    /// The error as the data of `system:error` (and the body of a REST error).
    pub fn to_json(&self, session_id: Option<&str>) -> Value {
        let detail = match self {
            ServeError::Invalid { detail, .. } => detail.clone(),
            _ => None,
        };
        json!(ErrorBody {
            message: self.to_string(),
            session_id: session_id.map(str::to_owned),
            code: self.code().to_owned(),
            detail,
        })
    }
}

/// An error, as `system:error` and REST error answers carry it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// What went wrong.
    pub message: String,
    /// The session, when the request named one.
    pub session_id: Option<String>,
    /// `unknown_session`, `chat_running`, `workspace_missing`, `bad_request`, `invalid_message`,
    /// `invalid_answer`, `too_large`, `forbidden` or `internal`.
    pub code: String,
    /// The field at fault, when known.
    pub detail: Option<String>,
}
