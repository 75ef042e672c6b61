//! How an agent keeps checkpoints: where, what they leave out, and how long.

use super::Limits;
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

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self {
            folder: crate::paths::data_dir().join("checkpoints"),
            limits: Limits::default(),
            keep: 100,
            keep_for: Duration::from_secs(30 * 24 * 60 * 60),
        }
    }
}
