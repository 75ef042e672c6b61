//! Paths as the permission checks compare them: canonical, with symlinks and `..` resolved;
//! and where agentry keeps its data.

use std::path::{Component, Path, PathBuf};

/// The path with symlinks and `..` resolved as the kernel would resolve them when the file is
/// opened or created: component by component, following every link — a dangling one too (a
/// write through it creates its target) — and taking `..` from where a link led. So a file
/// about to be created resolves to where it would be made. A relative path is taken from the
/// current folder.
pub fn canonical_path(path: &Path) -> PathBuf {
    /// Links followed at most, as Linux's `MAXSYMLINKS`: past them the rest is taken as written.
    const MAX_LINKS: usize = 40;
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    let mut resolved = PathBuf::new();
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    push_components(&absolute, &mut resolved, &mut pending);
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            if resolved.parent().is_some() {
                resolved.pop();
            }
            continue;
        }
        let candidate = resolved.join(&name);
        let target = match candidate.symlink_metadata() {
            Ok(metadata) if metadata.file_type().is_symlink() && links < MAX_LINKS => {
                std::fs::read_link(&candidate).ok()
            }
            _ => None,
        };
        match target {
            Some(target) => {
                links += 1;
                push_components(&target, &mut resolved, &mut pending);
            }
            None => resolved = candidate,
        }
    }
    resolved
}

/// Queues `path`'s components (`.` dropped, `..` kept) in front of `pending`, which is read from
/// its end; an absolute `path` starts again from its root.
fn push_components(path: &Path, resolved: &mut PathBuf, pending: &mut Vec<std::ffi::OsString>) {
    let is_root =
        |component: &Component| matches!(component, Component::Prefix(_) | Component::RootDir);
    let root: PathBuf = path.components().take_while(is_root).collect();
    if !root.as_os_str().is_empty() {
        *resolved = root;
    }
    let names: Vec<std::ffi::OsString> = path
        .components()
        .filter_map(|component| match component {
            Component::ParentDir => Some("..".into()),
            Component::Normal(name) => Some(name.to_owned()),
            _ => None,
        })
        .collect();
    pending.extend(names.into_iter().rev());
}

/// The text of a settings file; `None` when there is no such file. Only a regular file (or a
/// link to one) of at most `max_bytes` is read: a FIFO would block whoever reads it, and a
/// device (`/dev/zero`) or a huge file would fill the memory. Either is an `InvalidData` error
/// that says so.
pub fn read_regular_file(path: &Path, max_bytes: u64) -> std::io::Result<Option<String>> {
    let Some(bytes) = read_regular_bytes(path, max_bytes)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text".to_owned())
    })
}

/// The bytes of a file, read as [`read_regular_file`] reads text: only from a regular file of
/// at most `max_bytes`; `None` when there is no such file.
pub fn read_regular_bytes(path: &Path, max_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
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
    let too_big = || invalid(format!("it may hold at most {max_bytes} bytes"));
    if metadata.len() > max_bytes {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    open_regular(path)?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big());
    }
    Ok(Some(bytes))
}

/// `path` opened for reading when it is a regular file (or a link to one): opened without
/// waiting for a writer, so a FIFO is an `InvalidData` error, not a hang.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let file = nonblocking_options().open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a regular file (a folder, a pipe or a device), so it is not read",
        ));
    }
    Ok(file)
}

/// Options that open a file for reading without waiting for a writer (a FIFO).
fn nonblocking_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::libc::O_NONBLOCK);
    options
}

/// Whether `path` is a file with other names besides it (a hard link): what is written to it in
/// place is written to those too, which no rule naming `path` can see.
pub fn has_other_names(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.nlink() > 1)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// `name` as a file name of letters, digits, `-` and `_` alone (every other character an
/// `_`): one that names no other folder, whatever the name holds (`/`, `..`).
pub fn file_name_from(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
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

    /// A write through a dangling link creates the link's target, and `..` after a link climbs
    /// from where the link led: both are where the file would really be made.
    #[cfg(unix)]
    #[test]
    fn files_not_yet_there_resolve_through_dangling_links_and_dots_after_links() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("project/.claude/agents")).unwrap();
        std::fs::create_dir(root.join("project/sub")).unwrap();
        symlink(".claude/settings.json", root.join("project/dangling")).unwrap();
        symlink("../.mcp.json", root.join("project/sub/up")).unwrap();
        symlink(".claude/agents", root.join("project/agents")).unwrap();
        symlink("chain2", root.join("project/chain1")).unwrap();
        symlink("/nonexistent-root-folder/x", root.join("project/chain2")).unwrap();
        symlink("loop", root.join("project/loop")).unwrap();
        let project = root.join("project");
        assert_eq!(
            canonical_path(&project.join("dangling")),
            project.join(".claude/settings.json")
        );
        assert_eq!(
            canonical_path(&project.join("sub/up")),
            project.join(".mcp.json")
        );
        assert_eq!(
            canonical_path(&project.join("agents/../settings.local.json")),
            project.join(".claude/settings.local.json")
        );
        assert_eq!(
            canonical_path(&project.join("chain1")),
            Path::new("/nonexistent-root-folder/x")
        );
        assert_eq!(canonical_path(&project.join("loop")), project.join("loop"));
        assert_eq!(canonical_path(Path::new("/../..")), Path::new("/"));
    }
}
