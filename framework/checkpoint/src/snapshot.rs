//! Taking a snapshot: the files found changed since the last one are read and stored, and
//! the last snapshot's tree is edited into the new one (only the trees along changed paths are
//! new).
//!
//! Which files changed: a watched repository (see [`ShadowRepo::watching`]) keeps what its
//! last snapshot knew in memory and looks only where the workspace's folders reported changes;
//! otherwise every file's stat is compared with the stat cache's.

use crate::known::Known;
use crate::repo::HASH;
use crate::scan::Found;
use crate::stat_cache::{Cached, Files, StatCache};
use crate::survey::Survey;
use crate::watch::Watcher;
use crate::{Limits, ShadowRepo};
use agentry::checkpoint::{CheckpointError, LeftOut, LeftOutReason, Snapshot};
use gix_hash::ObjectId;
use gix_object::bstr::{BString, ByteSlice};
use gix_object::tree::EntryKind;
use rustc_hash::FxHashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

impl ShadowRepo {
    /// Takes a snapshot of the workspace's files now.
    pub fn snapshot(&self, limits: &Limits) -> Result<Snapshot, CheckpointError> {
        let started = SystemTime::now();
        let mut known = self.known.as_ref().map(agentry::sync::lock);
        if let Some(known) = known.as_deref_mut()
            && let Some(snapshot) = self.snapshot_changes(known, limits, started)?
        {
            return Ok(snapshot);
        }
        // Everything is looked at, and watched when the repository is.
        let watcher = known
            .as_ref()
            .filter(|_| !self.too_many_folders.load(Ordering::Relaxed))
            .and_then(|_| Watcher::new().ok());
        let cache = StatCache::load(&self.stat_cache_path());
        // The cache is only good with its tree (a pruned or foreign one starts over).
        let (base, mut files) = match cache.tree {
            Some(tree) if self.has(&tree) => (tree, cache.files),
            _ => (ObjectId::empty_tree(HASH), Files::default()),
        };
        let survey = self.survey_everything(limits, watcher.as_ref());
        let crowded = survey
            .scan
            .left_out
            .iter()
            .any(|l| matches!(l.reason, LeftOutReason::TooManyFiles { .. }));
        if watcher.as_ref().is_some_and(|w| !w.is_whole()) {
            self.too_many_folders.store(true, Ordering::Relaxed);
        }
        // Watches cannot vouch for files with other hard links, nor for crowded folders.
        let watcher = watcher.filter(|w| w.is_whole() && !survey.scan.linked && !crowded);
        let (tree, left_out) = self.store_survey(survey, base, &mut files, Vec::new())?;
        match (known, watcher) {
            (Some(mut known), Some(watcher)) => {
                let mut last = Known {
                    tree,
                    files: Arc::new(files),
                    left_out: left_out.clone(),
                    watcher,
                    saving: None,
                };
                last.save(self.stat_cache_path(), started);
                *known = Some(last);
            }
            _ => {
                let _ = StatCache::save(&self.stat_cache_path(), tree, &files, started);
            }
        }
        Ok(Snapshot {
            tree: crate::tree_id(tree),
            left_out,
        })
    }

    /// A snapshot of what changed since the last one, from what the watches say; `None` when
    /// everything must be looked at (then nothing is known any more).
    fn snapshot_changes(
        &self,
        known: &mut Option<Known>,
        limits: &Limits,
        started: SystemTime,
    ) -> Result<Option<Snapshot>, CheckpointError> {
        let Some(last) = known.as_mut() else {
            return Ok(None);
        };
        last.wait_for_save();
        let changes = last.watcher.changes();
        let survey = if self.has(&last.tree) {
            self.survey_changes(changes, &last.files, limits, &last.watcher)
        } else {
            None
        };
        let Some(survey) = survey else {
            *known = None;
            return Ok(None);
        };
        let left_out = std::mem::take(&mut last.left_out);
        match self.store_survey(survey, last.tree, Arc::make_mut(&mut last.files), left_out) {
            Ok((tree, left_out)) => {
                last.tree = tree;
                last.left_out = left_out.clone();
                last.save(self.stat_cache_path(), started);
                Ok(Some(Snapshot {
                    tree: crate::tree_id(tree),
                    left_out,
                }))
            }
            Err(error) => {
                *known = None;
                Err(error)
            }
        }
    }

