//! What a snapshot leaves out: files over a size, folders over a file count.

use serde::{Deserialize, Serialize};

/// What a snapshot leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Files larger than this many bytes are left out (build outputs, media, databases that
    /// the ignore rules do not exclude).
    pub max_file_bytes: u64,
    /// A folder (below the workspace's root) holding more than this many files, counted
    /// through its subfolders, is left out whole (an unignored `node_modules`, a data set).
    pub max_folder_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 10 * 1024 * 1024,
            max_folder_files: 50_000,
        }
    }
}
