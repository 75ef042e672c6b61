//! Session persistence: the [`SessionStore`] trait and the [`MemoryStore`]. Stores that keep
//! sessions elsewhere are crates of their own (`agentry-sqlite`, `agentry-postgres`); what the
//! stores that keep sessions as rows share is in [`rows`].
//!
//! A session keeps the model's history (messages) and, per chat, a condensed transcript of the
//! events (consecutive text and thinking deltas merged), so a front-end can replay a session as
//! it was shown. A chat is recorded as it goes: its prompt when it begins, then each finished
//! model round (the response and its tool results), each in one transaction. A process killed
//! mid-chat leaves that chat begun but not ended: reading the session back shows it as
//! interrupted ([`AgentEvent::ChatInterrupted`]), with everything it had finished.

mod jsonl;
mod lazy;
pub mod lease;
mod memory;
pub mod rows;
mod temp_folders;
mod transcript;

pub use jsonl::TranscriptFile;
pub use lazy::LazyStore;
pub use memory::MemoryStore;
pub use temp_folders::remove_stale_temp_folders;
pub use transcript::Transcript;

use crate::checkpoint::ChatCheckpoint;
use crate::event::{AgentEvent, StopReason, Usage};
use crate::ids::{SessionId, TurnId};
use crate::model::Message;
use crate::pause::PausedChat;
use crate::permission::RememberedAnswers;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Why the store failed.
#[derive(Debug, Clone, thiserror::Error)]
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
    /// The database server failed, or could not be reached.
    #[error("session store {address}: {message}")]
    Server {
        /// The server and database (`postgres://user@host:port/db`, without a password).
        address: String,
        /// What failed.
        message: String,
    },
    /// A stored record could not be read back.
    #[error("session store: corrupt record: {0}")]
    Corrupt(String),
    /// A chat's write was refused: its session's lease passed to another server (this one
    /// was paused or cut off past it), which has taken the session over.
    #[error("session `{0}` is run by another server now: this server's write is refused")]
    LeaseLost(SessionId),
    /// The store panicked while writing.
    #[error("session store: the write failed: {0}")]
    Panicked(String),
    /// The store does not do this (a store of an application's that predates it).
    #[error("this session store does not {0}")]
    Unsupported(&'static str),
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

/// A chat a store has begun recording before it ends (see [`SessionStore::begin_chat`]): the
/// store's own key for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChatKey(pub i64);

/// What a chat in progress has added since it was last recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatProgress {
    /// Messages for the history: whole rounds only (an assistant message and its tool results
    /// together), so a history cut after them is one a model accepts.
    pub messages: Vec<Message>,
    /// Condensed events.
    pub events: Vec<AgentEvent>,
    /// When the chat compacted the history since it was last recorded: the whole history
    /// before the chat's messages, which `messages` then are all of (replacing those recorded).
    pub history: Option<Vec<Message>>,
}

/// One finished chat, as written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRecord {
    /// The chat as begun with [`SessionStore::begin_chat`], if it was: then `messages` and
    /// `events` are only what it added after its last recorded progress (all of its messages
    /// when `history` is set).
    pub begun: Option<ChatKey>,
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
    /// summary, then the turns kept). Loading starts from the latest such history. (For a
    /// begun chat, only a compaction since its last recorded progress.)
    pub history: Option<Vec<Message>>,
    /// When the chat paused for the user's answer: what waits.
    pub paused: Option<PausedChat>,
}

/// One chat of a stored session, as the session shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredChat {
    /// The store's key for it.
    pub key: ChatKey,
    /// Its first user turn (the user's message, or the answer that resumed it), by which a
    /// front-end names the chat; `None` for a chat without one (a rewind's record).
    pub turn: Option<TurnId>,
    /// Its checkpoint, when it changed the workspace.
    pub checkpoint: Option<ChatCheckpoint>,
}

/// A chat's first user turn, in its events.
pub(crate) fn first_user_turn<'a>(
    events: impl IntoIterator<Item = &'a AgentEvent>,
) -> Option<TurnId> {
    events.into_iter().find_map(|event| match event {
        AgentEvent::TurnStarted {
            turn_id,
            role: crate::event::Role::User,
            ..
        } => Some(turn_id.clone()),
        _ => None,
    })
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
    /// What waits for the user's answer, when the last chat paused.
    pub paused: Option<PausedChat>,
    /// Its chats, in order (those rewound left out).
    pub chats: Vec<StoredChat>,
}

