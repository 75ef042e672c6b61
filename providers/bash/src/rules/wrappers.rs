//! Commands that run other commands given in their arguments (`sudo rm x`, `xargs rm`,
//! `find … -exec rm {} ;`, `bash -c 'rm x'`), and those that run what no rule can see (`eval`).

use crate::rules::words::Word;
use std::ops::Range;

/// What a simple command does with the commands in its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// Nothing: it is a command like any other.
    Nothing,
    /// It runs the command that starts at this word, and is nothing more (`nohup`, `env`,
    /// `time`, `xargs`): rules are about the command it runs.
    Wrapped(usize),
    /// It runs the command that starts at this word with other privileges (`sudo`): rules are
    /// about both.
    Privileged(usize),
    /// It is a command, and runs these others too (`find … -exec … ;`).
    Also(Vec<Range<usize>>),
    /// It runs the script in this word (`bash -c SCRIPT`).
    Script(usize),
    /// It runs something no rule can see, for this reason.
    Hidden(String),
}

/// Variables whose value changes which program a later command name runs, or what runs
/// before it: a command after such an assignment is not what its name says.
pub const DANGEROUS_VARIABLES: &[&str] = &[
    "PATH",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "PS4",
];

/// The shells whose `-c` script is read as a command line of its own.
const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"];

/// Options of a wrapper: the short ones that take a value, and the long ones that do.
struct Options {
    short_values: &'static str,
    long_values: &'static [&'static str],
}

