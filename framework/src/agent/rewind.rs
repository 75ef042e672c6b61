//! Rewinding a session to just before one of its chats: the conversation cut back there (the
//! store records the rewind), the workspace's files put back as the chat's checkpoint has
//! them, or both. A chat is named by its first user turn.
//!
//! Files the user changed by hand since the agent's last change (those that differ from the
//! snapshot taken when the last chat with a checkpoint ended) are never overwritten unless the
//! caller says so: they are listed, and left as they are.

use super::Session;
use crate::checkpoint::{Change, ChatCheckpoint, CheckpointKeeper, FileChange, LeftOut};
use crate::error::AgentError;
use crate::event::{AgentEvent, StopReason};
use crate::ids::TurnId;
use crate::session::{ChatRecord, StoredSession};
use crate::tool::ContentBlock;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::Arc;

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindScope {
    /// The workspace's files, as the chat's checkpoint has them.
    pub files: bool,
    /// The conversation, cut back to just before the chat.
    pub conversation: bool,
}

impl RewindScope {
    /// Both the files and the conversation.
    pub const BOTH: Self = Self {
        files: true,
        conversation: true,
    };
}

/// A chat a session can be rewound to (to just before it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPoint {
    /// The chat's first user turn, which names it.
    pub chat: TurnId,
    /// What the user sent (its text).
    pub prompt: String,
    /// Whether the files changed since it began (a checkpoint covers them): a rewind of the
    /// files to it changes something.
    pub files_changed: bool,
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rewound {
    /// Whether the conversation was cut back.
    pub conversation: bool,
    /// The files put back (how each differed from the checkpoint).
    pub files: Vec<FileChange>,
    /// Files changed by hand since the agent's last change: left as they are, unless the
    /// rewind was told to overwrite them (then they are in `files` too).
    pub hand_edited: Vec<FileChange>,
    /// What the checkpoint never held (too large, too many files, unreadable): left alone.
    pub left_out: Vec<LeftOut>,
    /// The prompt of the chat rewound to, for a front-end to offer it again.
    pub prompt: Vec<ContentBlock>,
}

impl Rewound {
    /// What the rewind did, a line each: the conversation cut, each file restored (how), each
    /// hand-edited file kept, what the checkpoint left out.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.conversation {
            let prompt = crate::model::text_of(&self.prompt);
            let first_line = prompt.lines().next().unwrap_or_default();
            lines.push(format!("the conversation is back to before “{first_line}”"));
        }
        for file in &self.files {
            let how = match file.change {
                Change::Added => "brought back",
                Change::Modified => "rewritten",
                Change::Deleted => "removed",
            };
            lines.push(format!("restored {}: {how}", file.path));
        }
        let restored = |path: &str| self.files.iter().any(|f| f.path == path);
        for file in self.hand_edited.iter().filter(|f| !restored(&f.path)) {
            lines.push(format!(
                "kept {}: changed by hand since the agent's last change",
                file.path
            ));
        }
        for left_out in &self.left_out {
            lines.push(format!("not in the checkpoint, left alone: {left_out}"));
        }
        lines
    }
}

/// The chat a rewind goes back to, found in the stored session.
struct Target {
    /// Its place among the session's chats.
    index: usize,
    /// Its prompt.
    prompt: Vec<ContentBlock>,
    /// The checkpoint to restore: the earliest taken from that chat on.
    restore: Option<ChatCheckpoint>,
    /// The files after the agent's last change: the latest snapshot after a chat.
    after_last_change: Option<crate::checkpoint::TreeId>,
}

impl Session {
    /// The chats this session can be rewound to, in order.
    pub fn rewind_points(&self) -> Result<Vec<RewindPoint>, AgentError> {
        let stored = self.stored()?;
        let mut changed_later = false;
        let mut points: Vec<RewindPoint> = stored
            .chats
            .iter()
            .rev()
            .filter_map(|chat| {
                changed_later |= chat.checkpoint.is_some();
                let turn = chat.turn.clone()?;
                Some(RewindPoint {
                    prompt: crate::model::text_of(&prompt_of(&stored, &turn)),
                    chat: turn,
                    files_changed: changed_later,
                })
            })
            .collect();
        points.reverse();
        Ok(points)
    }

    /// What rewinding the files to just before `chat` would change, and which of those files
    /// were changed by hand since the agent's last change (a rewind leaves them alone unless
    /// told to overwrite them). Changes nothing.
    pub async fn plan_rewind(&self, chat: &TurnId) -> Result<Rewound, AgentError> {
        let stored = self.stored()?;
        let target = target(&stored, chat)?;
        self.rewind_files(&target, None).await
    }

    /// Rewinds the session to just before `chat`: its files (as the checkpoint has them), its
    /// conversation (cut there, recorded in the store), or both. Files changed by hand since
    /// the agent's last change are overwritten only with `overwrite_hand_edits`.
    pub async fn rewind(
        &mut self,
        chat: &TurnId,
        scope: RewindScope,
        overwrite_hand_edits: bool,
    ) -> Result<Rewound, AgentError> {
        let stored = self.stored()?;
        let target = target(&stored, chat)?;
        let mut rewound = if scope.files {
            self.rewind_files(&target, Some(overwrite_hand_edits))
                .await?
        } else {
            Rewound::default()
        };
        rewound.prompt = target.prompt.clone();
        if scope.conversation {
            self.rewind_conversation(&stored, &target, &rewound).await?;
            rewound.conversation = true;
        }
        Ok(rewound)
    }

