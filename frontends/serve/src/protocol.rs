//! The chat-flow protocol's shapes: what the server sends (turn projections, patches, chat
//! events) and what clients send. Field names, statuses and event names are the protocol's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event for a client: its name (`turn:start`, …) and its data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerEvent {
    /// The event's name.
    pub event: &'static str,
    /// Its data.
    pub data: Value,
}

/// Who speaks in a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnRole {
    /// The user.
    User,
    /// The agent.
    Assistant,
    /// The agent's notices (a retry, a compaction).
    System,
}

/// Where a turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnState {
    /// Its content is still arriving.
    Streaming,
    /// It finished.
    Completed,
    /// It waits for the user's answer to a question.
    Paused,
    /// It failed.
    Failed,
    /// The user stopped it.
    Interrupted,
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolState {
    /// Announced or running.
    Pending,
    /// Finished successfully.
    Done,
    /// Failed or was refused.
    Error,
    /// Stopped by the user.
    Cancelled,
    /// Waits for the user's answer (AskUserQuestion).
    AwaitingAnswer,
}

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockType {
    /// Answer text (`content`: the text).
    Text,
    /// Reasoning (`content`: the text).
    Thinking,
    /// An image the user sent (`content`: `{mime_type, data}`).
    Image,
    /// A file or resource the user sent (`content`: `{name, mime_type, …}`).
    File,
    /// A tool call (`content`: its arguments as a JSON string).
    ToolUse,
    /// A tool call's result (`content`: its text).
    ToolResult,
    /// The user's answer to a question (`content`: `{tool_call_id, selections, custom}`).
    AskUserAnswer,
}

/// One piece of a turn's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Block {
    /// What it holds.
    #[serde(rename = "type")]
    pub kind: BlockType,
    /// The content: text for text, thinking and tool results; see [`BlockType`].
    pub content: Value,
    /// The tool call it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The call's title, as people read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

/// A tool call of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallView {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The call's title, as people read it.
    pub display_name: String,
    /// The arguments, as a JSON string.
    pub arguments: String,
    /// Where it stands.
    pub status: ToolState,
    /// What it returned (its text), once it ended.
    #[serde(default)]
    pub result: Option<String>,
    /// How long it ran, in milliseconds.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// The tool's kind (`read`, `edit`, `execute`, …).
    pub kind: String,
    /// Rich content for display: diffs (`{type: "diff", path, oldText, newText}`), text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Value>,
}

/// Tokens a turn used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UsageView {
    /// Input tokens (not counting cache reads).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// What they cost, in US dollars; left out when the model has no price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A whole turn, as `turn:start`, `turn:end` and `GET /api/sessions/{id}/messages` carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TurnProjection {
    /// The projection's id (the turn's).
    pub id: String,
    /// The sequence number of the last event that changed it.
    pub sequence: u64,
    /// The turn's id.
    pub turn_id: String,
    /// Its loop: `root` for the main loop, `loop_CALL` for the sub-agent started by call CALL.
    pub loop_id: String,
    /// Who speaks.
    pub role: TurnRole,
    /// Where it stands.
    pub status: TurnState,
    /// Its content, in order.
    pub blocks: Vec<Block>,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ToolCallView>,
    /// The model that answered (assistant turns).
    pub model: Option<String>,
    /// Tokens used (assistant turns).
    pub usage: Option<UsageView>,
    /// How long it took, in milliseconds, once it ended.
    pub duration_ms: Option<u64>,
    /// When it began (RFC 3339).
    pub started_at: Option<String>,
    /// The Agent call whose sub-agent this turn belongs to; `null` for the main loop.
    pub parent_fork_tool_call_id: Option<String>,
    /// Why it failed, when it did.
    pub failure_reason: Option<String>,
}

/// A client's answer to a paused question: `askuser_answer` in `chat:send`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AskUserAnswer {
    /// The AskUserQuestion call that asked.
    pub tool_call_id: String,
    /// Chosen options' indexes by question index (`{"0": [1]}`).
    #[serde(default)]
    pub selections: std::collections::BTreeMap<String, Vec<usize>>,
    /// Answers in the user's own words by question index (`{"1": "…"}`).
    #[serde(default)]
    pub custom: std::collections::BTreeMap<String, String>,
}

/// How a chat ended: the data of `chat:end` and the answer of `POST /api/sessions/{id}/chat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChatEnd {
    /// The session.
    pub session_id: String,
    /// The event's sequence number.
    pub sequence: u64,
    /// `completed` (also when paused for an answer), `interrupted` or `failed`.
    pub status: String,
    /// `{output}` (the answer: text, or the JSON value an output schema asked for), with
    /// `schema` when one was given; `null` when the chat failed.
    pub result: Option<Value>,
    /// Why it ended: `completed`, `paused`, `max_tokens`, `max_turn_requests`, `max_budget`
    /// (the next request would have taken the session past its budget), `hook_stopped` (a
    /// hook's `continue: false`), `refusal`,
    /// `interrupted` or `error`.
    pub finish_reason: String,
    /// Tokens used by the chat, and (`cost_usd`) what the chat cost with its sub-agents, in
    /// US dollars, when its models have prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageView>,
    /// What the session has cost so far, in US dollars, this chat included; left out while
    /// none of its requests was priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_cost_usd: Option<f64>,
    /// How long the chat took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// What failed, when the chat failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
