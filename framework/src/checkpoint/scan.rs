//! Finding the workspace's files: a parallel walk that honours the ignore rules, then the
//! limits applied (large files and crowded folders left out).

use super::stat_cache::Stat;
use super::{LeftOut, LeftOutReason, Limits};
use gix_object::bstr::{BString, ByteSlice};
use gix_object::tree::EntryKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file the walk found.
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// Its path, relative to the workspace, `/`-separated.
    pub path: BString,
    /// Its stat.
    pub stat: Stat,
    /// A file, an executable file or a symbolic link.
    pub kind: EntryKind,
}

/// What the walk found, the limits applied.
pub(super) struct Scan {
    /// The files to keep.
    pub files: Vec<Found>,
    /// What was left out.
    pub left_out: Vec<LeftOut>,
}

/// Walks `workspace` (never into `.git` or `shadow`, the shadow repository, when it lies
/// inside) and applies `limits`.
pub(super) fn scan(workspace: &Path, shadow: &Path, limits: &Limits) -> Scan {
    let (found, mut left_out) = walk(workspace, shadow);
    let mut files = Vec::with_capacity(found.len());
    let crowded = crowded_folders(&found, limits.max_folder_files);
    for (folder, files) in &crowded {
        left_out.push(LeftOut {
            path: folder.to_str_lossy().into_owned(),
            reason: LeftOutReason::TooManyFiles { files: *files },
        });
    }
    for file in found {
        if crowded.keys().any(|folder| is_inside(&file.path, folder)) {
            continue;
        }
        if file.kind != EntryKind::Link && file.stat.size > limits.max_file_bytes {
            left_out.push(LeftOut {
                path: file.path.to_str_lossy().into_owned(),
                reason: LeftOutReason::TooLarge {
                    bytes: file.stat.size,
                },
            });
            continue;
        }
        files.push(file);
    }
    left_out.sort_by(|a, b| a.path.cmp(&b.path));
    Scan { files, left_out }
}

/// Whether `path` lies inside `folder`.
pub(super) fn is_inside(path: &[u8], folder: &[u8]) -> bool {
    path.len() > folder.len() && path.starts_with(folder) && path[folder.len()] == b'/'
}

/// Every file and link the ignore rules keep, with what could not be read.
fn walk(workspace: &Path, shadow: &Path) -> (Vec<Found>, Vec<LeftOut>) {
    let shadow = shadow.to_path_buf();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let mut collectors = Collectors {
        workspace: workspace.to_path_buf(),
        found: Arc::default(),
        unreadable: Arc::default(),
    };
    ignore::WalkBuilder::new(workspace)
        .hidden(false)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(move |entry| entry.file_name() != ".git" && entry.path() != shadow)
        .build_parallel()
        .visit(&mut collectors);
    let found = std::mem::take(&mut *crate::sync::lock(&collectors.found));
    let unreadable = std::mem::take(&mut *crate::sync::lock(&collectors.unreadable));
    (found, unreadable)
}

/// Makes each walking thread its [`Collector`], and gathers what they found.
struct Collectors {
    workspace: PathBuf,
    found: Arc<Mutex<Vec<Found>>>,
    unreadable: Arc<Mutex<Vec<LeftOut>>>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for Collectors {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Collector {
            workspace: self.workspace.clone(),
            found: Vec::new(),
            unreadable: Vec::new(),
            all_found: self.found.clone(),
            all_unreadable: self.unreadable.clone(),
        })
    }
}

/// One walking thread's findings, handed over when the thread is done.
struct Collector {
    workspace: PathBuf,
    found: Vec<Found>,
    unreadable: Vec<LeftOut>,
    all_found: Arc<Mutex<Vec<Found>>>,
    all_unreadable: Arc<Mutex<Vec<LeftOut>>>,
}

