//! Finding the workspace's files: a parallel walk that honours the ignore rules, of the whole
//! workspace or of one folder, then the limits applied (large files and crowded folders left
//! out).

use crate::Limits;
use crate::stat_cache::Stat;
use crate::tree_path::is_inside;
use crate::watch::Watcher;
use agentry::checkpoint::{LeftOut, LeftOutReason};
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
#[derive(Default)]
pub(super) struct Scan {
    /// The files to keep.
    pub files: Vec<Found>,
    /// What was left out.
    pub left_out: Vec<LeftOut>,
    /// The kept folders it found (below where it began).
    pub folders: Vec<BString>,
    /// Whether a kept file has other hard links (a change through one of those is not
    /// reported in the workspace's folders, so they cannot be watched).
    pub linked: bool,
}

impl Scan {
    /// Adds what `more` found.
    pub fn append(&mut self, mut more: Scan) {
        self.files.append(&mut more.files);
        self.left_out.append(&mut more.left_out);
        self.folders.append(&mut more.folders);
        self.linked |= more.linked;
    }
}

/// Walks the whole of `workspace` (never into `.git` or `shadow`, the shadow repository, when
/// it lies inside), watching each folder it enters with `watcher`, and applies `limits`.
pub(super) fn scan(
    workspace: &Path,
    shadow: &Path,
    limits: &Limits,
    watcher: Option<&Watcher>,
) -> Scan {
    let mut scan = walk(Walk {
        workspace,
        shadow,
        root: workspace,
        whole: true,
        watcher,
    });
    let crowded = crowded_folders(
        scan.files.iter().map(|f| f.path.as_slice()),
        limits.max_folder_files,
    );
    for (folder, files) in &crowded {
        scan.left_out.push(LeftOut {
            path: folder.to_str_lossy().into_owned(),
            reason: LeftOutReason::TooManyFiles { files: *files },
        });
    }
    scan.files
        .retain(|file| !crowded.keys().any(|folder| is_inside(&file.path, folder)));
    apply_size_limit(&mut scan, limits);
    scan
}

/// Walks one `folder` of `workspace` (relative to it): only its own files and subfolders,
/// or (`whole`) everything below it, watching each folder it enters with `watcher`. The size
/// limit is applied; the folder limit is the caller's to check.
pub(super) fn scan_folder(
    workspace: &Path,
    shadow: &Path,
    folder: &[u8],
    whole: bool,
    limits: &Limits,
    watcher: Option<&Watcher>,
) -> Scan {
    let root = workspace.join(folder.to_path_lossy());
    // A folder that is gone has nothing in it (its parent's listing says it went).
    if !root.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Scan::default();
    }
    let mut scan = walk(Walk {
        workspace,
        shadow,
        root: &root,
        whole,
        watcher,
    });
    apply_size_limit(&mut scan, limits);
    scan
}

/// Leaves out the files over the size limit (links are only their target's name).
fn apply_size_limit(scan: &mut Scan, limits: &Limits) {
    let (kept, large): (Vec<Found>, Vec<Found>) = std::mem::take(&mut scan.files)
        .into_iter()
        .partition(|file| file.kind == EntryKind::Link || file.stat.size <= limits.max_file_bytes);
    scan.files = kept;
    scan.left_out.extend(large.into_iter().map(|file| LeftOut {
        path: file.path.to_str_lossy().into_owned(),
        reason: LeftOutReason::TooLarge {
            bytes: file.stat.size,
        },
    }));
    scan.left_out.sort_by(|a, b| a.path.cmp(&b.path));
}

/// One walk: where, how deep, and what watches the folders it enters.
#[derive(Clone, Copy)]
struct Walk<'a> {
    workspace: &'a Path,
    shadow: &'a Path,
    root: &'a Path,
    /// Everything below `root` (each folder watched), or only its own entries.
    whole: bool,
    watcher: Option<&'a Watcher>,
}

