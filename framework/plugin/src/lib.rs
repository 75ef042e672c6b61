//! # agentry-plugin
//!
//! The slim crate tool authors build on, with few dependencies so that what crosses into plugins
//! stays put: the typed [`Tool`](tool::Tool) trait and its object-safe form, [`ToolKind`](tool::ToolKind),
//! tool content and context, [`Provider`](provider::Provider), and the helpers tools share
//! (files written atomically or checked against the workspace, private files, path checks,
//! process groups, terminal text, environment variables, domain lists). The `agentry` framework
//! re-exports the tools' world at the same paths (`agentry::tool`, `agentry::provider`, `agentry::ids`, …); the
//! helpers are this crate's alone (`agentry_plugin::paths`, …).

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod atomic_file;
pub mod checked_file;
pub mod commands;
pub mod domains;
pub mod env_vars;
pub mod error_text;
pub mod html_nesting;
pub mod ids;
pub mod paths;
pub mod plan;
pub mod private;
#[cfg(any(unix, windows))]
#[cfg_attr(docsrs, doc(cfg(any(unix, windows))))]
pub mod process_group;
pub mod provider;
pub mod question;
pub mod session_servers;
pub mod settings;
pub mod sync;
pub mod terminal_text;
pub mod tool;

/// The crates a tool's input and output are written with, re-exported so that a tool crate
/// needs no dependency of its own on them (with `#[serde(crate = "agentry_plugin::serde")]` and
/// `#[schemars(crate = "agentry_plugin::schemars")]` on its derives).
pub use schemars;
pub use serde;
pub use serde_json;
