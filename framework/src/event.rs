//! The one event model. The agent loop and the executor emit [`AgentEvent`]s; every front-end is a
//! projection of this stream, and knows nothing the loop did not say here.
//!
//! Words: a **chat** is one prompt turn (ACP's `session/prompt` from request to response, one
//! `chat:send` in the WebSocket protocol). A chat holds **turns**: the user's message, then one
//! assistant turn per model request.
//!
//! # Projection to ACP (`session/update`)
//!
//! | `AgentEvent` | ACP |
//! |---|---|
//! | `ChatStarted` | — (the `session/prompt` request itself) |
//! | `TurnStarted` / `TurnEnded` | — (ACP has no turn boundaries) |
//! | `UserMessage` | `user_message_chunk` (only when replaying history in `session/load`) |
//! | `TextDelta` | `agent_message_chunk` `{type: text}` |
//! | `ThinkingDelta` | `agent_thought_chunk` `{type: text}` |
//! | `Plan` | `plan` `{entries: [{content, priority, status}]}` |
//! | `ToolCall` | `tool_call` `{toolCallId, title, kind, status: pending, rawInput, locations}` |
//! | `ToolCallUpdate` | `tool_call_update` (only the fields that are set: status, title, content, locations, rawOutput) |
//! | `PermissionRequested` | `session/request_permission` request (the answer comes back through [`crate::permission::PermissionHandler`]) |
//! | `PermissionResolved` | — (the response to that request) |
//! | `Usage` | `usage_update` |
//! | `Notice` | — (logged on stderr) |
//! | `ChatEnded` | the `session/prompt` response `{stopReason}` |
//! | `ChatFailed` | the `session/prompt` error response |
//!
//! # Projection to the WebSocket chat protocol
//!
//! | `AgentEvent` | WebSocket event |
//! |---|---|
//! | `ChatStarted` | `chat:start` `{session_id}` |
//! | `TurnStarted` | `turn:start` `{turn_id, role, status, parent_fork_tool_call_id}` |
//! | `UserMessage` | part of the user turn's projection (`blocks`) |
//! | `TextDelta` | `turn:patch` `{add_content: {type: text_delta, …}}` |
//! | `ThinkingDelta` | `turn:patch` `{add_content: {type: thinking_delta, …}}` |
//! | `Plan` | `turn:patch` `{plan: entries}` |
//! | `ToolCall` | `turn:patch` `{add_tool_call: {id, tool_name, display_name: title, arguments (JSON string), status: "pending"}}` |
//! | `ToolCallUpdate` (final status) | `turn:patch` `{tool_result: {tool_call_id, result, status: "done" \| "error", duration_ms}}` |
//! | `ToolCallUpdate` (progress) | `turn:patch` `{update_tool_call: …}` |
//! | `PermissionRequested` | `turn:patch` `{permission_request: …}`, answered by the client |
//! | `TurnEnded` | `turn:end` `{turn_id, role, status: completed \| paused \| cancelled \| failed}` |
//! | `Usage` | carried on `chat:end` |
//! | `ChatEnded` | `chat:end` `{status: "completed", finish_reason: stop reason, result: {output}}` |
//! | `ChatFailed` | `chat:end` `{status: "error", error}` |

use crate::ids::{SessionId, ToolCallId, TurnId};
use crate::model::ContentBlock;
use crate::permission::{PermissionOption, PermissionOutcome};
use crate::tool::{ToolCallLocation, ToolContent, ToolKind};
pub use agentry_plugin::plan::{PlanEntry, PlanPriority, PlanStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::ops::AddAssign;

/// Everything that happens in a session that a front-end may show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A chat (prompt turn) began.
    ChatStarted {
        /// The session.
        session_id: SessionId,
    },
    /// A turn began.
    TurnStarted {
        /// The turn.
        turn_id: TurnId,
        /// Who speaks in it.
        role: Role,
        /// `streaming` for an assistant turn (its content is on its way); `completed` for a
        /// user turn, whose content comes whole.
        status: TurnStatus,
        /// The fork tool call whose sub-agent this turn belongs to; `None` for the root agent.
        parent_fork_tool_call_id: Option<ToolCallId>,
    },
    /// The user's message (the content of a user turn).
    UserMessage {
        /// The user turn.
        turn_id: TurnId,
        /// What the user sent.
        content: Vec<ContentBlock>,
    },
    /// Streamed answer text.
    TextDelta {
        /// The assistant turn.
        turn_id: TurnId,
        /// The next piece of text.
        text: String,
    },
    /// Streamed reasoning text.
    ThinkingDelta {
        /// The assistant turn.
        turn_id: TurnId,
        /// The next piece of reasoning.
        text: String,
    },
    /// The agent's plan, in full (each update replaces the previous plan).
    Plan {
        /// The plan's entries.
        entries: Vec<PlanEntry>,
    },
    /// A tool call was announced (status `pending`).
    ToolCall(ToolCallSnapshot),
    /// A tool call changed.
    ToolCallUpdate(ToolCallUpdate),
    /// The executor asks the user whether a tool call may run.
    PermissionRequested {
        /// The call in question.
        tool_call_id: ToolCallId,
        /// The options offered.
        options: Vec<PermissionOption>,
    },
    /// The user (or the turn's cancellation) answered a permission request.
    PermissionResolved {
        /// The call in question.
        tool_call_id: ToolCallId,
        /// The answer.
        outcome: PermissionOutcome,
    },
    /// Token usage of one model response.
    Usage {
        /// The assistant turn.
        turn_id: TurnId,
        /// Its usage.
        usage: Usage,
    },
    /// Something the user should know that is not part of the answer (a retry, a compaction).
    Notice {
        /// What happened.
        message: String,
    },
    /// A turn ended.
    TurnEnded {
        /// The turn.
        turn_id: TurnId,
        /// Who spoke in it.
        role: Role,
        /// How it ended.
        status: TurnStatus,
        /// As in `TurnStarted`.
        parent_fork_tool_call_id: Option<ToolCallId>,
    },
    /// The chat ended with a stop reason.
    ChatEnded(ChatSummary),
    /// The chat ended with an error (the model failed, the store failed, …).
    ChatFailed {
        /// The session.
        session_id: SessionId,
        /// What went wrong.
        message: String,
    },
}

