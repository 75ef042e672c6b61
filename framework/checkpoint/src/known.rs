//! What a watched shadow repository's last snapshot knew, kept in memory between snapshots.

use crate::stat_cache::{Files, StatCache};
use crate::watch::Watcher;
use agentry::checkpoint::LeftOut;
use gix_hash::ObjectId;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// What a watched repository's last snapshot knew, with the watches that say what changed
/// since.
pub(super) struct Known {
    /// The last snapshot's tree.
    pub(super) tree: ObjectId,
    /// The files it held, with their stats.
    pub(super) files: Arc<Files>,
    /// What it left out.
    pub(super) left_out: Vec<LeftOut>,
    /// The watches that say what changed since.
    pub(super) watcher: Watcher,
    /// The stat cache being written for the next process, off the snapshot's path.
    pub(super) saving: Option<std::thread::JoinHandle<()>>,
}

impl Known {
    /// Writes the stat cache on a thread of its own (a cache not written costs the next
    /// process time, not correctness).
    pub(super) fn save(&mut self, path: PathBuf, started: SystemTime) {
        self.wait_for_save();
        let (tree, files) = (self.tree, self.files.clone());
        self.saving = std::thread::Builder::new()
            .name("checkpoint-cache".into())
            .spawn(move || {
                let _ = StatCache::save(&path, tree, &files, started);
            })
            .ok();
    }

    /// Waits for the stat cache being written, if one is.
    pub(super) fn wait_for_save(&mut self) {
        if let Some(saving) = self.saving.take() {
            let _ = saving.join();
        }
    }
}

impl Drop for Known {
    fn drop(&mut self) {
        self.wait_for_save();
    }
}
