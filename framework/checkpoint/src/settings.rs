//! How an agent keeps checkpoints: where, what they leave out, and how long.

use crate::Limits;
use std::path::PathBuf;
use std::time::Duration;

/// How an agent keeps checkpoints (the stock agent's `[checkpoints]` configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointSettings {
    /// Where the shadow repositories live (`checkpoints` in the data folder).
    pub folder: PathBuf,
    /// What a snapshot leaves out.
    pub limits: Limits,
    /// How many checkpoints a workspace keeps (the newest).
    pub keep: usize,
    /// How long a checkpoint is kept.
    pub keep_for: Duration,
}

impl CheckpointSettings {
    /// The default settings, with the shadow repositories in `folder` (the agent's data
    /// folder's `checkpoints`, say: the framework keeps no folder of its own).
    pub fn in_folder(folder: impl Into<PathBuf>) -> Self {
        Self {
            folder: folder.into(),
            limits: Limits::default(),
            keep: 100,
            keep_for: Duration::from_secs(30 * 24 * 60 * 60),
        }
    }
}
