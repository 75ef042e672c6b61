//! The JSON messages that cross the plugin ABI: the provider and its calls here, the host
//! services a call asks for ([`ServiceCall`]) and the queries the host makes ([`Query`]).

mod services;

pub use services::{LogTarget, Query, Service, ServiceAnswer, ServiceCall, ServiceRequest};

use agentry_plugin::commands::{CommandArgument, SlashCommand};
use agentry_plugin::provider::{ProviderOrigin, ProviderStatus};
use agentry_plugin::session_servers::ServerTransports;
use agentry_plugin::tool::{
    CheckedPaths, ReadDenials, RulePatterns, RuleSubjects, SandboxMode, ToolCallLocation, ToolKind,
    ToolOutput,
};
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
    /// The configuration sections the provider reads (ABI 1.1): present, the host configures
    /// the plugin ([`Query::Configure`]) before offering its tools, even when it names none
    /// (the provider reads the project's files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<String>>,
    /// Folders whose files the model may read without asking (a skill's bundled files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readable_roots: Vec<PathBuf>,
    /// Whether the provider contributes slash commands, which the host lists and expands
    /// through [`Query::Commands`] and [`Query::CommandContent`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub commands: bool,
    /// Whether its tools, commands or status change over time (an MCP server's): the host asks
    /// for its [`ProviderState`] before using them, and describes it again
    /// ([`Query::Describe`]) when its revision moved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changing: bool,
    /// Where it comes from, when not from the plugin itself (an MCP server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<ProviderOrigin>,
    /// The prefix of the tool names it may offer later (see
    /// [`Provider::tool_prefix`](agentry_plugin::provider::Provider::tool_prefix)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_prefix: Option<String>,
    /// The handles of the providers it hosts (see
    /// [`Provider::hosted`](agentry_plugin::provider::Provider::hosted)), each described through
    /// [`Query::Describe`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosted: Vec<u64>,
    /// The transports of the session servers it connects ([`Query::ConnectServer`]), when it
    /// offers [`Provider::session_servers`](agentry_plugin::provider::Provider::session_servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_servers: Option<ServerTransports>,
    /// Whether the user can log in to what it reaches (see
    /// [`Provider::login`](agentry_plugin::provider::Provider::login)), through [`Query::Login`] and
    /// [`Query::Logout`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub login: bool,
}

/// How a changing provider stands now (the answer to [`Query::State`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderState {
    /// Moves whenever its tools change.
    pub revision: u64,
    /// Moves whenever its slash commands change.
    pub commands_revision: u64,
    /// How it is doing.
    pub status: ProviderStatus,
}

/// A slash command, as [`Query::Commands`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandDescription {
    /// Its own name.
    pub name: String,
    /// Where it comes from when that can clash (an MCP server's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// What kind of command it is, for listings (`skill`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind_label: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<CommandArgument>,
}

impl CommandDescription {
    /// The description of `command`.
    pub fn of(command: &dyn SlashCommand) -> Self {
        Self {
            name: command.name().to_owned(),
            origin: command.origin().map(str::to_owned),
            kind_label: command.kind_label().map(str::to_owned),
            description: command.description(),
            arguments: command.arguments().to_vec(),
        }
    }
}

/// The answer to [`Query::Configure`]: the provider as its settings made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfiguredDescription {
    /// The provider, described anew (its tools may differ from the unconfigured ones).
    pub description: Description,
    /// What in the settings could not be used, for the user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Whether a provider handle is the plugin's own provider's (0), left out of messages.
pub(crate) fn is_own(provider: &u64) -> bool {
    *provider == 0
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
    /// What its permission rules' patterns mean; absent (from ABI 1.0 plugins), what its
    /// kind suggests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_patterns: Option<RulePatterns>,
    /// Whether a call needs a person to answer it (a question tool).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_user: bool,
}

/// `prepare`'s request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrepareRequest {
    /// The provider whose tool it is: 0 for the plugin's own, else a hosted provider's handle
    /// (ABI 1.1).
    #[serde(default, skip_serializing_if = "is_own")]
    pub provider: u64,
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
    /// [`agentry_plugin::tool::Tool::escalation`]); absent for ordinary calls and from older plugins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
    /// What the call offers its tool's own rule patterns to match (a tool with
    /// [`RulePatterns::Own`]); the host asks the plugin whether a pattern matches each part
    /// ([`Query::MatchesRule`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_subjects: Option<RuleSubjects>,
}

/// `start`'s request (the tool and its input were given to `prepare`).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The host services this call may ask for (ABI 1.1); none from older hosts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<Service>,
    /// The session's sandbox mode, when it chose one (over the tool's configured mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// What the session's deny rules keep a search through folders from reading (for a tool
    /// that reads files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_denials: Option<ReadDenials>,
    /// The canonical paths the call's permission was judged for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_paths: Option<CheckedPaths>,
    /// Whether the host drives the call through `poll` (ABI 1.1) rather than leaving it to the
    /// plugin's runtime.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub polled: bool,
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
    /// It waits for the user's answer to a question, which comes later (ABI 1.1): the chat
    /// pauses, and the call runs again when it resumes.
    AwaitingAnswer,
}
