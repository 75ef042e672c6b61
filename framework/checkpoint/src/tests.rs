//! Snapshots and restores of real folders.

use super::*;
use agentry::checkpoint::{Change, FileChange, TreeId};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

struct Fixture {
    workspace: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let fixture = Self {
            workspace: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        };
        fixture.write("src/main.rs", "fn main() {}\n");
        fixture.write("README.md", "hello\n");
        fixture.write("script.sh", "echo hi\n");
        fixture.chmod("script.sh", 0o755);
        fixture
    }

    fn repo(&self) -> ShadowRepo {
        ShadowRepo::open(self.data.path(), self.workspace.path()).unwrap()
    }

    fn path(&self, file: &str) -> std::path::PathBuf {
        self.workspace.path().join(file)
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.path(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, file: &str) -> Option<String> {
        std::fs::read_to_string(self.path(file)).ok()
    }

    fn chmod(&self, file: &str, mode: u32) {
        std::fs::set_permissions(self.path(file), std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn mode(&self, file: &str) -> u32 {
        std::fs::metadata(self.path(file))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }
}

fn paths(changes: &[FileChange]) -> Vec<(&str, Change)> {
    changes
        .iter()
        .map(|c| (c.path.as_str(), c.change))
        .collect()
}

#[test]
fn a_restore_undoes_edits_creations_deletions_modes_and_links() {
    let fixture = Fixture::new();
    let repo = fixture.repo();
    let before = repo.snapshot(&Limits::default()).unwrap();
    assert!(before.left_out.is_empty());

    fixture.write("src/main.rs", "fn main() { changed() }\n");
    fixture.write("new/deep/file.txt", "created\n");
    std::fs::remove_file(fixture.path("README.md")).unwrap();
    fixture.chmod("script.sh", 0o644);
    std::os::unix::fs::symlink("src/main.rs", fixture.path("link")).unwrap();
    let after = repo.snapshot(&Limits::default()).unwrap();
    assert_eq!(
        paths(&repo.changes(&before.tree, &after.tree).unwrap()),
        [
            ("README.md", Change::Deleted),
            ("link", Change::Added),
            ("new/deep/file.txt", Change::Added),
            ("script.sh", Change::Modified),
            ("src/main.rs", Change::Modified),
        ]
    );

    let restored = repo.restore(&before.tree, &after.tree, |_| false).unwrap();
    assert_eq!(restored.changed.len(), 5);
    assert_eq!(
        fixture.read("src/main.rs").as_deref(),
        Some("fn main() {}\n")
    );
    assert_eq!(fixture.read("README.md").as_deref(), Some("hello\n"));
    assert_eq!(fixture.mode("script.sh"), 0o755);
    assert!(!fixture.path("link").exists() && fixture.path("link").symlink_metadata().is_err());
    assert!(
        !fixture.path("new").exists(),
        "the folders a created file made go too"
    );
    // Back where it began: a new snapshot is the first one.
    assert_eq!(repo.snapshot(&Limits::default()).unwrap().tree, before.tree);

    // And forward again: the link comes back as a link.
    repo.restore(&after.tree, &before.tree, |_| false).unwrap();
    assert_eq!(
        std::fs::read_link(fixture.path("link")).unwrap(),
        Path::new("src/main.rs")
    );
    assert_eq!(
        fixture.read("new/deep/file.txt").as_deref(),
        Some("created\n")
    );
    assert_eq!(repo.snapshot(&Limits::default()).unwrap().tree, after.tree);
}

#[test]
fn spared_files_are_left_as_they_are() {
    let fixture = Fixture::new();
    let repo = fixture.repo();
    let before = repo.snapshot(&Limits::default()).unwrap();
    fixture.write("README.md", "by hand\n");
    fixture.write("src/main.rs", "by the agent\n");
    let now = repo.snapshot(&Limits::default()).unwrap();
    let restored = repo
        .restore(&before.tree, &now.tree, |path| path == "README.md")
        .unwrap();
    assert_eq!(paths(&restored.spared), [("README.md", Change::Modified)]);
    assert_eq!(
        paths(&restored.changed),
        [("src/main.rs", Change::Modified)]
    );
    assert_eq!(fixture.read("README.md").as_deref(), Some("by hand\n"));
    assert_eq!(
        fixture.read("src/main.rs").as_deref(),
        Some("fn main() {}\n")
    );
}

#[test]
fn ignored_files_git_folders_and_the_limits_are_left_out() {
    let fixture = Fixture::new();
    fixture.write(".gitignore", "target/\n*.log\n");
    fixture.write("target/out.bin", "built");
    fixture.write("debug.log", "noise");
    fixture.write(".git/config", "[core]");
    fixture.write(".hidden", "kept: hidden files are the user's too");
    fixture.write("big.dat", &"x".repeat(2048));
    for i in 0..5 {
        fixture.write(&format!("data/set/{i}.csv"), "1,2");
    }
    let limits = Limits {
        max_file_bytes: 1024,
        max_folder_files: 4,
    };
    let repo = fixture.repo();
    let snapshot = repo.snapshot(&limits).unwrap();
    let left_out: Vec<String> = snapshot.left_out.iter().map(ToString::to_string).collect();
    assert_eq!(
        left_out,
        [
            "big.dat (2048 bytes, over the size limit)",
            "data/ (5 files, over the folder limit)"
        ]
    );
    let empty = TreeId(gix_hash::ObjectId::empty_tree(repo::HASH).to_string());
    let files: Vec<String> = repo
        .changes(&empty, &snapshot.tree)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    assert_eq!(
        files,
        [
            ".gitignore",
            ".hidden",
            "README.md",
            "script.sh",
            "src/main.rs"
        ]
    );
    // A restore never removes what the snapshot left out.
    std::fs::remove_file(fixture.path("README.md")).unwrap();
    let now = repo.snapshot(&limits).unwrap();
    repo.restore(&snapshot.tree, &now.tree, |_| false).unwrap();
    assert!(fixture.path("big.dat").exists() && fixture.path("data/set/0.csv").exists());
    assert!(fixture.path("target/out.bin").exists());
    assert_eq!(fixture.read("README.md").as_deref(), Some("hello\n"));
}

#[test]
fn the_shadow_repository_lives_outside_the_workspace_and_its_git() {
    let fixture = Fixture::new();
    fixture.write(".git/HEAD", "ref: refs/heads/main\n");
    let head = std::fs::read(fixture.path(".git/HEAD")).unwrap();
    let repo = fixture.repo();
    repo.snapshot(&Limits::default()).unwrap();
    assert!(repo.folder().starts_with(fixture.data.path()));
    assert_eq!(
        std::fs::read_to_string(repo.folder().join("workspace")).unwrap(),
        agentry_plugin::paths::canonical_path(fixture.workspace.path()).to_string_lossy()
    );
    assert_eq!(std::fs::read(fixture.path(".git/HEAD")).unwrap(), head);
    let names: Vec<_> = std::fs::read_dir(fixture.workspace.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "nothing new in the workspace: {names:?}");
}

#[test]
fn a_file_rewritten_at_its_size_is_seen_and_a_lost_cache_gives_the_same_tree() {
    let fixture = Fixture::new();
    let repo = fixture.repo();
    let first = repo.snapshot(&Limits::default()).unwrap();
    // As many bytes, within the same second as the snapshot.
    fixture.write("README.md", "HELLO\n");
    let second = repo.snapshot(&Limits::default()).unwrap();
    assert_eq!(
        paths(&repo.changes(&first.tree, &second.tree).unwrap()),
        [("README.md", Change::Modified)]
    );
    // A cache that is gone or corrupt starts over with the same result.
    std::fs::write(repo.folder().join("stat-cache"), "garbage").unwrap();
    assert_eq!(repo.snapshot(&Limits::default()).unwrap().tree, second.tree);
}

/// Every loose object's file in the repository.
fn object_files(repo: &ShadowRepo) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for folder in std::fs::read_dir(repo.folder().join("objects")).unwrap() {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            files.push(file.unwrap().path());
        }
    }
    files
}

