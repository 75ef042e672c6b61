//! The events hooks see, in Claude Code's hook-input shape: [`HookInput`] serialises to the JSON
//! a Claude Code hook reads on stdin (`session_id`, `transcript_path`, `cwd`,
//! `permission_mode`, `hook_event_name` and the event's own fields).

use crate::event::CompactionTrigger;
use crate::tool::ToolKind;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

/// The names of every event hooks may be given, as Claude Code writes them.
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "InstructionsLoaded",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
];

/// The session an event happens in, as hooks see it: the fields every event's input has.
#[derive(Debug, Clone, Serialize)]
pub struct HookSession {
    /// The session.
    pub session_id: String,
    /// The session's JSON-lines transcript, when the agent keeps one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<PathBuf>,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The permission mode, as Claude Code names it (`default`, `acceptEdits`, `plan`,
    /// `bypassPermissions`).
    pub permission_mode: String,
    /// The sub-agent the event happens in, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// That sub-agent's type (its definition's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The session's environment file (`SessionState::env_file`), whose `export` lines its
    /// commands take up: a `SessionStart` hook's `$CLAUDE_ENV_FILE`. Not part of the input.
    #[serde(skip)]
    pub env_file: Option<PathBuf>,
}

/// A tool call, as hooks see it.
#[derive(Debug, Clone, Serialize)]
pub struct HookToolUse {
    /// The tool's name.
    pub tool_name: String,
    /// The tool's kind (for agentry's `kind:NAME` matchers; not part of the input JSON).
    #[serde(skip)]
    pub kind: ToolKind,
    /// Its input.
    pub tool_input: Value,
    /// The call's id (absent where Claude Code gives none: `PermissionRequest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Which of the hooks' call filters ([`AgentHooks::call_filters`](super::AgentHooks::call_filters))
    /// the call matches, as the permission rules judge it (not part of the input JSON).
    #[serde(skip)]
    pub matched_filters: Vec<String>,
}

/// How a session began (`SessionStart`'s `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    /// A new session.
    Startup,
    /// A stored session taken up again.
    Resume,
    /// A new session after the user cleared the last one.
    Clear,
    /// The conversation was compacted (its context is to be given again).
    Compact,
}

/// Why a session ended (`SessionEnd`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEndReason {
    /// The user cleared it (`/clear`).
    Clear,
    /// The user switched to another session.
    Resume,
    /// The user left while the prompt was shown.
    PromptInputExit,
    /// Anything else (a headless run ended, an editor closed the session).
    Other,
}

/// A task of the session's task list, as `TaskCreated` and `TaskCompleted` give it.
pub use crate::tool::HookTask;

/// One event, with its own fields (serialised with `hook_event_name` beside them).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "hook_event_name")]
pub enum HookEvent {
    /// A session began (or was resumed, cleared, compacted).
    SessionStart {
        /// How.
        source: SessionSource,
        /// The session's model (`PROVIDER/MODEL`).
        model: String,
    },
    /// A session ended.
    SessionEnd {
        /// Why.
        reason: SessionEndReason,
    },
    /// An instructions file (`CLAUDE.md`, `AGENTS.md`) was loaded into the system prompt.
    InstructionsLoaded {
        /// The file.
        file_path: PathBuf,
        /// Whose: `User`, `Project`, `Local` or `Managed`.
        memory_type: String,
        /// Why now: `session_start` or `compact`.
        load_reason: String,
    },
    /// A prompt was submitted, before the model sees it.
    UserPromptSubmit {
        /// Its text.
        prompt: String,
    },
    /// A call is about to run (its input valid, its permission not yet checked).
    PreToolUse(HookToolUse),
    /// The user is about to be asked whether a call may run.
    PermissionRequest {
        /// The call (without its id, as Claude Code gives it).
        #[serde(flatten)]
        call: HookToolUse,
        /// Rules that would allow it, in Claude Code's permission-update shape.
        permission_suggestions: Vec<Value>,
    },
    /// A call was refused by the permissions (a rule, the user, nobody to ask).
    PermissionDenied {
        /// The call.
        #[serde(flatten)]
        call: HookToolUse,
        /// Why.
        reason: String,
    },
    /// A call ended well.
    PostToolUse {
        /// The call.
        #[serde(flatten)]
        call: HookToolUse,
        /// What it gave (`output`, `is_error`).
        tool_response: Value,
        /// How long it ran.
        duration_ms: u64,
    },
    /// A call that ran failed.
    PostToolUseFailure {
        /// The call.
        #[serde(flatten)]
        call: HookToolUse,
        /// What went wrong.
        error: String,
        /// Whether the user cancelled it.
        is_interrupt: bool,
        /// How long it ran.
        duration_ms: u64,
    },
    /// The user is told something needs them (a permission question, an MCP server's
    /// question).
    Notification {
        /// What.
        message: String,
        /// A heading.
        title: String,
        /// `permission_prompt`, `elicitation_dialog`, `elicitation_url_dialog`.
        notification_type: String,
    },
    /// The agent is about to end its chat with an answer.
    Stop {
        /// Whether a stop hook made it go on before in this chat.
        stop_hook_active: bool,
        /// The answer's text.
        last_assistant_message: String,
    },
    /// A chat ended because the model failed.
    StopFailure {
        /// The kind of failure (`rate_limit`, `overloaded`, `authentication_failed`,
        /// `invalid_request`, `model_not_found`, `server_error`, `max_output_tokens`,
        /// `unknown`).
        error: String,
        /// What the model's service said.
        error_details: String,
        /// The failure as the user saw it.
        last_assistant_message: String,
    },
    /// A sub-agent began.
    SubagentStart {
        /// Its id.
        agent_id: String,
        /// Its type (its definition's name).
        agent_type: String,
    },
    /// A sub-agent is about to end with an answer.
    SubagentStop {
        /// Whether a stop hook made it go on before.
        stop_hook_active: bool,
        /// Its id.
        agent_id: String,
        /// Its type.
        agent_type: String,
        /// Its own transcript, when the agent keeps transcripts.
        #[serde(skip_serializing_if = "Option::is_none")]
        agent_transcript_path: Option<PathBuf>,
        /// Its answer's text.
        last_assistant_message: String,
    },
    /// The conversation is about to be compacted.
    PreCompact {
        /// What set it off.
        trigger: CompactionTrigger,
        /// The user's instructions for the summary (empty when none).
        custom_instructions: String,
    },
    /// The conversation was compacted.
    PostCompact {
        /// What set it off.
        trigger: CompactionTrigger,
        /// The summary written (empty when old tool results were pruned alone).
        compact_summary: String,
    },
    /// A task was added to the session's task list.
    TaskCreated(HookTask),
    /// A task was marked completed.
    TaskCompleted(HookTask),
    /// An MCP server asks the user for input.
    Elicitation(crate::tool::HookElicitation),
    /// The user answered an MCP server's question, before the server is told.
    ElicitationResult(crate::tool::HookElicitationResult),
}

