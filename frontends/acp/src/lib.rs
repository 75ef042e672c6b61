//! # agentry-acp
//!
//! Any agentry [`Agent`](agentry::agent::Agent) as an [Agent Client Protocol](https://agentclientprotocol.com)
//! agent, so Zed and every other ACP client can drive it. Built on the official
//! `agent-client-protocol` crate (protocol v1).
//!
//! - `initialize` advertises `loadSession`, image and embedded-context prompts, and the session
//!   methods that work (`session/list`, `session/resume`, `session/close`, `session/delete`).
//! - `session/new`, `session/load` (the stored history is replayed as `session/update`
//!   notifications before the answer), `session/set_mode` with the permission modes (default,
//!   accept edits, plan, bypass; `current_mode_update` follows), and the model as a session
//!   config option when [`AcpSettings::models`] offers a choice (`session/set_config_option`).
//! - The agent's slash commands ([`Agent::command_sources`](agentry::agent::Agent::command_sources):
//!   prompt templates, its MCP servers' prompts) and those of the session's own servers are
//!   the session's: announced with `available_commands_update` (again when a source's list
//!   changes), expanded when a prompt starts with `/name`.
//! - The MCP servers a client passes with a session are connected through the agent's
//!   [`SessionServers`](agentry::session_servers::SessionServers) hook; their tools serve that
//!   session only.
//! - `session/prompt` runs one chat in a task of its own: every event becomes a `session/update`
//!   as the table in [`agentry::event`] says, permission questions become
//!   `session/request_permission`, and the answer is the stop reason. `session/cancel` ends the
//!   turn with `cancelled` (never an error) after its last updates. A session runs one turn at
//!   a time; a second prompt meanwhile is refused.
//! - Without a usable model ([`AcpSettings::model_problem`]), sessions are refused with
//!   `auth_required` and the reason, and `authenticate` says what to set.
//! - When the client hangs up, running turns are cancelled and their tools stopped.
//!
//! ```no_run
//! # async fn demo(agent: agentry::agent::Agent) -> Result<(), agent_client_protocol::Error> {
//! use agentry_acp::{AcpSettings, serve_stdio};
//!
//! let settings = AcpSettings {
//!     name: "my-agent".into(),
//!     version: "1.0.0".into(),
//!     policy: Default::default(),
//!     model_problem: None,
//!     models: None,
//!     sandbox: None,
//!     trust: None,
//! };
//! serve_stdio(agent, settings).await
//! # }
//! ```

mod builtin;
mod client;
mod commands;
mod compact;
mod convert;
mod live;
mod mcp;
mod options;
mod questions;
mod rewind;
mod server;
pub mod stdio;
mod trust;
mod view;

pub use server::{AcpSettings, TrustQuestion, serve};
pub use stdio::serve_stdio;
