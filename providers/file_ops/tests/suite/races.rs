//! The path checked is the path used: a link swapped back and forth while calls run never lets
//! a Write land in, or a Read show, what a deny rule covers.

use agentry::permission::{PermissionMode, PermissionPolicy, RuleAction};
use agentry::testing::ToolHarness;
use agentry_file_ops::{FileOps, FileOpsConfig};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many calls race the swapping link.
const CALLS: usize = 2_000;

/// Points the link `link` at `a` and `b` in turn, each swap atomic (a new link renamed over
/// it), until `stop`.
fn swap_link_until(link: PathBuf, a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) {
    let staging = link.with_extension("staging");
    let mut to_a = true;
    while !stop.load(Ordering::Relaxed) {
        let _ = std::fs::remove_file(&staging);
        std::os::unix::fs::symlink(if to_a { &a } else { &b }, &staging).unwrap();
        std::fs::rename(&staging, &link).unwrap();
        to_a = !to_a;
    }
}

fn harness(root: &Path, rule: &str) -> ToolHarness {
    let policy =
        PermissionPolicy::with_rules(PermissionMode::Bypass, &[(RuleAction::Deny, rule)]).unwrap();
    ToolHarness::new(&FileOps::new(FileOpsConfig::default()), root)
        .unwrap()
        .with_policy(policy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_link_swapped_during_writes_never_lets_one_into_a_denied_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("decoy")).unwrap();
    std::fs::create_dir(root.join("protected")).unwrap();
    std::os::unix::fs::symlink(root.join("decoy"), root.join("link")).unwrap();
    let h = harness(&root, "Edit(protected/**)");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = swapping(
        root.join("link"),
        root.join("decoy"),
        root.join("protected"),
        &stop,
    );
    let mut written = 0;
    for n in 0..CALLS {
        let outcome = h
            .call(
                "Write",
                json!({"file_path": format!("link/file{n}.txt"), "content": "x"}),
            )
            .await;
        written += usize::from(!outcome.result.is_error);
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let landed = std::fs::read_dir(root.join("protected")).unwrap().count();
    assert_eq!(
        landed, 0,
        "{landed} of {CALLS} writes landed in the denied folder"
    );
    assert!(
        written > CALLS / 10,
        "only {written} writes ran: the race was not run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_link_swapped_during_reads_never_shows_a_denied_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("public")).unwrap();
    std::fs::create_dir(root.join("secret")).unwrap();
    std::fs::write(root.join("public/key"), "public words\n").unwrap();
    std::fs::write(root.join("secret/key"), "the secret\n").unwrap();
    std::os::unix::fs::symlink(root.join("public/key"), root.join("link")).unwrap();
    let h = harness(&root, "Read(secret/**)");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = swapping(
        root.join("link"),
        root.join("public/key"),
        root.join("secret/key"),
        &stop,
    );
    let (mut shown, mut read) = (0, 0);
    for _ in 0..CALLS {
        let outcome = h.call("Read", json!({"file_path": "link"})).await;
        let text = outcome.text();
        shown += usize::from(text.contains("the secret"));
        read += usize::from(text.contains("public words"));
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(shown, 0, "{shown} of {CALLS} reads showed the denied file");
    // On a loaded machine the time between a read's check and its reading grows, and more
    // reads find the link moved and are refused: a few that read the public file show the race
    // was run (one loaded run read it 138 times of 2,000).
    assert!(
        read > CALLS / 100,
        "only {read} reads ran: the race was not run"
    );
}

/// A thread swapping `link` between `a` and `b` until `stop`.
fn swapping(
    link: PathBuf,
    a: PathBuf,
    b: PathBuf,
    stop: &Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let stop = stop.clone();
    std::thread::spawn(move || swap_link_until(link, a, b, stop))
}
