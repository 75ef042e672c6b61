//! The events inside a tool call that the session's hooks watch —
//! a task created or completed (`TaskCreated`, `TaskCompleted`), an MCP server's question for
//! the user (`Elicitation`) and its answer (`ElicitationResult`): what a tool reports through
//! the [`ToolHooks`](super::ToolHooks) of its [`HostServices`](super::HostServices), and what
//! the hooks answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task of the session's task list, as `TaskCreated` and `TaskCompleted` hooks see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookTask {
    /// Its id.
    pub task_id: String,
    /// Its subject.
    pub task_subject: String,
    /// Its description, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_description: Option<String>,
}

/// An MCP server's question for the user, as `Elicitation` hooks see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookElicitation {
    /// The server.
    pub mcp_server_name: String,
    /// What it asks.
    pub message: String,
    /// `form` or `url`.
    pub mode: String,
    /// The address the user is asked to open (`url` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The server's id for the question (`url` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// The form's schema (`form` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
}

/// The answer to an MCP server's question (`accept`, `decline` or `cancel`, with the form's
/// values when accepted), as `ElicitationResult` hooks see it and as hooks may give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationAnswer {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The form's values, when accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// The user's answer to an MCP server's question, before the server is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookElicitationResult {
    /// The server.
    pub mcp_server_name: String,
    /// The answer.
    #[serde(flatten)]
    pub answer: ElicitationAnswer,
    /// `form` or `url`.
    pub mode: String,
    /// The server's id for the question (`url` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

/// An event inside a tool call, for the session's hooks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ToolHookEvent {
    /// A task was created (`TaskCreated`); hooks may refuse it.
    TaskCreated(HookTask),
    /// A task was marked completed (`TaskCompleted`); hooks may refuse that.
    TaskCompleted(HookTask),
    /// An MCP server asks the user (`Elicitation`); hooks may answer for them.
    Elicitation(HookElicitation),
    /// The user answered (`ElicitationResult`); hooks may change the answer.
    ElicitationResult(HookElicitationResult),
}

/// What the hooks said of a tool's event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolHookReply {
    /// Why the hooks refuse what happened (the task is not created or completed; the question
    /// is declined), when they do: the model reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// The answer the hooks give in the user's place, or instead of theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<ElicitationAnswer>,
}
