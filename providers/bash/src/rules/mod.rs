//! What Bash's permission rules (`Bash(git status:*)`) are matched against: each simple command
//! a command line runs, read with bash's own grammar, so that a deny rule cannot be stepped
//! around by chaining (`echo hi && rm x`), substituting, wrapping (`sudo rm x`) or quoting
//! (`r\m`); the files its redirections write, which `Edit(…)` rules judge; and whether the line
//! is understood at all — an allow rule covers a call only when it is, and each command is
//! covered.

mod analysis;
mod builtins;
mod expansions;
mod interpreters;
mod options;
mod pattern;
mod programs;
mod runs;
mod scripts;
mod variables;
mod words;

use agentry_plugin::tool::RuleSubjects;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use pattern::check;

/// The rule subjects of the command line `command`: its simple commands (allow rules must cover
/// each), other spellings of them and commands its programs may run (deny and ask rules see
/// those too), and why it is not understood, if it is not.
pub fn subjects(command: &str) -> RuleSubjects {
    let analysis = analysed(command);
    let join = |words: &Vec<String>| shlex::try_join(words.iter().map(String::as_str)).ok();
    let joined = |all: &[Vec<String>]| all.iter().map(join).collect::<Option<Vec<String>>>();
    match (
        joined(&analysis.parts),
        joined(&analysis.variants),
        joined(&analysis.possible),
    ) {
        (Some(parts), Some(variants), Some(possible)) => RuleSubjects {
            parts,
            variants,
            possible,
            suggestions: analysis
                .parts
                .iter()
                .filter_map(|words| pattern::suggest(words))
                .collect(),
            hidden: analysis.hidden.clone(),
            locations_are_writes: true,
            writes_unseen: analysis.writes_unseen,
            arguments_unseen: analysis.arguments_unseen.clone(),
        },
        _ => RuleSubjects {
            hidden: Some("the command line holds a NUL byte".to_owned()),
            locations_are_writes: true,
            writes_unseen: true,
            ..RuleSubjects::default()
        },
    }
}

/// The files the command line `command` writes through its redirections, absolute: relative
/// ones in `cwd`, `~` in the home folder.
pub fn written_files(command: &str, cwd: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    analysed(command)
        .writes
        .iter()
        .map(|file| match (file.strip_prefix('~'), &home) {
            (Some(rest), Some(home)) => home.join(rest.trim_start_matches('/')),
            _ => cwd.join(file),
        })
        .collect()
}

/// Whether the command line `command` writes a file by a relative path.
pub fn writes_relative_paths(command: &str) -> bool {
    analysed(command)
        .writes
        .iter()
        .any(|file| !file.starts_with('/') && !file.starts_with('~'))
}

/// The reading of `command`, kept for the next question about the same line: a call asks for
/// its subjects, the files it writes and whether they are relative, and one reading serves all.
fn analysed(command: &str) -> Arc<analysis::Analysis> {
    static LAST: Mutex<Option<(String, Arc<analysis::Analysis>)>> = Mutex::new(None);
    if let Some((line, analysis)) = agentry_plugin::sync::lock(&LAST).as_ref()
        && line == command
    {
        return analysis.clone();
    }
    let analysis = Arc::new(analysis::analyse(command));
    *agentry_plugin::sync::lock(&LAST) = Some((command.to_owned(), analysis.clone()));
    analysis
}

/// Whether `pattern` matches one subject (one simple command, as [`subjects`] gives it).
pub fn matches(pattern: &str, subject: &str) -> bool {
    shlex::split(subject).is_some_and(|words| pattern::matches(pattern, &words))
}
