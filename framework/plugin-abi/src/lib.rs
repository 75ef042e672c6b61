//! # agentry-plugin-abi
//!
//! agentry's plugin ABI: the versioned C function tables ([`abi`]) and the JSON messages that
//! cross them ([`wire`]), the declaration a plugin library carries of what it was built for
//! ([`declaration`], read without loading it), and the exporter a plugin is built with ([`export`], behind
//! [`export_plugin!`]). A tool provider written on `agentry-plugin` needs this crate only to be
//! built as a plugin library (each stock provider through a packaging crate of its own under
//! `providers/plugins/`, whose whole source is one `export_plugin!`); the
//! host that loads plugins (`agentry-plugin-host`) reads the same tables.

pub mod abi;
pub mod declaration;
pub mod export;
pub mod wire;

/// What [`export_plugin!`] names from other crates, at paths it can reach.
#[doc(hidden)]
pub mod __private {
    pub use agentry_plugin::provider::Provider;
}
