//! The shadow repository of one workspace: where it lives and how objects go in and out.

use crate::known::Known;
use agentry::checkpoint::CheckpointError;
use gix_hash::ObjectId;
use gix_object::{FindExt as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

/// The hash the shadow repositories use.
pub(super) const HASH: gix_hash::Kind = gix_hash::Kind::Sha1;

/// The shadow repository of one workspace (see the [module](super)).
pub struct ShadowRepo {
    /// The workspace it keeps snapshots of.
    pub(super) workspace: PathBuf,
    /// Its folder.
    pub(super) folder: PathBuf,
    /// Its objects (all loose), for writing them from several threads.
    pub(super) loose: gix_odb::loose::Store,
    /// What the last snapshot knew, when the workspace is watched (see [`Self::watching`]).
    pub(super) known: Option<Mutex<Option<Known>>>,
    /// Whether the user's inotify watches ran out on this workspace: then it is not tried
    /// again (the attempt costs a watch per folder each time).
    pub(super) too_many_folders: AtomicBool,
}

impl ShadowRepo {
    /// Opens (creating it when needed) the shadow repository of `workspace` under
    /// `checkpoints_folder` (`checkpoints` in the data folder, usually).
    pub fn open(checkpoints_folder: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        let workspace = agentry_plugin::paths::canonical_path(workspace);
        let folder = checkpoints_folder.join(folder_name(&workspace));
        let objects_folder = folder.join("objects");
        agentry_plugin::private::create_folder(&objects_folder)
            .map_err(CheckpointError::io(&objects_folder))?;
        let named = folder.join("workspace");
        if !named.exists() {
            let name = workspace.to_string_lossy();
            agentry_plugin::atomic_file::write_atomically_as(&named, name.as_bytes(), None)
                .map_err(CheckpointError::io(&named))?;
        }
        let loose = gix_odb::loose::Store::at(&objects_folder, HASH);
        Ok(Self {
            workspace,
            folder,
            loose,
            known: None,
            too_many_folders: AtomicBool::new(false),
        })
    }

    /// Watches the workspace's folders from the next snapshot on (on Linux, with inotify),
    /// so later snapshots look only where files changed instead of at every file's stat: for
    /// a repository that takes many snapshots, such as an agent's. The first snapshot still
    /// looks at everything. Where folders cannot be watched (another system, too few inotify
    /// watches, a crowded folder, a file with other hard links) every snapshot looks at
    /// everything, as without watching.
    pub fn watching(mut self) -> Self {
        self.known = Some(Mutex::new(None));
        self
    }

    /// The workspace it keeps snapshots of (canonical).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Its folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Where the stat cache of the last snapshot is.
    pub(super) fn stat_cache_path(&self) -> PathBuf {
        self.folder.join("stat-cache")
    }

    /// Whether the repository has the object.
    pub(super) fn has(&self, id: &ObjectId) -> bool {
        self.loose.contains(id)
    }

    /// Its object database, for reading trees and blobs (a handle of one thread's).
    pub(super) fn objects(&self) -> Result<gix_odb::Handle, CheckpointError> {
        let folder = self.folder.join("objects");
        let mut objects = gix_odb::at(&folder, HASH).map_err(CheckpointError::io(&folder))?;
        // There are only loose objects: looking for a missing one need not look for packs.
        objects.refresh_never();
        Ok(objects)
    }

    /// Writes an object unless the repository has it already; its id.
    pub(super) fn put(
        &self,
        kind: gix_object::Kind,
        data: &[u8],
    ) -> Result<ObjectId, CheckpointError> {
        let id = gix_object::compute_hash(HASH, kind, data).map_err(CheckpointError::repository)?;
        if !self.loose.contains(&id) {
            self.loose
                .write_buf_with_known_id(kind, data, id)
                .map_err(CheckpointError::repository)?;
        }
        Ok(id)
    }

    /// A blob's content.
    pub(super) fn blob(&self, id: &ObjectId) -> Result<Vec<u8>, CheckpointError> {
        let mut buffer = Vec::new();
        self.objects()?
            .find_blob(id, &mut buffer)
            .map_err(|_| CheckpointError::Pruned(id.to_string()))?;
        Ok(buffer)
    }

    /// A tree, decoded.
    pub(super) fn tree(&self, id: &ObjectId) -> Result<gix_object::Tree, CheckpointError> {
        let mut buffer = Vec::new();
        let tree = self
            .objects()?
            .find_tree(id, &mut buffer)
            .map_err(|_| CheckpointError::Pruned(id.to_string()))?;
        Ok(tree.into())
    }
}

/// The folder name of a workspace's repository: a hash of its path (the path itself is in the
/// folder's `workspace` file).
fn folder_name(workspace: &Path) -> String {
    let path = workspace.to_string_lossy();
    let id = gix_object::compute_hash(HASH, gix_object::Kind::Blob, path.as_bytes())
        .map_or_else(|_| "workspace".to_owned(), |id| id.to_string());
    id[..16.min(id.len())].to_owned()
}
