//! Session persistence: the [`SessionStore`] trait, its default [`SqliteStore`] (cargo feature
//! `sqlite`), the [`PostgresStore`] that several servers share (cargo feature `postgres`) and
//! the [`MemoryStore`].
//!
//! A session keeps the model's history (messages) and, per chat, a condensed transcript of the
//! events (consecutive text and thinking deltas merged), so a front-end can replay a session as
//! it was shown. A chat is recorded as it goes: its prompt when it begins, then each finished
//! model round (the response and its tool results), each in one transaction. A process killed
//! mid-chat leaves that chat begun but not ended: reading the session back shows it as
//! interrupted ([`AgentEvent::ChatInterrupted`]), with everything it had finished.

mod lazy;
pub mod lease;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;
mod temp_folders;
mod transcript;

pub use lazy::LazyStore;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
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

pub use crate::paths::data_dir;

/// The default database file: `sessions.db` in the [`data_dir`].
pub fn default_database_path() -> PathBuf {
    data_dir().join("sessions.db")
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

pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What every store must do, checked against each of them.
#[cfg(test)]
mod contract {
    use super::*;
    use std::sync::Arc;

    fn meta(id: &str) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            cwd: "/p".into(),
            title: None,
            created_at: now_rfc3339(),
            updated_at: now_rfc3339(),
        }
    }

    fn chat(text: &str) -> ChatRecord {
        ChatRecord {
            begun: None,
            messages: vec![Message::user_text(text)],
            events: vec![AgentEvent::Notice {
                message: text.into(),
            }],
            stop_reason: Some(StopReason::EndTurn),
            usage: Usage::default(),
            remembered: RememberedAnswers {
                allowed: ["Bash".to_owned()].into(),
                ..RememberedAnswers::default()
            },
            title: Some(text.into()),
            history: None,
            paused: None,
        }
    }

    /// Chats append in order and are read back by `reopen`ed stores; compaction restarts the
    /// history; renaming, deleting and unknown ids.
    pub fn check(store: Arc<dyn SessionStore>, reopen: impl FnOnce() -> Arc<dyn SessionStore>) {
        store.create(&meta("s1")).unwrap();
        store.create(&meta("s2")).unwrap();
        store.append_chat(&"s1".into(), &chat("one")).unwrap();
        store.append_chat(&"s1".into(), &chat("two")).unwrap();
        drop(store);
        let store = reopen();
        let s1 = store.load(&"s1".into()).unwrap();
        assert_eq!(
            s1.messages,
            [Message::user_text("one"), Message::user_text("two")]
        );
        assert_eq!(s1.events.len(), 2);
        assert_eq!(s1.meta.title.as_deref(), Some("one"));
        assert!(s1.remembered.allowed.contains("Bash"));
        assert_eq!(store.list().unwrap()[0].id.as_str(), "s1");
        // A compacting chat restarts the history from its own.
        let mut compacting = chat("three");
        compacting.history = Some(vec![Message::user_text("summary")]);
        store.append_chat(&"s1".into(), &compacting).unwrap();
        store.append_chat(&"s1".into(), &chat("four")).unwrap();
        let s1 = store.load(&"s1".into()).unwrap();
        assert_eq!(
            s1.messages,
            [
                Message::user_text("summary"),
                Message::user_text("three"),
                Message::user_text("four")
            ]
        );
        assert_eq!(s1.events.len(), 4, "the transcript keeps every chat");
        assert_eq!(s1.paused, None);
        // The last chat's pause is the session's; a later chat ends it.
        let paused = PausedChat::default();
        let mut pausing = chat("five");
        pausing.paused = Some(paused.clone());
        store.append_chat(&"s1".into(), &pausing).unwrap();
        assert_eq!(store.load(&"s1".into()).unwrap().paused, Some(paused));
        store.append_chat(&"s1".into(), &chat("six")).unwrap();
        assert_eq!(store.load(&"s1".into()).unwrap().paused, None);
        // A title the user chose stays through later chats.
        store.rename(&"s1".into(), "Renamed").unwrap();
        store.append_chat(&"s1".into(), &chat("seven")).unwrap();
        assert_eq!(store.list().unwrap()[0].title.as_deref(), Some("Renamed"));
        // A session's description alone: the listing's, and its `updated_at` moves with a chat.
        let before = store.meta(&"s1".into()).unwrap();
        assert_eq!(before, store.list().unwrap()[0]);
        std::thread::sleep(std::time::Duration::from_millis(2));
        store.append_chat(&"s1".into(), &chat("eight")).unwrap();
        assert!(store.meta(&"s1".into()).unwrap().updated_at > before.updated_at);
        assert!(matches!(
            store.meta(&"nope".into()),
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            store.rename(&"nope".into(), "x"),
            Err(StoreError::NotFound(_))
        ));
        store.delete(&"s2".into()).unwrap();
        assert!(matches!(
            store.load(&"s2".into()),
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            store.append_chat(&"nope".into(), &chat("x")),
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            store.delete(&"s2".into()),
            Err(StoreError::NotFound(_))
        ));
    }

    /// A chat whose user turn is `turn`, saying `text`.
    fn turn_chat(turn: &str, text: &str) -> ChatRecord {
        let mut record = chat(text);
        record.events.insert(
            0,
            AgentEvent::TurnStarted {
                turn_id: TurnId(turn.into()),
                role: crate::event::Role::User,
                status: crate::event::TurnStatus::Completed,
                parent_fork_tool_call_id: None,
                loop_id: crate::event::ROOT_LOOP.into(),
                started_at: None,
            },
        );
        record
    }

    /// Chats named by their user turns, a checkpoint kept with one, and a rewind to it: that
    /// chat and the later ones leave the history and the transcript (a compaction among them
    /// too), the rewind's record follows, and all of it survives reopening.
    pub fn check_rewind(
        store: Arc<dyn SessionStore>,
        reopen: impl FnOnce() -> Arc<dyn SessionStore>,
    ) {
        let id: SessionId = "r".into();
        store.create(&meta("r")).unwrap();
        store.append_chat(&id, &turn_chat("t1", "one")).unwrap();
        store.append_chat(&id, &turn_chat("t2", "two")).unwrap();
        let mut compacting = turn_chat("t3", "three");
        compacting.history = Some(vec![Message::user_text("summary")]);
        store.append_chat(&id, &compacting).unwrap();
        let loaded = store.load(&id).unwrap();
        let turns: Vec<Option<String>> = loaded
            .chats
            .iter()
            .map(|c| c.turn.as_ref().map(|t| t.0.clone()))
            .collect();
        assert_eq!(
            turns,
            [Some("t1".into()), Some("t2".into()), Some("t3".into())]
        );
        let second = loaded.chats[1].key;
        let checkpoint = ChatCheckpoint {
            workspace: "/p".into(),
            before: crate::checkpoint::TreeId("a".repeat(40)),
            after: None,
            left_out: Vec::new(),
            taken_at: now_rfc3339(),
        };
        store.save_checkpoint(&id, second, &checkpoint).unwrap();
        assert_eq!(
            store.load(&id).unwrap().chats[1].checkpoint.as_ref(),
            Some(&checkpoint)
        );
        let mut rewind = chat("rewound");
        rewind.messages.clear();
        rewind.title = None;
        store.rewind(&id, second, &rewind).unwrap();
        drop(store);
        let store = reopen();
        let loaded = store.load(&id).unwrap();
        assert_eq!(loaded.messages, [Message::user_text("one")]);
        assert_eq!(loaded.events.len(), 3, "{:?}", loaded.events);
        assert_eq!(
            loaded.events[2],
            AgentEvent::Notice {
                message: "rewound".into()
            }
        );
        assert_eq!(loaded.chats.len(), 2);
        assert_eq!(loaded.chats[1].turn, None);
        assert_eq!(loaded.meta.title.as_deref(), Some("one"));
        // A later chat follows the rewind's record.
        store.append_chat(&id, &turn_chat("t4", "four")).unwrap();
        assert_eq!(
            store.load(&id).unwrap().messages,
            [Message::user_text("one"), Message::user_text("four")]
        );
        assert!(matches!(
            store.rewind(&"nope".into(), second, &rewind),
            Err(StoreError::NotFound(_))
        ));
    }

    fn progress(text: &str) -> ChatProgress {
        ChatProgress {
            messages: vec![Message::user_text(text)],
            events: vec![AgentEvent::Notice {
                message: text.into(),
            }],
            history: None,
        }
    }

    /// Chats recorded as they go: a begun chat that never ends reads as interrupted (after
    /// what it recorded, once, in its place), later chats follow it, a begun chat that ends
    /// reads as one chat with nothing twice.
    pub fn check_progress(
        store: Arc<dyn SessionStore>,
        reopen: impl FnOnce() -> Arc<dyn SessionStore>,
    ) {
        let id: SessionId = "s".into();
        store.create(&meta("s")).unwrap();
        store.append_chat(&id, &chat("done")).unwrap();
        let Some(cut) = store
            .begin_chat(&id, Some("cut"), &progress("cut"))
            .unwrap()
        else {
            panic!("the store records chats in progress");
        };
        store
            .continue_chat(&id, cut, &progress("cut round"))
            .unwrap();
        drop(store);
        let store = reopen();
        let (note, mark) = interrupted(&id);
        let loaded = store.load(&id).unwrap();
        assert_eq!(
            loaded.messages,
            [
                Message::user_text("done"),
                Message::user_text("cut"),
                Message::user_text("cut round"),
                note.clone()
            ]
        );
        assert_eq!(loaded.events.len(), 4);
        assert_eq!(loaded.events[3], mark);
        // A begun chat's title does not replace the session's.
        assert_eq!(loaded.meta.title.as_deref(), Some("done"));

        // A later chat, begun and ended: recorded once, after the interrupted one.
        let key = store
            .begin_chat(&id, None, &progress("next"))
            .unwrap()
            .unwrap();
        store
            .continue_chat(&id, key, &progress("next round"))
            .unwrap();
        let mut rest = chat("next end");
        rest.begun = Some(key);
        store.append_chat(&id, &rest).unwrap();
        let loaded = store.load(&id).unwrap();
        assert_eq!(
            loaded.messages,
            [
                Message::user_text("done"),
                Message::user_text("cut"),
                Message::user_text("cut round"),
                note,
                Message::user_text("next"),
                Message::user_text("next round"),
                Message::user_text("next end"),
            ]
        );
        assert_eq!(loaded.events.len(), 7);
        assert_eq!(
            loaded.events.iter().filter(|e| **e == mark).count(),
            1,
            "only the chat that never ended is marked"
        );
        // An ended chat takes no more progress.
        assert!(store.continue_chat(&id, key, &progress("late")).is_err());
        assert!(store.append_chat(&id, &rest).is_err());
        assert_eq!(store.load(&id).unwrap().messages.len(), 7);

        // A chat that compacts mid-way: the history restarts there, its messages recorded anew.
        let key = store
            .begin_chat(&id, None, &progress("long"))
            .unwrap()
            .unwrap();
        let mut compacted = progress("kept");
        compacted.history = Some(vec![Message::user_text("summary")]);
        store.continue_chat(&id, key, &compacted).unwrap();
        store.continue_chat(&id, key, &progress("after")).unwrap();
        let (note, _) = interrupted(&id);
        assert_eq!(
            store.load(&id).unwrap().messages,
            [
                Message::user_text("summary"),
                Message::user_text("kept"),
                Message::user_text("after"),
                note
            ]
        );
    }
}
