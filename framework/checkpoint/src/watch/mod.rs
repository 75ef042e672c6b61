//! Watching a workspace's folders (inotify), so that a snapshot after the first one in a
//! process looks only where files changed.
//!
//! A folder is watched when the walk enters it, before its entries are listed: a file created
//! before the watch is in the listing, one created after it is in an event, and a file's stat
//! is taken after its folder is watched. What was queued before a snapshot began is read when
//! it begins, so a change made before the snapshot is never missed. When the kernel's queue
//! overflows, an ignore file changes or the workspace itself moves, the next snapshot looks at
//! everything again.

use gix_object::bstr::{BString, ByteSlice};
use rustc_hash::FxHashSet;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(super) use linux::Watcher;

/// Where files changed since the watcher was last read.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Whether anything may have changed anywhere (the queue overflowed, an ignore file
    /// changed, the workspace itself moved).
    pub everywhere: bool,
    /// Folders whose entries changed: each is listed again (one level).
    pub folders: FxHashSet<BString>,
    /// Files an event named: each is read again, whatever its stat says.
    pub files: FxHashSet<BString>,
    /// Folders created, removed or moved: each is walked again whole.
    pub trees: FxHashSet<BString>,
}

/// Elsewhere no folder is watched: every snapshot looks at every file.
#[cfg(not(target_os = "linux"))]
pub(super) enum Watcher {}

#[cfg(not(target_os = "linux"))]
impl Watcher {
    /// There is no watcher here.
    pub fn new() -> std::io::Result<Self> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// Never called: there is no watcher.
    pub fn watch(&self, _absolute: &std::path::Path, _relative: BString) {
        match *self {}
    }

    /// Never called: there is no watcher.
    pub fn is_whole(&self) -> bool {
        match *self {}
    }

    /// Never called: there is no watcher.
    pub fn changes(&mut self) -> Changes {
        match *self {}
    }
}

/// `name` in `folder` (both relative to the workspace).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn join(folder: &[u8], name: &[u8]) -> BString {
    if folder.is_empty() {
        return BString::from(name);
    }
    let mut path = BString::from(folder);
    path.push(b'/');
    path.extend_from_slice(name);
    path
}

/// The folder holding `path` (empty for the workspace).
pub(super) fn parent(path: &[u8]) -> &[u8] {
    path.rfind_byte(b'/')
        .map_or(&[][..], |slash| &path[..slash])
}