    /// Stores what `survey` found changed against `files` (the files of `base`, updated), and
    /// writes the new tree; with what is left out now (`left_out` was, where the survey did
    /// not look).
    fn store_survey(
        &self,
        survey: Survey,
        base: ObjectId,
        files: &mut Files,
        mut left_out: Vec<LeftOut>,
    ) -> Result<(ObjectId, Vec<LeftOut>), CheckpointError> {
        let Survey { scan, area } = survey;
        // The files found whose stat changed, or that an event named, are read.
        let mut seen: FxHashSet<&[u8]> = FxHashSet::default();
        seen.reserve(scan.files.len());
        let mut changed: Vec<&Found> = Vec::new();
        for found in &scan.files {
            match files.get(&found.path) {
                Some(cached)
                    if cached.stat == found.stat
                        && cached.kind == found.kind
                        && !area.rereads(&found.path) => {}
                _ => changed.push(found),
            }
            seen.insert(found.path.as_slice());
        }
        // The files known where the survey looked that it did not find are gone.
        let mut removed: Vec<BString> = if area.covers_nothing() {
            Vec::new()
        } else {
            files
                .keys()
                .filter(|path| !seen.contains(path.as_slice()) && area.covers(path))
                .cloned()
                .collect()
        };
        let (stored, unreadable) = self.store_files(&changed);
        // A file that cannot be read is left out, not kept as it was.
        for file in &unreadable {
            let path = BString::from(file.path.as_str());
            if files.contains_key(&path) {
                removed.push(path);
            }
        }
        left_out.retain(|l| !area.covers(l.path.as_bytes()));
        left_out.extend(scan.left_out);
        left_out.extend(unreadable);
        left_out.sort_by(|a, b| a.path.cmp(&b.path));
        let tree = if stored.is_empty() && removed.is_empty() {
            base
        } else {
            self.edit_tree(base, &stored, &removed)?
        };
        for path in &removed {
            files.remove(path);
        }
        files.extend(stored);
        Ok((tree, left_out))
    }

    /// Reads and stores the changed files (on several threads: the first snapshot reads them
    /// all); what could not be read is left out.
    fn store_files(&self, changed: &[&Found]) -> (Vec<(BString, Cached)>, Vec<LeftOut>) {
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .min(changed.len().div_ceil(64).max(1));
        let chunk = changed.len().div_ceil(threads).max(1);
        let results: Vec<Result<(BString, Cached), LeftOut>> = std::thread::scope(|scope| {
            let workers: Vec<_> = changed
                .chunks(chunk)
                .map(|files| {
                    scope
                        .spawn(move || files.iter().map(|f| self.store_file(f)).collect::<Vec<_>>())
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| worker.join().unwrap_or_default())
                .collect()
        });
        let mut stored = Vec::with_capacity(results.len());
        let mut unreadable = Vec::new();
        for result in results {
            match result {
                Ok(file) => stored.push(file),
                Err(left_out) => unreadable.push(left_out),
            }
        }
        (stored, unreadable)
    }

    /// Reads one file (a link's target, for a link) and stores it as a blob.
    fn store_file(&self, file: &Found) -> Result<(BString, Cached), LeftOut> {
        let path = self.workspace.join(file.path.to_path_lossy());
        let content = if file.kind == EntryKind::Link {
            std::fs::read_link(&path).map(|target| link_bytes(&target))
        } else {
            std::fs::read(&path)
        };
        let unreadable = |error: String| LeftOut {
            path: file.path.to_str_lossy().into_owned(),
            reason: LeftOutReason::Unreadable { error },
        };
        let content = content.map_err(|e| unreadable(e.to_string()))?;
        let id = self
            .put(gix_object::Kind::Blob, &content)
            .map_err(|e| unreadable(e.to_string()))?;
        Ok((
            file.path.clone(),
            Cached {
                stat: file.stat,
                kind: file.kind,
                id,
            },
        ))
    }

    /// `base` with `stored` files put in and `removed` ones taken out, written (only the trees
    /// along changed paths are new).
    fn edit_tree(
        &self,
        base: ObjectId,
        stored: &[(BString, Cached)],
        removed: &[BString],
    ) -> Result<ObjectId, CheckpointError> {
        let root = self.tree(&base)?;
        let objects = self.objects()?;
        let mut editor = gix_object::tree::Editor::new(root, &objects, HASH);
        for path in removed {
            editor
                .remove(path.split_str("/"))
                .map_err(CheckpointError::repository)?;
        }
        for (path, cached) in stored {
            editor
                .upsert(path.split_str("/"), cached.kind, cached.id)
                .map_err(CheckpointError::repository)?;
        }
        let mut buffer = Vec::new();
        editor.write(|tree| {
            buffer.clear();
            gix_object::WriteTo::write_to(tree, &mut buffer)
                .map_err(CheckpointError::repository)?;
            self.put(gix_object::Kind::Tree, &buffer)
        })
    }
}

/// A link's target as a blob holds it (as git does).
fn link_bytes(target: &std::path::Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        target.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        target.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

#[cfg(test)]
impl ShadowRepo {
    /// Whether the last snapshot left the workspace watched.
    pub(super) fn is_watched(&self) -> bool {
        self.known
            .as_ref()
            .is_some_and(|known| agentry::sync::lock(known).is_some())
    }
}
