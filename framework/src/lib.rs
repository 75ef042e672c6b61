//! # agentry
//!
//! A framework for assembling agents from tool providers. One agent loop, one event model, many
//! front-ends; one [`Tool`](tool::Tool) trait, one [`Executor`](executor::Executor), many
//! providers.
//!
//! - [`tool`]: the typed [`Tool`](tool::Tool) trait, [`ToolKind`](tool::ToolKind), tool content.
//! - [`provider`]: providers and the [`ToolRegistry`](provider::ToolRegistry).
//! - [`executor`]: validation, permission, status transitions, concurrency of tool calls.
//! - [`permission`]: modes, rules, remembered answers, the front-end's permission handler.
//! - [`agent`]: the [`Agent`](agent::Agent), its sessions and the agent loop.
//! - [`event`]: the [`AgentEvent`](event::AgentEvent) stream every front-end projects (with
//!   the ACP and WebSocket mappings).
//! - [`model`]: the [`Model`](model::Model) trait and the
//!   [`ScriptedModel`](model::scripted::ScriptedModel).
//! - [`session`]: the [`SessionStore`](session::SessionStore) and its SQLite default.
//!
//! ```
//! use agentry::agent::{Agent, ChatOptions, SessionOptions, ChatIo};
//! use agentry::model::{ContentBlock, scripted::{ScriptedModel, ScriptedResponse}};
//! use std::sync::Arc;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), agentry::AgentError> {
//! let model = ScriptedModel::new([ScriptedResponse::text("Hello!")]);
//! let agent = Agent::builder().model(Arc::new(model)).build()?;
//! let mut session = agent.new_session(SessionOptions::new(std::env::temp_dir()))?;
//! let (events, _receiver) = tokio::sync::mpsc::unbounded_channel();
//! let io = ChatIo::new(events);
//! let prompt = vec![ContentBlock::text("Hi")];
//! let summary = session.prompt(prompt, &ChatOptions::default(), &io).await?;
//! assert_eq!(summary.result, "Hello!");
//! # Ok(())
//! # }
//! ```

#![forbid(clippy::todo, clippy::dbg_macro)]

pub mod agent;
pub use agentry_plugin::atomic_file;
pub use agentry_plugin::checked_file;
pub mod checkpoint;
pub mod coerce;
pub mod commands;
pub use agentry_plugin::domains;
pub use agentry_plugin::env_vars;
pub mod error;
pub mod event;
pub mod executor;
pub mod hooks;
pub use agentry_plugin::html_nesting;
pub mod limits;
pub use agentry_plugin::ids;
pub mod model;
pub use agentry_plugin::paths;
pub mod pause;
pub mod permission;
pub use agentry_plugin::private;
#[cfg(unix)]
pub use agentry_plugin::process_group;
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
pub mod testing;
pub mod text;
pub use agentry_plugin::sync;
pub use agentry_plugin::terminal_text;
pub use agentry_plugin::tool;

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
    pub use crate::model::ContentBlock;
    pub use crate::provider::{Provider, SimpleProvider};
    pub use crate::session::MemoryStore;
    pub use crate::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
}
