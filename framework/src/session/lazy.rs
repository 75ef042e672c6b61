//! [`LazyStore`]: a store opened on first use, so an agent that starts and waits (an editor's
//! agent before its first session) opens no database.

use super::{
    ChatKey, ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError, StoredSession,
};
use crate::ids::SessionId;
use std::sync::{Arc, OnceLock};

/// Opens a store the first time it is used; a store that fails to open fails every use with
/// the same error.
pub struct LazyStore {
    open: Box<dyn Fn() -> Result<Arc<dyn SessionStore>, StoreError> + Send + Sync>,
    opened: OnceLock<Result<Arc<dyn SessionStore>, StoreError>>,
}

impl LazyStore {
    /// A store that `open` opens when it is first used.
    pub fn new(
        open: impl Fn() -> Result<Arc<dyn SessionStore>, StoreError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            open: Box::new(open),
            opened: OnceLock::new(),
        }
    }

    /// Whether the store has been opened (successfully or not).
    pub fn is_open(&self) -> bool {
        self.opened.get().is_some()
    }

    fn store(&self) -> Result<&Arc<dyn SessionStore>, StoreError> {
        self.opened
            .get_or_init(|| (self.open)())
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl SessionStore for LazyStore {
    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.store()?.create(meta)
    }

    fn begin_chat(
        &self,
        id: &SessionId,
        title: Option<&str>,
        first: &ChatProgress,
    ) -> Result<Option<ChatKey>, StoreError> {
        self.store()?.begin_chat(id, title, first)
    }

    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        self.store()?.continue_chat(id, chat, more)
    }

    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        self.store()?.append_chat(id, chat)
    }

    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        self.store()?.load(id)
    }

    fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.store()?.list()
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.store()?.delete(id)
    }

    fn meta(&self, id: &SessionId) -> Result<SessionMeta, StoreError> {
        self.store()?.meta(id)
    }

    fn leases(&self) -> Option<&dyn super::lease::ChatLeases> {
        self.store().ok()?.leases()
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.store()?.ping()
    }

    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        self.store()?.rename(id, title)
    }

    fn save_checkpoint(
        &self,
        id: &SessionId,
        chat: super::ChatKey,
        checkpoint: &crate::checkpoint::ChatCheckpoint,
    ) -> Result<(), StoreError> {
        self.store()?.save_checkpoint(id, chat, checkpoint)
    }

    fn rewind(
        &self,
        id: &SessionId,
        chat: super::ChatKey,
        rewind: &super::ChatRecord,
    ) -> Result<(), StoreError> {
        self.store()?.rewind(id, chat, rewind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::MemoryStore;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn it_opens_once_on_first_use_and_keeps_a_failure() {
        let opened = Arc::new(AtomicUsize::new(0));
        let count = opened.clone();
        let store = LazyStore::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
            Ok(Arc::new(MemoryStore::new()) as Arc<dyn SessionStore>)
        });
        assert!(!store.is_open());
        assert_eq!(opened.load(Ordering::SeqCst), 0);
        assert!(store.list().unwrap().is_empty());
        assert!(store.list().unwrap().is_empty());
        assert!(store.is_open());
        assert_eq!(opened.load(Ordering::SeqCst), 1);

        let failing = LazyStore::new(|| Err(StoreError::Corrupt("no disk".into())));
        for _ in 0..2 {
            assert!(matches!(failing.list(), Err(StoreError::Corrupt(m)) if m == "no disk"));
        }
    }
}
