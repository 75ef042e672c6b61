//! `[checkpoints]`: whether and how the workspace is checkpointed before each chat changes it.

use agentry_checkpoint::{CheckpointSettings, Limits};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// `[checkpoints]`: checkpoints of the workspace before each chat's first change, for rewinds
/// (on by default); each key left out keeps its default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointConfig {
    /// Whether checkpoints are taken (`true` by default).
    pub enabled: Option<bool>,
    /// Files larger than this are left out of checkpoints (10 MiB by default).
    pub max_file_bytes: Option<u64>,
    /// Folders holding more files than this are left out of checkpoints (50,000 by default).
    pub max_folder_files: Option<usize>,
    /// How many checkpoints each workspace keeps, the newest (100 by default).
    pub keep: Option<usize>,
    /// How many days a checkpoint is kept (30 by default).
    pub keep_days: Option<u64>,
}

impl CheckpointConfig {
    /// `other`'s keys over these.
    pub(super) fn merged(self, other: CheckpointConfig) -> CheckpointConfig {
        CheckpointConfig {
            enabled: other.enabled.or(self.enabled),
            max_file_bytes: other.max_file_bytes.or(self.max_file_bytes),
            max_folder_files: other.max_folder_files.or(self.max_folder_files),
            keep: other.keep.or(self.keep),
            keep_days: other.keep_days.or(self.keep_days),
        }
    }

    /// The settings these keys give, with the shadow repositories in `data_dir`; `None` when
    /// checkpoints are off.
    pub fn settings(&self, data_dir: &Path) -> Option<CheckpointSettings> {
        if self.enabled == Some(false) {
            return None;
        }
        let defaults = CheckpointSettings::in_folder(data_dir.join("checkpoints"));
        let limits = Limits::default();
        Some(CheckpointSettings {
            folder: defaults.folder.clone(),
            limits: Limits {
                max_file_bytes: self.max_file_bytes.unwrap_or(limits.max_file_bytes),
                max_folder_files: self.max_folder_files.unwrap_or(limits.max_folder_files),
            },
            keep: self.keep.unwrap_or(defaults.keep),
            keep_for: self.keep_days.map_or(defaults.keep_for, |days| {
                Duration::from_secs(days * 24 * 60 * 60)
            }),
        })
    }
}