/// What the command `words` (whose first word's file name is `name`) runs.
pub fn runs(name: &str, words: &[Word]) -> Runs {
    let after = |options: Options| skip_options(words, 1, &options);
    match name {
        "command" | "builtin" => {
            let at = after(Options {
                short_values: "",
                long_values: &[],
            });
            // `command -v x` names x without running it.
            let queries = words[1..at]
                .iter()
                .any(|w| w.text.contains('v') || w.text.contains('V'));
            if queries {
                Runs::Nothing
            } else {
                wrapped(words, at)
            }
        }
        "nohup" => wrapped(words, after(NO_OPTIONS)),
        "exec" => wrapped(
            words,
            after(Options {
                short_values: "a",
                long_values: &[],
            }),
        ),
        "time" => wrapped(
            words,
            after(Options {
                short_values: "fo",
                long_values: &["--format", "--output"],
            }),
        ),
        "nice" => wrapped(
            words,
            after(Options {
                short_values: "n",
                long_values: &["--adjustment"],
            }),
        ),
        "stdbuf" => wrapped(
            words,
            after(Options {
                short_values: "ioe",
                long_values: &["--input", "--output", "--error"],
            }),
        ),
        "timeout" => {
            let at = after(Options {
                short_values: "sk",
                long_values: &["--signal", "--kill-after"],
            });
            // The duration comes before the command.
            wrapped(words, at + 1)
        }
        "env" => env(words),
        "xargs" => wrapped(
            words,
            after(Options {
                short_values: "adEILnPs",
                long_values: &[
                    "--arg-file",
                    "--delimiter",
                    "--eof",
                    "--max-lines",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
            }),
        ),
        "sudo" | "doas" => sudo(words),
        "find" => find(words),
        "eval" => Runs::Hidden("`eval` runs a string as a command".to_owned()),
        "alias" if words.len() > 1 => {
            Runs::Hidden("an alias changes what later command names run".to_owned())
        }
        "trap" if words.len() > 2 => {
            Runs::Hidden("`trap` runs a string as a command when a signal comes".to_owned())
        }
        shell if SHELLS.contains(&shell) => self::shell(words),
        _ => Runs::Nothing,
    }
}

const NO_OPTIONS: Options = Options {
    short_values: "",
    long_values: &[],
};

/// The command at `at`, if there is one (a wrapper alone is a command like any other).
fn wrapped(words: &[Word], at: usize) -> Runs {
    if at < words.len() {
        Runs::Wrapped(at)
    } else {
        Runs::Nothing
    }
}

/// The index of the first word from `start` that is not an option (or an option's value).
fn skip_options(words: &[Word], start: usize, options: &Options) -> usize {
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
            let takes_value = options
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

/// `env [OPTIONS] [NAME=VALUE]… [COMMAND …]`.
fn env(words: &[Word]) -> Runs {
    let split = words[1..].iter().any(|w| {
        w.text == "-S" || w.text.starts_with("--split-string") || w.text.starts_with("-S")
    });
    if split {
        return Runs::Hidden("`env -S` splits a string into a command".to_owned());
    }
    let mut at = skip_options(
        words,
        1,
        &Options {
            short_values: "uC",
            long_values: &["--unset", "--chdir"],
        },
    );
    while let Some(word) = words.get(at) {
        let Some((name, _)) = word.text.split_once('=') else {
            break;
        };
        if DANGEROUS_VARIABLES.contains(&name) {
            return Runs::Hidden(format!("`{name}=` changes which program runs"));
        }
        at += 1;
    }
    wrapped(words, at)
}

/// `sudo [OPTIONS] [NAME=VALUE]… COMMAND …` (and `doas`).
fn sudo(words: &[Word]) -> Runs {
    let mut at = skip_options(
        words,
        1,
        &Options {
            short_values: "ugCDhprtTU",
            long_values: &[
                "--user",
                "--group",
                "--close-from",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
            ],
        },
    );
    while words.get(at).is_some_and(|w| w.text.contains('=')) {
        at += 1;
    }
    if at < words.len() {
        Runs::Privileged(at)
    } else {
        Runs::Nothing
    }
}

/// `find … -exec COMMAND … ;` (and `-execdir`, `-ok`, `-okdir`, ending with `;` or `+`).
fn find(words: &[Word]) -> Runs {
    let mut commands = Vec::new();
    let mut at = 1;
    while at < words.len() {
        let action = matches!(
            words[at].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        );
        at += 1;
        if !action {
            continue;
        }
        let start = at;
        while at < words.len() && !matches!(words[at].text.as_str(), ";" | "+") {
            at += 1;
        }
        if at > start {
            commands.push(start..at);
        }
        at += 1;
    }
    if commands.is_empty() {
        Runs::Nothing
    } else {
        Runs::Also(commands)
    }
}

/// `bash [OPTIONS] -c SCRIPT …`, `bash FILE`, or a shell reading its commands from its input.
fn shell(words: &[Word]) -> Runs {
    let mut at = 1;
    let mut script = false;
    let mut from_input = false;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if text == "--" {
            at += 1;
            break;
        }
        if text.starts_with("--") {
            let takes_value = matches!(text, "--rcfile" | "--init-file");
            at += if takes_value { 2 } else { 1 };
            continue;
        }
        let Some(letters) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            break;
        };
        if letters.is_empty() {
            from_input = true;
        }
        script |= text.starts_with('-') && letters.contains('c');
        from_input |= letters.contains('s');
        at += if letters.ends_with('o') || letters.ends_with('O') {
            2
        } else {
            1
        };
    }
    match (script, at < words.len()) {
        (true, true) => Runs::Script(at),
        (true, false) => Runs::Hidden("`-c` without a script".to_owned()),
        (false, true) if !from_input => Runs::Nothing,
        _ => Runs::Hidden("a shell reading its commands from its input".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split(' ')
            .map(|text| Word {
                text: text.to_owned(),
                literal: true,
            })
            .collect()
    }

    fn runs_of(line: &str) -> Runs {
        let words = words(line);
        let name = words[0].text.rsplit('/').next().unwrap().to_owned();
        runs(&name, &words)
    }

    #[test]
    fn wrappers_name_the_command_they_run() {
        assert_eq!(runs_of("nohup rm x"), Runs::Wrapped(1));
        assert_eq!(runs_of("env -i A=1 rm x"), Runs::Wrapped(3));
        assert_eq!(runs_of("env -u B A=1 rm x"), Runs::Wrapped(4));
        assert_eq!(runs_of("env"), Runs::Nothing);
        assert_eq!(runs_of("time -p rm x"), Runs::Wrapped(2));
        assert_eq!(runs_of("timeout -s KILL 5 rm x"), Runs::Wrapped(4));
        assert_eq!(runs_of("nice -n 5 rm"), Runs::Wrapped(3));
        assert_eq!(runs_of("nice -10 rm"), Runs::Wrapped(2));
        assert_eq!(runs_of("xargs -0 -I {} rm {}"), Runs::Wrapped(4));
        assert_eq!(runs_of("xargs -n1 rm"), Runs::Wrapped(2));
        assert_eq!(runs_of("exec -a name rm"), Runs::Wrapped(3));
        assert_eq!(runs_of("command rm x"), Runs::Wrapped(1));
        assert_eq!(runs_of("command -v rm"), Runs::Nothing);
        assert_eq!(runs_of("sudo -u root -E rm x"), Runs::Privileged(4));
        assert_eq!(runs_of("sudo -s"), Runs::Nothing);
        assert_eq!(
            runs_of("find . -name *.tmp -exec rm {} ; -execdir ls +"),
            Runs::Also(vec![5..7, 9..10])
        );
        assert_eq!(runs_of("/usr/bin/env rm"), Runs::Wrapped(1));
    }

    #[test]
    fn shells_run_their_scripts_or_hide_what_they_read() {
        assert_eq!(runs_of("bash -c x"), Runs::Script(2));
        assert_eq!(runs_of("bash -lc x"), Runs::Script(2));
        assert_eq!(runs_of("sh -e -c x y"), Runs::Script(3));
        assert_eq!(runs_of("bash -o pipefail -c x"), Runs::Script(4));
        assert_eq!(runs_of("bash script.sh"), Runs::Nothing);
        assert!(matches!(runs_of("bash"), Runs::Hidden(_)));
        assert!(matches!(runs_of("sh -s"), Runs::Hidden(_)));
        assert!(matches!(runs_of("bash -c"), Runs::Hidden(_)));
        assert!(matches!(runs_of("eval rm"), Runs::Hidden(_)));
        assert!(matches!(runs_of("env -S rm"), Runs::Hidden(_)));
        assert!(matches!(runs_of("env PATH=/tmp ls"), Runs::Hidden(_)));
    }
}
