//! # agentry-stock
//!
//! The stock agent's own parts, which the `agentry` binary and its front-ends build the stock
//! agent from, and which an agent built on the framework takes only when it wants them:
//!
//! - [`BASE_PROMPT`]: the stock agent's identity;
//! - [`data_folder`]: where it keeps its data;
//! - [`config`]: its TOML configuration (`~/.config/agentry/config.toml`, the project's
//!   `.agentry/config.toml`, Claude Code's settings files), and which of a project's settings a
//!   folder not yet trusted may give;
//! - [`memory`]: the instruction files it reads (`AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md`);
//! - [`templates`]: prompt templates, its slash commands;
//! - [`claude_plugins`]: Claude Code's plugins and marketplaces, installed in its data folder;
//! - [`tool_plugins`]: native tool plugins (shared libraries) installed from a crate, a folder
//!   or a URL into its data folder, and new plugin crates to start from;
//! - [`hooks`]: the hooks of the settings files, run with Claude Code's contract (commands,
//!   HTTP, prompts).

pub mod claude_plugins;
pub mod config;
pub mod hooks;
pub mod memory;
pub mod templates;
pub mod tool_plugins;

use std::path::PathBuf;

/// The base prompt of the stock agent (the `agentry` binary's). An agent built on the
/// framework has the base prompt its [`AgentConfig`](agentry::agent::AgentConfig) gives, none by
/// default.
pub const BASE_PROMPT: &str = "You are agentry, an agent that helps the user with software \
engineering tasks in their project. Use the tools to inspect and change the project rather than \
guessing. Keep answers short and concrete. When a tool call fails, read the error, correct the \
call and go on.";

/// Where the stock agent keeps its data (the sessions, the terminal's input history,
/// checkpoints): `$AGENTRY_DATA_DIR`, else `agentry` in the user's data directory
/// (`~/.local/share` on Linux).
pub fn data_folder() -> PathBuf {
    std::env::var_os("AGENTRY_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("agentry")))
        .unwrap_or_else(|| PathBuf::from(".agentry-data"))
}
