//! [`MemoryStore`]: sessions kept in memory for the life of the process, with the same
//! behaviour as the SQLite store (history from the latest compaction, every chat's events,
//! remembered answers, titles). For tests, examples and agents that keep nothing.

use super::{ChatRecord, SessionMeta, SessionStore, StoreError, StoredSession, now_rfc3339};
use crate::ids::SessionId;
use crate::permission::RememberedAnswers;
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::Mutex;

/// A session as the memory store keeps it.
struct Kept {
    meta: SessionMeta,
    remembered: RememberedAnswers,
    chats: Vec<ChatRecord>,
}

/// Sessions in memory.
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<SessionId, Kept>>);

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
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

    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        let mut sessions = lock(&self.0);
        let kept = sessions
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        kept.meta.updated_at = now_rfc3339();
        if kept.meta.title.is_none() {
            kept.meta.title = chat.title.clone();
        }
        kept.remembered = chat.remembered.clone();
        kept.chats.push(chat.clone());
        Ok(())
    }

    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        let sessions = lock(&self.0);
        let kept = sessions
            .get(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        // The history starts at the latest compaction, if any.
        let from = kept
            .chats
            .iter()
            .rposition(|chat| chat.history.is_some())
            .unwrap_or(0);
        let mut messages = kept
            .chats
            .get(from)
            .and_then(|c| c.history.clone())
            .unwrap_or_default();
        for chat in &kept.chats[from..] {
            messages.extend(chat.messages.iter().cloned());
        }
        Ok(StoredSession {
            meta: kept.meta.clone(),
            messages,
            events: kept.chats.iter().flat_map(|c| c.events.clone()).collect(),
            remembered: kept.remembered.clone(),
            paused: kept.chats.last().and_then(|c| c.paused.clone()),
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn it_keeps_sessions_as_the_sqlite_store_does() {
        let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
        let same = store.clone();
        super::super::contract::check(store, move || same);
    }
}