#[test]
fn pruning_keeps_the_newest_checkpoints_and_removes_what_only_older_ones_reached() {
    let fixture = Fixture::new();
    let repo = fixture.repo();
    let limits = Limits::default();
    let mut trees = Vec::new();
    for round in 0..12 {
        fixture.write("README.md", &format!("version {round}\n"));
        let snapshot = repo.snapshot(&limits).unwrap();
        repo.log(&snapshot.tree).unwrap();
        trees.push(snapshot.tree);
    }
    // Objects are only removed once older than an hour (a snapshot under way may need them).
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    for file in object_files(&repo) {
        let handle = std::fs::File::options().write(true).open(&file);
        let handle = handle.unwrap_or_else(|_| std::fs::File::open(&file).unwrap());
        handle.set_modified(two_hours_ago).unwrap();
    }
    let before = object_files(&repo).len();
    let month = std::time::Duration::from_secs(30 * 24 * 3600);
    repo.prune(2, month).unwrap();
    let log = std::fs::read_to_string(repo.folder().join("checkpoints.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(log.contains(&trees[11].0) && log.contains(&trees[10].0));
    let after = object_files(&repo).len();
    // Ten README blobs and ten root trees went; the rest is shared by what is kept.
    assert_eq!(before - after, 20, "{before} → {after}");
    // The kept checkpoints still restore; a pruned one says so.
    let now = repo.snapshot(&limits).unwrap();
    repo.restore(&trees[10], &now.tree, |_| false).unwrap();
    assert_eq!(fixture.read("README.md").as_deref(), Some("version 10\n"));
    let pruned = repo.restore(&trees[0], &trees[10], |_| false).unwrap_err();
    assert!(matches!(pruned, CheckpointError::Pruned(_)), "{pruned}");
    // Within the count and the age, nothing is pruned.
    repo.prune(10, month).unwrap();
    assert_eq!(object_files(&repo).len(), after);
}
