//! Reading and writing a file at the canonical path its permission was judged for, and only
//! there. Each folder on the way is opened from the root one component at a time without
//! following a link (`O_NOFOLLOW`), so a folder or file swapped for a link after the check is
//! refused, not followed; the file is then read, or written atomically (a temporary file and a
//! rename), through the folder that was opened, never by its path again.

use std::fs::File;
use std::io;
use std::path::{Component, Path};

/// Opens the file at `path` (canonical) for reading.
pub fn open(path: &Path) -> io::Result<File> {
    platform::open(path)
}

/// Writes `contents` to the file at `path` (canonical) atomically, creating missing folders: an
/// existing file keeps its permissions, a new one gets the usual ones (`0666` less the umask).
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    platform::write_atomically(path, contents)
}

/// The error for a path a link was found on.
fn swapped(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} changed since its permission was judged: a folder or file on the way is now a link, which is not followed",
        path.display()
    ))
}

/// The file name of `path`, and its folder's components, when `path` is absolute and plain
/// (no `.` or `..`).
fn parts(path: &Path) -> io::Result<(Vec<&std::ffi::OsStr>, &std::ffi::OsStr)> {
    let mut folders = Vec::new();
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return Err(io::Error::other(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    for component in components {
        match component {
            Component::Normal(name) => folders.push(name),
            _ => {
                return Err(io::Error::other(format!(
                    "{} is not a canonical path",
                    path.display()
                )));
            }
        }
    }
    let name = folders
        .pop()
        .ok_or_else(|| io::Error::other("the root folder is not a file"))?;
    Ok((folders, name))
}

#[cfg(unix)]
mod platform {
    use super::{parts, swapped};
    use nix::errno::Errno;
    use nix::fcntl::{AtFlags, OFlag, openat, renameat};
    use nix::sys::stat::{Mode, SFlag, fchmod, fstatat, mkdirat};
    use nix::unistd::{UnlinkatFlags, unlinkat};
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io::{self, Write as _};
    use std::os::fd::OwnedFd;
    use std::path::Path;

    /// The flags every step opens with: no link followed, closed on exec.
    fn no_follow() -> OFlag {
        OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
    }

    /// An error as `io::Error`, a link met on the way said as such.
    fn io_error(path: &Path, errno: Errno) -> io::Error {
        match errno {
            Errno::ELOOP | Errno::ENOTDIR => swapped(path),
            errno => io::Error::from(errno),
        }
    }

    /// Opens the folders `folders` below the root, one at a time, following no link; missing
    /// ones are made when `create` says so.
    fn open_folders(path: &Path, folders: &[&OsStr], create: bool) -> io::Result<OwnedFd> {
        let directory = OFlag::O_DIRECTORY | OFlag::O_RDONLY | no_follow();
        let mut folder = nix::fcntl::open("/", directory, Mode::empty())
            .map_err(|errno| io_error(path, errno))?;
        for name in folders {
            folder = match openat(&folder, *name, directory, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::ENOENT) if create => {
                    match mkdirat(&folder, *name, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(errno) => return Err(io_error(path, errno)),
                    }
                    openat(&folder, *name, directory, Mode::empty())
                        .map_err(|errno| io_error(path, errno))?
                }
                Err(errno) => return Err(io_error(path, errno)),
            };
        }
        Ok(folder)
    }

    pub fn open(path: &Path) -> io::Result<File> {
        let (folders, name) = parts(path)?;
        let folder = open_folders(path, &folders, false)?;
        // Not blocking on a FIFO swapped in; the file is read as a regular one after.
        let file = openat(
            &folder,
            name,
            OFlag::O_RDONLY | OFlag::O_NONBLOCK | no_follow(),
            Mode::empty(),
        )
        .map_err(|errno| io_error(path, errno))?;
        let file = File::from(file);
        // Reads block again, as a regular file's do.
        let flags =
            nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_GETFL).map_err(io::Error::from)?;
        let flags = OFlag::from_bits_truncate(flags) & !OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        Ok(file)
    }

    pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
        let (folders, name) = parts(path)?;
        let folder = open_folders(path, &folders, true)?;
        let mode = match fstatat(&folder, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat)
                if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK =>
            {
                return Err(swapped(path));
            }
            Ok(stat) => Mode::from_bits_truncate(stat.st_mode & 0o7777),
            Err(Errno::ENOENT) => {
                // `mode_t` is 16 bits on macOS and 32 on Linux: the cast is needed there, not
                // here (file permission bits fit in either).
                #[allow(clippy::unnecessary_cast)]
                let bits = (0o666 & !crate::atomic_file::current_umask()) as nix::libc::mode_t;
                Mode::from_bits_truncate(bits)
            }
            Err(errno) => return Err(io_error(path, errno)),
        };
        let (temporary, file) = create_temporary(&folder)?;
        let written = (|| -> io::Result<()> {
            let mut file = File::from(file);
            file.write_all(contents)?;
            fchmod(&file, mode).map_err(io::Error::from)?;
            file.sync_all()?;
            renameat(&folder, temporary.as_str(), &folder, name).map_err(io::Error::from)
        })();
        if let Err(error) = written {
            let _ = unlinkat(&folder, temporary.as_str(), UnlinkatFlags::NoRemoveDir);
            return Err(error);
        }
        // The rename itself made durable.
        let _ = nix::unistd::fsync(&folder);
        Ok(())
    }

    /// A new private file in `folder`, with its name.
    fn create_temporary(folder: &OwnedFd) -> io::Result<(String, OwnedFd)> {
        for attempt in 0..16u32 {
            let name = format!(
                ".agentry-write-{}-{}-{attempt}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            );
            match openat(
                folder,
                name.as_str(),
                OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | no_follow(),
                Mode::from_bits_truncate(0o600),
            ) {
                Ok(file) => return Ok((name, file)),
                Err(Errno::EEXIST) => continue,
                Err(errno) => return Err(io::Error::from(errno)),
            }
        }
        Err(io::Error::other("no temporary file could be made"))
    }
}

