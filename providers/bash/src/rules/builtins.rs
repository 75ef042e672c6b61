//! The shell's builtins whose options change what they run or set: `trap`, `set`, `shopt`,
//! the ones that assign names (`read`, `printf -v`, `mapfile`, …) and `test`.

use crate::rules::options::{OptionSpec, read_options};
use crate::rules::runs::{Runs, hidden, hidden_if};
use crate::rules::variables::is_local_name;
use crate::rules::words::Word;

/// `trap COMMAND SIGNAL…` runs a string later; `trap`, `trap -l`, `trap -p`, `trap - SIG` and
/// `trap '' SIG` (after an optional `--`) run nothing.
pub fn trap(words: &[Word]) -> Runs {
    let rest = match words.get(1) {
        Some(dashes) if dashes.literal && dashes.text == "--" => &words[2..],
        _ => &words[1..],
    };
    match rest.first() {
        None => Runs::Nothing,
        Some(first) if first.literal && matches!(first.text.as_str(), "-" | "" | "-l" | "-p") => {
            Runs::Nothing
        }
        Some(_) => hidden("`trap` runs a string as a command when a signal comes"),
    }
}

/// `set`: the options that stop on errors, trace or refuse globs and clobbering change nothing a
/// rule reads; `-k` (assignments anywhere), `-a` (every variable exported) and the rest might.
pub fn set(words: &[Word]) -> Runs {
    const READ_ONLY_NAMES: &[&str] = &[
        "errexit",
        "nounset",
        "pipefail",
        "xtrace",
        "verbose",
        "noglob",
        "noclobber",
        "errtrace",
    ];
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if !word.literal {
            return hidden(format!("`set {text}` is only known when it runs"));
        }
        if text == "--" || text == "-" || !(text.starts_with('-') || text.starts_with('+')) {
            return Runs::Nothing;
        }
        let letters = &text[1..];
        if letters == "o" {
            match words.get(at + 1) {
                Some(name) if name.literal && READ_ONLY_NAMES.contains(&name.text.as_str()) => {
                    at += 2;
                    continue;
                }
                None => return Runs::Nothing,
                Some(name) => {
                    return hidden(format!(
                        "`set -o {}` may change what commands do",
                        name.text
                    ));
                }
            }
        }
        if !letters.chars().all(|c| "euxvfCE".contains(c)) {
            return hidden(format!("`set {text}` may change what later commands do"));
        }
        at += 1;
    }
    Runs::Nothing
}

/// `shopt`: globbing options change nothing a rule reads; the rest (`expand_aliases`,
/// `extdebug`, `extglob`, which changes how later lines read) might.
pub fn shopt(words: &[Word]) -> Runs {
    const GLOBBING: &[&str] = &[
        "nullglob",
        "globstar",
        "dotglob",
        "nocaseglob",
        "nocasematch",
        "failglob",
    ];
    let changes = words[1..].iter().any(|w| {
        !w.literal
            || !(matches!(w.text.as_str(), "-s" | "-u" | "-q" | "-p")
                || GLOBBING.contains(&w.text.as_str()))
    });
    hidden_if(
        changes,
        "`shopt` may change how later commands are read or run",
    )
}

/// Builtins that set variables they are given by name (`read NAME`, `printf -v NAME`,
/// `mapfile NAME`, `getopts SPEC NAME`, `wait -p NAME`): each name must be the line's own, and
/// a subscript in one is evaluated as arithmetic. Their options are read as they read them.
pub fn assigned_names(program: &str, words: &[Word]) -> Runs {
    let spec = match program {
        "read" => OptionSpec {
            flags: "ers",
            values: "adinNptu",
            long_flags: &[],
            long_values: &[],
        },
        "mapfile" | "readarray" => OptionSpec {
            flags: "t",
            values: "dnOsuc",
            long_flags: &[],
            long_values: &[],
        },
        "printf" => OptionSpec {
            flags: "",
            values: "v",
            long_flags: &[],
            long_values: &[],
        },
        "wait" => OptionSpec {
            flags: "fn",
            values: "p",
            long_flags: &[],
            long_values: &[],
        },
        _ => OptionSpec {
            flags: "",
            values: "",
            long_flags: &[],
            long_values: &[],
        },
    };
    let (given, at) = match read_options(words, 1, &spec) {
        Ok(read) => read,
        Err(option) => {
            return hidden(format!(
                "`{program} {option}` is an option rules do not read (`-C` runs a command)"
            ));
        }
    };
    // The option that names a variable: `printf -v`, `wait -p`, `read -a`.
    let naming = match program {
        "printf" => "v",
        "wait" => "p",
        "read" => "a",
        _ => "",
    };
    let named_by_option = given
        .iter()
        .filter(|option| option.name == naming)
        .filter_map(|option| option.value.as_ref());
    let operands = &words[at.min(words.len())..];
    let named_as_operands: Vec<&Word> = match program {
        "getopts" => operands.get(1).into_iter().collect(),
        "read" | "mapfile" | "readarray" => operands.iter().collect(),
        _ => Vec::new(),
    };
    for name in named_by_option.chain(named_as_operands) {
        if !name.literal || name.text.contains('[') {
            return hidden(format!(
                "`{program}` sets `{}`, whose subscript is evaluated as arithmetic",
                name.text
            ));
        }
        if !is_local_name(&name.text) {
            return hidden(format!(
                "`{program}` sets `{}`, which may change what later commands do",
                name.text
            ));
        }
    }
    Runs::Nothing
}

/// `test -v NAME` and `[ -v NAME ]` evaluate a subscript in NAME as arithmetic: the name must
/// be written out, without one.
pub fn test(words: &[Word]) -> Runs {
    let evaluated = words.windows(2).any(|pair| {
        matches!(pair[0].text.as_str(), "-v" | "-R")
            && (!pair[1].literal || pair[1].text.contains('['))
    });
    hidden_if(evaluated, "`test -v` evaluates a subscript as arithmetic")
}
