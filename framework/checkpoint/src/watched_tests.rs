//! A watched repository's snapshots against full looks at the same workspace: every kind of
//! change a chat, a command or a person makes is seen, and the watches are given up where
//! they cannot vouch for the files.

use super::*;
use agentry::checkpoint::Snapshot;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// A workspace, a watched repository of it, and a full look at it for reference.
struct Watched {
    workspace: tempfile::TempDir,
    data: tempfile::TempDir,
    repo: ShadowRepo,
    limits: Limits,
}

impl Watched {
    fn new(limits: Limits) -> Self {
        let workspace = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let repo = ShadowRepo::open(&data.path().join("watched"), workspace.path())
            .unwrap()
            .watching();
        let watched = Self {
            workspace,
            data,
            repo,
            limits,
        };
        watched.write(".gitignore", "target/\n*.log\n");
        watched.write("src/main.rs", "fn main() {}\n");
        watched.write("src/lib/mod.rs", "pub mod a;\n");
        watched.write("src/lib/a.rs", "pub fn a() {}\n");
        watched.write("docs/guide.md", "# Guide\n");
        watched.write("README.md", "hello\n");
        watched
    }

    fn path(&self, file: &str) -> PathBuf {
        self.workspace.path().join(file)
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.path(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Snapshots with the watched repository and with a fresh one that looks at everything
    /// (a stat cache of its own would only hide mistakes of the same kind), and compares.
    fn check(&self, step: &str) -> Snapshot {
        let watched = self.repo.snapshot(&self.limits).unwrap();
        let fresh = self
            .data
            .path()
            .join(format!("fresh-{}", step.replace(' ', "-")));
        let full = ShadowRepo::open(&fresh, self.workspace.path())
            .unwrap()
            .snapshot(&self.limits)
            .unwrap();
        assert_eq!(watched, full, "after {step}");
        watched
    }

    fn files(&self, snapshot: &Snapshot) -> Vec<String> {
        let empty = TreeId(gix_hash::ObjectId::empty_tree(repo::HASH).to_string());
        let changes = self.repo.changes(&empty, &snapshot.tree).unwrap();
        changes.into_iter().map(|c| c.path).collect()
    }
}

#[test]
fn a_watched_repository_sees_every_change_a_full_look_sees() {
    let w = Watched::new(Limits::default());
    w.check("the first snapshot");
    assert!(w.repo.is_watched());

    // Within the same second, at the same size: only the event tells.
    w.write("README.md", "HELLO\n");
    w.check("a rewrite at the same size");
    w.write("README.md", "hullo\n");
    w.check("a second rewrite in the same second");

    w.write("new/deep/er/file.txt", "created\n");
    w.write("new/top.txt", "created\n");
    w.check("new nested folders");
    w.write(
        "new/deep/er/file.txt",
        "changed inside a folder watched since\n",
    );
    w.check("a change in a folder made after the first snapshot");

    w.write("debug.log", "ignored");
    w.write("target/debug/out", "ignored");
    let snapshot = w.check("ignored files");
    assert!(
        !w.files(&snapshot)
            .iter()
            .any(|f| f.ends_with(".log") || f.starts_with("target"))
    );

    std::fs::rename(w.path("src"), w.path("source")).unwrap();
    w.check("a folder renamed");
    w.write("source/lib/a.rs", "pub fn a() -> u8 { 1 }\n");
    w.write("source/lib/b.rs", "pub fn b() {}\n");
    w.check("changes inside the renamed folder");

    std::fs::remove_dir_all(w.path("new")).unwrap();
    w.check("a folder removed");

    std::fs::set_permissions(w.path("README.md"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("README.md", w.path("docs/link")).unwrap();
    w.check("a mode and a link");

    // A file replaced the way editors save: written beside it, renamed over it.
    w.write("docs/.guide.md.swp", "# Guide, saved\n");
    std::fs::rename(w.path("docs/.guide.md.swp"), w.path("docs/guide.md")).unwrap();
    w.check("a file renamed over another");

    let outside = tempfile::tempdir_in(w.workspace.path().parent().unwrap()).unwrap();
    std::fs::create_dir_all(outside.path().join("moved/in")).unwrap();
    std::fs::write(outside.path().join("moved/in/file.rs"), "// moved in\n").unwrap();
    std::fs::rename(outside.path().join("moved"), w.path("docs/moved")).unwrap();
    w.check("a folder moved in from outside");
    std::fs::rename(w.path("docs/moved"), outside.path().join("back")).unwrap();
    w.check("a folder moved out");

    // Another ignore file: what is kept changes below it.
    w.write(".gitignore", "target/\n");
    let snapshot = w.check("an ignore rule dropped");
    assert!(w.files(&snapshot).contains(&"debug.log".to_owned()));
    w.write("source/.ignore", "*.rs\n");
    w.check("an ignore file added in a folder");
    assert!(w.repo.is_watched());

    w.write("quiet.txt", "");
    w.check("an empty file");
    w.check("nothing changed");
}

#[test]
fn watching_is_given_up_for_hard_links_and_crowded_folders_and_snapshots_stay_right() {
    let w = Watched::new(Limits {
        max_file_bytes: 1024,
        max_folder_files: 6,
    });
    w.check("the first snapshot");
    assert!(w.repo.is_watched());

    // Over the size limit: left out while watched.
    w.write("docs/big.bin", &"x".repeat(2048));
    let snapshot = w.check("a large file");
    assert_eq!(snapshot.left_out.len(), 1);
    assert!(w.repo.is_watched());

    // A change through another link reaches no watched folder.
    std::fs::hard_link(w.path("README.md"), w.path("docs/README.copy")).unwrap();
    w.check("a hard link");
    assert!(
        !w.repo.is_watched(),
        "a file with other links cannot be watched"
    );
    std::fs::remove_file(w.path("docs/README.copy")).unwrap();
    w.check("the hard link gone");
    assert!(w.repo.is_watched());

    // New files that make a folder too crowded to keep.
    for i in 0..7 {
        w.write(&format!("data/{i}.csv"), "1,2\n");
    }
    let snapshot = w.check("a crowded folder");
    assert!(snapshot.left_out.iter().any(|l| l.path == "data"));
    assert!(!w.repo.is_watched());
}

#[test]
fn a_change_queued_just_before_a_snapshot_is_never_missed() {
    let w = Watched::new(Limits::default());
    w.check("the first snapshot");
    // Quick changes, each followed at once by a snapshot.
    for round in 0..30 {
        let file = format!("src/lib/{}.rs", round % 4);
        w.write(&file, &format!("// round {round}\n"));
        if round % 3 == 0 {
            std::fs::remove_file(w.path(&file)).unwrap();
        }
        w.check(&format!("round {round}"));
    }
}