impl ignore::ParallelVisitor for Collector {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                if let Some(path) = error_path(&error) {
                    let path = relative(&self.workspace, &path);
                    self.unreadable.push(LeftOut {
                        path: path.to_str_lossy().into_owned(),
                        reason: LeftOutReason::Unreadable {
                            error: error.to_string(),
                        },
                    });
                }
                return ignore::WalkState::Continue;
            }
        };
        let Some(file_type) = entry.file_type() else {
            return ignore::WalkState::Continue;
        };
        if !(file_type.is_file() || file_type.is_symlink()) {
            return ignore::WalkState::Continue;
        }
        let path = relative(&self.workspace, entry.path());
        match entry.metadata() {
            Ok(metadata) => self.found.push(Found {
                path,
                kind: kind_of(&metadata),
                stat: Stat::of(&metadata),
            }),
            Err(error) => self.unreadable.push(LeftOut {
                path: path.to_str_lossy().into_owned(),
                reason: LeftOutReason::Unreadable {
                    error: error.to_string(),
                },
            }),
        }
        ignore::WalkState::Continue
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        crate::sync::lock(&self.all_found).append(&mut self.found);
        crate::sync::lock(&self.all_unreadable).append(&mut self.unreadable);
    }
}

/// The path an error of the walk is about, if it names one.
fn error_path(error: &ignore::Error) -> Option<PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

/// A file's kind as a tree entry: a link, an executable file or a file.
pub(super) fn kind_of(metadata: &std::fs::Metadata) -> EntryKind {
    if metadata.file_type().is_symlink() {
        return EntryKind::Link;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if metadata.permissions().mode() & 0o111 != 0 {
            return EntryKind::BlobExecutable;
        }
    }
    EntryKind::Blob
}

/// `path` relative to `workspace`, `/`-separated.
pub(super) fn relative(workspace: &Path, path: &Path) -> BString {
    let relative = path.strip_prefix(workspace).unwrap_or(path);
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        BString::from(relative.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    {
        BString::from(relative.to_string_lossy().replace('\\', "/"))
    }
}

/// The folders (below the root) holding more than `limit` files, the outermost of each nest,
/// with their counts.
fn crowded_folders(files: &[Found], limit: usize) -> HashMap<BString, usize> {
    let mut direct: HashMap<&[u8], usize> = HashMap::new();
    for file in files {
        if let Some(slash) = file.path.rfind_byte(b'/') {
            *direct.entry(&file.path[..slash]).or_default() += 1;
        }
    }
    // Each folder's count through its subfolders: the deepest first, each added to its parent.
    let mut folders: Vec<&[u8]> = direct.keys().copied().collect();
    let mut total: HashMap<&[u8], usize> = HashMap::new();
    for folder in &folders {
        let mut at = *folder;
        let count = direct[folder];
        loop {
            *total.entry(at).or_default() += count;
            match at.rfind_byte(b'/') {
                Some(slash) => at = &at[..slash],
                None => break,
            }
        }
    }
    folders = total.keys().copied().collect();
    folders.sort_by_key(|folder| folder.len());
    let mut crowded: HashMap<BString, usize> = HashMap::new();
    for folder in folders {
        let count = total[folder];
        let inside_crowded = crowded.keys().any(|outer| is_inside(folder, outer));
        if count > limit && !inside_crowded {
            crowded.insert(BString::from(folder), count);
        }
    }
    crowded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(path: &str) -> Found {
        Found {
            path: path.into(),
            stat: Stat::default(),
            kind: EntryKind::Blob,
        }
    }

    #[test]
    fn the_outermost_crowded_folder_is_named_with_its_count() {
        let mut files: Vec<Found> = (0..3).map(|i| found(&format!("a/b/{i}"))).collect();
        files.push(found("a/c"));
        files.push(found("d/e"));
        files.push(found("top"));
        let crowded = crowded_folders(&files, 3);
        assert_eq!(crowded.len(), 1);
        assert_eq!(crowded[&BString::from("a")], 4);
        assert!(crowded_folders(&files, 4).is_empty());
    }

    #[test]
    fn inside_means_below_a_slash() {
        assert!(is_inside(b"a/b", b"a"));
        assert!(!is_inside(b"ab", b"a"));
        assert!(!is_inside(b"a", b"a"));
    }
}
