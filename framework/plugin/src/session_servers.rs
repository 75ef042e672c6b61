//! Tool servers a front-end's client hands to one session (ACP's `mcpServers` in
//! `session/new`, `session/load` and `session/resume`): described here in protocol-neutral
//! terms, and connected by whichever provider family speaks to them, through the
//! [`SessionServers`] hook its provider offers
//! ([`Provider::session_servers`]).
//!
//! The front-end turns its protocol's server descriptions into [`ServerSpec`]s and gives the
//! connected servers to the session (`Session::add_provider`), their commands to its slash
//! commands; it never names the provider family that connects them.

use crate::provider::Provider;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

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