/// Where sessions live.
///
/// A store may record chats as they go ([`begin_chat`](Self::begin_chat),
/// [`continue_chat`](Self::continue_chat)); one that does not keeps the defaults and gets each
/// chat whole in [`append_chat`](Self::append_chat).
pub trait SessionStore: Send + Sync {
    /// Records a new, empty session.
    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError>;
    /// Records, atomically, that a chat has begun, with what it has so far (the user's prompt)
    /// and the title it gives the session. Until the chat is appended, loading the session
    /// shows it as interrupted. `None` when the store does not record chats in progress.
    fn begin_chat(
        &self,
        id: &SessionId,
        title: Option<&str>,
        first: &ChatProgress,
    ) -> Result<Option<ChatKey>, StoreError> {
        let _ = (id, title, first);
        Ok(None)
    }
    /// Adds, atomically, what a begun chat did since it was last recorded.
    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        let _ = (id, chat, more);
        Ok(())
    }
    /// Appends one finished chat (or ends a begun one), atomically.
    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError>;
    /// Reads a whole session. A chat begun and never appended (its process died) reads as
    /// interrupted: its messages and events, then [`interrupted`]'s.
    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError>;
    /// A session's description alone, cheaper than [`load`](Self::load): a server that shares
    /// the store with others compares its `updated_at` with the one it read to know whether
    /// another changed the session meanwhile.
    fn meta(&self, id: &SessionId) -> Result<SessionMeta, StoreError> {
        self.load(id).map(|stored| stored.meta)
    }
    /// Every session, most recently updated first.
    fn list(&self) -> Result<Vec<SessionMeta>, StoreError>;
    /// Removes a session and its history.
    fn delete(&self, id: &SessionId) -> Result<(), StoreError>;
    /// Gives a session the title a user chose (its later chats keep it).
    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError>;
    /// Whether the store answers (a cheap query, for a server's readiness check).
    fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// The leases on sessions' chats, for a store that several servers share (a store of one
    /// process has none: its server keeps the one-chat-per-session rule itself).
    fn leases(&self) -> Option<&dyn lease::ChatLeases> {
        None
    }
    /// Keeps a chat's checkpoint with it (replacing the one it had).
    fn save_checkpoint(
        &self,
        id: &SessionId,
        chat: ChatKey,
        checkpoint: &ChatCheckpoint,
    ) -> Result<(), StoreError> {
        let _ = (id, chat, checkpoint);
        Err(StoreError::Unsupported("keep checkpoints"))
    }
    /// Cuts the session back to just before `chat`, atomically: that chat and every later one
    /// are left out of its history and transcript from now on, and `rewind` (the rewind's own
    /// record: its events, no messages) is appended after them.
    fn rewind(&self, id: &SessionId, chat: ChatKey, rewind: &ChatRecord) -> Result<(), StoreError> {
        let _ = (id, chat, rewind);
        Err(StoreError::Unsupported("rewind"))
    }
}

/// A shared store is the store it shares (a server's store, kept by its other parts too).
impl<S: SessionStore + ?Sized> SessionStore for std::sync::Arc<S> {
    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        (**self).create(meta)
    }
    fn begin_chat(
        &self,
        id: &SessionId,
        title: Option<&str>,
        first: &ChatProgress,
    ) -> Result<Option<ChatKey>, StoreError> {
        (**self).begin_chat(id, title, first)
    }
    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        (**self).continue_chat(id, chat, more)
    }
    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        (**self).append_chat(id, chat)
    }
    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        (**self).load(id)
    }
    fn meta(&self, id: &SessionId) -> Result<SessionMeta, StoreError> {
        (**self).meta(id)
    }
    fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        (**self).list()
    }
    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        (**self).delete(id)
    }
    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        (**self).rename(id, title)
    }
    fn ping(&self) -> Result<(), StoreError> {
        (**self).ping()
    }
    fn leases(&self) -> Option<&dyn lease::ChatLeases> {
        (**self).leases()
    }
    fn save_checkpoint(
        &self,
        id: &SessionId,
        chat: ChatKey,
        checkpoint: &ChatCheckpoint,
    ) -> Result<(), StoreError> {
        (**self).save_checkpoint(id, chat, checkpoint)
    }
    fn rewind(&self, id: &SessionId, chat: ChatKey, rewind: &ChatRecord) -> Result<(), StoreError> {
        (**self).rewind(id, chat, rewind)
    }
}

/// What a stored chat that never ended adds after its own messages and events: a note for the
/// model (the prompt's answer was cut off) and the [`AgentEvent::ChatInterrupted`] mark.
pub fn interrupted(id: &SessionId) -> (Message, AgentEvent) {
    (
        Message::user_text(INTERRUPTED_NOTE),
        AgentEvent::ChatInterrupted {
            session_id: id.clone(),
        },
    )
}

/// What the model reads after a chat that was cut off.
const INTERRUPTED_NOTE: &str = "[The previous request was interrupted: the agent stopped before it \
     finished. What was done before that is above; check the state of anything it was changing \
     before going on.]";

/// The time now, as stores write it (RFC 3339, in milliseconds, UTC).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