/// How a chat ended, with what headless callers need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatSummary {
    /// The session.
    pub session_id: SessionId,
    /// Why the chat stopped.
    pub stop_reason: StopReason,
    /// The answer: the last assistant text, or the structured value when an output schema was set.
    pub result: Value,
    /// Tokens used by every model request of the chat.
    pub usage: Usage,
    /// Model requests made.
    pub model_requests: u32,
    /// Wall time of the chat, in milliseconds.
    pub duration_ms: u64,
}

impl ChatSummary {
    /// The answer as text: the text itself, or the structured result as pretty JSON.
    pub fn answer(&self) -> String {
        match &self.result {
            Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
        }
    }
}

/// Who speaks in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// Where a turn stands: `streaming` while it runs, then how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// Its content is still arriving.
    Streaming,
    /// It finished.
    Completed,
    /// It waits for the user's answer (a question tool).
    Paused,
    /// The user cancelled it.
    Cancelled,
    /// It failed.
    Failed,
}

/// Why a chat stopped: ACP's stop reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished without asking for more tools.
    EndTurn,
    /// The model hit its output token limit.
    MaxTokens,
    /// The chat made as many model requests as it may.
    MaxTurnRequests,
    /// The model refused to go on.
    Refusal,
    /// The user cancelled the chat.
    Cancelled,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl StopReason {
    /// The wire name (`"end_turn"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens (not counting cache reads).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

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
}

impl ToolCallStatus {
    /// Whether a call may move from `self` to `next`: pending → in_progress → completed | failed,
    /// and pending → failed (rejected, invalid input, cancelled).
    pub fn can_become(self, next: ToolCallStatus) -> bool {
        use ToolCallStatus::*;
        matches!(
            (self, next),
            (Pending, InProgress)
                | (Pending, Failed)
                | (InProgress, Completed)
                | (InProgress, Failed)
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

/// Where events go. Front-ends implement it (or use a channel, which implements it).
pub trait EventSink: Send + Sync {
    /// Takes one event. Must not block.
    fn emit(&self, event: AgentEvent);
}

impl EventSink for tokio::sync::mpsc::UnboundedSender<AgentEvent> {
    fn emit(&self, event: AgentEvent) {
        // A closed receiver means nobody is watching any more; the turn goes on regardless.
        let _ = self.send(event);
    }
}

impl<F: Fn(AgentEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: AgentEvent) {
        self(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ToolCallStatus::*;
    use serde_json::json;

    #[test]
    fn only_the_documented_status_transitions_are_legal() {
        let all = [Pending, InProgress, Completed, Failed];
        let legal: Vec<_> = all
            .iter()
            .flat_map(|&a| all.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| a.can_become(b))
            .collect();
        assert_eq!(
            legal,
            [
                (Pending, InProgress),
                (Pending, Failed),
                (InProgress, Completed),
                (InProgress, Failed)
            ]
        );
    }

    #[test]
    fn events_serialise_with_a_type_tag_and_snake_case_values() {
        let event = AgentEvent::ToolCallUpdate(ToolCallUpdate::status("c1".into(), InProgress));
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "tool_call_update", "tool_call_id": "c1", "status": "in_progress"})
        );
        let end = AgentEvent::TurnEnded {
            turn_id: "t".into(),
            role: Role::Assistant,
            status: TurnStatus::Paused,
            parent_fork_tool_call_id: None,
        };
        assert_eq!(
            serde_json::to_value(&end).unwrap(),
            json!({"type": "turn_ended", "turn_id": "t", "role": "assistant", "status": "paused", "parent_fork_tool_call_id": null})
        );
    }
}
