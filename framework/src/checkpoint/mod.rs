//! Checkpoints: the workspace's files as they were before a chat changed them, kept by a
//! [`CheckpointKeeper`] and put back when the user rewinds ([`Session::rewind`]).
//!
//! The records ([`ChatCheckpoint`], [`TreeId`], [`LeftOut`]) are what session stores keep; the
//! keeper takes the snapshots and puts files back. `agentry-checkpoint`'s keeper holds them in a
//! shadow git repository outside the workspace.
//!
//! [`Session::rewind`]: crate::agent::Session::rewind

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

impl CheckpointError {
    /// The error of reading or writing `path`, for `map_err`.
    pub fn io(path: impl Into<std::path::PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }

    /// A failure of the repository's own, as text.
    pub fn repository(error: impl std::fmt::Display) -> Self {
        Self::Repository(error.to_string())
    }
}

/// Where an agent keeps its checkpoints: snapshots of a workspace's files, what differs between
/// two of them, and putting a workspace's files back as a snapshot has them. Its calls block
/// (the agent makes them on a blocking thread).
pub trait CheckpointKeeper: Send + Sync {
    /// Takes a snapshot of `workspace`'s files now.
    fn snapshot(&self, workspace: &Path) -> Result<Snapshot, CheckpointError>;
    /// Records `tree` as a checkpoint of `workspace` (what [`prune`](Self::prune) keeps or
    /// forgets).
    fn log(&self, workspace: &Path, tree: &TreeId) -> Result<(), CheckpointError>;
    /// Forgets `workspace`'s checkpoints past what the keeper keeps (housekeeping, after a
    /// chat).
    fn prune(&self, workspace: &Path) -> Result<(), CheckpointError>;
    /// The files of `workspace` that differ between two snapshots, by path.
    fn changes(
        &self,
        workspace: &Path,
        from: &TreeId,
        to: &TreeId,
    ) -> Result<Vec<FileChange>, CheckpointError>;
    /// Puts `workspace`'s files back as `target` has them, from `current` (a snapshot taken
    /// just now); the files `spare` names are left as they are.
    fn restore(
        &self,
        workspace: &Path,
        target: &TreeId,
        current: &TreeId,
        spare: &dyn Fn(&str) -> bool,
    ) -> Result<Restored, CheckpointError>;
}

/// A shared keeper is the keeper it shares.
impl<K: CheckpointKeeper + ?Sized> CheckpointKeeper for std::sync::Arc<K> {
    fn snapshot(&self, workspace: &Path) -> Result<Snapshot, CheckpointError> {
        (**self).snapshot(workspace)
    }
    fn log(&self, workspace: &Path, tree: &TreeId) -> Result<(), CheckpointError> {
        (**self).log(workspace, tree)
    }
    fn prune(&self, workspace: &Path) -> Result<(), CheckpointError> {
        (**self).prune(workspace)
    }
    fn changes(
        &self,
        workspace: &Path,
        from: &TreeId,
        to: &TreeId,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        (**self).changes(workspace, from, to)
    }
    fn restore(
        &self,
        workspace: &Path,
        target: &TreeId,
        current: &TreeId,
        spare: &dyn Fn(&str) -> bool,
    ) -> Result<Restored, CheckpointError> {
        (**self).restore(workspace, target, current, spare)
    }
}

/// The workspace's files at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Their tree, as the keeper names it.
    pub tree: TreeId,
    /// What was left out.
    pub left_out: Vec<LeftOut>,
}

/// How a file differs from one snapshot to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileChange {
    /// The file, relative to the workspace (`/`-separated).
    pub path: String,
    /// How it differs.
    pub change: Change,
}

/// How a file differs from one snapshot to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// It is new in the second.
    Added,
    /// Its content or mode changed.
    Modified,
    /// It is gone from the second.
    Deleted,
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restored {
    /// The files put back as the snapshot has them, each with how the workspace changed to
    /// get there (`added`: brought back, `modified`: rewritten, `deleted`: removed).
    pub changed: Vec<FileChange>,
    /// The files left as they are although they differ from the snapshot (those the caller
    /// spared).
    pub spared: Vec<FileChange>,
}
