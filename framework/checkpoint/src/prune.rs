//! Pruning a shadow repository: its log of checkpoints cut to the newest within the age and
//! count kept, then the objects no kept checkpoint (nor the stat cache) reaches removed.

use crate::ShadowRepo;
use crate::stat_cache::StatCache;
use agentry::checkpoint::{CheckpointError, TreeId};
use gix_hash::ObjectId;
use gix_object::tree::EntryKind;
use std::collections::HashSet;
use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Objects younger than this are never removed: a snapshot under way may not have logged the
/// tree that reaches them yet.
const GRACE: Duration = Duration::from_secs(60 * 60);

/// One line of the log: when, and the tree.
struct Logged {
    at: u64,
    tree: ObjectId,
}

impl ShadowRepo {
    fn log_path(&self) -> std::path::PathBuf {
        self.folder.join("checkpoints.log")
    }

    /// Notes that a checkpoint holds `tree` from now on: [`prune`](Self::prune) keeps it while
    /// it is among the newest and young enough.
    pub fn log(&self, tree: &TreeId) -> Result<(), CheckpointError> {
        let path = self.log_path();
        let mut file = agentry_plugin::private::file_options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(CheckpointError::io(&path))?;
        writeln!(file, "{} {}", now_secs(), tree.0).map_err(CheckpointError::io(&path))
    }

    /// Keeps the newest `keep` checkpoints of the log that are younger than `keep_for`, and
    /// removes the objects no longer reached (when the log outgrew them by a margin, so that
    /// pruning is occasional).
    pub fn prune(&self, keep: usize, keep_for: Duration) -> Result<(), CheckpointError> {
        let logged = self.read_log();
        let oldest_allowed = now_secs().saturating_sub(keep_for.as_secs());
        let kept: Vec<&Logged> = logged
            .iter()
            .filter(|line| line.at >= oldest_allowed)
            .rev()
            .take(keep)
            .collect();
        // Occasionally: when a checkpoint expired, or the count overflowed by a margin.
        let expired = logged.first().is_some_and(|line| line.at < oldest_allowed);
        let overflow = logged.len() - kept.len();
        if !expired && overflow < (keep / 5).max(10) {
            return Ok(());
        }
        let mut text = String::new();
        for line in kept.iter().rev() {
            text.push_str(&format!("{} {}\n", line.at, line.tree));
        }
        let path = self.log_path();
        agentry_plugin::atomic_file::write_atomically_as(&path, text.as_bytes(), None)
            .map_err(CheckpointError::io(&path))?;
        let mut roots: Vec<ObjectId> = kept.iter().map(|line| line.tree).collect();
        roots.extend(StatCache::load(&self.stat_cache_path()).tree);
        let reached = self.reached(&roots)?;
        self.remove_unreached(&reached);
        Ok(())
    }

    /// The log's lines, oldest first (lines that cannot be read are skipped).
    fn read_log(&self) -> Vec<Logged> {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let (at, tree) = line.split_once(' ')?;
                Some(Logged {
                    at: at.parse().ok()?,
                    tree: ObjectId::from_hex(tree.as_bytes()).ok()?,
                })
            })
            .collect()
    }

    /// Every object the trees `roots` reach, themselves included.
    fn reached(&self, roots: &[ObjectId]) -> Result<HashSet<ObjectId>, CheckpointError> {
        let mut reached = HashSet::new();
        let mut trees: Vec<ObjectId> = roots.to_vec();
        while let Some(id) = trees.pop() {
            if !reached.insert(id) || id.is_empty_tree() {
                continue;
            }
            for entry in self.tree(&id)?.entries {
                if entry.mode.kind() == EntryKind::Tree {
                    trees.push(entry.oid);
                } else {
                    reached.insert(entry.oid);
                }
            }
        }
        Ok(reached)
    }

    /// Removes the loose objects not in `reached` that are older than the grace period.
    fn remove_unreached(&self, reached: &HashSet<ObjectId>) {
        let objects = self.folder.join("objects");
        let Ok(folders) = std::fs::read_dir(&objects) else {
            return;
        };
        let cutoff = SystemTime::now() - GRACE;
        for folder in folders.flatten() {
            let prefix = folder.file_name().to_string_lossy().into_owned();
            let Ok(files) = std::fs::read_dir(folder.path()) else {
                continue;
            };
            for file in files.flatten() {
                let name = format!("{prefix}{}", file.file_name().to_string_lossy());
                let Ok(id) = ObjectId::from_hex(name.as_bytes()) else {
                    continue;
                };
                let old = file
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|modified| modified < cutoff);
                if old && !reached.contains(&id) {
                    let _ = std::fs::remove_file(file.path());
                }
            }
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