#[cfg(not(unix))]
mod platform {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    pub fn open(path: &Path) -> io::Result<File> {
        super::parts(path)?;
        File::open(path)
    }

    pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
        super::parts(path)?;
        crate::atomic_file::write_atomically(path, contents)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read as _;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_file_is_read_and_written_where_its_path_says_and_a_link_on_the_way_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("new/deeper/a.txt");
        write_atomically(&file, b"one").unwrap();
        let mut text = String::new();
        open(&file).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "one");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&file, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "two");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "an existing file keeps its permissions");
        let leftovers = std::fs::read_dir(root.join("new/deeper")).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left");
        // A folder on the way swapped for a link.
        std::fs::create_dir(root.join("elsewhere")).unwrap();
        std::fs::rename(root.join("new"), root.join("moved")).unwrap();
        symlink(root.join("elsewhere"), root.join("new")).unwrap();
        let refused = write_atomically(&file, b"three").unwrap_err().to_string();
        assert!(refused.contains("now a link"), "{refused}");
        assert!(open(&file).unwrap_err().to_string().contains("now a link"));
        assert!(
            std::fs::read_dir(root.join("elsewhere"))
                .unwrap()
                .next()
                .is_none()
        );
        // The file itself swapped for a link.
        std::fs::write(root.join("secret"), "secret").unwrap();
        symlink(root.join("secret"), root.join("b.txt")).unwrap();
        assert!(
            open(&root.join("b.txt"))
                .unwrap_err()
                .to_string()
                .contains("now a link")
        );
        assert!(
            write_atomically(&root.join("b.txt"), b"x")
                .unwrap_err()
                .to_string()
                .contains("now a link")
        );
        assert_eq!(
            std::fs::read_to_string(root.join("secret")).unwrap(),
            "secret"
        );
        assert!(open(Path::new("relative.txt")).is_err());
        assert!(open(&root.join("new/../x")).is_err());
    }
}