/// Every file and link the ignore rules keep, with the kept folders and what could not be
/// read.
fn walk(walk: Walk<'_>) -> Scan {
    let shadow = walk.shadow.to_path_buf();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let found: Arc<Mutex<Scan>> = Arc::default();
    let mut collectors = Collectors {
        walk,
        found: found.clone(),
    };
    ignore::WalkBuilder::new(walk.root)
        .hidden(false)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .max_depth((!walk.whole).then_some(1))
        .threads(threads)
        .filter_entry(move |entry| entry.file_name() != ".git" && entry.path() != shadow)
        .build_parallel()
        .visit(&mut collectors);
    drop(collectors);
    std::mem::take(&mut *agentry::sync::lock(&found))
}

/// Makes each walking thread its [`Collector`], and gathers what they found.
struct Collectors<'a> {
    walk: Walk<'a>,
    found: Arc<Mutex<Scan>>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for Collectors<'s> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Collector {
            walk: self.walk,
            found: Scan::default(),
            all: self.found.clone(),
        })
    }
}

/// One walking thread's findings, handed over when the thread is done.
struct Collector<'a> {
    walk: Walk<'a>,
    found: Scan,
    all: Arc<Mutex<Scan>>,
}

impl Collector<'_> {
    fn unreadable(&mut self, path: BString, error: String) {
        self.found.left_out.push(LeftOut {
            path: path.to_str_lossy().into_owned(),
            reason: LeftOutReason::Unreadable { error },
        });
    }
}

impl ignore::ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                // What went while the walk went by is simply not there.
                let gone = error
                    .io_error()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound);
                if let Some(path) = error_path(&error).filter(|_| !gone) {
                    let path = relative(self.walk.workspace, &path);
                    self.unreadable(path, error.to_string());
                }
                return ignore::WalkState::Continue;
            }
        };
        let Some(file_type) = entry.file_type() else {
            return ignore::WalkState::Continue;
        };
        let path = relative(self.walk.workspace, entry.path());
        if file_type.is_dir() {
            // Watched before its entries are listed (see `watch`).
            if let Some(watcher) = self.walk.watcher.filter(|_| self.walk.whole) {
                watcher.watch(entry.path(), path.clone());
            }
            if entry.depth() > 0 {
                self.found.folders.push(path);
            }
            return ignore::WalkState::Continue;
        }
        if !(file_type.is_file() || file_type.is_symlink()) {
            return ignore::WalkState::Continue;
        }
        match entry.metadata() {
            Ok(metadata) => {
                self.found.linked |= has_other_links(&metadata);
                self.found.files.push(Found {
                    path,
                    kind: kind_of(&metadata),
                    stat: Stat::of(&metadata),
                });
            }
            Err(error) => {
                let gone = error
                    .io_error()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound);
                if !gone {
                    self.unreadable(path, error.to_string());
                }
            }
        }
        ignore::WalkState::Continue
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        agentry::sync::lock(&self.all).append(std::mem::take(&mut self.found));
    }
}

/// Whether a file has hard links besides the one the walk found.
fn has_other_links(metadata: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        metadata.is_file() && metadata.nlink() > 1
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        false
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
pub(super) fn crowded_folders<'a>(
    files: impl IntoIterator<Item = &'a [u8]>,
    limit: usize,
) -> HashMap<BString, usize> {
    let mut direct: HashMap<&[u8], usize> = HashMap::new();
    for path in files {
        if let Some(slash) = path.rfind_byte(b'/') {
            *direct.entry(&path[..slash]).or_default() += 1;
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
        let paths = || files.iter().map(|f| f.path.as_slice());
        let crowded = crowded_folders(paths(), 3);
        assert_eq!(crowded.len(), 1);
        assert_eq!(crowded[&BString::from("a")], 4);
        assert!(crowded_folders(paths(), 4).is_empty());
    }
}