impl HookEvent {
    /// The event's name, as Claude Code writes it.
    pub fn name(&self) -> &'static str {
        match self {
            HookEvent::SessionStart { .. } => "SessionStart",
            HookEvent::SessionEnd { .. } => "SessionEnd",
            HookEvent::InstructionsLoaded { .. } => "InstructionsLoaded",
            HookEvent::UserPromptSubmit { .. } => "UserPromptSubmit",
            HookEvent::PreToolUse(_) => "PreToolUse",
            HookEvent::PermissionRequest { .. } => "PermissionRequest",
            HookEvent::PermissionDenied { .. } => "PermissionDenied",
            HookEvent::PostToolUse { .. } => "PostToolUse",
            HookEvent::PostToolUseFailure { .. } => "PostToolUseFailure",
            HookEvent::Notification { .. } => "Notification",
            HookEvent::Stop { .. } => "Stop",
            HookEvent::StopFailure { .. } => "StopFailure",
            HookEvent::SubagentStart { .. } => "SubagentStart",
            HookEvent::SubagentStop { .. } => "SubagentStop",
            HookEvent::PreCompact { .. } => "PreCompact",
            HookEvent::PostCompact { .. } => "PostCompact",
            HookEvent::TaskCreated(_) => "TaskCreated",
            HookEvent::TaskCompleted(_) => "TaskCompleted",
            HookEvent::Elicitation(_) => "Elicitation",
            HookEvent::ElicitationResult(_) => "ElicitationResult",
        }
    }

    /// What a matcher is held against for this event (the tool's name, the source, the
    /// reason, …); `None` for events without matchers, which every hook of the event takes.
    pub fn matcher_subject(&self) -> Option<&str> {
        match self {
            HookEvent::PreToolUse(call)
            | HookEvent::PermissionRequest { call, .. }
            | HookEvent::PermissionDenied { call, .. }
            | HookEvent::PostToolUse { call, .. }
            | HookEvent::PostToolUseFailure { call, .. } => Some(&call.tool_name),
            HookEvent::SessionStart { source, .. } => Some(source.as_str()),
            HookEvent::SessionEnd { reason } => Some(reason.as_str()),
            HookEvent::InstructionsLoaded { load_reason, .. } => Some(load_reason),
            HookEvent::Notification {
                notification_type, ..
            } => Some(notification_type),
            HookEvent::StopFailure { error, .. } => Some(error),
            HookEvent::SubagentStart { agent_type, .. }
            | HookEvent::SubagentStop { agent_type, .. } => Some(agent_type),
            HookEvent::PreCompact { trigger, .. } | HookEvent::PostCompact { trigger, .. } => {
                Some(trigger.as_str())
            }
            HookEvent::Elicitation(asked) => Some(&asked.mcp_server_name),
            HookEvent::ElicitationResult(answered) => Some(&answered.mcp_server_name),
            HookEvent::UserPromptSubmit { .. }
            | HookEvent::Stop { .. }
            | HookEvent::TaskCreated(_)
            | HookEvent::TaskCompleted(_) => None,
        }
    }

    /// The call the event is of, for the tool events.
    pub fn tool_use(&self) -> Option<&HookToolUse> {
        match self {
            HookEvent::PreToolUse(call)
            | HookEvent::PermissionRequest { call, .. }
            | HookEvent::PermissionDenied { call, .. }
            | HookEvent::PostToolUse { call, .. }
            | HookEvent::PostToolUseFailure { call, .. } => Some(call),
            _ => None,
        }
    }
}

impl SessionSource {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionSource::Startup => "startup",
            SessionSource::Resume => "resume",
            SessionSource::Clear => "clear",
            SessionSource::Compact => "compact",
        }
    }
}

impl SessionEndReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionEndReason::Clear => "clear",
            SessionEndReason::Resume => "resume",
            SessionEndReason::PromptInputExit => "prompt_input_exit",
            SessionEndReason::Other => "other",
        }
    }
}

/// One event in its session: what a hook is given.
#[derive(Debug, Clone, Serialize)]
pub struct HookInput {
    /// The session's fields.
    #[serde(flatten)]
    pub session: HookSession,
    /// The event's.
    #[serde(flatten)]
    pub event: HookEvent,
}

impl HookInput {
    /// The input as Claude Code's hooks read it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
