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

/// The text of a settings file; `None` when there is no such file. Only a regular file (or a
/// link to one) of at most `max_bytes` is read: a FIFO would block whoever reads it, and a
/// device (`/dev/zero`) or a huge file would fill the memory. Either is an `InvalidData` error
/// that says so.
pub fn read_regular_file(path: &Path, max_bytes: u64) -> std::io::Result<Option<String>> {
    use std::io::Read as _;
    let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidData, message);
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !metadata.is_file() {
        return Err(invalid(
            "not a regular file (a folder, a pipe or a device), so it is not read".to_owned(),
        ));
    }
    let too_big = || {
        invalid(format!(
            "a settings file may hold at most {max_bytes} bytes"
        ))
    };
    if metadata.len() > max_bytes {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    // Opened without blocking: the file may have been swapped for a FIFO since it was looked at.
    let file = nonblocking_options().open(path)?;
    if !file.metadata()?.is_file() {
        return Err(invalid("not a regular file, so it is not read".to_owned()));
    }
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| invalid("not UTF-8 text".to_owned()))
}

/// Options that open a file for reading without waiting for a writer (a FIFO).
fn nonblocking_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::libc::O_NONBLOCK);
    options
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
    fn only_regular_files_of_a_bounded_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("config.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let error = read_regular_file(&fifo, 1024).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("not a regular file"), "{error}");
        #[cfg(unix)]
        {
            let zero = dir.path().join("zero.toml");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            let error = read_regular_file(&zero, 1024).unwrap_err().to_string();
            assert!(error.contains("not a regular file"), "{error}");
        }
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; 2048]).unwrap();
        let error = read_regular_file(&big, 1024).unwrap_err().to_string();
        assert!(error.contains("at most 1024 bytes"), "{error}");
        std::fs::write(&big, "x = 1\n").unwrap();
        assert_eq!(
            read_regular_file(&big, 1024).unwrap().as_deref(),
            Some("x = 1\n")
        );
        assert_eq!(
            read_regular_file(&dir.path().join("none"), 1024).unwrap(),
            None
        );
    }

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
