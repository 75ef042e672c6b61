//! Providers: named families of tools (file_ops, bash, an MCP server, a plugin, …).

use crate::tool::{DynTool, Tool, erase};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// A named family of tools with its configuration (file_ops, bash, an MCP server, a plugin, …).
pub trait Provider: Send + Sync {
    /// The provider's name (`file_ops`, `bash`, …).
    fn name(&self) -> &str;
    /// A one-line description.
    fn description(&self) -> String;
    /// The tools it offers.
    fn tools(&self) -> Vec<Arc<dyn DynTool>>;
    /// Where it comes from (linked into the binary unless it says otherwise).
    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::BuiltIn
    }
    /// A number that changes whenever [`tools`](Provider::tools) would answer differently (an
    /// MCP server announced a new tool list, say). The registry reads the tools again when it
    /// sees a new revision; a provider whose tools never change keeps the default, 0.
    fn revision(&self) -> u64 {
        0
    }
    /// Folders whose files the model may read without asking, as if they were in the
    /// workspace (a skill's bundled files, say). None by default.
    fn readable_roots(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
    /// The slash commands the provider contributes (a skill each, an MCP server's prompts),
    /// which front-ends offer beside the agent's own. None by default.
    fn commands(&self) -> Option<Arc<dyn crate::commands::CommandSource>> {
        None
    }
    /// Notices for the model that the provider's tools left for `session_id` somewhere other
    /// than the session's own state (a plugin keeps them on its side of the boundary); taking
    /// them clears them. The chat asks before each model request. None by default.
    fn take_notices(&self, session_id: &crate::ids::SessionId) -> Vec<String> {
        let _ = session_id;
        Vec::new()
    }
    /// The providers this one runs on its behalf, each offered as a provider of its own with
    /// its own name, origin, tools and commands (the MCP client hosts one per configured
    /// server). Fixed once the provider is made; none by default.
    fn hosted(&self) -> Vec<Arc<dyn Provider>> {
        Vec::new()
    }
    /// How the provider is doing, when it depends on something that can be down (an MCP
    /// server starting, restarting or failed). Ready by default.
    fn status(&self) -> ProviderStatus {
        ProviderStatus::Ready
    }
    /// Whether its tools may be left out of the model's requests until the model finds them
    /// with `ToolSearch` (when the session's tool definitions are many): an MCP server's tools
    /// always may; a provider of many tools seldom all needed says so here. No by default.
    fn defers_tools(&self) -> bool {
        false
    }
    /// The prefix every tool name of this provider starts with, when its tools are not known
    /// in advance (an MCP server's `mcp__NAME__`): the configuration may name one it has not
    /// offered yet. None by default.
    fn tool_prefix(&self) -> Option<String> {
        None
    }
    /// A session ended: the provider drops what it kept for it outside the session's own
    /// state (a plugin keeps a session's state on its side of the boundary). Nothing by
    /// default.
    fn end_session(&self, session_id: &crate::ids::SessionId) {
        let _ = session_id;
    }
    /// The hook connecting the tool servers a front-end's client hands to a session, when
    /// this provider family speaks to them (the MCP client). None by default.
    fn session_servers(&self) -> Option<Arc<dyn SessionServers>> {
        None
    }
    /// How the user logs in to what the provider reaches, when it may need a login (an MCP
    /// server over HTTP, which may sit behind OAuth): `agentry mcp login` and `logout` run it.
    /// None by default.
    fn login(&self) -> Option<Arc<dyn Login>> {
        None
    }
}

/// A shared provider is the provider it shares: an agent may be given one that the caller keeps a
/// handle on (an MCP server whose prompts a front-end offers, say).
impl<P: Provider + ?Sized> Provider for Arc<P> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn description(&self) -> String {
        (**self).description()
    }
    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        (**self).tools()
    }
    fn origin(&self) -> ProviderOrigin {
        (**self).origin()
    }
    fn revision(&self) -> u64 {
        (**self).revision()
    }
    fn readable_roots(&self) -> Vec<std::path::PathBuf> {
        (**self).readable_roots()
    }
    fn commands(&self) -> Option<Arc<dyn crate::commands::CommandSource>> {
        (**self).commands()
    }
    fn take_notices(&self, session_id: &crate::ids::SessionId) -> Vec<String> {
        (**self).take_notices(session_id)
    }
    fn hosted(&self) -> Vec<Arc<dyn Provider>> {
        (**self).hosted()
    }
    fn status(&self) -> ProviderStatus {
        (**self).status()
    }
    fn tool_prefix(&self) -> Option<String> {
        (**self).tool_prefix()
    }
    fn defers_tools(&self) -> bool {
        (**self).defers_tools()
    }
    fn end_session(&self, session_id: &crate::ids::SessionId) {
        (**self).end_session(session_id)
    }
    fn session_servers(&self) -> Option<Arc<dyn SessionServers>> {
        (**self).session_servers()
    }
    fn login(&self) -> Option<Arc<dyn Login>> {
        (**self).login()
    }
}

