//! Where Read, Write and Edit find text files: on disk, or (when the front-end's client offers
//! it) through the client, so an editor's unsaved buffers are read and every change shows in it.

use crate::state::ReadFiles;
use agentry_plugin::paths::canonical_path;
use agentry_plugin::tool::{CheckedPaths, ClientFiles, ToolContext, ToolError};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The session's text files.
#[derive(Clone)]
pub(crate) enum TextFiles {
    /// Read and written here, atomically.
    Disk,
    /// Read and written by the front-end's client.
    Client(Arc<dyn ClientFiles>),
}

impl TextFiles {
    /// The files of the call's session.
    pub fn of(ctx: &ToolContext) -> Self {
        match &ctx.client.files {
            Some(files) => TextFiles::Client(files.clone()),
            None => TextFiles::Disk,
        }
    }

    /// The path a call uses for the file the model named `given`. On disk, its canonical path,
    /// which must be one the call's permission was judged for: a link swapped in since would
    /// lead elsewhere, and the disk's reads and writes follow no link ([`checked_file`]). The
    /// client's files are the client's business, by the path as given.
    ///
    /// [`checked_file`]: agentry_plugin::checked_file
    pub fn path_for(&self, ctx: &ToolContext, given: &str) -> Result<PathBuf, ToolError> {
        let resolved = ctx.resolve_path(given);
        if self.through_client() {
            return Ok(resolved);
        }
        checked(ctx, given, canonical_path(&resolved))
    }

    /// Whether the client, not the disk, holds the files.
    pub fn through_client(&self) -> bool {
        matches!(self, TextFiles::Client(_))
    }

    /// A file's whole text.
    pub async fn read(&self, path: &Path) -> Result<String, ToolError> {
        match self {
            TextFiles::Disk => {
                let path = path.to_path_buf();
                blocking(move || read_text(&path)).await
            }
            TextFiles::Client(files) => files
                .read_text_file(path.to_path_buf())
                .await
                .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display()))),
        }
    }

    /// Replaces (or creates) a file.
    pub async fn write(&self, path: &Path, text: String) -> Result<(), ToolError> {
        let target = path.to_path_buf();
        let failed =
            move |e: String| ToolError::failed(format!("cannot write {}: {e}", target.display()));
        match self {
            TextFiles::Disk => {
                let target = path.to_path_buf();
                blocking(move || {
                    agentry_plugin::checked_file::write_atomically(&target, text.as_bytes())
                        .map_err(|e| failed(e.to_string()))
                })
                .await
            }
            TextFiles::Client(files) => files
                .write_text_file(path.to_path_buf(), text)
                .await
                .map_err(failed),
        }
    }

    /// Notes that the session has seen `text` as the file's content.
    pub fn saw(&self, read_files: &ReadFiles, path: &Path, text: &str) {
        match self {
            TextFiles::Disk => read_files.saw(path),
            TextFiles::Client(_) => read_files.saw_text(path, text),
        }
    }

    /// Fails unless the session has seen the file as it is now (`current` is its text now).
    pub fn check_fresh(
        &self,
        read_files: &ReadFiles,
        path: &Path,
        current: &str,
    ) -> Result<(), ToolError> {
        match self {
            TextFiles::Disk => read_files.check_fresh(path),
            TextFiles::Client(_) => read_files.check_fresh_text(path, current),
        }
    }
}

/// `path` (canonical) when the call's permission was judged for it (or not by path at all).
pub(crate) fn checked(ctx: &ToolContext, given: &str, path: PathBuf) -> Result<PathBuf, ToolError> {
    match CheckedPaths::of(ctx) {
        Some(judged) if !judged.contains(&path) => Err(ToolError::failed(format!(
            "{given} now leads to {}, not to the path whose permission was judged: it changed while the call waited, so the call did nothing. Call again.",
            path.display()
        ))),
        _ => Ok(path),
    }
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("the file operation did not finish: {e}")))?
}

/// Reads a whole text file for Write and Edit (`path` canonical, opened following no link).
pub(crate) fn read_text(path: &Path) -> Result<String, ToolError> {
    let mut bytes = Vec::new();
    agentry_plugin::checked_file::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!(
            "{} is not UTF-8 text, so it cannot be edited as text: use Bash for it.",
            path.display()
        ))
    })
}
