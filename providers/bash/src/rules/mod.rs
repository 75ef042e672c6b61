//! What Bash's permission rules (`Bash(git status:*)`) are matched against: each simple command
//! a command line runs, read with bash's own grammar, so that a deny rule cannot be stepped
//! around by chaining (`echo hi && rm x`), substituting, wrapping (`sudo rm`) or quoting
//! (`r\m`), and an allow rule covers a call only when it covers each command.

mod analysis;
mod pattern;
mod words;
mod wrappers;

use agentry::tool::RuleSubjects;

pub use pattern::check;

/// The rule subjects of the command line `command`: its simple commands and the files its
/// redirections write (allow rules must cover each), other spellings of them (deny and ask rules
/// see those too), and what no rule can see.
pub fn subjects(command: &str) -> RuleSubjects {
    let analysis = analysis::analyse(command);
    let join = |words: &Vec<String>| shlex::try_join(words.iter().map(String::as_str)).ok();
    let parts: Option<Vec<String>> = analysis.parts.iter().map(join).collect();
    let variants: Option<Vec<String>> = analysis.variants.iter().map(join).collect();
    match (parts, variants) {
        (Some(parts), Some(variants)) => RuleSubjects {
            parts,
            variants,
            suggestions: analysis
                .parts
                .iter()
                .filter_map(|words| pattern::suggest(words))
                .collect(),
            hidden: analysis.hidden,
        },
        _ => RuleSubjects {
            hidden: Some("the command line holds a NUL byte".to_owned()),
            ..RuleSubjects::default()
        },
    }
}

/// Whether `pattern` matches one subject (one simple command, as [`subjects`] gives it).
pub fn matches(pattern: &str, subject: &str) -> bool {
    shlex::split(subject).is_some_and(|words| pattern::matches(pattern, &words))
}
