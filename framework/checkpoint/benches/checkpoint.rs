//! Checkpoints of a kernel-sized tree against git, in the same run.
//!
//! The tree is made up: about 80,000 files in about 4,700 folders (the shape of a Linux kernel
//! checkout: a few top folders, deep subfolders, mostly small text files), committed to a git
//! repository, then cloned, so git has a fresh index of the same files. A Linux tree cannot be
//! downloaded here; `CHECKPOINT_TREE=PATH` measures a checkout of one instead.
//!
//! Figures, each a median over `CHECKPOINT_ROUNDS` rounds (default 10):
//! - the first snapshot (no shadow repository yet) against `git add -A && git write-tree` with
//!   its index removed (git then reads every file too);
//! - a snapshot after a chat changed 3 files, against `git add -A && git write-tree` in the
//!   clone after the same 3 changes, and their ratio (the median of each round's own ratio):
//!   in the agent's process, whose repository watches the workspace's folders since its first
//!   snapshot, and in a new process, which compares every file's stat with the stat cache.
//!
//! Prints its figures; exits non-zero only when it cannot run.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry_checkpoint::{Limits, ShadowRepo};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
        // No packing in the background while the bench clones the repository.
        .args(["-c", "gc.auto=0", "-c", "maintenance.auto=false"])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// `git add -A && git write-tree` in `dir`, timed.
fn git_write_tree(dir: &Path) -> Duration {
    let started = Instant::now();
    let output = Command::new("sh")
        .current_dir(dir)
        .args(["-c", "git add -A && git write-tree"])
        .output()
        .expect("sh runs");
    let took = started.elapsed();
    assert!(output.status.success(), "git add -A && git write-tree");
    took
}

/// A small deterministic generator (xorshift), so every run builds the same tree.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Writes a kernel-shaped tree of `files` files under `root`.
fn make_tree(root: &Path, files: usize) {
    const TOP: &[&str] = &[
        "arch",
        "block",
        "crypto",
        "Documentation",
        "drivers",
        "fs",
        "include",
        "init",
        "ipc",
        "kernel",
        "lib",
        "mm",
        "net",
        "samples",
        "scripts",
        "security",
        "sound",
        "tools",
        "usr",
        "virt",
    ];
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut folders: Vec<PathBuf> = TOP.iter().map(|top| root.join(top)).collect();
    // About 17 files a folder, as in the kernel.
    while folders.len() < files / 17 {
        let parent = folders[random.below(folders.len() as u64) as usize].clone();
        if parent.components().count() - root.components().count() < 6 {
            folders.push(parent.join(format!("sub{}", folders.len())));
        }
    }
    for folder in &folders {
        std::fs::create_dir_all(folder).unwrap();
    }
    let line = "\tret = do_something(dev, flags, &state); /* a line of C, more or less */\n";
    for i in 0..files {
        let folder = &folders[random.below(folders.len() as u64) as usize];
        let extension = ["c", "h", "rst", "S", "txt"][random.below(5) as usize];
        let lines = 20 + random.below(400) as usize;
        let mut text = format!("// file {i}\n");
        for _ in 0..lines {
            text.push_str(line);
        }
        std::fs::write(folder.join(format!("f{i}.{extension}")), text).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "*.o\n*.ko\n/build/\n").unwrap();
}

/// The files a round changes: three, different each round.
fn change_three(trees: &[&Path], files: &[PathBuf], round: usize) {
    for k in 0..3 {
        let file = &files[(round * 3 + k) * 7919 % files.len()];
        for tree in trees {
            let path = tree.join(file);
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str(&format!("/* round {round} */\n"));
            std::fs::write(&path, text).unwrap();
        }
    }
}

/// Every file of the tree, relative to it (without `.git`).
fn list_files(root: &Path) -> Vec<PathBuf> {
    let output = Command::new("git")
        .current_dir(root)
        .args(["ls-files", "-z"])
        .output()
        .unwrap();
    output
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
        .collect()
}

