//! How the `agentry` binary is linked, and the commit it is built from.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    // Position-independent, so that ASLR places it anew each run. Its relocations are packed
    // (RELR: a bitmap for runs of pointers, instead of a 24-byte entry for each of tens of
    // thousands), so that the loader's work before `main` stays small: see `benches/acp.rs`,
    // which compares `initialize` with a minimal agent's. Linkers and C libraries from 2022 on
    // (GNU ld 2.38, glibc 2.36) know the format.
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rustc-env=AGENTRY_COMMIT={}", commit());
    // Nothing else of the package's sources changes what this script says (a change to the
    // script itself reruns it anyway).
    println!("cargo:rerun-if-changed=Cargo.toml");
}

/// The commit this build's sources are, as `agentry --version` says it: `AGENTRY_COMMIT` when a
/// packager sets it, the one a crates.io package was made from, or the checkout's `HEAD`.
fn commit() -> String {
    println!("cargo:rerun-if-env-changed=AGENTRY_COMMIT");
    if let Ok(commit) = std::env::var("AGENTRY_COMMIT") {
        return format!("commit {commit}");
    }
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    if let Some(sha) = packaged_commit(&manifest_dir) {
        return format!("commit {}", &sha[..sha.len().min(12)]);
    }
    match git(&manifest_dir, &["rev-parse", "--short=12", "HEAD"]) {
        Some(sha) => {
            watch_head(&manifest_dir);
            format!("commit {sha}")
        }
        None => "commit unknown".to_owned(),
    }
}

/// The commit `cargo package` recorded in `.cargo_vcs_info.json`.
fn packaged_commit(manifest_dir: &Path) -> Option<String> {
    let info = std::fs::read_to_string(manifest_dir.join(".cargo_vcs_info.json")).ok()?;
    let after = &info[info.find("\"sha1\"")? + "\"sha1\"".len()..];
    let sha: String = after
        .chars()
        .skip_while(|c| !c.is_ascii_hexdigit())
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (!sha.is_empty()).then_some(sha)
}

/// Rebuilds when `HEAD` moves: the files naming it (only those that exist, or cargo would
/// rebuild every time).
fn watch_head(manifest_dir: &Path) {
    let Some(git_dir) = git(manifest_dir, &["rev-parse", "--absolute-git-dir"]) else {
        return;
    };
    let git_dir = PathBuf::from(git_dir);
    let mut watched = vec![git_dir.join("HEAD"), git_dir.join("packed-refs")];
    if let Some(branch) = git(manifest_dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git_dir.join(branch));
    }
    for path in watched.into_iter().filter(|path| path.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// What `git ARGS` prints in `dir`, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
