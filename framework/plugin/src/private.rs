//! What agentry keeps on disk is the user's alone: its folders are made `0700` and its files
//! (sessions, history, recordings, the server token) `0600`, and those made before by a looser
//! version are tightened when opened.

use std::path::Path;

/// Makes `folder` (and its missing parents) readable by the user alone.
pub fn create_folder(folder: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(folder)
}

/// Makes `folder` if missing, and leaves it readable by the user alone: for agentry's own data
/// folder. A shared folder (world-writable and sticky, as `/tmp`) is left as it is.
pub fn folder(folder: &Path) -> std::io::Result<()> {
    create_folder(folder)?;
    if is_shared(folder) {
        return Ok(());
    }
    restrict(folder, 0o700)
}

/// Leaves the existing `file` readable and writable by the user alone.
pub fn file(file: &Path) -> std::io::Result<()> {
    restrict(file, 0o600)
}

/// Options that create a file readable and writable by the user alone (an existing file keeps
/// its mode: tighten it with [`file()`]).
pub fn file_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

#[cfg(unix)]
fn is_shared(folder: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(folder).is_ok_and(|m| m.permissions().mode() & 0o1000 != 0)
}

#[cfg(not(unix))]
fn is_shared(_folder: &Path) -> bool {
    false
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if current & !mode != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(current & mode))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn folders_and_files_are_made_and_tightened_to_the_user_alone() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("a/b");
        folder(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        folder(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
        let db = data.join("sessions.db");
        std::fs::write(&db, "x").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        file(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o400)).unwrap();
        file(&db).unwrap();
        assert_eq!(mode(&db), 0o400, "never loosened");
        let made = data.join("new.txt");
        file_options()
            .write(true)
            .create_new(true)
            .open(&made)
            .unwrap();
        assert_eq!(mode(&made), 0o600);
        let deep = dir.path().join("c/d");
        create_folder(&deep).unwrap();
        assert_eq!(mode(&dir.path().join("c")), 0o700);
        assert_eq!(mode(&deep), 0o700);
    }

    #[test]
    fn a_shared_sticky_folder_is_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("tmp");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        folder(&shared).unwrap();
        assert_eq!(
            std::fs::metadata(&shared).unwrap().permissions().mode() & 0o7777,
            0o1777
        );
    }
}
