//! The watcher on Linux: one inotify instance, a watch per kept folder.

use super::Changes;
use crate::tree_path::is_inside;
use gix_object::bstr::BString;
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use rustc_hash::FxHashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The names of the ignore files a walk reads in each folder: when one changes, what is kept
/// may change anywhere below it.
const IGNORE_FILES: [&[u8]; 2] = [b".gitignore", b".ignore"];

/// What happens to a watched folder that a watch reports.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
}

/// The watches on a workspace's kept folders.
pub(crate) struct Watcher {
    inotify: Inotify,
    watches: Watches,
    /// Each watch's folder, relative to the workspace (empty for the workspace itself).
    folders: Mutex<FxHashMap<WatchDescriptor, BString>>,
    /// Whether a watch could not be added for want of watches (the user's limit): the
    /// watcher cannot be trusted then.
    exhausted: AtomicBool,
}

impl Watcher {
    /// A watcher with no watches yet.
    pub fn new() -> std::io::Result<Self> {
        let inotify = Inotify::init()?;
        Ok(Self {
            watches: inotify.watches(),
            inotify,
            folders: Mutex::default(),
            exhausted: AtomicBool::new(false),
        })
    }

    /// Watches the folder at `absolute` (`relative` to the workspace). A folder that is gone
    /// already is not watched: its parent's events tell of it.
    pub fn watch(&self, absolute: &Path, relative: BString) {
        let mut watches = self.watches.clone();
        match watches.add(absolute, mask()) {
            Ok(watch) => {
                agentry::sync::lock(&self.folders).insert(watch, relative);
            }
            Err(error) if error.raw_os_error() == Some(nix::libc::ENOSPC) => {
                tracing::debug!(
                    "no more inotify watches (fs.inotify.max_user_watches): snapshots look at every file"
                );
                self.exhausted.store(true, Ordering::Relaxed);
            }
            Err(_) => {}
        }
    }

    /// Whether every folder it was asked to watch is watched.
    pub fn is_whole(&self) -> bool {
        !self.exhausted.load(Ordering::Relaxed)
    }

    /// Reads what the kernel queued since the last read.
    pub fn changes(&mut self) -> Changes {
        let mut changes = Changes::default();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let events = match self.inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    changes.everywhere = true;
                    break;
                }
            };
            let mut any = false;
            for event in events {
                any = true;
                let name = event.name.map(|name| name.as_encoded_bytes().to_vec());
                self.note(&mut changes, &event.wd, event.mask, name.as_deref());
            }
            if !any {
                break;
            }
        }
        changes
    }

    /// Adds one event to `changes`.
    fn note(
        &mut self,
        changes: &mut Changes,
        watch: &WatchDescriptor,
        mask: EventMask,
        name: Option<&[u8]>,
    ) {
        if mask.contains(EventMask::Q_OVERFLOW) {
            changes.everywhere = true;
            return;
        }
        let mut folders = agentry::sync::lock(&self.folders);
        if mask.contains(EventMask::IGNORED) {
            folders.remove(watch);
            return;
        }
        let Some(folder) = folders.get(watch).cloned() else {
            return;
        };
        let Some(name) = name else {
            // The folder itself went or moved: its parent's event tells where, unless it is
            // the workspace.
            if folder.is_empty() && mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF) {
                changes.everywhere = true;
            }
            return;
        };
        if IGNORE_FILES.contains(&name) {
            changes.everywhere = true;
            return;
        }
        let path = super::join(&folder, name);
        if mask.contains(EventMask::ISDIR) {
            let moved_or_removed = EventMask::MOVED_FROM | EventMask::DELETE;
            if !mask.intersects(moved_or_removed | EventMask::CREATE | EventMask::MOVED_TO) {
                // A subfolder's own mode or times: nothing kept changed.
                return;
            }
            if mask.intersects(moved_or_removed) {
                // Its watches (and its subfolders') now report under a path that is no more.
                let gone: Vec<WatchDescriptor> = folders
                    .iter()
                    .filter(|(_, watched)| **watched == path || is_inside(watched, &path))
                    .map(|(watch, _)| watch.clone())
                    .collect();
                for watch in gone {
                    folders.remove(&watch);
                    let _ = self.watches.remove(watch);
                }
            }
            changes.trees.insert(path);
        } else {
            changes.files.insert(path);
        }
        changes.folders.insert(folder);
    }
}
