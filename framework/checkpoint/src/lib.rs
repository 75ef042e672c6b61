//! # agentry-checkpoint
//!
//! An agent's checkpoints kept in a shadow git repository outside the workspace: the
//! [`CheckpointKeeper`](agentry::checkpoint::CheckpointKeeper) the stock agent uses
//! ([`Checkpoints`]), given to an agent with
//! [`AgentBuilder::checkpoints`](agentry::agent::AgentBuilder::checkpoints).
//!
//! Each workspace has its shadow repository in the checkpoints' folder (`checkpoints/ID/` in
//! the data folder, where ID is derived from the workspace's path): a git object database
//! written with gitoxide, in which a snapshot of the workspace is a tree. The user's own
//! repository, its index and its stash are never touched, and nothing is written inside the
//! workspace.
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

mod known;
mod limits;
mod open;
mod prune;
mod repo;
mod restore;
mod scan;
mod settings;
mod snapshot;
mod stat_cache;
mod survey;
mod tree_path;
mod watch;

pub use limits::Limits;
pub use open::Checkpoints;
pub use repo::ShadowRepo;
pub use settings::CheckpointSettings;

use agentry::checkpoint::{CheckpointError, TreeId};

/// The tree id of a git object id.
fn tree_id(id: gix_hash::ObjectId) -> TreeId {
    TreeId(id.to_string())
}

/// The git object id a tree id names.
fn object_id(tree: &TreeId) -> Result<gix_hash::ObjectId, CheckpointError> {
    gix_hash::ObjectId::from_hex(tree.0.as_bytes())
        .map_err(|_| CheckpointError::Corrupt(format!("`{}` is not an object id", tree.0)))
}

#[cfg(test)]
#[cfg(unix)]
mod tests;
#[cfg(test)]
#[cfg(target_os = "linux")]
mod watched_tests;
