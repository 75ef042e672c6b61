//! [`MemoryStore`]: sessions kept in memory for the life of the process, with the same
//! behaviour as the SQLite store (history from the latest compaction, every chat's events,
//! remembered answers, titles). For tests, examples and agents that keep nothing.

use super::{
    ChatKey, ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError, StoredChat,
    StoredSession, first_user_turn, interrupted, now_rfc3339,
};
use crate::checkpoint::ChatCheckpoint;
use crate::ids::SessionId;
use crate::permission::RememberedAnswers;
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::Mutex;

/// A session as the memory store keeps it.
struct Kept {
    meta: SessionMeta,
    remembered: RememberedAnswers,
    chats: Vec<KeptChat>,
}

/// A chat, begun or appended; its key is its place in the session's chats.
struct KeptChat {
    record: ChatRecord,
    running: bool,
    /// Left out since a rewind to it or an earlier chat.
    rewound: bool,
    checkpoint: Option<ChatCheckpoint>,
}

impl KeptChat {
    fn new(record: ChatRecord, running: bool) -> Self {
        Self {
            record,
            running,
            rewound: false,
            checkpoint: None,
        }
    }
}

impl Kept {
    fn touch(&mut self, title: Option<&str>) {
        self.meta.updated_at = now_rfc3339();
        if self.meta.title.is_none() {
            self.meta.title = title.map(str::to_owned);
        }
    }

    /// The running chat `key`.
    fn running(&mut self, id: &SessionId, key: ChatKey) -> Result<&mut ChatRecord, StoreError> {
        let chat = usize::try_from(key.0)
            .ok()
            .and_then(|index| self.chats.get_mut(index))
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        if !chat.running {
            return Err(StoreError::Corrupt(format!(
                "chat {} of session `{id}` has ended already",
                key.0
            )));
        }
        Ok(&mut chat.record)
    }
}

/// Sessions in memory.
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<SessionId, Kept>>);

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(
        &self,
        id: &SessionId,
        work: impl FnOnce(&mut Kept) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut sessions = lock(&self.0);
        let kept = sessions
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        work(kept)
    }
}

impl SessionStore for MemoryStore {
    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        let kept = Kept {
            meta: meta.clone(),
            remembered: RememberedAnswers::default(),
            chats: Vec::new(),
        };
        lock(&self.0).insert(meta.id.clone(), kept);
        Ok(())
    }

    fn begin_chat(
        &self,
        id: &SessionId,
        title: Option<&str>,
        first: &ChatProgress,
    ) -> Result<Option<ChatKey>, StoreError> {
        self.with(id, |kept| {
            kept.touch(title);
            let key = ChatKey(kept.chats.len() as i64);
            let record = ChatRecord {
                begun: Some(key),
                messages: first.messages.clone(),
                events: first.events.clone(),
                stop_reason: None,
                usage: Default::default(),
                remembered: kept.remembered.clone(),
                title: None,
                history: first.history.clone(),
                paused: None,
            };
            kept.chats.push(KeptChat::new(record, true));
            Ok(Some(key))
        })
    }

    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        self.with(id, |kept| {
            let record = kept.running(id, chat)?;
            if let Some(history) = &more.history {
                record.history = Some(history.clone());
                record.messages.clear();
            }
            record.messages.extend(more.messages.iter().cloned());
            record.events.extend(more.events.iter().cloned());
            kept.touch(None);
            Ok(())
        })
    }

    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        self.with(id, |kept| {
            match chat.begun {
                Some(key) => {
                    let record = kept.running(id, key)?;
                    let mut messages = std::mem::take(&mut record.messages);
                    let mut events = std::mem::take(&mut record.events);
                    let history = match &chat.history {
                        Some(history) => {
                            messages.clear();
                            Some(history.clone())
                        }
                        None => record.history.take(),
                    };
                    messages.extend(chat.messages.iter().cloned());
                    events.extend(chat.events.iter().cloned());
                    *record = ChatRecord {
                        messages,
                        events,
                        history,
                        ..chat.clone()
                    };
                    kept.chats[key.0 as usize].running = false;
                }
                None => kept.chats.push(KeptChat::new(chat.clone(), false)),
            }
            kept.touch(chat.title.as_deref());
            kept.remembered = chat.remembered.clone();
            Ok(())
        })
    }

    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        let sessions = lock(&self.0);
        let kept = sessions
            .get(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        let shown: Vec<(usize, &KeptChat)> = kept
            .chats
            .iter()
            .enumerate()
            .filter(|(_, chat)| !chat.rewound)
            .collect();
        // The history starts at the latest compaction, if any.
        let from = shown
            .iter()
            .rposition(|(_, chat)| chat.record.history.is_some())
            .unwrap_or(0);
        let mut messages = shown
            .get(from)
            .and_then(|(_, c)| c.record.history.clone())
            .unwrap_or_default();
        let (note, mark) = interrupted(id);
        let mut events = Vec::new();
        let mut chats = Vec::new();
        for (position, (index, chat)) in shown.iter().enumerate() {
            if position >= from {
                messages.extend(chat.record.messages.iter().cloned());
                messages.extend(chat.running.then(|| note.clone()));
            }
            events.extend(chat.record.events.iter().cloned());
            events.extend(chat.running.then(|| mark.clone()));
            chats.push(StoredChat {
                key: ChatKey(*index as i64),
                turn: first_user_turn(&chat.record.events),
                checkpoint: chat.checkpoint.clone(),
            });
        }
        Ok(StoredSession {
            meta: kept.meta.clone(),
            messages,
            events,
            remembered: kept.remembered.clone(),
            paused: shown.last().and_then(|(_, c)| c.record.paused.clone()),
            chats,
        })
    }

    fn save_checkpoint(
        &self,
        id: &SessionId,
        chat: ChatKey,
        checkpoint: &ChatCheckpoint,
    ) -> Result<(), StoreError> {
        self.with(id, |kept| {
            let chat = usize::try_from(chat.0)
                .ok()
                .and_then(|index| kept.chats.get_mut(index))
                .ok_or_else(|| StoreError::NotFound(id.clone()))?;
            chat.checkpoint = Some(checkpoint.clone());
            Ok(())
        })
    }

    fn rewind(&self, id: &SessionId, chat: ChatKey, rewind: &ChatRecord) -> Result<(), StoreError> {
        self.with(id, |kept| {
            let from = usize::try_from(chat.0)
                .ok()
                .filter(|index| *index < kept.chats.len())
                .ok_or_else(|| StoreError::NotFound(id.clone()))?;
            for chat in &mut kept.chats[from..] {
                chat.rewound = true;
            }
            kept.chats.push(KeptChat::new(rewind.clone(), false));
            kept.touch(None);
            Ok(())
        })
    }

    fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        let mut metas: Vec<SessionMeta> = lock(&self.0).values().map(|k| k.meta.clone()).collect();
        metas.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        Ok(metas)
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        match lock(&self.0).remove(id) {
            Some(_) => Ok(()),
            None => Err(StoreError::NotFound(id.clone())),
        }
    }

    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        match lock(&self.0).get_mut(id) {
            Some(kept) => {
                kept.meta.title = Some(title.to_owned());
                Ok(())
            }
            None => Err(StoreError::NotFound(id.clone())),
        }
    }
}
