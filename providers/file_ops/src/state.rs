//! What this session has read: the read-before-write rule and stale-file detection.

use agentry::tool::{ToolContext, ToolError};
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

/// The files a session has seen, by canonical path.
#[derive(Debug, Default)]
pub(crate) struct ReadFiles {
    stamps: Mutex<HashMap<PathBuf, Stamp>>,
}

impl ReadFiles {
    /// The session's record.
    pub fn of(ctx: &ToolContext) -> std::sync::Arc<ReadFiles> {
        ctx.state.get_or_init(ReadFiles::default)
    }

    fn key(path: &Path) -> PathBuf {
        path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
    }

    /// Notes that the session has seen the file as it is now.
    pub fn saw(&self, path: &Path) {
        if let Some(stamp) = Stamp::of(path) {
            self.stamps
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(Self::key(path), stamp);
        }
    }

    /// Fails unless the session has read the existing file and it is unchanged since.
    pub fn check_fresh(&self, path: &Path) -> Result<(), ToolError> {
        let seen = self
            .stamps
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&Self::key(path))
            .copied();
        match seen {
            None => Err(ToolError::failed(format!(
                "{} already exists and has not been read in this session: Read it first, then change it.",
                path.display()
            ))),
            Some(stamp) if Some(stamp) != Stamp::of(path) => Err(ToolError::failed(format!(
                "{} has changed on disk since it was last read: Read it again before changing it.",
                path.display()
            ))),
            Some(_) => Ok(()),
        }
    }
}
