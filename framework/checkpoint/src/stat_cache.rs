//! The stat cache: for the last snapshot of a workspace, its tree and each file's stat with its
//! blob, so the next snapshot reads only the files whose stat changed. It is a cache: one that
//! is missing, unreadable or written by another version is simply rebuilt.

use gix_hash::ObjectId;
use gix_object::bstr::BString;
use gix_object::tree::EntryKind;
use rustc_hash::FxHashMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// What marks the file's format (its version last).
const MAGIC: &[u8] = b"agentry stat cache 1\n";

/// What a file's stat says of it: when any of it changes, the file is read again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Stat {
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time (seconds, nanoseconds).
    pub mtime: (i64, u32),
    /// Its status-change time (seconds, nanoseconds): changes with its mode and on a rename.
    pub ctime: (i64, u32),
    /// Its inode (a file replaced by another has another).
    pub inode: u64,
    /// Its mode bits.
    pub mode: u32,
}

impl Stat {
    /// The stat of a file's metadata.
    #[cfg(unix)]
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            size: metadata.size(),
            mtime: (metadata.mtime(), metadata.mtime_nsec() as u32),
            ctime: (metadata.ctime(), metadata.ctime_nsec() as u32),
            inode: metadata.ino(),
            mode: metadata.mode(),
        }
    }

    /// The stat of a file's metadata.
    #[cfg(not(unix))]
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        let time = |t: std::io::Result<SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()))
        };
        Self {
            size: metadata.len(),
            mtime: time(metadata.modified()),
            ctime: time(metadata.created()),
            inode: 0,
            mode: u32::from(metadata.permissions().readonly()),
        }
    }

    /// Whether the file may have changed within the same tick as the snapshot that read it
    /// (its times are not older than `since`, seconds): then its stat proves nothing, and the
    /// next snapshot reads it again. (git calls these entries racily clean.)
    fn is_racy(&self, since: i64) -> bool {
        self.mtime.0 >= since || self.ctime.0 >= since
    }

    /// A stat no file has: the file is read again next time.
    const UNTRUSTED: Stat = Stat {
        size: u64::MAX,
        mtime: (i64::MIN, 0),
        ctime: (i64::MIN, 0),
        inode: 0,
        mode: 0,
    };
}

/// What the cache knows of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cached {
    /// Its stat when it was read.
    pub stat: Stat,
    /// Its kind.
    pub kind: EntryKind,
    /// Its blob.
    pub id: ObjectId,
}

/// Files by path, with a hash that is quick on paths.
pub(super) type Files = FxHashMap<BString, Cached>;

/// The last snapshot's tree and files.
#[derive(Debug, Default)]
pub(super) struct StatCache {
    /// The tree the files make up.
    pub tree: Option<ObjectId>,
    /// Each file's entry, by its path.
    pub files: Files,
}

impl StatCache {
    /// The cache at `path`; an empty one when there is none or it cannot be read.
    pub fn load(path: &Path) -> Self {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| decode(&bytes))
            .unwrap_or_default()
    }

    /// Writes the cache for `tree` and `files` to `path`, atomically. Files whose times are
    /// not older than `started` (when the snapshot began) are marked to be read again.
    pub fn save(
        path: &Path,
        tree: ObjectId,
        files: &Files,
        started: SystemTime,
    ) -> std::io::Result<()> {
        let since = started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
            - 1;
        let mut out = Vec::with_capacity(MAGIC.len() + 24 + files.len() * 96);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(tree.as_bytes());
        out.extend_from_slice(&(files.len() as u64).to_le_bytes());
        for (path, cached) in files {
            let stat = if cached.stat.is_racy(since) {
                Stat::UNTRUSTED
            } else {
                cached.stat
            };
            out.extend_from_slice(&(path.len() as u32).to_le_bytes());
            out.extend_from_slice(path);
            out.extend_from_slice(&stat.size.to_le_bytes());
            out.extend_from_slice(&stat.mtime.0.to_le_bytes());
            out.extend_from_slice(&stat.mtime.1.to_le_bytes());
            out.extend_from_slice(&stat.ctime.0.to_le_bytes());
            out.extend_from_slice(&stat.ctime.1.to_le_bytes());
            out.extend_from_slice(&stat.inode.to_le_bytes());
            out.extend_from_slice(&stat.mode.to_le_bytes());
            out.extend_from_slice(&(cached.kind as u16).to_le_bytes());
            out.extend_from_slice(cached.id.as_bytes());
        }
        // Atomically, but not synced to the disk: a cache lost in a crash is rebuilt.
        let folder = path.parent().unwrap_or(Path::new("."));
        let mut temp = tempfile::NamedTempFile::new_in(folder)?;
        std::io::Write::write_all(&mut temp, &out)?;
        temp.persist(path).map(drop).map_err(|e| e.error)
    }
}

