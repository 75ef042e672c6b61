//! The folder walk Glob and Grep share: what they look at, and what they leave out.

use agentry_plugin::paths::canonical_path;
use agentry_plugin::tool::ReadDenials;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Version-control folders: never searched.
const VCS_FOLDERS: &[&str] = &[".git", ".hg", ".svn", ".bzr", ".jj", ".sl"];

/// A directory walker: hidden files included, version-control folders left out; `.ignore`
/// and `.rgignore` files honoured everywhere, `.gitignore` files inside a git repository
/// (outside one they mean nothing to git, and a packaged tree may carry one that ignores
/// everything). What the session's deny rules keep from being read (`denials`) is left out
/// too: a denied folder is not entered, and a link is left out when what it leads to is denied.
pub(crate) fn walker(root: &Path, denials: Option<Arc<ReadDenials>>) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(root);
    let denied = denials.map(|denials| Denied {
        root: root.to_path_buf(),
        canonical_root: canonical_path(root),
        denials,
    });
    builder
        .hidden(false)
        .git_ignore(true)
        .ignore(true)
        .parents(true)
        .filter_entry(move |entry| {
            let vcs = entry.file_type().is_some_and(|t| t.is_dir())
                && VCS_FOLDERS.iter().any(|name| entry.file_name() == *name);
            !vcs && !denied
                .as_ref()
                .is_some_and(|denied| denied.covers(entry.path(), entry.path_is_symlink()))
        });
    builder
}

/// The session's read denials, for paths under one walk's root.
struct Denied {
    root: PathBuf,
    canonical_root: PathBuf,
    denials: Arc<ReadDenials>,
}

impl Denied {
    /// Whether `path` (under the root) is denied, as it is or, for a link, where it leads.
    fn covers(&self, path: &Path, is_link: bool) -> bool {
        let canonical = match path.strip_prefix(&self.root) {
            Ok(relative) if !relative.as_os_str().is_empty() => self.canonical_root.join(relative),
            _ => self.canonical_root.clone(),
        };
        self.denials.covers(&canonical) || (is_link && self.denials.covers(&canonical_path(path)))
    }
}
