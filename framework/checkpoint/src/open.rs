//! An agent's checkpoints: its settings, and the shadow repositories of the workspaces it
//! works in, kept open so that their folders stay watched from one snapshot to the next.

use crate::{CheckpointSettings, ShadowRepo};
use agentry::checkpoint::{
    CheckpointError, CheckpointKeeper, FileChange, Restored, Snapshot, TreeId,
};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// How many workspaces' repositories an agent keeps open (and their folders watched) at once:
/// watches are the user's to share (inotify allows 128 instances a user by default).
const KEPT_OPEN: usize = 8;

/// An agent's checkpoints in shadow repositories (see the [crate](crate)).
pub struct Checkpoints {
    settings: CheckpointSettings,
    /// The repositories most recently used last.
    open: Mutex<Vec<Arc<ShadowRepo>>>,
}

impl Checkpoints {
    /// Checkpoints kept as `settings` say.
    pub fn new(settings: CheckpointSettings) -> Self {
        Self {
            settings,
            open: Mutex::default(),
        }
    }

    /// How they are kept.
    pub fn settings(&self) -> &CheckpointSettings {
        &self.settings
    }

    /// The shadow repository of `workspace`, opened (and its folders watched, see
    /// [`ShadowRepo::watching`]) when it is first asked for; the least recently used one is
    /// closed when too many are open.
    pub fn repo(&self, workspace: &Path) -> Result<Arc<ShadowRepo>, CheckpointError> {
        let workspace = agentry_plugin::paths::canonical_path(workspace);
        let mut open = agentry::sync::lock(&self.open);
        if let Some(at) = open.iter().position(|repo| repo.workspace() == workspace) {
            let repo = open.remove(at);
            open.push(repo.clone());
            return Ok(repo);
        }
        let repo = Arc::new(ShadowRepo::open(&self.settings.folder, &workspace)?.watching());
        if open.len() >= KEPT_OPEN {
            open.remove(0);
        }
        open.push(repo.clone());
        Ok(repo)
    }
}

impl CheckpointKeeper for Checkpoints {
    fn snapshot(&self, workspace: &Path) -> Result<Snapshot, CheckpointError> {
        self.repo(workspace)?.snapshot(&self.settings.limits)
    }

    fn log(&self, workspace: &Path, tree: &TreeId) -> Result<(), CheckpointError> {
        self.repo(workspace)?.log(tree)
    }

    fn prune(&self, workspace: &Path) -> Result<(), CheckpointError> {
        self.repo(workspace)?
            .prune(self.settings.keep, self.settings.keep_for)
    }

    fn changes(
        &self,
        workspace: &Path,
        from: &TreeId,
        to: &TreeId,
    ) -> Result<Vec<FileChange>, CheckpointError> {
        self.repo(workspace)?.changes(from, to)
    }

    fn restore(
        &self,
        workspace: &Path,
        target: &TreeId,
        current: &TreeId,
        spare: &dyn Fn(&str) -> bool,
    ) -> Result<Restored, CheckpointError> {
        self.repo(workspace)?.restore(target, current, spare)
    }
}
