//! What the sandbox refused a failed command, read from the errors it printed, so the model can
//! ask to run outside the sandbox instead of guessing.

use super::Confinement;
use agentry_plugin::paths::canonical_path;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The errors a refused write prints (EACCES, EPERM, EROFS).
static REFUSED_WRITE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)permission denied|operation not permitted|read-only file system").ok()
});

/// Paths in an error line: quoted (`'…'`, `"…"`, `‘…’`), or the part just before the error
/// (`bash: line 1: /x: Permission denied`).
static QUOTED_PATH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"['"‘`]([^'"’`\n]+)['"’`]"#).ok());

/// What a refused socket (or a name lookup without one) prints in the usual tools.
static REFUSED_NETWORK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
          could\ not\ resolve | couldn't\ resolve | resolve\ host | name\ resolution
        | temporary\ failure\ in\ name | network\ is\ unreachable | failed\ to\ connect
        | couldn't\ connect | could\ not\ connect | unable\ to\ resolve | getaddrinfo
        | socket:\ operation\ not\ permitted | immediate\ connect\ fail
        | failed\ to\ create\ socket | \[errno\ 1\]\ operation\ not\ permitted
        | os\ error\ 1\b | eai_again | enotfound | \beperm\b | connecting\ to\ .*\ failed",
    )
    .ok()
});

/// The most refused paths named.
const MOST_PATHS: usize = 5;

/// A note saying what the sandbox refused, if the output shows a refusal (`cwd`: where the
/// command ran, for relative paths).
pub(crate) fn explain_refusal(
    output: &str,
    cwd: &Path,
    confinement: &Confinement,
) -> Option<String> {
    let mut refusals = Vec::new();
    let paths = refused_paths(output, cwd, confinement);
    if !paths.is_empty() {
        let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        refusals.push(format!(
            "writing to {} (in the {} sandbox commands may write only in: {})",
            list.join(", "),
            confinement.mode.as_str(),
            confinement.writable_list()
        ));
    }
    if !confinement.network && matches(&REFUSED_NETWORK, output) {
        refusals.push(
            "the network (sockets other than Unix ones are refused: no connections, no name \
             lookups)"
                .to_owned(),
        );
    }
    if refusals.is_empty() {
        return None;
    }
    Some(format!(
        "[sandbox] The sandbox refused {}. If the command needs this, run it again with \
         dangerouslyDisableSandbox: true (the user is asked to allow it).",
        refusals.join("; and ")
    ))
}

/// The paths outside the writable folders named in lines reporting a refused write.
fn refused_paths(output: &str, cwd: &Path, confinement: &Confinement) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for line in output.lines().filter(|line| matches(&REFUSED_WRITE, line)) {
        let quoted = QUOTED_PATH
            .iter()
            .flat_map(|pattern| pattern.captures_iter(line))
            .filter_map(|found| found.get(1))
            .map(|found| found.as_str());
        let before_error = line
            .rsplit(": ")
            .skip_while(|part| !starts_with_refusal(part))
            .nth(1)
            .map(str::trim)
            .filter(|part| !part.is_empty() && !part.contains(' '));
        for candidate in quoted.chain(before_error) {
            let path = canonical_path(&cwd.join(candidate));
            if !confinement.may_write(&path) && !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths.truncate(MOST_PATHS);
    paths
}

/// Whether an error line's part is the refusal itself (`Permission denied`, …).
fn starts_with_refusal(part: &str) -> bool {
    let part = part.trim_start().to_lowercase();
    [
        "permission denied",
        "operation not permitted",
        "read-only file system",
    ]
    .iter()
    .any(|refusal| part.starts_with(refusal))
}

/// Whether `pattern` (built once; the tests check that it builds) matches `text`.
fn matches(pattern: &LazyLock<Option<Regex>>, text: &str) -> bool {
    pattern
        .as_ref()
        .is_some_and(|pattern| pattern.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{SandboxMode, SandboxSettings};

    fn confinement() -> Confinement {
        SandboxSettings::default()
            .confinement(
                SandboxMode::WorkspaceWrite,
                &[PathBuf::from("/work/p")],
                None,
            )
            .unwrap()
    }

    #[test]
    fn the_patterns_build() {
        assert!(REFUSED_WRITE.is_some() && QUOTED_PATH.is_some() && REFUSED_NETWORK.is_some());
    }

    #[test]
    fn refused_writes_name_their_paths_outside_the_writable_folders() {
        let output = "touch: cannot touch '/etc/agentry': Permission denied\n\
                      bash: line 1: /usr/local/x: Permission denied\n\
                      mkdir: cannot create directory ‘../../outside’: Permission denied\n\
                      PermissionError: [Errno 13] Permission denied: '/opt/y'\n\
                      cp: cannot create regular file 'src/ok.rs': Permission denied\n\
                      bash: line 2: notes.txt: Read-only file system\n";
        let note = explain_refusal(output, Path::new("/work/p"), &confinement()).unwrap();
        assert!(
            note.contains("writing to /etc/agentry, /usr/local/x, /outside, /opt/y ("),
            "{note}"
        );
        assert!(
            !note.contains("ok.rs") && !note.contains("notes.txt"),
            "{note}"
        );
        let read_only = SandboxSettings::default()
            .confinement(SandboxMode::ReadOnly, &[PathBuf::from("/work/p")], None)
            .unwrap();
        let output = "bash: line 1: notes.txt: Read-only file system\n\
                      PermissionError: [Errno 13] Permission denied: 'src/ok.rs'\n";
        let note = explain_refusal(output, Path::new("/work/p"), &read_only).unwrap();
        assert!(
            note.contains("writing to /work/p/notes.txt, /work/p/src/ok.rs (in the read-only"),
            "{note}"
        );
        assert!(note.contains("dangerouslyDisableSandbox: true"), "{note}");
    }

    #[test]
    fn network_failures_are_named_only_when_the_network_is_off() {
        let output = "curl: (7) Failed to connect to 127.0.0.1 port 80 after 0 ms: Couldn't connect to server";
        let note = explain_refusal(output, Path::new("/work/p"), &confinement()).unwrap();
        assert!(note.contains("the network"), "{note}");
        let open = Confinement {
            network: true,
            ..confinement()
        };
        assert_eq!(explain_refusal(output, Path::new("/work/p"), &open), None);
        assert_eq!(
            explain_refusal("error: test failed", Path::new("/work/p"), &confinement()),
            None
        );
    }
}
