//! How a chat reaches the session store: as it goes (its prompt, then each round), when it
//! ends, and when the whole history is compacted into a summary.

use super::{Chat, system_prompt};
use crate::agent::Session;
use crate::agent::compaction::{Compaction, CompactionTrigger, RequestShape, compact_with_hooks};
use crate::error::AgentError;
use crate::event::{AgentEvent, StopReason, Usage};
use crate::session::{ChatKey, ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError};
use crate::sync::lock;
use std::sync::Arc;

/// What the session store has of a chat: whether it began recording it (and under which key),
/// how many of its messages it holds, and whether the history was compacted since.
pub(super) struct RecordState {
    /// The title this chat gives the session, if it is its first.
    title: Option<String>,
    /// The chat as the store began recording it, once it has.
    pub(super) begun: Option<ChatKey>,
    /// How many of the chat's new messages the store has recorded.
    recorded_messages: usize,
    /// Whether the session's history was compacted since the store last recorded the chat.
    pub(super) compacted: bool,
}

impl RecordState {
    /// Nothing recorded yet, for a chat that gives the session `title`.
    pub(super) fn new(title: Option<String>) -> Self {
        Self {
            title,
            begun: None,
            recorded_messages: 0,
            compacted: false,
        }
    }
}

impl Chat<'_> {
    /// The store this chat is recorded in: the agent's, for a main chat (a sub-agent's chat is
    /// recorded in the calling chat's transcript).
    pub(super) fn store(&self) -> Option<Arc<dyn SessionStore>> {
        let main = self.session.fork.is_none();
        self.session.agent.store().filter(|_| main).cloned()
    }

    /// What the store has not recorded yet: the events and messages since it last did (all of
    /// the chat's messages, after a compaction, with the history they now follow).
    fn unrecorded(&self) -> ChatProgress {
        let from = if self.record.compacted {
            0
        } else {
            self.record.recorded_messages
        };
        ChatProgress {
            messages: self.new_messages[from..].to_vec(),
            events: lock(&self.recorder.transcript).events().to_vec(),
            history: self.record.compacted.then(|| self.session.history.clone()),
        }
    }

    /// Starts recording what the chat has finished since the store last did (first its prompt,
    /// then each round), so a process killed mid-chat leaves it in the store, read back as
    /// interrupted. The write goes on while the round's model request is sent: the request does
    /// not wait for the database, but nothing of its response is taken (shown, recorded, its
    /// calls run) before the record is written ([`Recording::wait`]).
    pub(super) fn start_recording(&mut self) -> Option<Recording> {
        let store = self.store()?;
        let progress = self.unrecorded();
        if self.record.begun.is_some() && progress.messages.is_empty() && progress.events.is_empty()
        {
            return None;
        }
        let recorded_events = progress.events.len();
        let recorded_messages = self.new_messages.len();
        let (id, begun, title) = (
            self.session.id.clone(),
            self.record.begun,
            self.record.title.clone(),
        );
        let write = start_write(self.session, store, move |store| match begun {
            Some(key) => store.continue_chat(&id, key, &progress).map(|()| Some(key)),
            None => store.begin_chat(&id, title.as_deref(), &progress),
        });
        Some(Recording {
            write,
            recorded_events,
            recorded_messages,
        })
    }

    /// Waits for the round's record to be written, then keeps the checkpoint taken since.
    pub(super) async fn finish_recording(
        &mut self,
        recording: Option<Recording>,
    ) -> Result<(), AgentError> {
        let Some(recording) = recording else {
            return Ok(());
        };
        let key = recording.write.finish(self.session).await?;
        if key.is_some() {
            self.record.begun = key;
            self.record.recorded_messages = recording.recorded_messages;
            self.record.compacted = false;
            lock(&self.recorder.transcript).discard_first(recording.recorded_events);
        }
        self.store_checkpoint().await?;
        Ok(())
    }

    /// Writes the chat to the store and adds its messages to the history.
    pub(super) async fn save(&mut self, stop_reason: Option<StopReason>) -> Result<(), AgentError> {
        // A sub-agent's pause is recorded with the calling chat's.
        if self.session.fork.is_none() {
            self.session.paused =
                (stop_reason == Some(StopReason::Paused)).then(|| self.pauses.take_paused());
        }
        self.finish_checkpoint().await?;
        if let Some(store) = self.store() {
            let rest = self.unrecorded();
            let record = ChatRecord {
                begun: self.record.begun,
                messages: rest.messages,
                events: rest.events,
                stop_reason,
                usage: self.usage,
                remembered: self.session.remembered_answers(),
                title: self.record.title.clone(),
                history: rest.history,
                paused: self.session.paused.clone(),
            };
            let id = self.session.id.clone();
            write_session(self.session, store, move |store| {
                store.append_chat(&id, &record)
            })
            .await?;
        }
        let messages = std::mem::take(&mut self.new_messages);
        self.session.history.extend(messages);
        Ok(())
    }
}

