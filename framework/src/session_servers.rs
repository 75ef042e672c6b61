//! Tool servers a front-end's client hands to one session (ACP's `mcpServers` in
//! `session/new`, `session/load` and `session/resume`): described here in protocol-neutral
//! terms, and connected by whichever provider family speaks to them, through the
//! [`SessionServers`] hook an agent is built with
//! ([`AgentBuilder::session_servers`](crate::agent::AgentBuilder::session_servers)).
//!
//! The front-end turns its protocol's server descriptions into [`ServerSpec`]s and gives the
//! connected servers' tools to the session (`Session::add_provider`) and their commands to
//! its slash commands; it never names the provider that connects them.

use crate::commands::CommandSource;
use crate::provider::Provider;
use std::path::Path;
use std::sync::Arc;

/// A server a client hands to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTransports {
    /// Child processes on stdio.
    pub stdio: bool,
    /// Servers over HTTP.
    pub http: bool,
}

/// A server connected for a session: its tools, and its commands (prompts).
#[derive(Clone)]
pub struct ConnectedServer {
    /// The server as a provider of tools (which may join once it answers).
    pub provider: Arc<dyn Provider>,
    /// The server's slash commands.
    pub commands: Arc<dyn CommandSource>,
}

/// Connects the servers a client hands to a session. A provider family implements it (the MCP
/// provider does, with the user's timeouts); an agent without one refuses such servers with
/// a clear message.
pub trait SessionServers: Send + Sync {
    /// The transports it speaks, for the front-end to advertise.
    fn transports(&self) -> ServerTransports;
    /// Starts `server` for a session working in `cwd`, without waiting for it to answer (its
    /// tools and commands join when it does); the message says why it cannot be used.
    fn connect(&self, server: &ServerSpec, cwd: &Path) -> Result<ConnectedServer, String>;
}