fn main() {
    let rounds = env_number("CHECKPOINT_ROUNDS", 10).max(1);
    let scratch = tempfile::tempdir().unwrap();
    let original = match std::env::var_os("CHECKPOINT_TREE") {
        Some(tree) => PathBuf::from(tree),
        None => {
            let files = env_number("CHECKPOINT_FILES", 80_000);
            let root = scratch.path().join("tree");
            let made = Instant::now();
            make_tree(&root, files);
            git(&root, &["init", "-q"]);
            git(&root, &["add", "-A"]);
            git(&root, &["commit", "-q", "-m", "tree"]);
            println!(
                "made a tree of {files} files in {:.1} s",
                made.elapsed().as_secs_f64()
            );
            root
        }
    };
    let ours = scratch.path().join("ours");
    let theirs = scratch.path().join("theirs");
    for clone in [&ours, &theirs] {
        let source = original.to_string_lossy().into_owned();
        let target = clone.to_string_lossy().into_owned();
        git(scratch.path(), &["clone", "-q", &source, &target]);
    }
    let files = list_files(&ours);
    let directories = {
        let mut folders: std::collections::HashSet<&Path> = Default::default();
        for file in &files {
            folders.extend(file.ancestors().skip(1));
        }
        folders.len()
    };
    println!("{} files in {directories} folders", files.len());
    let limits = Limits::default();

    // First snapshots: a new shadow repository each time; git with its index removed.
    let mut first = Vec::new();
    let mut git_first = Vec::new();
    for round in 0..rounds.min(3) {
        let data = scratch.path().join(format!("data-first-{round}"));
        let started = Instant::now();
        let repo = ShadowRepo::open(&data, &ours).unwrap();
        let snapshot = repo.snapshot(&limits).unwrap();
        first.push(ms(started.elapsed()));
        assert!(snapshot.left_out.is_empty(), "{:?}", snapshot.left_out);
        std::fs::remove_dir_all(&data).unwrap();
        std::fs::remove_file(theirs.join(".git/index")).unwrap();
        git_first.push(ms(git_write_tree(&theirs)));
    }
    println!(
        "first checkpoint: {:.0} ms (median of {}); git add -A && git write-tree without an index: {:.0} ms; ratio {:.2}",
        median(first.clone()),
        first.len(),
        median(git_first.clone()),
        median(first) / median(git_first)
    );

    // Incremental: after a chat changed 3 files. The agent's process has the workspace's
    // folders watched since its first snapshot; a new process compares every file's stat with
    // the stat cache on disk.
    let watched = ShadowRepo::open(&scratch.path().join("data"), &ours)
        .unwrap()
        .watching();
    watched.snapshot(&limits).unwrap();
    let process_data = scratch.path().join("data-process");
    ShadowRepo::open(&process_data, &ours)
        .unwrap()
        .snapshot(&limits)
        .unwrap();
    git_write_tree(&theirs);
    // Past the stat cache's one-second window, as a chat's changes are.
    std::thread::sleep(Duration::from_millis(2100));
    let timed = |repo: &ShadowRepo| {
        let started = Instant::now();
        std::hint::black_box(repo.snapshot(&limits).unwrap());
        started.elapsed()
    };
    let (mut incremental, mut in_new_process, mut peer) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratios, mut process_ratios) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        change_three(&[&ours, &theirs], &files, round);
        std::thread::sleep(Duration::from_millis(1100));
        // Each round in another order, so neither always finds the caches warm.
        let (a, b) = if round % 2 == 0 {
            let a = timed(&watched);
            (a, git_write_tree(&theirs))
        } else {
            let b = git_write_tree(&theirs);
            (timed(&watched), b)
        };
        let c = timed(&ShadowRepo::open(&process_data, &ours).unwrap());
        incremental.push(ms(a));
        in_new_process.push(ms(c));
        peer.push(ms(b));
        ratios.push(ms(a) / ms(b));
        process_ratios.push(ms(c) / ms(b));
    }
    println!(
        "checkpoint after 3 changed files, folders watched since the first: {:.1} ms (median of {rounds}; target under 150 ms)",
        median(incremental)
    );
    println!(
        "git add -A && git write-tree after the same changes: {:.1} ms; ratio {:.2} (target under 1.5)",
        median(peer),
        median(ratios)
    );
    println!(
        "the same checkpoint in a new process (every file's stat against the cache on disk): {:.1} ms; ratio to git {:.2}",
        median(in_new_process),
        median(process_ratios)
    );
}
