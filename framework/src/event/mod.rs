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
//! | `PermissionResolved` | — (the answer to the `session/request_permission` request the front-end's [`PermissionHandler`](crate::permission::PermissionHandler) sent) |
//! | `QuestionPending` / `QuestionAnswered` | — (ACP asks at once, with `elicitation/create`; only front-ends that pause for answers see them) |
//! | `Usage` | `usage_update` |
//! | `Notice` | — (logged on stderr) |
//! | `ChatEnded` | the `session/prompt` response `{stopReason}` |
//! | `ChatFailed` | the `session/prompt` error response |
//!
//! Permission questions are not events: the executor asks the front-end's
//! [`PermissionHandler`](crate::permission::PermissionHandler), which shows the question its
//! own way, and records the answer as `PermissionResolved`.
//!
//! A call's updates carry only what changed; a front-end that shows a call's title or tool
//! name with every update keeps a [`ToolCallBook`].

use crate::cost::Spending;
pub use crate::cost::Usage;
use crate::ids::{SessionId, ToolCallId, TurnId};
use crate::tool::ContentBlock;
pub use agentry_plugin::plan::{PlanEntry, PlanPriority, PlanStatus};
pub use compaction::{Compaction, CompactionStrategy, CompactionTrigger};
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod compaction;
pub(crate) mod permission;
mod spending;
use agentry_plugin::question;
mod refusal;
mod tool_call;
mod tracker;

use permission::PermissionOutcome;
use question::{PendingQuestion, QuestionAnswer};
pub use refusal::Refusal;
pub use tool_call::{ToolCallBook, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate};
pub use tracker::{CallTracker, IllegalTransition};

/// The `loop_id` of a chat's main loop.
pub const ROOT_LOOP: &str = "root";

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
        /// The loop the turn belongs to: [`ROOT_LOOP`] for the
        /// chat's main loop, the sub-agent's own for a sub-agent's.
        #[serde(default = "root_loop")]
        loop_id: String,
        /// When it began (RFC 3339, milliseconds, UTC).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        started_at: Option<String>,
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
    /// The front-end's permission handler (or the chat's cancellation) answered whether a
    /// tool call may run.
    PermissionResolved {
        /// The call in question.
        tool_call_id: ToolCallId,
        /// The answer.
        outcome: PermissionOutcome,
    },
    /// A tool call asked the user questions that are answered later: the chat pauses (see
    /// [`pause`](crate::pause)).
    QuestionPending(PendingQuestion),
    /// The user answered a paused question (the content of the user turn that resumes the
    /// chat).
    QuestionAnswered {
        /// The user turn.
        turn_id: TurnId,
        /// The answer.
        answer: QuestionAnswer,
    },
    /// Token usage of one model response, and what it cost.
    Usage {
        /// The assistant turn.
        turn_id: TurnId,
        /// Its usage.
        usage: Usage,
        /// The model that answered (empty in sessions recorded before models were named).
        #[serde(default)]
        model: String,
        /// What the response cost, in US dollars; `None` when its model has no price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// What the session has cost so far, this response included (its priced requests, the
        /// sub-agents' too); `None` while none was priced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_cost_usd: Option<f64>,
    },
    /// The conversation was compacted to fit the model's context window (or because the user
    /// asked): what was done, what was kept and how many tokens it saved.
    Compacted(Compaction),
    /// Something the user should know that is not part of the answer (a retry, say).
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
        /// As in `TurnStarted`.
        #[serde(default = "root_loop")]
        loop_id: String,
        /// How long it took, in milliseconds (for a turn taken up again after a pause, since
        /// it was).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
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
    /// Only in a stored session: the chat before this mark never ended (the agent was killed or
    /// crashed mid-chat). What it had finished is kept; what was under way is lost.
    ChatInterrupted {
        /// The session.
        session_id: SessionId,
    },
}

/// What front-ends show for [`AgentEvent::ChatInterrupted`].
pub const CHAT_INTERRUPTED: &str =
    "Interrupted: the agent stopped before this prompt's answer was finished.";

/// The loop of turns recorded before loops had ids.
fn root_loop() -> String {
    ROOT_LOOP.to_owned()
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
    /// Tokens used by every model request of the chat's own loop (its sub-agents' are in
    /// `spending`).
    pub usage: Usage,
    /// What the chat's model requests used and cost, by model, its sub-agents' included.
    #[serde(default)]
    pub spending: Spending,
    /// Model requests made.
    pub model_requests: u32,
    /// Wall time of the chat, in milliseconds.
    pub duration_ms: u64,
}

impl ChatSummary {
    /// What the chat cost, in US dollars, its sub-agents included; `None` when none of its
    /// requests was priced (see [`Spending::unpriced_models`]).
    pub fn cost_usd(&self) -> Option<f64> {
        self.spending.cost_usd()
    }

    /// The answer as text: the text itself, or the structured result as pretty JSON.
    pub fn answer(&self) -> String {
        match &self.result {
            Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
        }
    }

