//! # agentry
//!
//! A framework for assembling agents from tool providers. One agent loop, one event model, many
//! front-ends; one [`Tool`](tool::Tool) trait, one [`Executor`](executor::Executor), many
//! providers. The core has no identity of its own, reads no files of the user's and pulls in no
//! database, broker, exporter or git library: those are crates beside it.
//!
//! - [`tool`]: the typed [`Tool`](tool::Tool) trait, [`ToolKind`](tool::ToolKind), tool content.
//! - [`provider`]: providers and the [`ToolRegistry`](provider::ToolRegistry).
//! - [`executor`]: validation, permission, status transitions, concurrency of tool calls.
//! - [`permission`]: modes, rules, remembered answers, the front-end's permission handler.
//! - [`agent`]: the [`Agent`](agent::Agent), its sessions and the agent loop.
//! - [`event`]: the [`AgentEvent`](event::AgentEvent) stream every front-end projects.
//! - [`model`]: the [`Model`](model::Model) trait and the
//!   [`ScriptedModel`](model::scripted::ScriptedModel).
//! - [`session`]: the [`SessionStore`](session::SessionStore) trait and the in-memory store.
//! - [`cost`]: model prices, what a session spends, its budget.
//! - [`hooks`], [`checkpoint`]: the traits hooks and checkpoint keepers implement.
//!
//! Beside it: `agentry-models` (the hosted models' HTTP clients), `agentry-sqlite` and
//! `agentry-postgres` (session stores), `agentry-checkpoint` (checkpoints in a shadow git
//! repository), `agentry-plugin-host` (tool plugins), `agentry-otlp` (OpenTelemetry export),
//! `agentry-fanout`, `agentry-redis` and `agentry-admission` (servers of agents), and
//! `agentry-stock` (the stock `agentry` agent's own parts). Tool authors need only the SDK,
//! `agentry-plugin`, which this crate re-exports.
//!
//! ```
//! use agentry::prelude::*;
//! use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), AgentError> {
//! let model = ScriptedModel::new([ScriptedResponse::text("Hello!")]);
//! let agent = Agent::builder(model).build()?;
//! let mut session = agent.new_session(SessionOptions::new(std::env::temp_dir()))?;
//! let summary = session.prompt("Hi").await?;
//! assert_eq!(summary.answer(), "Hello!");
//! # Ok(())
//! # }
//! ```

#![forbid(clippy::todo, clippy::dbg_macro)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
pub mod checkpoint;
pub mod coerce;
pub mod commands;
pub mod cost;
pub mod error;
pub mod event;
pub mod executor;
pub mod hooks;
pub mod limits;
pub use agentry_plugin::ids;
pub mod model;
pub mod pause;
pub mod permission;
pub mod prompt;
pub mod provider;
pub mod question;
pub mod schema;
pub mod session;
pub use agent::subagent;
pub use agentry_plugin::session_servers;
pub use agentry_plugin::settings;
pub mod telemetry;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod text;
pub use agentry_plugin::sync;
pub use agentry_plugin::tool;

/// The crates a tool's input and output are written with, re-exported so that an agent or a
/// tool crate needs no dependency of its own on them (with `#[serde(crate = "agentry::serde")]`
/// and `#[schemars(crate = "agentry::schemars")]` on its derives).
pub use agentry_plugin::{schemars, serde, serde_json};
/// The attribute [`PermissionHandler`](permission::PermissionHandler) implementations (and
/// [`Model`](model::Model)s) are written with, re-exported so that agents need no dependency of
/// their own on it.
pub use async_trait::async_trait;
pub use error::AgentError;

/// The items most agents and tools use, for `use agentry::prelude::*;`.
pub mod prelude {
    pub use crate::AgentError;
    pub use crate::agent::{Agent, AgentConfig, ChatIo, ChatOptions, Session, SessionOptions};
    pub use crate::event::{AgentEvent, StopReason};
    pub use crate::provider::{Provider, SimpleProvider};
    pub use crate::session::MemoryStore;
    pub use crate::tool::ContentBlock;
    pub use crate::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
}
