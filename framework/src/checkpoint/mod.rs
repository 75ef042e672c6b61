//! Checkpoints: the workspace's files as they were before a chat changed them, kept in a
//! shadow git repository outside the workspace, and put back when the user rewinds.
//!
//! Each workspace has its shadow repository in the data folder (`checkpoints/ID/`, where ID
//! is derived from the workspace's path): a git object database written with gitoxide, in
//! which a snapshot of the workspace is a tree. The user's own repository, its index and its
//! stash are never touched, and nothing is written inside the workspace.
//!
//! A snapshot holds every file the ignore rules do not exclude (`.gitignore`, `.ignore`,
//! `.git/info/exclude` and the global excludes), tracked by git or not, with its mode
//! (executable or not); symbolic links are kept as links. Left out, and listed in the
//! snapshot: files larger than [`Limits::max_file_bytes`], folders holding more than
//! [`Limits::max_folder_files`] files, and files that cannot be read.
//!
//! Snapshots after the first are incremental: a stat cache remembers each file's size, times,
//! inode and mode with its blob, so only files whose stat changed are read again, and only the
//! trees along changed paths are written. A repository that takes many snapshots (an agent's,
//! see [`ShadowRepo::watching`]) watches the workspace's folders as well, so that it looks only
//! where something changed.

//! The records ([`ChatCheckpoint`], [`TreeId`], [`LeftOut`], [`Limits`]) are always here, for
//! the session stores; taking and restoring snapshots needs the `checkpoints` feature.

#[cfg(feature = "checkpoints")]
mod known;
mod limits;
#[cfg(feature = "checkpoints")]
mod open;
#[cfg(feature = "checkpoints")]
mod prune;
#[cfg(feature = "checkpoints")]
mod repo;
#[cfg(feature = "checkpoints")]
mod restore;
#[cfg(feature = "checkpoints")]
mod scan;
mod settings;
#[cfg(feature = "checkpoints")]
mod snapshot;
#[cfg(feature = "checkpoints")]
mod stat_cache;
#[cfg(feature = "checkpoints")]
mod survey;
#[cfg(feature = "checkpoints")]
mod tree_path;
#[cfg(feature = "checkpoints")]
mod watch;

pub use limits::Limits;
#[cfg(feature = "checkpoints")]
pub use open::Checkpoints;
#[cfg(feature = "checkpoints")]
pub use repo::ShadowRepo;
#[cfg(feature = "checkpoints")]
pub use restore::{Change, FileChange, Restored};
pub use settings::CheckpointSettings;
#[cfg(feature = "checkpoints")]
pub use snapshot::Snapshot;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A chat's checkpoint, as its session keeps it: the workspace before the chat's first change
/// and after its last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatCheckpoint {
    /// The workspace (its shadow repository holds the trees).
    pub workspace: PathBuf,
    /// The files before the chat's first change.
    pub before: TreeId,
    /// The files when the chat ended (`None` while it runs, or when it was cut off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<TreeId>,
    /// What the snapshot before the chat left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// When the snapshot before the chat was taken (RFC 3339).
    pub taken_at: String,
}

/// A snapshot's tree in the shadow repository (its id, in hexadecimal).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TreeId(pub String);

#[cfg(feature = "checkpoints")]
impl TreeId {
    fn of(id: gix_hash::ObjectId) -> Self {
        Self(id.to_string())
    }

    fn object_id(&self) -> Result<gix_hash::ObjectId, CheckpointError> {
        gix_hash::ObjectId::from_hex(self.0.as_bytes())
            .map_err(|_| CheckpointError::Corrupt(format!("`{}` is not an object id", self.0)))
    }
}

/// A path a snapshot left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeftOut {
    /// The file or folder, relative to the workspace (`/`-separated).
    pub path: String,
    /// Why.
    pub reason: LeftOutReason,
}

/// Why a snapshot left a path out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum LeftOutReason {
    /// The file is larger than the limit.
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// The folder holds more files than the limit.
    TooManyFiles {
        /// How many it holds.
        files: usize,
    },
    /// The file could not be read.
    Unreadable {
        /// The error.
        error: String,
    },
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.reason {
            LeftOutReason::TooLarge { bytes } => {
                write!(f, "{} ({bytes} bytes, over the size limit)", self.path)
            }
            LeftOutReason::TooManyFiles { files } => {
                write!(f, "{}/ ({files} files, over the folder limit)", self.path)
            }
            LeftOutReason::Unreadable { error } => write!(f, "{} (unreadable: {error})", self.path),
        }
    }
}

/// Why a checkpoint could not be taken or restored.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The shadow repository failed.
    #[error("the checkpoint repository: {0}")]
    Repository(String),
    /// A checkpoint refers to objects the shadow repository does not have: it was pruned, or
    /// taken on another machine.
    #[error("checkpoint {0} is not kept here (pruned, or taken on another machine)")]
    Pruned(String),
    /// A stored checkpoint could not be read.
    #[error("corrupt checkpoint: {0}")]
    Corrupt(String),
}

#[cfg(feature = "checkpoints")]
impl CheckpointError {
    fn io(path: impl Into<std::path::PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }

    fn repository(error: impl std::fmt::Display) -> Self {
        Self::Repository(error.to_string())
    }
}

#[cfg(test)]
#[cfg(all(unix, feature = "checkpoints"))]
mod tests;
#[cfg(test)]
#[cfg(all(target_os = "linux", feature = "checkpoints"))]
mod watched_tests;
