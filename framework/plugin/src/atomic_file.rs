//! Atomic file writes: a temporary file in the same directory, fsync, then rename over the
//! target. A failure leaves the old file as it was. For the file tools' writes and for putting
//! a checkpoint's files back.

use std::io::Write as _;
use std::path::Path;

/// Writes `contents` to `path` atomically, creating missing parent directories.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let permissions = match std::fs::metadata(path) {
        Ok(metadata) => Some(metadata.permissions()),
        Err(_) => new_file_permissions(),
    };
    write_atomically_as(path, contents, permissions)
}

/// Writes `contents` to `path` atomically with `permissions` (the temporary file's own, private,
/// when `None`), creating missing parent directories.
pub fn write_atomically_as(
    path: &Path,
    contents: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".agentry-write-")
        .tempfile_in(dir)?;
    temp.write_all(contents)?;
    temp.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// What a new file gets: read-write for everyone, less the process's umask (as `open(2)` does).
/// (The temporary file itself is created private.)
#[cfg(unix)]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o666 & !current_umask()))
}

#[cfg(not(unix))]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// The umask, read without changing it (Linux reports it in /proc; elsewhere assume 022).
#[cfg(unix)]
pub(crate) fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Umask:"))
                .and_then(|value| u32::from_str_radix(value.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}
