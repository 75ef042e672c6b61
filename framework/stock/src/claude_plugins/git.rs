//! The system's `git`, for marketplaces and plugins kept in repositories: clone, check out,
//! bring up to date, and say the commit. It never asks for a password (a repository that
//! needs one fails with git's message).

use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` (in `folder`, when given); its trimmed stdout, or git's message.
fn git(folder: Option<&Path>, args: &[&str]) -> Result<String, String> {
    let mut command = Command::new("git");
    if let Some(folder) = folder {
        command.arg("-C").arg(folder);
    }
    let output = command
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(format!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Clones `url` into `into` (which must not exist), at `reference` (a branch or tag) or
/// `sha` (a commit) when given.
pub(crate) fn clone(
    url: &str,
    into: &Path,
    reference: Option<&str>,
    sha: Option<&str>,
) -> Result<(), String> {
    let into_text = into.display().to_string();
    let mut args = vec!["clone", "--quiet"];
    if let Some(reference) = reference.filter(|_| sha.is_none()) {
        args.extend(["--branch", reference]);
    }
    args.extend(["--", url, into_text.as_str()]);
    git(None, &args)?;
    if let Some(sha) = sha {
        git(Some(into), &["checkout", "--quiet", "--detach", sha])?;
    }
    Ok(())
}

/// The commit `folder` (in a repository) has checked out, when it is in one.
pub(crate) fn commit(folder: &Path) -> Option<String> {
    git(Some(folder), &["rev-parse", "HEAD"]).ok()
}

/// Brings the clone in `folder` up to its remote's branch.
pub(crate) fn pull(folder: &Path) -> Result<(), String> {
    git(Some(folder), &["pull", "--quiet", "--ff-only"]).map(drop)
}
