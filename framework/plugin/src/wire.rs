//! The JSON messages that cross the plugin ABI.

use crate::tool::{ToolCallLocation, ToolKind, ToolOutput};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// A provider, as `describe` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// The provider's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its tools.
    pub tools: Vec<ToolDescription>,
}

/// A tool, as `describe` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDescription {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its kind.
    pub kind: ToolKind,
    /// Its input's JSON Schema.
    pub input_schema: Value,
    /// Other names calls may use for it (accepted, never offered).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// `prepare`'s request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrepareRequest {
    /// The tool.
    pub tool: String,
    /// The (schema-valid) input.
    pub input: Value,
    /// The session's working directory.
    pub cwd: PathBuf,
}

/// `prepare`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prepared {
    /// The handle the plugin keeps the prepared call under, for `start`, `cancel` and
    /// `discard`.
    pub call: u64,
    /// The call's title.
    pub title: String,
    /// The files it touches.
    pub locations: Vec<ToolCallLocation>,
    /// Why the call asks for more than its tool's usual confinement (see
    /// [`crate::tool::Tool::escalation`]); absent for ordinary calls and from older plugins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
}

/// `start`'s request (the tool and its input were given to `prepare`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRequest {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session's workspace roots.
    pub workspace_roots: Vec<PathBuf>,
    /// The session.
    pub session_id: String,
    /// The call.
    pub tool_call_id: String,
    /// The session's temporary folder (the host makes and removes it); absent from hosts
    /// older than ABI 1.1, where the plugin makes its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_dir: Option<PathBuf>,
}

/// How a call ended (the payload of `EVENT_DONE`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallEnd {
    /// It completed.
    Completed(ToolOutput),
    /// It failed.
    Failed {
        /// Why.
        message: String,
        /// What it produced before failing.
        output: Option<ToolOutput>,
    },
    /// It was cancelled.
    Cancelled,
    /// It panicked; the plugin is disabled from now on.
    Panicked(String),
}
