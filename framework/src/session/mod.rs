//! Session persistence: the [`SessionStore`] trait and its default, [`SqliteStore`].
//!
//! A session keeps the model's history (messages) and, per chat, a condensed transcript of the
//! events (consecutive text and thinking deltas merged), so a front-end can replay a session as
//! it was shown. Each finished chat is written in one transaction: a crash loses at most the chat
//! in flight.

mod sqlite;
mod transcript;

pub use sqlite::SqliteStore;
pub use transcript::Transcript;

use crate::event::{AgentEvent, StopReason, Usage};
use crate::ids::SessionId;
use crate::model::Message;
use crate::permission::RememberedAnswers;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session has that id.
    #[error("no session with id `{0}`")]
    NotFound(SessionId),
    /// The database failed.
    #[error("session store {path}: {message}")]
    Database {
        /// The database file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A stored record could not be read back.
    #[error("session store: corrupt record: {0}")]
    Corrupt(String),
}

/// What describes a session apart from its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The session's id.
    pub id: SessionId,
    /// Its working directory.
    pub cwd: PathBuf,
    /// A title (the start of the first prompt).
    pub title: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// One finished chat, as written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRecord {
    /// The messages the chat added to the history.
    pub messages: Vec<Message>,
    /// Its condensed events.
    pub events: Vec<AgentEvent>,
    /// Why it stopped (`None` when it failed).
    pub stop_reason: Option<StopReason>,
    /// The tokens it used.
    pub usage: Usage,
    /// The session's remembered permission answers after the chat.
    pub remembered: RememberedAnswers,
    /// The session's title, when this chat gives it one.
    pub title: Option<String>,
    /// When the chat compacted the history: the whole history before its own messages (a
    /// summary, then the turns kept). Loading starts from the latest such history.
    pub history: Option<Vec<Message>>,
}

/// A session read back from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSession {
    /// Its description.
    pub meta: SessionMeta,
    /// The whole history.
    pub messages: Vec<Message>,
    /// The condensed events of every chat, in order.
    pub events: Vec<AgentEvent>,
    /// The remembered permission answers.
    pub remembered: RememberedAnswers,
}

/// Where sessions live.
pub trait SessionStore: Send + Sync {
    /// Records a new, empty session.
    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError>;
    /// Appends one finished chat, atomically.
    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError>;
    /// Reads a whole session.
    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError>;
    /// Every session, most recently updated first.
    fn list(&self) -> Result<Vec<SessionMeta>, StoreError>;
    /// Removes a session and its history.
    fn delete(&self, id: &SessionId) -> Result<(), StoreError>;
}

/// The default database file: `$AGENTRY_DATA_DIR/sessions.db`, else `agentry/sessions.db` in
/// the user's data directory (`~/.local/share` on Linux).
pub fn default_database_path() -> PathBuf {
    let dir = std::env::var_os("AGENTRY_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("agentry")))
        .unwrap_or_else(|| PathBuf::from(".agentry-data"));
    dir.join("sessions.db")
}

pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