    /// The structured answer as a `T`, for a chat asked for one
    /// ([`ChatOptions::output_of`](crate::agent::ChatOptions::output_of)); an error says how the
    /// answer differs from a `T`.
    pub fn output<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.result)
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
    /// The next model request would have taken the session past its budget
    /// ([`AgentConfig::max_budget_usd`](crate::agent::AgentConfig::max_budget_usd)).
    MaxBudget,
    /// The model refused to go on.
    Refusal,
    /// A hook said the agent must stop (`continue: false`), with its reason for the user.
    HookStopped,
    /// The user cancelled the chat.
    Cancelled,
    /// A tool call waits for the user's answer to a question; the chat goes on when it comes
    /// ([`Session::answer`](crate::agent::Session::answer)). Only front-ends that pause for
    /// questions see it (ACP asks at once and never does).
    Paused,
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
            StopReason::MaxBudget => "max_budget",
            StopReason::Refusal => "refusal",
            StopReason::HookStopped => "hook_stopped",
            StopReason::Cancelled => "cancelled",
            StopReason::Paused => "paused",
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
    use crate::tool::ToolKind;
    use ToolCallStatus::*;
    use serde_json::json;

    #[test]
    fn the_prompt_is_what_was_read_anew_plus_what_the_cache_gave_and_took() {
        let usage = Usage {
            input_tokens: 5,
            output_tokens: 100,
            cache_read_tokens: 70,
            cache_write_tokens: 20,
        };
        assert_eq!(usage.prompt_tokens(), 95);
    }

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
            parent_fork_tool_call_id: Some("fork_1".into()),
            loop_id: "loop_fork_1".into(),
            duration_ms: Some(12),
        };
        let json = json!({"type": "turn_ended", "turn_id": "t", "role": "assistant", "status": "paused",
                          "parent_fork_tool_call_id": "fork_1", "loop_id": "loop_fork_1", "duration_ms": 12});
        assert_eq!(serde_json::to_value(&end).unwrap(), json);
        // Transcripts stored before loops had ids read as the main loop's.
        let stored = json!({"type": "turn_ended", "turn_id": "t", "role": "user", "status": "completed",
                            "parent_fork_tool_call_id": null});
        assert!(matches!(
            serde_json::from_value::<AgentEvent>(stored).unwrap(),
            AgentEvent::TurnEnded { loop_id, .. } if loop_id == "root"
        ));
    }

    #[test]
    fn the_book_keeps_each_calls_latest_state_for_its_updates() {
        let mut book = ToolCallBook::new();
        let announced = AgentEvent::ToolCall(ToolCallSnapshot {
            tool_call_id: "c1".into(),
            turn_id: "t".into(),
            tool_name: "Read".into(),
            title: "Read a.txt".into(),
            kind: ToolKind::Read,
            status: Pending,
            raw_input: json!({"file_path": "a.txt"}),
            locations: Vec::new(),
        });
        assert_eq!(book.apply(&announced).unwrap().title, "Read a.txt");
        let done = AgentEvent::ToolCallUpdate(ToolCallUpdate {
            title: Some("Read a.txt (3 lines)".into()),
            ..ToolCallUpdate::status("c1".into(), Completed)
        });
        let call = book.apply(&done).unwrap();
        assert_eq!(
            (call.tool_name.as_str(), call.title.as_str(), call.status),
            ("Read", "Read a.txt (3 lines)", Completed)
        );
        let unknown = AgentEvent::ToolCallUpdate(ToolCallUpdate::status("c2".into(), Failed));
        assert!(book.apply(&unknown).is_none());
        assert!(
            book.apply(&AgentEvent::Notice {
                message: String::new()
            })
            .is_none()
        );
        assert_eq!(book.get(&"c1".into()).unwrap().status, Completed);
    }

    #[test]
    fn the_book_knows_which_turns_and_calls_are_a_sub_agents() {
        let mut book = ToolCallBook::new();
        for (turn, parent) in [("root_turn", None), ("child_turn", Some("fork_1"))] {
            book.apply(&AgentEvent::TurnStarted {
                turn_id: turn.into(),
                role: Role::Assistant,
                status: TurnStatus::Streaming,
                parent_fork_tool_call_id: parent.map(Into::into),
                loop_id: parent.map_or("root".to_owned(), |p| format!("loop_{p}")),
                started_at: None,
            });
        }
        for (call, turn) in [("fork_1", "root_turn"), ("inner", "child_turn")] {
            book.apply(&AgentEvent::ToolCall(ToolCallSnapshot {
                tool_call_id: call.into(),
                turn_id: turn.into(),
                tool_name: "T".into(),
                title: "T".into(),
                kind: ToolKind::Other,
                status: Pending,
                raw_input: json!({}),
                locations: Vec::new(),
            }));
        }
        assert_eq!(book.fork_of_turn(&"root_turn".into()), None);
        assert_eq!(
            book.fork_of_turn(&"child_turn".into())
                .map(ToString::to_string),
            Some("fork_1".to_owned())
        );
        assert_eq!(book.fork_of_call(&"fork_1".into()), None);
        assert_eq!(
            book.fork_of_call(&"inner".into()).map(ToString::to_string),
            Some("fork_1".to_owned())
        );
    }
}
