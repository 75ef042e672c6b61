//! What this session has read: the read-before-write rule and stale-file detection.

use agentry_plugin::sync::lock;
use agentry_plugin::tool::{ToolContext, ToolError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// A file's identity on disk when it was last read or written by the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let metadata = std::fs::metadata(path).ok()?;
        Some(Stamp {
            modified: metadata.modified().ok(),
            len: metadata.len(),
        })
    }
}

/// How the session saw a file: its identity on disk, or (for files the front-end's client
/// holds) a hash of the text it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Disk(Stamp),
    Text(u64),
}

fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The files a session has seen, by canonical path.
#[derive(Debug, Default)]
pub(crate) struct ReadFiles {
    stamps: Mutex<HashMap<PathBuf, Seen>>,
}

impl ReadFiles {
    /// The session's record.
    pub fn of(ctx: &ToolContext) -> std::sync::Arc<ReadFiles> {
        ctx.state.get_or_init(ReadFiles::default)
    }

    fn key(path: &Path) -> PathBuf {
        path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
    }

    fn note(&self, path: &Path, seen: Seen) {
        lock(&self.stamps).insert(Self::key(path), seen);
    }

    /// Notes that the session has seen the file as it is now on disk.
    pub fn saw(&self, path: &Path) {
        if let Some(stamp) = Stamp::of(path) {
            self.note(path, Seen::Disk(stamp));
        }
    }

    /// Notes that the session has seen `text` as the file's content (from the client).
    pub fn saw_text(&self, path: &Path, text: &str) {
        self.note(path, Seen::Text(text_hash(text)));
    }

    /// Fails unless the session has read the existing file and it is unchanged on disk since.
    pub fn check_fresh(&self, path: &Path) -> Result<(), ToolError> {
        self.check(path, Stamp::of(path).map(Seen::Disk), "on disk")
    }

    /// Fails unless the session has read the file and its text is still `current`.
    pub fn check_fresh_text(&self, path: &Path, current: &str) -> Result<(), ToolError> {
        self.check(path, Some(Seen::Text(text_hash(current))), "in the editor")
    }

    fn check(&self, path: &Path, now: Option<Seen>, place: &str) -> Result<(), ToolError> {
        let seen = lock(&self.stamps).get(&Self::key(path)).copied();
        match seen {
            None => Err(ToolError::failed(format!(
                "{} already exists and has not been read in this session: Read it first, then change it.",
                path.display()
            ))),
            Some(seen) if Some(seen) != now => Err(ToolError::failed(format!(
                "{} has changed {place} since it was last read: Read it again before changing it.",
                path.display()
            ))),
            Some(_) => Ok(()),
        }
    }
}
