//! Paths as the permission checks compare them: canonical, with symlinks and `..` resolved;
//! and where agentry keeps its data.

use std::path::{Component, Path, PathBuf};

/// The path with symlinks and `..` resolved: the canonical form of its longest existing
/// ancestor, with the rest appended (so a file about to be created resolves too).
pub fn canonical_path(path: &Path) -> PathBuf {
    if let Ok(canonical) = path.canonicalize() {
        return canonical;
    }
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    if let Ok(canonical) = normal.canonicalize() {
        return canonical;
    }
    let mut existing = normal.as_path();
    let mut rest = Vec::new();
    while let Some(parent) = existing.parent() {
        if let Some(name) = existing.file_name() {
            rest.push(name.to_owned());
        }
        existing = parent;
        if let Ok(canonical) = existing.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(canonical, |path, name| path.join(name));
        }
    }
    normal
}

/// Where agentry keeps its data (the sessions, the terminal's input history, checkpoints):
/// `$AGENTRY_DATA_DIR`, else `agentry` in the user's data directory (`~/.local/share` on Linux).
pub fn data_dir() -> PathBuf {
    std::env::var_os("AGENTRY_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("agentry")))
        .unwrap_or_else(|| PathBuf::from(".agentry-data"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_resolve_symlinks_and_dots_even_for_files_not_yet_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        assert_eq!(
            canonical_path(&root.join("real/../real/new.txt")),
            root.join("real/new.txt")
        );
        #[cfg(unix)]
        assert_eq!(
            canonical_path(&root.join("link/new/deeper.txt")),
            root.join("real/new/deeper.txt")
        );
        assert_eq!(canonical_path(&root.join("a/b/../c")), root.join("a/c"));
        #[cfg(unix)]
        assert_eq!(
            canonical_path(&root.join("nowhere/../link")),
            root.join("real")
        );
    }
}
