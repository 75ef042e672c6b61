//! A round's record is written while its model request streams: the request does not wait for
//! the database, the round's calls wait for the record, and a record that cannot be written
//! fails the chat with none of the round's calls run.

use super::support::*;
use agentry::event::ToolCallStatus;
use agentry::ids::SessionId;
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::session::{
    ChatKey, ChatProgress, ChatRecord, MemoryStore, SessionMeta, SessionStore, StoreError,
    StoredSession,
};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How a chat's first record is written.
enum FirstRecord {
    /// Only once the model has been asked (or after 5 s, when it never is), noting whether it was.
    AfterTheRequest,
    /// Not at all: the write fails.
    Fails,
}

/// A memory store whose first write of a chat (`begin_chat`) waits or fails as told.
struct GatedStore {
    inner: MemoryStore,
    first: FirstRecord,
    model: OnceLock<Arc<ScriptedModel>>,
    asked_while_writing: AtomicBool,
    /// How many times the session itself was recorded.
    creates: AtomicUsize,
}

impl GatedStore {
    fn new(first: FirstRecord) -> Arc<Self> {
        Arc::new(Self {
            inner: MemoryStore::default(),
            first,
            model: OnceLock::new(),
            asked_while_writing: AtomicBool::new(false),
            creates: AtomicUsize::new(0),
        })
    }
}

impl SessionStore for GatedStore {
    fn create(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.creates.fetch_add(1, Ordering::SeqCst);
        self.inner.create(meta)
    }
    fn begin_chat(
        &self,
        id: &SessionId,
        title: Option<&str>,
        first: &ChatProgress,
    ) -> Result<Option<ChatKey>, StoreError> {
        match self.first {
            FirstRecord::Fails => {
                return Err(StoreError::Database {
                    path: "gated.db".into(),
                    message: "disk I/O error".into(),
                });
            }
            FirstRecord::AfterTheRequest => {
                let model = self.model.get().expect("the test sets the model");
                let waiting = Instant::now();
                while model.requests().is_empty() && waiting.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let asked = !model.requests().is_empty();
                self.asked_while_writing.store(asked, Ordering::SeqCst);
            }
        }
        self.inner.begin_chat(id, title, first)
    }
    fn continue_chat(
        &self,
        id: &SessionId,
        chat: ChatKey,
        more: &ChatProgress,
    ) -> Result<(), StoreError> {
        self.inner.continue_chat(id, chat, more)
    }
    fn append_chat(&self, id: &SessionId, chat: &ChatRecord) -> Result<(), StoreError> {
        self.inner.append_chat(id, chat)
    }
    fn load(&self, id: &SessionId) -> Result<StoredSession, StoreError> {
        self.inner.load(id)
    }
    fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.inner.list()
    }
    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.inner.delete(id)
    }
    fn rename(&self, id: &SessionId, title: &str) -> Result<(), StoreError> {
        self.inner.rename(id, title)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_is_asked_while_the_prompt_is_being_recorded() {
    let store = GatedStore::new(FirstRecord::AfterTheRequest);
    let mut h = harness([
        ScriptedResponse::tool_call("Look", json!({"path": "a.txt", "millis": 0})),
        ScriptedResponse::text("done"),
    ])
    .store(store.clone())
    .build();
    store.model.set(h.model.clone()).ok().unwrap();
    let started = Instant::now();
    let summary = h.prompt("look at a.txt").await.unwrap();
    assert!(
        store.asked_while_writing.load(Ordering::SeqCst),
        "the model request waited for the database (the chat took {:?})",
        started.elapsed()
    );
    assert_eq!(summary.answer(), "done");
    assert_eq!(h.log.entries(), ["start a.txt", "end a.txt"]);
    let stored = store.load(h.session.id()).unwrap();
    assert_eq!(stored.messages.len(), 4, "{:?}", stored.messages);
}

#[tokio::test]
async fn a_round_that_cannot_be_recorded_runs_none_of_its_calls() {
    let store = GatedStore::new(FirstRecord::Fails);
    let mut h = harness([ScriptedResponse::tool_call(
        "Change",
        json!({"path": "a.txt", "millis": 0}),
    )])
    .store(store.clone())
    .build();
    let failure = h.prompt("change a.txt").await.unwrap_err();
    assert!(failure.to_string().contains("disk I/O error"), "{failure}");
    assert!(
        h.log.entries().is_empty(),
        "a call ran: {:?}",
        h.log.entries()
    );
    let events = h.events();
    let call = events
        .iter()
        .find_map(|event| match event {
            agentry::event::AgentEvent::ToolCall(call) => Some(call.tool_call_id.to_string()),
            _ => None,
        })
        .expect("the call was announced");
    assert_eq!(
        statuses(&events, &call).last(),
        Some(&ToolCallStatus::Failed)
    );
    // The session was recorded once: a failed chat write does not record it again.
    assert_eq!(store.creates.load(Ordering::SeqCst), 1);
    // The failed chat keeps its prompt, never the unrun call.
    let kept = store.load(h.session.id()).unwrap().messages;
    assert!(
        kept.iter()
            .all(|message| matches!(message, agentry::model::Message::User { .. })),
        "{kept:?}"
    );
}
