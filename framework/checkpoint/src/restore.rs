//! Comparing snapshots, and putting the workspace's files back as a snapshot has them.

use crate::ShadowRepo;
use crate::repo::HASH;
use agentry::checkpoint::{Change, CheckpointError, FileChange, Restored, TreeId};
use gix_hash::ObjectId;
use gix_object::FindExt as _;
use gix_object::bstr::{BString, ByteSlice};
use gix_object::tree::{EntryKind, EntryMode};
use std::path::{Path, PathBuf};

/// One file's side of a change: its kind and blob.
type Side = Option<(EntryKind, ObjectId)>;

impl ShadowRepo {
    /// The files that differ between two snapshots, by path.
    pub fn changes(&self, from: &TreeId, to: &TreeId) -> Result<Vec<FileChange>, CheckpointError> {
        Ok(self
            .diff(from, to)?
            .into_iter()
            .map(|(path, change, _)| FileChange {
                path: path.to_str_lossy().into_owned(),
                change,
            })
            .collect())
    }

    /// Puts the workspace's files back as `target` has them, from `current` (a snapshot taken
    /// just now): changed files rewritten, files `target` lacks removed (with the folders they
    /// leave empty), files it has and the workspace lacks brought back, modes set. Files for
    /// which `spare` says so are left as they are.
    pub fn restore(
        &self,
        target: &TreeId,
        current: &TreeId,
        spare: impl Fn(&str) -> bool,
    ) -> Result<Restored, CheckpointError> {
        let mut changes = self.diff(current, target)?;
        // Removals first: a file may come back where a folder was.
        changes.sort_by_key(|(_, change, _)| *change != Change::Deleted);
        let mut restored = Restored::default();
        for (path, change, wanted) in changes {
            let file_change = FileChange {
                path: path.to_str_lossy().into_owned(),
                change,
            };
            if spare(&file_change.path) {
                restored.spared.push(file_change);
                continue;
            }
            let on_disk = self.workspace.join(path.to_path_lossy());
            match wanted {
                None => {
                    remove_file(&on_disk)?;
                    self.remove_empty_folders(&on_disk);
                }
                Some((kind, id)) => self.write_file(&on_disk, kind, &id)?,
            }
            restored.changed.push(file_change);
        }
        Ok(restored)
    }

    /// Each file that differs from `from` to `to`, with how, and what `to` has of it.
    fn diff(
        &self,
        from: &TreeId,
        to: &TreeId,
    ) -> Result<Vec<(BString, Change, Side)>, CheckpointError> {
        let (from, to) = (crate::object_id(from)?, crate::object_id(to)?);
        if from == to {
            return Ok(Vec::new());
        }
        let (mut from_buffer, mut to_buffer) = (Vec::new(), Vec::new());
        let objects = self.objects()?;
        let from_tree = tree_iter(&objects, &from, &mut from_buffer)?;
        let to_tree = tree_iter(&objects, &to, &mut to_buffer)?;
        let mut recorder = gix_diff::tree::Recorder::default();
        gix_diff::tree(
            from_tree,
            to_tree,
            gix_diff::tree::State::default(),
            &objects,
            &mut recorder,
        )
        .map_err(CheckpointError::repository)?;
        use gix_diff::tree::recorder::Change as Recorded;
        let file = |mode: EntryMode| !mode.is_tree() && !mode.is_commit();
        let mut changes = Vec::new();
        for record in recorder.records {
            match record {
                Recorded::Addition {
                    entry_mode,
                    oid,
                    path,
                    ..
                } if file(entry_mode) => {
                    changes.push((path, Change::Added, Some((entry_mode.kind(), oid))));
                }
                Recorded::Deletion {
                    entry_mode, path, ..
                } if file(entry_mode) => changes.push((path, Change::Deleted, None)),
                Recorded::Modification {
                    previous_entry_mode,
                    entry_mode,
                    oid,
                    path,
                    ..
                } => match (file(previous_entry_mode), file(entry_mode)) {
                    (true, true) => {
                        changes.push((path, Change::Modified, Some((entry_mode.kind(), oid))))
                    }
                    (true, false) => changes.push((path, Change::Deleted, None)),
                    (false, true) => {
                        changes.push((path, Change::Added, Some((entry_mode.kind(), oid))))
                    }
                    (false, false) => {}
                },
                _ => {}
            }
        }
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(changes)
    }

    /// Writes a file (or link) as the snapshot has it, atomically for a file.
    fn write_file(
        &self,
        path: &Path,
        kind: EntryKind,
        id: &ObjectId,
    ) -> Result<(), CheckpointError> {
        let content = self.blob(id)?;
        // Whatever is in the way (a link where a file was, a folder left empty) goes first.
        match std::fs::symlink_metadata(path) {
            Ok(metadata) if metadata.is_dir() => {
                std::fs::remove_dir(path).map_err(CheckpointError::io(path))?
            }
            Ok(metadata) if metadata.file_type().is_symlink() || kind == EntryKind::Link => {
                remove_file(path)?
            }
            _ => {}
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(CheckpointError::io(parent))?;
        }
        if kind == EntryKind::Link {
            return make_link(&content, path);
        }
        agentry_plugin::atomic_file::write_atomically_as(path, &content, permissions(kind))
            .map_err(CheckpointError::io(path))
    }

    /// Removes the folders above `path` that are empty now, up to the workspace.
    fn remove_empty_folders(&self, path: &Path) {
        let mut folder = path.parent();
        while let Some(at) = folder {
            if at == self.workspace || !at.starts_with(&self.workspace) {
                break;
            }
            if std::fs::remove_dir(at).is_err() {
                break;
            }
            folder = at.parent();
        }
    }
}

/// A tree's entries, one by one (the empty tree is not stored).
fn tree_iter<'a>(
    objects: &gix_odb::Handle,
    id: &ObjectId,
    buffer: &'a mut Vec<u8>,
) -> Result<gix_object::TreeRefIter<'a>, CheckpointError> {
    if id.is_empty_tree() {
        return Ok(gix_object::TreeRefIter::from_bytes(&[], HASH));
    }
    objects
        .find_tree_iter(id, buffer)
        .map_err(|_| CheckpointError::Pruned(id.to_string()))
}

/// Removes a file or link; one already gone is no error.
fn remove_file(path: &Path) -> Result<(), CheckpointError> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(CheckpointError::io(path)(error))
        }
        _ => Ok(()),
    }
}

/// The permissions a file of this kind is written with: executable or not (git's two modes).
#[cfg(unix)]
fn permissions(kind: EntryKind) -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if kind == EntryKind::BlobExecutable {
        0o755
    } else {
        0o644
    };
    Some(std::fs::Permissions::from_mode(mode))
}

/// The permissions a file of this kind is written with: the system's default.
#[cfg(not(unix))]
fn permissions(_kind: EntryKind) -> Option<std::fs::Permissions> {
    None
}

/// Makes a symbolic link at `path` to the target a blob holds.
#[cfg(unix)]
fn make_link(target: &[u8], path: &Path) -> Result<(), CheckpointError> {
    use std::os::unix::ffi::OsStrExt;
    let target = PathBuf::from(std::ffi::OsStr::from_bytes(target));
    std::os::unix::fs::symlink(target, path).map_err(CheckpointError::io(path))
}

/// Makes a symbolic link at `path` to the target a blob holds.
#[cfg(not(unix))]
fn make_link(target: &[u8], path: &Path) -> Result<(), CheckpointError> {
    let target = PathBuf::from(String::from_utf8_lossy(target).into_owned());
    std::fs::write(path, target.to_string_lossy().as_bytes()).map_err(CheckpointError::io(path))
}