/// Logging the user in to what a provider reaches, and out again (see [`Provider::login`]).
pub trait Login: Send + Sync {
    /// Logs in: the authorization page opens in the user's browser (its address is also
    /// printed on standard error, for a machine without one), and this waits until the user
    /// is done there; the provider keeps what the login gave it and uses it from then on (in
    /// every process: a running session's provider picks it up). An error says why not.
    fn log_in(&self) -> BoxFuture<'_, Result<(), String>>;
    /// Forgets the login; whether there was one.
    fn log_out(&self) -> BoxFuture<'_, Result<bool, String>>;
}

/// How a provider is doing (see [`Provider::status`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProviderStatus {
    /// Offering its tools.
    Ready,
    /// Being started; its tools come once it answers.
    Starting,
    /// It went down and is being started again.
    Restarting {
        /// Which attempt in a row is next (from 1).
        attempt: u32,
        /// Why it is down.
        reason: String,
    },
    /// It did not start, or went down and could not be started again.
    Failed {
        /// Why.
        reason: String,
    },
    /// It answers only once the user has logged in to it (an MCP server behind OAuth).
    NeedsLogin {
        /// How to log in.
        how: String,
    },
}

impl std::fmt::Display for ProviderStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderStatus::Ready => f.write_str("ready"),
            ProviderStatus::Starting => f.write_str("starting"),
            ProviderStatus::Restarting { attempt, reason } => {
                write!(f, "restarting (attempt {attempt}) after: {reason}")
            }
            ProviderStatus::Failed { reason } => write!(f, "failed: {reason}"),
            ProviderStatus::NeedsLogin { how } => write!(f, "needs login: {how}"),
        }
    }
}

/// Where a provider comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProviderOrigin {
    /// Linked into the binary.
    BuiltIn,
    /// Loaded from a plugin library.
    Plugin {
        /// The library file.
        path: std::path::PathBuf,
    },
    /// Served by an MCP server.
    McpServer {
        /// The server's name in the configuration.
        server: String,
    },
}

impl std::fmt::Display for ProviderOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderOrigin::BuiltIn => f.write_str("built in"),
            ProviderOrigin::Plugin { path } => write!(f, "plugin {}", path.display()),
            ProviderOrigin::McpServer { server } => write!(f, "MCP server {server}"),
        }
    }
}

/// A provider made from a list of tools: the quickest way to group tools of your own.
pub struct SimpleProvider {
    name: String,
    description: String,
    tools: Vec<Arc<dyn DynTool>>,
    readable_roots: Vec<std::path::PathBuf>,
}

impl SimpleProvider {
    /// An empty provider.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            tools: Vec::new(),
            readable_roots: Vec::new(),
        }
    }

    /// Adds a tool.
    pub fn with_tool<T: Tool>(self, tool: T) -> Self {
        self.with_dyn_tool(erase(tool))
    }

    /// Adds a tool already in its shared form (one of another provider's, say).
    pub fn with_dyn_tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Lets the model read these folders without asking (see [`Provider::readable_roots`]).
    pub fn with_readable_roots(mut self, roots: Vec<std::path::PathBuf>) -> Self {
        self.readable_roots.extend(roots);
        self
    }
}

impl Provider for SimpleProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.tools.clone()
    }

    fn readable_roots(&self) -> Vec<std::path::PathBuf> {
        self.readable_roots.clone()
    }
}

/// A server a client hands to a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerSpec {
    /// A child process speaking over its standard input and output.
    Stdio {
        /// The server's name (its tools are named after it).
        name: String,
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it.
        env: Vec<(String, String)>,
    },
    /// A server reached over HTTP.
    Http {
        /// The server's name.
        name: String,
        /// Its endpoint.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

impl ServerSpec {
    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            ServerSpec::Stdio { name, .. } | ServerSpec::Http { name, .. } => name,
        }
    }
}

/// The transports a [`SessionServers`] hook speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerTransports {
    /// Child processes on stdio.
    pub stdio: bool,
    /// Servers over HTTP.
    pub http: bool,
}

/// Connects the servers a client hands to a session. A provider family implements it (the MCP
/// client does, with the user's timeouts); an agent without one refuses such servers with
/// a clear message.
pub trait SessionServers: Send + Sync {
    /// The transports it speaks, for the front-end to advertise.
    fn transports(&self) -> ServerTransports;
    /// Starts `server` for a session working in `cwd`, without waiting for it to answer: its
    /// tools and commands ([`Provider::commands`]) join when it does. Dropping the provider
    /// stops the server. The message says why it cannot be used.
    fn connect(&self, server: &ServerSpec, cwd: &Path) -> Result<Arc<dyn Provider>, String>;
}

/// A shared hook is the hook it shares.
impl<S: SessionServers + ?Sized> SessionServers for Arc<S> {
    fn transports(&self) -> ServerTransports {
        (**self).transports()
    }
    fn connect(&self, server: &ServerSpec, cwd: &Path) -> Result<Arc<dyn Provider>, String> {
        (**self).connect(server, cwd)
    }
}
