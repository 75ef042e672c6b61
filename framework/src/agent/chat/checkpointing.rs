//! A main chat's checkpoint: a snapshot before the chat's first change to the workspace (by
//! any tool, commands included, and by its sub-agents) and one when it ends, kept with the chat
//! in the session store as soon as each is taken.

use super::{Chat, Recorder};
use crate::agent::Session;
use crate::checkpoint::{ChatCheckpoint, CheckpointKeeper, Snapshot};
use crate::error::AgentError;
use crate::event::{AgentEvent, EventSink};
use crate::executor::BeforeChange;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A main chat's checkpointer, when the agent keeps checkpoints (a sub-agent's chat shares the
/// calling chat's).
pub(super) fn checkpointer(
    session: &Session,
    recorder: &Arc<Recorder>,
) -> Option<Arc<ChatCheckpointer>> {
    if session.fork.is_some() {
        return None;
    }
    let checkpoints = session.agent.checkpoints()?.clone();
    Some(Arc::new(ChatCheckpointer::new(
        checkpoints,
        session.options.cwd.clone(),
        recorder.clone(),
    )))
}

impl Chat<'_> {
    /// Keeps the checkpoint taken since the store last heard of it, when the store has begun
    /// recording the chat.
    pub(super) async fn store_checkpoint(&mut self) -> Result<(), AgentError> {
        let Some(checkpoint) = self.checkpoint.as_ref().and_then(|c| c.unstored()) else {
            return Ok(());
        };
        self.save_checkpoint(checkpoint).await
    }

    /// Takes the snapshot after the chat and keeps the whole checkpoint.
    pub(super) async fn finish_checkpoint(&mut self) -> Result<(), AgentError> {
        let Some(checkpointer) = self.checkpoint.clone() else {
            return Ok(());
        };
        match checkpointer.finish().await {
            Some(checkpoint) => self.save_checkpoint(checkpoint).await,
            None => Ok(()),
        }
    }

    async fn save_checkpoint(&mut self, checkpoint: ChatCheckpoint) -> Result<(), AgentError> {
        let (Some(store), Some(key)) = (self.store(), self.record.begun) else {
            return Ok(());
        };
        let id = self.session.id.clone();
        super::recording::write_session(self.session, store, move |store| {
            store.save_checkpoint(&id, key, &checkpoint)
        })
        .await
    }
}

/// The checkpoint of one chat under way (shared with its sub-agents, whose changes it covers
/// too).
pub(crate) struct ChatCheckpointer {
    checkpoints: Arc<dyn CheckpointKeeper>,
    workspace: PathBuf,
    events: Arc<dyn EventSink>,
    /// The checkpoint, once the snapshot before the first change was tried (`None` when it
    /// failed: said once, and the chat goes on without one).
    before: tokio::sync::OnceCell<Option<ChatCheckpoint>>,
    /// Whether the session store has the checkpoint as it is now.
    stored: Mutex<bool>,
}

impl ChatCheckpointer {
    /// A chat's checkpointer for `workspace`, saying what goes wrong to `events`.
    pub(crate) fn new(
        checkpoints: Arc<dyn CheckpointKeeper>,
        workspace: PathBuf,
        events: Arc<dyn EventSink>,
    ) -> Self {
        Self {
            checkpoints,
            workspace,
            events,
            before: tokio::sync::OnceCell::new(),
            stored: Mutex::new(false),
        }
    }

    /// The checkpoint, when the store does not have it as it is yet (marked as stored then).
    pub(crate) fn unstored(&self) -> Option<ChatCheckpoint> {
        let checkpoint = self.before.get().cloned().flatten()?;
        let mut stored = crate::sync::lock(&self.stored);
        (!std::mem::replace(&mut *stored, true)).then_some(checkpoint)
    }

    /// Takes the snapshot after the chat's last change, when it took one before: the chat's
    /// checkpoint, whole.
    pub(crate) async fn finish(&self) -> Option<ChatCheckpoint> {
        let mut checkpoint = self.before.get().cloned().flatten()?;
        match self.snapshot().await {
            Ok(after) => checkpoint.after = Some(after.tree),
            Err(error) => self.say(&format!("the checkpoint after the chat failed: {error}")),
        }
        let checkpoints = self.checkpoints.clone();
        let workspace = self.workspace.clone();
        // Pruning is housekeeping: the chat does not wait for it, nor fail with it.
        tokio::task::spawn_blocking(move || {
            let _ = checkpoints.prune(&workspace);
        });
        Some(checkpoint)
    }

    /// A snapshot of the workspace now, on a blocking thread, logged as a checkpoint.
    async fn snapshot(&self) -> Result<Snapshot, String> {
        let checkpoints = self.checkpoints.clone();
        let workspace = self.workspace.clone();
        tokio::task::spawn_blocking(move || {
            let snapshot = checkpoints.snapshot(&workspace)?;
            checkpoints.log(&workspace, &snapshot.tree)?;
            Ok::<_, crate::checkpoint::CheckpointError>(snapshot)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
    }

    fn say(&self, message: &str) {
        self.events.emit(AgentEvent::Notice {
            message: message.to_owned(),
        });
    }
}

#[async_trait::async_trait]
impl BeforeChange for ChatCheckpointer {
    /// Takes the snapshot before the chat's first change (once; later calls wait for it).
    async fn before_change(&self) {
        self.before
            .get_or_init(|| async {
                let taken_at = crate::session::now_rfc3339();
                match self.snapshot().await {
                    Ok(snapshot) => {
                        if !snapshot.left_out.is_empty() {
                            let list: Vec<String> =
                                snapshot.left_out.iter().map(ToString::to_string).collect();
                            self.say(&format!(
                                "the checkpoint leaves out (a rewind will not restore them): {}",
                                list.join(", ")
                            ));
                        }
                        Some(ChatCheckpoint {
                            workspace: self.workspace.clone(),
                            before: snapshot.tree,
                            after: None,
                            left_out: snapshot.left_out,
                            taken_at,
                        })
                    }
                    Err(error) => {
                        self.say(&format!(
                            "no checkpoint for this chat (a rewind cannot restore its files): {error}"
                        ));
                        None
                    }
                }
            })
            .await;
    }
}
