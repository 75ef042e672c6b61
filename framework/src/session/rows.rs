//! What the SQL stores share: messages and events kept as JSON rows per chat, and a session
//! assembled from the rows read back (the history from its latest compaction, a chat that never
//! ended marked as interrupted).

use super::{
    ChatKey, SessionMeta, StoreError, StoredChat, StoredSession, first_user_turn, interrupted,
};
use crate::event::AgentEvent;
use crate::ids::{SessionId, TurnId};
use crate::model::Message;
use crate::permission::RememberedAnswers;
use std::collections::HashMap;

/// `value` as the JSON text a row keeps.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// A row's JSON text as what it holds.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Messages and events as the JSON rows they are stored as.
pub struct Rows {
    /// The messages' rows.
    pub messages: Vec<String>,
    /// The events' rows.
    pub events: Vec<String>,
}

impl Rows {
    /// The rows of `messages` and `events`.
    pub fn of(messages: &[Message], events: &[AgentEvent]) -> Result<Self, StoreError> {
        Ok(Self {
            messages: messages.iter().map(to_json).collect::<Result<_, _>>()?,
            events: events.iter().map(to_json).collect::<Result<_, _>>()?,
        })
    }
}

/// Rows read back in chat order, each with its chat's id.
pub type ChatRows = Vec<(i64, String)>;

/// Where a stored chat stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatState {
    /// It ended (completed, failed, cancelled or paused).
    Ended,
    /// It runs on another server, which holds its session's lease: left out until it ends.
    RunningElsewhere,
    /// It began and never ended, and nothing holds it: its process died or was cut off.
    Abandoned,
}

impl ChatState {
    /// A chat of a store without leases: abandoned when it never ended.
    pub fn unleased(running: bool) -> Self {
        if running {
            Self::Abandoned
        } else {
            Self::Ended
        }
    }
}

/// A session's rows as read back, before they are parsed.
pub struct ReadBack {
    /// Its description.
    pub meta: SessionMeta,
    /// Its remembered answers' row.
    pub remembered: String,
    /// The latest compaction: the chat that made it and the history before that chat.
    pub reset: Option<(i64, String)>,
    /// Every chat's id and where it stands, in order.
    pub chats: Vec<(i64, ChatState)>,
    /// The message rows of the chats from the latest compaction on.
    pub messages: ChatRows,
    /// The event rows of every chat.
    pub events: ChatRows,
    /// The last chat's pause, when it paused.
    pub paused: Option<String>,
    /// The chats' checkpoints (of those that have one), by chat id.
    pub checkpoints: HashMap<i64, String>,
}

impl ReadBack {
    /// The first chat whose messages are in the history: the one that compacted it last.
    pub fn history_from(reset: &Option<(i64, String)>) -> i64 {
        reset.as_ref().map_or(0, |(chat, _)| *chat)
    }

    /// The session these rows hold, each abandoned chat marked as interrupted and a chat
    /// running elsewhere left out.
    pub fn assemble(self, id: &SessionId) -> Result<StoredSession, StoreError> {
        let from_chat = Self::history_from(&self.reset);
        let mut messages: Vec<Message> = match &self.reset {
            Some((_, history)) => from_json(history)?,
            None => Vec::new(),
        };
        let (note, mark) = interrupted(id);
        let history_chats: Vec<(i64, ChatState)> = self
            .chats
            .iter()
            .copied()
            .filter(|(chat, _)| *chat >= from_chat)
            .collect();
        messages.extend(marked(&history_chats, parsed(self.messages)?, || {
            note.clone()
        }));
        let events: Vec<(i64, AgentEvent)> = parsed(self.events)?;
        let mut turns: HashMap<i64, TurnId> = HashMap::new();
        for (chat, event) in &events {
            if !turns.contains_key(chat)
                && let Some(turn) = first_user_turn([event])
            {
                turns.insert(*chat, turn);
            }
        }
        let mut chats = Vec::with_capacity(self.chats.len());
        for &(chat, state) in &self.chats {
            if state == ChatState::RunningElsewhere {
                continue;
            }
            chats.push(StoredChat {
                key: ChatKey(chat),
                turn: turns.remove(&chat),
                checkpoint: self
                    .checkpoints
                    .get(&chat)
                    .map(|c| from_json(c))
                    .transpose()?,
            });
        }
        let events = marked(&self.chats, events, || mark.clone());
        Ok(StoredSession {
            meta: self.meta,
            messages,
            events,
            remembered: from_json::<RememberedAnswers>(&self.remembered)?,
            paused: self.paused.as_deref().map(from_json).transpose()?,
            chats,
        })
    }
}

/// Rows read back as what they hold.
fn parsed<T: serde::de::DeserializeOwned>(rows: ChatRows) -> Result<Vec<(i64, T)>, StoreError> {
    rows.into_iter()
        .map(|(chat, body)| Ok((chat, from_json(&body)?)))
        .collect()
}

/// `rows` (in chat order) with `mark` after the last row of each abandoned chat (after its
/// place in `chats`, every chat id in order, when it has no rows), and without the rows of a
/// chat running elsewhere.
fn marked<T>(chats: &[(i64, ChatState)], rows: Vec<(i64, T)>, mark: impl Fn() -> T) -> Vec<T> {
    let mut rows = rows.into_iter().peekable();
    let mut out = Vec::new();
    for &(chat, state) in chats {
        while let Some((_, row)) = rows.next_if(|(of, _)| *of < chat) {
            out.push(row);
        }
        while let Some((_, row)) = rows.next_if(|(of, _)| *of == chat) {
            if state != ChatState::RunningElsewhere {
                out.push(row);
            }
        }
        if state == ChatState::Abandoned {
            out.push(mark());
        }
    }
    out.extend(rows.map(|(_, row)| row));
    out
}
