//! Claude Code's plugins, unchanged: plugin folders ([`PluginContents`]: commands, agents,
//! skills, hooks, MCP servers), marketplaces that offer them ([`Marketplace`]), and the store
//! of those agentry knows and has installed ([`PluginStore`]), in its data folder.

pub mod commands;
pub mod enabled;
mod error;
mod git;
pub mod manifest;
pub mod marketplace;
pub mod store;

pub use commands::PluginCommand;
pub use enabled::EnabledPlugins;
pub use error::ManifestError;
pub use manifest::PluginContents;
pub use marketplace::{Marketplace, PluginEntry, PluginSource};
pub use store::{InstalledPlugin, KnownMarketplace, PluginStore, Staged, StoreError};
