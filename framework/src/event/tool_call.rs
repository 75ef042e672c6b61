//! Tool calls in the event stream: their status (and the transitions the lifecycle allows), the
//! call as announced, its updates, and the [`ToolCallBook`] a front-end keeps of them.

use super::AgentEvent;
use super::refusal::Refusal;
use crate::ids::{ToolCallId, TurnId};
use crate::tool::{ToolCallLocation, ToolContent, ToolKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// A tool call's status, as ACP's `ToolCallStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Announced; waiting for validation or permission.
    Pending,
    /// Running.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Failed, was rejected, or was cancelled.
    Failed,
    /// Waits for the user's answer to a question: the chat paused (see
    /// [`question`](crate::question)); the call runs on when the answer comes.
    AwaitingAnswer,
}

impl ToolCallStatus {
    /// Whether a call may move from `self` to `next`: pending → in_progress → completed | failed,
    /// and pending → failed (rejected, invalid input, cancelled); a running call may wait for
    /// an answer (in_progress → awaiting_answer) and then run on or be given up
    /// (awaiting_answer → in_progress | failed).
    pub fn can_become(self, next: ToolCallStatus) -> bool {
        use ToolCallStatus::*;
        matches!(
            (self, next),
            (Pending, InProgress)
                | (Pending, Failed)
                | (InProgress, Completed)
                | (InProgress, Failed)
                | (InProgress, AwaitingAnswer)
                | (AwaitingAnswer, InProgress)
                | (AwaitingAnswer, Failed)
        )
    }

    /// Whether the call is over.
    pub fn is_final(self) -> bool {
        matches!(self, ToolCallStatus::Completed | ToolCallStatus::Failed)
    }
}

/// A tool call as announced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSnapshot {
    /// The call's id.
    pub tool_call_id: ToolCallId,
    /// The assistant turn that asked for it.
    pub turn_id: TurnId,
    /// The tool's name.
    pub tool_name: String,
    /// A human-readable title.
    pub title: String,
    /// The tool's kind.
    pub kind: ToolKind,
    /// Its status (`pending` when announced).
    pub status: ToolCallStatus,
    /// The input as the model sent it (a JSON string when it was not valid JSON).
    pub raw_input: Value,
    /// The files it touches.
    pub locations: Vec<ToolCallLocation>,
}

/// A change to a tool call; unset fields did not change.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolCallUpdate {
    /// The call's id.
    pub tool_call_id: ToolCallId,
    /// The new status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ToolCallStatus>,
    /// The new title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The content so far (replaces earlier content).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ToolContent>>,
    /// The locations (replace earlier locations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// The raw output, on completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    /// How long the call ran, on its final status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// On a `failed` status the executor set itself: why the call did not run or stopped
    /// (unknown tool, bad arguments, denied, rejected, cancelled). A tool's own failure has
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
}

impl ToolCallUpdate {
    /// An update that only sets the status.
    pub fn status(tool_call_id: ToolCallId, status: ToolCallStatus) -> Self {
        Self {
            tool_call_id,
            status: Some(status),
            ..Self::default()
        }
    }
}

/// The latest state of every tool call seen in an event stream, and which turns belong to
/// sub-agents: a front-end feeds it the events and reads a call's title, tool name, kind and
/// status with any update, and the fork call a sub-agent's turn (or call) belongs to.
#[derive(Debug, Clone, Default)]
pub struct ToolCallBook {
    calls: HashMap<ToolCallId, ToolCallSnapshot>,
    /// Sub-agents' turns, each with the call that started its sub-agent.
    fork_turns: HashMap<TurnId, ToolCallId>,
}

impl ToolCallBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in an event; for a call's announcement or update, returns the call as it now is
    /// (an update of a call never announced is ignored).
    pub fn apply(&mut self, event: &AgentEvent) -> Option<&ToolCallSnapshot> {
        match event {
            AgentEvent::TurnStarted {
                turn_id,
                parent_fork_tool_call_id: Some(parent),
                ..
            } => {
                self.fork_turns.insert(turn_id.clone(), parent.clone());
                None
            }
            AgentEvent::ToolCall(snapshot) => {
                let id = snapshot.tool_call_id.clone();
                self.calls.insert(id.clone(), snapshot.clone());
                self.calls.get(&id)
            }
            AgentEvent::ToolCallUpdate(update) => {
                let call = self.calls.get_mut(&update.tool_call_id)?;
                if let Some(status) = update.status {
                    call.status = status;
                }
                if let Some(title) = &update.title {
                    call.title = title.clone();
                }
                if let Some(locations) = &update.locations {
                    call.locations = locations.clone();
                }
                Some(call)
            }
            _ => None,
        }
    }

    /// A call, as last seen.
    pub fn get(&self, id: &ToolCallId) -> Option<&ToolCallSnapshot> {
        self.calls.get(id)
    }

    /// The call whose sub-agent a turn belongs to (`None` for the main loop's turns). A
    /// front-end folds that turn's text and calls under it.
    pub fn fork_of_turn(&self, turn_id: &TurnId) -> Option<&ToolCallId> {
        self.fork_turns.get(turn_id)
    }

    /// The call whose sub-agent made the call `id` (`None` for the main loop's calls).
    pub fn fork_of_call(&self, id: &ToolCallId) -> Option<&ToolCallId> {
        self.fork_of_turn(&self.calls.get(id)?.turn_id)
    }
}
