//! Why a tool plugin could not be installed, updated or removed.

use std::path::PathBuf;

/// Why a tool plugin could not be installed, updated or removed. Nothing is installed or
/// changed when one is returned.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The source is none of a crate name, a path or a URL.
    #[error("{0}")]
    Source(String),
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The system's cargo could not be run, or failed.
    #[error("{0}")]
    Cargo(String),
    /// The crate builds no plugin library.
    #[error(
        "{0} builds no plugin library: a plugin crate's `[lib]` has `crate-type = [\"cdylib\"]` and its source ends with `agentry_plugin_abi::export_plugin!(…)`"
    )]
    NoLibrary(String),
    /// The download failed.
    #[error("{url}: {message}")]
    Download {
        /// What was downloaded.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The downloaded file is not the one the checksum names.
    #[error(
        "{url}: its SHA-256 is {actual}, not the {expected} given with --sha256: nothing installed"
    )]
    Checksum {
        /// What was downloaded.
        url: String,
        /// The checksum given.
        expected: String,
        /// The download's.
        actual: String,
    },
    /// The library is not a plugin this agentry can load (another ABI, panics that abort, no
    /// declaration); it was not loaded.
    #[error("{0}")]
    NotLoadable(String),
    /// No installed plugin has this name.
    #[error("no tool plugin named `{0}` is installed (`agentry plugins list` shows them)")]
    NotInstalled(String),
    /// The manifest of installed plugins is unreadable.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

impl InstallError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> InstallError {
        let path = path.into();
        move |source| InstallError::Io { path, source }
    }
}