/// The cache in `bytes`, unless they are not one.
fn decode(bytes: &[u8]) -> Option<StatCache> {
    let mut reader = Reader(bytes.strip_prefix(MAGIC)?);
    let tree = reader.id()?;
    let count = reader.u64()? as usize;
    let mut files = Files::with_capacity_and_hasher(count.min(1 << 24), Default::default());
    for _ in 0..count {
        let length = reader.u32()? as usize;
        let path = BString::from(reader.take(length)?);
        let stat = Stat {
            size: reader.u64()?,
            mtime: (reader.u64()? as i64, reader.u32()?),
            ctime: (reader.u64()? as i64, reader.u32()?),
            inode: reader.u64()?,
            mode: reader.u32()?,
        };
        let kind = entry_kind(u16::from_le_bytes(reader.take(2)?.try_into().ok()?))?;
        let id = reader.id()?;
        files.insert(path, Cached { stat, kind, id });
    }
    Some(StatCache {
        tree: Some(tree),
        files,
    })
}

/// The kind a tree entry's mode names, for the kinds a snapshot holds.
fn entry_kind(mode: u16) -> Option<EntryKind> {
    [EntryKind::Blob, EntryKind::BlobExecutable, EntryKind::Link]
        .into_iter()
        .find(|kind| *kind as u16 == mode)
}

/// Reads the cache's fields in turn.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn id(&mut self) -> Option<ObjectId> {
        ObjectId::try_from(self.take(20)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_cache_reads_back_with_recent_files_untrusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache");
        let old = Stat {
            size: 3,
            mtime: (1_000, 5),
            ctime: (1_000, 6),
            inode: 7,
            mode: 0o100644,
        };
        let recent = Stat {
            mtime: (2_000_000_000, 0),
            ..old
        };
        let id = ObjectId::empty_blob(gix_hash::Kind::Sha1);
        let files: Files = [
            (
                "old".into(),
                Cached {
                    stat: old,
                    kind: EntryKind::Blob,
                    id,
                },
            ),
            (
                "new".into(),
                Cached {
                    stat: recent,
                    kind: EntryKind::Link,
                    id,
                },
            ),
        ]
        .into_iter()
        .collect();
        let tree = ObjectId::empty_tree(gix_hash::Kind::Sha1);
        let started = UNIX_EPOCH + std::time::Duration::from_secs(1_500_000_000);
        StatCache::save(&path, tree, &files, started).unwrap();
        let read = StatCache::load(&path);
        assert_eq!(read.tree, Some(tree));
        assert_eq!(
            read.files[&BString::from("old")],
            files[&BString::from("old")]
        );
        let new = read.files[&BString::from("new")];
        assert_eq!((new.kind, new.id), (EntryKind::Link, id));
        assert_eq!(
            new.stat,
            Stat::UNTRUSTED,
            "a file as recent as the snapshot is read again"
        );
        // A truncated or foreign file is no cache.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(StatCache::load(&path).tree.is_none());
    }
}