/// Replaces the whole history of `session` by a summary the model writes now, recorded in the
/// store as a compaction is. Returns the tokens the summary took, or `None` when there was
/// nothing to compact or `cancel` fired first (the history is then unchanged).
pub(crate) async fn compact(
    session: &mut Session,
    instructions: Option<&str>,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Option<Compaction>, AgentError> {
    if session.history.is_empty() {
        return Ok(None);
    }
    let tools = session.executor.registry().definitions();
    let system = system_prompt(session, &tools, &[], None);
    let model = session.model.clone();
    let request = RequestShape {
        model: model.as_ref(),
        system: &system,
        tools: &tools,
    };
    let settings = session.agent.inner.config.compaction;
    let mut usage = Usage::default();
    let compacting = compact_with_hooks(
        session.agent.hooks(),
        session.hook_session(),
        &request,
        &session.history,
        &settings,
        CompactionTrigger::Manual,
        instructions,
        &mut usage,
    );
    let hooked = tokio::select! {
        hooked = compacting => hooked?,
        () = cancel.cancelled() => return Ok(None),
    };
    for notice in &hooked.notices {
        tracing::warn!("{notice}");
    }
    if let Some(reason) = hooked.blocked {
        return Err(AgentError::CompactionBlocked(reason));
    }
    let Some(compacted) = hooked.compacted else {
        return Ok(None);
    };
    let name = model.name();
    session.spending.count_request(&name);
    let cost = model.price().map(|price| price.cost_of(&usage));
    session.spending.add(&name, usage, cost);
    let history = compacted.head;
    if let Some(store) = session.agent.store().cloned() {
        let record = ChatRecord {
            begun: None,
            messages: Vec::new(),
            events: vec![AgentEvent::Compacted(compacted.report.clone())],
            stop_reason: Some(StopReason::EndTurn),
            usage,
            remembered: session.remembered_answers(),
            title: None,
            history: Some(history.clone()),
            paused: session.paused.clone(),
        };
        let id = session.id.clone();
        write_session(session, store, move |store| store.append_chat(&id, &record)).await?;
    }
    session.history = history;
    Ok(Some(compacted.report))
}

/// A round's progress on its way to the store ([`Chat::start_recording`]).
pub(super) struct Recording {
    write: PendingWrite<Option<ChatKey>>,
    /// How many of the transcript's events the record holds.
    recorded_events: usize,
    /// How many of the chat's new messages the store will have recorded.
    recorded_messages: usize,
}

impl Recording {
    /// Waits until the record is written (or failed to be): nothing of the round's response is
    /// taken before.
    pub(super) async fn wait(&mut self) {
        self.write.wait().await;
    }
}

/// How a write to the store went: the session's own record (outer result), then the write
/// (inner result).
type Outcome<T> = Result<Result<T, StoreError>, StoreError>;

/// A write to the store under way on the blocking pool, or done.
pub(super) struct PendingWrite<T> {
    written: Written<T>,
    /// The session's own record, when this write is its first (kept to be written by the
    /// next write should this one fail).
    unstored: Option<SessionMeta>,
}

enum Written<T> {
    Pending(tokio::task::JoinHandle<Outcome<T>>),
    Done(Outcome<T>),
}

impl<T> PendingWrite<T> {
    /// Waits for the write to end, keeping how it went.
    async fn wait(&mut self) {
        if let Written::Pending(handle) = &mut self.written {
            self.written = Written::Done(joined(handle.await));
        }
    }

    /// Waits for the write; when the session's own record failed, the session stays to be
    /// recorded by the next write.
    pub(super) async fn finish(self, session: &mut Session) -> Result<T, AgentError> {
        let outcome = match self.written {
            Written::Pending(handle) => joined(handle.await),
            Written::Done(outcome) => outcome,
        };
        match outcome {
            Ok(written) => Ok(written?),
            Err(error) => {
                session.unstored = self.unstored;
                Err(error.into())
            }
        }
    }
}

/// A write's outcome, a write that panicked being a failed one.
fn joined<T>(joined: Result<Outcome<T>, tokio::task::JoinError>) -> Outcome<T> {
    joined.unwrap_or_else(|e| Err(StoreError::Panicked(e.to_string())))
}

/// Starts `write` against `store` on the blocking pool (a database write must not hold up the
/// runtime's other chats), first recording the session itself when this is its first write (a
/// session is stored once it has a message).
pub(super) fn start_write<T: Send + 'static>(
    session: &mut Session,
    store: Arc<dyn SessionStore>,
    write: impl FnOnce(&dyn SessionStore) -> Result<T, StoreError> + Send + 'static,
) -> PendingWrite<T> {
    let unstored = session.unstored.take();
    let meta = unstored.clone();
    let written = tokio::task::spawn_blocking(move || {
        if let Some(meta) = &meta {
            store.create(meta)?;
        }
        Ok(write(store.as_ref()))
    });
    PendingWrite {
        written: Written::Pending(written),
        unstored,
    }
}

/// Runs `write` against `store` ([`start_write`]) and waits for it.
pub(super) async fn write_session<T: Send + 'static>(
    session: &mut Session,
    store: Arc<dyn SessionStore>,
    write: impl FnOnce(&dyn SessionStore) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, AgentError> {
    start_write(session, store, write).finish(session).await
}
