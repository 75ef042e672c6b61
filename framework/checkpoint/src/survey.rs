//! Where a snapshot looks: at the whole workspace, or (while its folders are watched) only
//! where something changed since the last snapshot.

use crate::scan::{Scan, crowded_folders, scan, scan_folder};
use crate::stat_cache::Files;
use crate::tree_path::is_inside;
use crate::watch::{Changes, Watcher, parent};
use crate::{Limits, ShadowRepo};
use gix_object::bstr::BString;
use rustc_hash::FxHashSet;

/// Past this many changed folders a full walk costs no more than listing them one by one.
const MOST_FOLDERS: usize = 256;

/// Where a snapshot looked, and what it found there.
pub(super) struct Survey {
    /// The kept files found, what was left out, and whether a file has other hard links.
    pub scan: Scan,
    /// Where it looked.
    pub area: Area,
}

/// Where a snapshot looked.
pub(super) enum Area {
    /// Everywhere: a file it did not find is gone.
    Everywhere,
    /// Some folders' own entries and some whole trees; the files events named are read
    /// again.
    Parts {
        /// Folders whose own entries were listed.
        folders: FxHashSet<BString>,
        /// Folders walked whole (or found gone).
        trees: Vec<BString>,
        /// Files an event named.
        files: FxHashSet<BString>,
    },
}

impl Area {
    /// Whether it looked where `path` is (so a file it did not find there is gone).
    pub fn covers(&self, path: &[u8]) -> bool {
        match self {
            Self::Everywhere => true,
            Self::Parts { folders, trees, .. } => {
                folders.contains(parent(path)) || trees.iter().any(|tree| is_inside(path, tree))
            }
        }
    }

    /// Whether it looked nowhere (nothing changed).
    pub fn covers_nothing(&self) -> bool {
        match self {
            Self::Everywhere => false,
            Self::Parts { folders, trees, .. } => folders.is_empty() && trees.is_empty(),
        }
    }

    /// Whether `path` is read again whatever its stat says (an event named it).
    pub fn rereads(&self, path: &[u8]) -> bool {
        match self {
            Self::Everywhere => false,
            Self::Parts { files, .. } => files.contains(path),
        }
    }
}

impl ShadowRepo {
    /// Looks at the whole workspace, watching its folders with `watcher`.
    pub(super) fn survey_everything(&self, limits: &Limits, watcher: Option<&Watcher>) -> Survey {
        Survey {
            scan: scan(&self.workspace, &self.folder, limits, watcher),
            area: Area::Everywhere,
        }
    }

    /// Looks only where `changes` say something changed; `None` when the whole workspace must
    /// be looked at instead: after an overflow or an ignore file's change, past
    /// [`MOST_FOLDERS`], when a kept file has other hard links, or when new files may make a
    /// folder too crowded to keep.
    pub(super) fn survey_changes(
        &self,
        changes: Changes,
        known: &Files,
        limits: &Limits,
        watcher: &Watcher,
    ) -> Option<Survey> {
        if changes.everywhere || changes.folders.len() + changes.trees.len() > MOST_FOLDERS {
            return None;
        }
        let mut trees: Vec<BString> = changes.trees.into_iter().collect();
        trees.sort_by_key(|tree| tree.len());
        let mut outermost: Vec<BString> = Vec::with_capacity(trees.len());
        for tree in trees {
            if !outermost.iter().any(|outer| is_inside(&tree, outer)) {
                outermost.push(tree);
            }
        }
        let trees = outermost;
        let inside_a_tree =
            |folder: &[u8]| trees.iter().any(|t| t == folder || is_inside(folder, t));
        let folders: FxHashSet<BString> = changes
            .folders
            .into_iter()
            .filter(|folder| !inside_a_tree(folder))
            .collect();
        let mut survey = Scan::default();
        for folder in &folders {
            let listed = scan_folder(&self.workspace, &self.folder, folder, false, limits, None);
            survey.append(listed);
        }
        // A changed tree is walked when its folder's listing kept it (ignore rules may not).
        let kept: FxHashSet<&BString> = survey.folders.iter().collect();
        let walked: Vec<&BString> = trees.iter().filter(|tree| kept.contains(tree)).collect();
        let mut found = Scan::default();
        for tree in walked {
            let scanned = scan_folder(
                &self.workspace,
                &self.folder,
                tree,
                true,
                limits,
                Some(watcher),
            );
            found.append(scanned);
        }
        survey.append(found);
        if survey.linked || !watcher.is_whole() {
            return None;
        }
        let new: Vec<&[u8]> = survey
            .files
            .iter()
            .filter(|file| !known.contains_key(&file.path))
            .map(|file| file.path.as_slice())
            .collect();
        if !new.is_empty() {
            let all = known.keys().map(|path| path.as_slice()).chain(new);
            if !crowded_folders(all, limits.max_folder_files).is_empty() {
                return None;
            }
        }
        Some(Survey {
            scan: survey,
            area: Area::Parts {
                folders,
                trees,
                files: changes.files,
            },
        })
    }
}