    /// The session as stored (a rewind needs the store: it names chats as stored).
    fn stored(&self) -> Result<StoredSession, AgentError> {
        if self.agent.store().is_none() {
            return Err(AgentError::Rewind(
                "the session is not stored (agentry keeps no record of its chats)".into(),
            ));
        }
        if let Some(meta) = &self.unstored {
            // Not stored yet: it has had no chat.
            return Ok(StoredSession {
                meta: meta.clone(),
                messages: Vec::new(),
                events: Vec::new(),
                remembered: Default::default(),
                paused: None,
                chats: Vec::new(),
            });
        }
        self.agent.load_session(&self.id)
    }

    /// Restores the target's checkpoint (`overwrite`: whether hand edits are overwritten;
    /// `None` only plans).
    async fn rewind_files(
        &self,
        target: &Target,
        overwrite: Option<bool>,
    ) -> Result<Rewound, AgentError> {
        let Some(checkpoint) = target.restore.clone() else {
            return Ok(Rewound::default());
        };
        let checkpoints: Arc<dyn CheckpointKeeper> =
            self.agent.checkpoints().cloned().ok_or_else(|| {
                AgentError::Rewind(
                    "this agent keeps no checkpoints now, so the files cannot be put back (the \
                 conversation can: rewind without the files)"
                        .to_owned(),
                )
            })?;
        let after = target.after_last_change.clone();
        tokio::task::spawn_blocking(move || {
            let workspace = checkpoint.workspace.as_path();
            let now = checkpoints.snapshot(workspace)?;
            let hand_edited: HashSet<String> = match &after {
                Some(after) => checkpoints
                    .changes(workspace, after, &now.tree)?
                    .into_iter()
                    .map(|change| change.path)
                    .collect(),
                None => HashSet::new(),
            };
            let is_hand_edited = |path: &str| hand_edited.contains(path);
            let (files, hand_edited) = match overwrite {
                None => checkpoints
                    .changes(workspace, &now.tree, &checkpoint.before)?
                    .into_iter()
                    .partition(|change| !is_hand_edited(&change.path)),
                Some(overwrite) => {
                    let spare = |path: &str| !overwrite && is_hand_edited(path);
                    let restored =
                        checkpoints.restore(workspace, &checkpoint.before, &now.tree, &spare)?;
                    let mut overwritten: Vec<FileChange> = restored
                        .changed
                        .iter()
                        .filter(|change| is_hand_edited(&change.path))
                        .cloned()
                        .collect();
                    overwritten.extend(restored.spared);
                    (restored.changed, overwritten)
                }
            };
            Ok::<_, crate::checkpoint::CheckpointError>(Rewound {
                files,
                hand_edited,
                left_out: checkpoint.left_out,
                ..Rewound::default()
            })
        })
        .await
        .map_err(|e| AgentError::Rewind(e.to_string()))?
        .map_err(|e| AgentError::Rewind(e.to_string()))
    }

    /// Cuts the conversation back to just before the target chat, in the store (with a note
    /// of the rewind in the transcript) and in this session.
    async fn rewind_conversation(
        &mut self,
        stored: &StoredSession,
        target: &Target,
        rewound: &Rewound,
    ) -> Result<(), AgentError> {
        let Some(store) = self.agent.store().cloned() else {
            return Ok(());
        };
        let prompt = crate::model::text_of(&target.prompt);
        let first_line = prompt.lines().next().unwrap_or_default();
        let files = match rewound.files.len() {
            0 => String::new(),
            1 => "; 1 file restored".to_owned(),
            n => format!("; {n} files restored"),
        };
        let record = ChatRecord {
            begun: None,
            messages: Vec::new(),
            events: vec![AgentEvent::Notice {
                message: format!("Rewound to before “{first_line}”{files}"),
            }],
            stop_reason: Some(StopReason::EndTurn),
            usage: Default::default(),
            remembered: self.remembered_answers(),
            title: None,
            history: None,
            paused: None,
        };
        let (id, key) = (self.id.clone(), stored.chats[target.index].key);
        let reloaded = tokio::task::spawn_blocking(move || {
            store.rewind(&id, key, &record)?;
            store.load(&id)
        })
        .await
        .map_err(|e| AgentError::Rewind(e.to_string()))??;
        self.history = reloaded.messages;
        self.paused = reloaded.paused;
        Ok(())
    }
}

/// The chat beginning with `chat`, with what a rewind to it restores.
fn target(stored: &StoredSession, chat: &TurnId) -> Result<Target, AgentError> {
    let index = stored
        .chats
        .iter()
        .position(|stored| stored.turn.as_ref() == Some(chat))
        .ok_or_else(|| AgentError::NoSuchChat(chat.clone()))?;
    let later = &stored.chats[index..];
    let restore = later.iter().find_map(|c| c.checkpoint.clone());
    let after_last_change = stored
        .chats
        .iter()
        .rev()
        .find_map(|c| c.checkpoint.as_ref())
        .and_then(|c| c.after.clone());
    Ok(Target {
        index,
        prompt: prompt_of(stored, chat),
        restore,
        after_last_change,
    })
}

/// The content of the user turn `turn` (the user's message, or the answer that resumed a
/// chat, as text).
fn prompt_of(stored: &StoredSession, turn: &TurnId) -> Vec<ContentBlock> {
    stored
        .events
        .iter()
        .find_map(|event| match event {
            AgentEvent::UserMessage { turn_id, content } if turn_id == turn => {
                Some(content.clone())
            }
            AgentEvent::QuestionAnswered { turn_id, answer } if turn_id == turn => {
                Some(vec![ContentBlock::Text {
                    text: serde_json::to_string(&answer.answers).unwrap_or_default(),
                }])
            }
            _ => None,
        })
        .unwrap_or_default()
}
