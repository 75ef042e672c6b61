//! Tool servers a front-end's client hands to one session (ACP's `mcpServers` in
//! `session/new`, `session/load` and `session/resume`): described here in protocol-neutral
//! terms, and connected by whichever provider family speaks to them, through the
//! [`SessionServers`] hook its provider offers
//! ([`Provider::session_servers`](crate::provider::Provider::session_servers)).
//!
//! The front-end turns its protocol's server descriptions into [`ServerSpec`]s and gives the
//! connected servers to the session (`Session::add_provider`), their commands to its slash
//! commands; it never names the provider family that connects them.

pub use crate::provider::{ServerSpec, ServerTransports, SessionServers};
