//! # agentry-plugin
//!
//! The slim crate tool authors build on, with few dependencies so that what crosses into plugins
//! stays put: the typed [`Tool`](tool::Tool) trait and its object-safe form, [`ToolKind`](tool::ToolKind),
//! tool content and context, and [`Provider`](provider::Provider). The `agentry` framework
//! re-exports all of it at the same paths (`agentry::tool`, `agentry::provider`, `agentry::ids`).

pub mod abi;
pub mod commands;
pub mod export;
pub mod ids;
pub mod plan;
pub mod provider;
pub mod question;
pub mod session_servers;
pub mod settings;
pub mod sync;
pub mod tool;
pub mod wire;
