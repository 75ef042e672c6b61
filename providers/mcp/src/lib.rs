//! # agentry-mcp
//!
//! The MCP client provider: each configured MCP server becomes a provider whose tools the
//! agent calls like any other, through the executor (permissions, statuses, content). It is
//! built on the official Rust SDK, `rmcp`. The other side, agentry served over MCP
//! (`agentry mcp serve`), is a front-end: the `agentry-mcp-server` crate.
//! - [`RECIPE`] makes the MCP client, linked or as a plugin (`agentry-mcp-plugin`): one provider
//!   hosting each configured server as a provider of its own
//!   ([`Provider::hosted`](agentry::provider::Provider::hosted)), with the
//!   [`SessionServers`](agentry::session_servers::SessionServers) hook
//!   ([`McpSessionServers`]) that connects the servers a front-end's client hands to a
//!   session; a server's prompts are its slash commands.
//!
//! - Servers run as child processes speaking stdio (`command`, `args`, `env`, `cwd`), or are
//!   reached over streamable HTTP (`url`, `headers`). [`McpServerConfig`] reads both shapes,
//!   from agentry's TOML (`[mcp_servers.NAME]`) or from a project's `.mcp.json`
//!   ([`read_mcp_json`]).
//! - [`connect_all`] starts every server at once; one that fails or hangs is reported and left
//!   out without holding up the others. [`connect_in_background`] does not wait at all: the
//!   server's tools join the agent's from the first model request after it answers.
//! - A server's tool and prompt lists follow its `list_changed` notifications; a server that
//!   dies is started again with backoff ([`McpOptions`], [`Provider::status`](agentry::provider::Provider::status)), and its
//!   tools fail with a clear message meanwhile. Tool calls forward the server's progress
//!   notifications as tool updates, and time out only after a stretch without progress.
//! - Prompts (every page of `prompts/list`) are offered by [`McpProvider::prompts`]; front-ends
//!   show them as slash commands and [`McpPrompt::get`] turns one into a turn's input.
//! - Each tool is named `mcp__SERVER__TOOL` (at most 64 characters) and keeps the server's input
//!   schema; its kind comes from the server's annotations, which are untrusted: `destructiveHint`
//!   → delete, `readOnlyHint` → read only for a server in `[mcp] trusted_hints`, else other.
//!   Results keep every content kind (text, image, audio, embedded resource, resource link,
//!   structured content), their text bounded for the model (the whole kept on disk); `isError`
//!   fails the call. Cancelling a call tells the server (`notifications/cancelled`).
//!
//! ```no_run
//! use agentry::prelude::*;
//! use agentry_mcp::{McpServerConfig, connect};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config: McpServerConfig = serde_json::from_value(serde_json::json!({
//!     "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]
//! }))?;
//! let server = connect("everything", &config, std::path::Path::new(".")).await?;
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(server);
//! # let _ = builder;
//! # Ok(()) }
//! ```

mod auth;
mod client;
mod config;
mod connection;
mod content;
mod elicitation;
mod handler;
mod in_flight;
mod link;
mod offer;
mod prompts;
mod sampling;
mod session_servers;
mod start;
mod tokens;
mod tool;
mod tool_cache;

pub use auth::{login, logout, open_in_browser};
pub use client::RECIPE;
pub use config::{
    HttpServer, McpOptions, McpServerConfig, OAuthClient, SECTION, SERVERS_SECTION, StdioServer,
    configured_servers, parse_mcp_json, read_mcp_json, servers_from_section,
};
pub use connection::{McpProvider, connect, connect_all, connect_in_background, connect_with};
pub use prompts::McpPrompt;
pub use session_servers::McpSessionServers;
pub use tool::{tool_name, tool_prefix};

use std::path::PathBuf;

/// Why an MCP server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A configuration file could not be read.
    #[error("cannot read {path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The server did not start or did not answer `initialize`.
    #[error("MCP server `{server}` did not start: {message}")]
    Start {
        /// The server's name.
        server: String,
        /// What went wrong (with the end of its stderr, for a child process).
        message: String,
    },
    /// Logging in to the server failed.
    #[error("cannot log in to MCP server `{server}`: {message}")]
    Login {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The server asks for a login agentry has not had (`agentry mcp login NAME`).
    #[error("MCP server `{server}` needs login: run `agentry mcp login {server}`")]
    NeedsLogin {
        /// The server's name.
        server: String,
    },
    /// The server started but listing its tools or prompts failed.
    #[error("MCP server `{server}` could not be listed: {message}")]
    Listing {
        /// The server's name.
        server: String,
        /// What it said.
        message: String,
    },
}
