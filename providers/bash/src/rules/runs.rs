//! What a simple command does with the commands in its arguments ([`Runs`]), and the small
//! readings every program's rule shares: its options, the files it names.

use crate::rules::words::Word;
use std::ops::Range;

/// What a simple command does with the commands in its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// What its words say, and nothing more: rules judge it as written.
    Nothing,
    /// It runs the command that starts at this word, and is nothing more (`nohup`, `env`,
    /// `time`): rules are about the command it runs.
    Wrapped(usize),
    /// It runs the command that starts at this word with other privileges (`sudo`): rules are
    /// about both.
    Privileged(usize),
    /// It runs the script in this word (`bash -c SCRIPT`), which is read in turn; and, for this
    /// reason, more that no rule sees (a login shell's profile scripts).
    Script(usize, Option<String>),
    /// It does what no rule can see, for this reason; the commands at these words are among
    /// what it runs (`xargs rm`: `rm`, with arguments from its input), for deny rules to see.
    Hidden(String, Vec<Range<usize>>),
}

/// Options of a program: the short ones that take a value, and the long ones that do.
pub struct Options {
    /// The short options that take a value.
    pub short_values: &'static str,
    /// The long options that take a value.
    pub long_values: &'static [&'static str],
}

/// A program none of whose options takes a value.
pub const NO_OPTIONS: Options = Options {
    short_values: "",
    long_values: &[],
};

/// A command that does what no rule can see, for this reason.
pub fn hidden(why: impl Into<String>) -> Runs {
    Runs::Hidden(why.into(), Vec::new())
}

/// [`hidden`] when `condition` holds, else a command like any other.
pub fn hidden_if(condition: bool, why: &str) -> Runs {
    if condition {
        hidden(why)
    } else {
        Runs::Nothing
    }
}

/// The command at `at`, if there is one (a wrapper alone is a command like any other).
pub fn wrapped(words: &[Word], at: usize) -> Runs {
    if at < words.len() {
        Runs::Wrapped(at)
    } else {
        Runs::Nothing
    }
}

/// Whether `word` names a script file whose name is known: not standard input, a device or a
/// process substitution, however the path is spelt (`//dev/stdin`, `/sys/../dev/stdin`).
pub fn names_a_file(word: &Word) -> bool {
    let text = word.text.as_str();
    let path = lexically_normal(text);
    word.is_exact()
        && !text.is_empty()
        && text != "-"
        && !["/dev", "/proc", "/sys"]
            .iter()
            .any(|special| path == *special || path.starts_with(&format!("{special}/")))
}

/// An absolute path with `//`, `.` and `..` folded as written (`/sys/../dev/x` is `/dev/x`); a
/// relative one as it is.
pub fn lexically_normal(path: &str) -> String {
    if !path.starts_with('/') {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The index of the first word from `start` that is not an option (or an option's value).
pub fn skip_options(words: &[Word], start: usize, options: &Options) -> usize {
    let mut at = start;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if text == "--" {
            return at + 1;
        }
        if !text.starts_with('-') || text == "-" {
            return at;
        }
        if let Some(long) = text.strip_prefix("--") {
            let takes_value = !long.contains('=')
                && options
                    .long_values
                    .iter()
                    .any(|name| name.trim_start_matches('-') == long);
            at += if takes_value { 2 } else { 1 };
            continue;
        }
        // A cluster of short options; the first that takes a value takes the rest of the word,
        // or the next word. A number alone (`nice -10`) is a value too.
        let letters = &text[1..];
        let value_at = letters.find(|c| options.short_values.contains(c));
        at += match value_at {
            Some(index) if index + 1 == letters.len() => 2,
            _ => 1,
        };
    }
    at
}
