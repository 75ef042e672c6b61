//! What a program does with its arguments: most only read them; wrappers run the command they
//! are given (`nohup rm x`); shells and interpreters run a script (`bash -c 'rm x'`, which is
//! read in turn, or `python -c …`, which is not); some builtins run a string or change what a
//! later name runs (`eval`, `trap`, `hash -p`). What cannot be followed is said, so that no
//! rule allows it.

use crate::rules::options::{OptionSpec, read_options};
use crate::rules::scripts::{awk_program_is_safe, sed_script_is_safe};
use crate::rules::variables::{is_harmless_in_environment, is_local_name};
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

/// The shells, whose `-c` script is read as a command line of its own.
const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh",
    "tcsh",
];

/// Interpreters that run code given in an option or read from their input.
const INTERPRETERS: &[&str] = &[
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "R",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "julia",
    "guile",
    "irb",
    "jshell",
    "groovy",
    "elixir",
    "erl",
    "escript",
    "swift",
    "racket",
    "sbcl",
    "clisp",
    "gdb",
    "expect",
];

/// Programs that run their arguments (or a string among them) as a command in ways rules do
/// not follow: their options differ each, and several hand the command to a shell.
const OPAQUE_WRAPPERS: &[&str] = &[
    "chrt",
    "flock",
    "taskset",
    "strace",
    "ltrace",
    "unshare",
    "watch",
    "script",
    "nsenter",
    "prlimit",
    "setarch",
    "linux32",
    "linux64",
    "i386",
    "x86_64",
    "fakeroot",
    "fakechroot",
    "eatmydata",
    "faketime",
    "numactl",
    "cpulimit",
    "chroot",
    "su",
    "runuser",
    "setpriv",
    "capsh",
    "sg",
    "pkexec",
    "firejail",
    "bwrap",
    "nsjail",
    "systemd-run",
    "systemd-nspawn",
    "dbus-run-session",
    "dbus-launch",
    "xvfb-run",
    "catchsegv",
    "valgrind",
    "perf",
    "chpst",
    "nocache",
    "tsocks",
    "torsocks",
    "proxychains",
    "proxychains4",
    "ssh",
    "sshpass",
    "tmux",
    "screen",
    "dtach",
    "at",
    "batch",
    "daemonize",
    "start-stop-daemon",
    "runcon",
    "cgexec",
    "parallel",
    "sem",
    "coproc",
    "fc",
];

/// Programs known to leave their arguments alone: no word of theirs is ever run, so a word
/// that names a command is only a word.
const INERT: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "test",
    "[",
    "pwd",
    "cd",
    "pushd",
    "popd",
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "cut",
    "tr",
    "uniq",
    "nl",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "stat",
    "file",
    "which",
    "type",
    "whoami",
    "id",
    "date",
    "uname",
    "mkdir",
    "rmdir",
    "touch",
    "rm",
    "cp",
    "mv",
    "ln",
    "chmod",
    "chown",
    "cmp",
    "comm",
    "od",
    "xxd",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "base64",
    "seq",
    "sleep",
    "exit",
    "return",
    "shift",
    "unset",
    "wait",
    "kill",
    "jobs",
];

/// Programs among those that leave their arguments alone that make links or put files in
/// other files' places.
const MAKES_LINKS: &[&str] = &["cp", "mv", "ln"];

/// Whether the program `name` is known never to run any of its arguments.
pub fn leaves_arguments_alone(name: &str) -> bool {
    INERT.contains(&name)
}

/// Whether the program `name` is known to leave every path naming what it did: it makes no
/// link and puts no file in another's place, so a file a later redirection names is the one
/// judged. Any program not known to (`git apply`, `tar`, a script) might.
pub fn keeps_paths(name: &str) -> bool {
    leaves_arguments_alone(name) && !MAKES_LINKS.contains(&name)
}

/// Options of a program: the short ones that take a value, and the long ones that do.
struct Options {
    short_values: &'static str,
    long_values: &'static [&'static str],
}

const NO_OPTIONS: Options = Options {
    short_values: "",
    long_values: &[],
};

/// What the command `words` (whose first word's file name is `name`) runs.
pub fn runs(name: &str, words: &[Word]) -> Runs {
    let after = |options: Options| skip_options(words, 1, &options);
    match name {
        "command" | "builtin" => {
            let at = after(NO_OPTIONS);
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
        "time" => time(words),
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
        "setsid" => wrapped(words, after(NO_OPTIONS)),
        "ionice" => {
            let at = after(Options {
                short_values: "cnpPu",
                long_values: &["--class", "--classdata", "--pid", "--pgid", "--uid"],
            });
            wrapped(words, at)
        }
        "busybox" | "toybox" => wrapped(words, 1),
        "timeout" => {
            let at = after(Options {
                short_values: "sk",
                long_values: &["--signal", "--kill-after"],
            });
            // The duration comes before the command.
            wrapped(words, at + 1)
        }
        "env" => env(words),
        "sudo" | "doas" => sudo(words),
        "xargs" => {
            let at = after(Options {
                short_values: "adEeILlnPs",
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
            });
            Runs::Hidden(
                "`xargs` runs its command with arguments read from its input".to_owned(),
                (at < words.len())
                    .then_some(at..words.len())
                    .into_iter()
                    .collect(),
            )
        }
        "find" => find(words),
        "git" => git(words),
        "eval" => hidden("`eval` runs a string as a command"),
        "source" | "." => match words.get(1) {
            Some(file) if names_a_file(file) => Runs::Nothing,
            _ => hidden("`source` reads commands from what only running it shows"),
        },
        "alias" if words.len() > 1 => hidden("an alias changes what later command names run"),
        "trap" => trap(words),
        "hash" if words[1..].iter().any(|w| w.text != "-r") => {
            hidden("`hash` may bind a name to any program (`-p`)")
        }
        "set" => set(words),
        "shopt" => shopt(words),
        "enable" if words[1..].iter().any(|w| w.text.starts_with("-f")) => {
            hidden("`enable -f` loads a builtin from a library")
        }
        "complete" | "compgen" if words.len() > 1 => hidden(format!(
            "`{name}` may run a command or function (`-C`, `-F`)"
        )),
        "bind" if words[1..].iter().any(|w| w.text.starts_with("-x")) => {
            hidden("`bind -x` runs a command on a key")
        }
        "let" => hidden("`let` evaluates arithmetic, in which a subscript runs `$( )`"),
        // Read as a declaration only when written as one; behind `builtin` or in quotes its
        // values are not read here, and a quoted `(…)` value is an array whose elements expand.
        "declare" | "typeset" | "local" | "readonly" | "export" => hidden(format!(
            "`{name}` written as an argument declares what it is given in ways rules do not read"
        )),
        "read" | "mapfile" | "readarray" | "printf" | "getopts" | "wait" => {
            assigned_names(name, words)
        }
        "test" | "[" => test(words),
        "awk" | "gawk" | "mawk" | "nawk" => awk(words),
        "sed" | "gsed" => sed(words),
        shell if SHELLS.contains(&shell) => self::shell(words),
        python if is_python(python) => self::python(words),
        interpreter if INTERPRETERS.contains(&interpreter) => self::interpreter(words),
        wrapper if OPAQUE_WRAPPERS.contains(&wrapper) => hidden(format!(
            "`{wrapper}` runs its arguments as a command in a way rules cannot follow"
        )),
        _ => Runs::Nothing,
    }
}

/// A command that does what no rule can see, for this reason.
fn hidden(why: impl Into<String>) -> Runs {
    Runs::Hidden(why.into(), Vec::new())
}

/// [`hidden`] when `condition` holds, else a command like any other.
fn hidden_if(condition: bool, why: &str) -> Runs {
    if condition {
        hidden(why)
    } else {
        Runs::Nothing
    }
}

/// The command at `at`, if there is one (a wrapper alone is a command like any other).
fn wrapped(words: &[Word], at: usize) -> Runs {
    if at < words.len() {
        Runs::Wrapped(at)
    } else {
        Runs::Nothing
    }
}

/// Whether `word` names a script file whose name is known: not standard input, a device or a
/// process substitution, however the path is spelt (`//dev/stdin`, `/sys/../dev/stdin`).
fn names_a_file(word: &Word) -> bool {
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

/// `env [OPTIONS] [NAME=VALUE]… [COMMAND …]`: only harmless variables may be set, and only the
/// options that clear or unset variables are read (`-S` splits a string into a command, `-C`
/// moves the command to another folder).
fn env(words: &[Word]) -> Runs {
    const ENV: OptionSpec = OptionSpec {
        flags: "i0",
        values: "u",
        long_flags: &["ignore-environment", "null"],
        long_values: &["unset"],
    };
    let mut at = match read_options(words, 1, &ENV) {
        Ok((_, at)) => at,
        Err(option) => return hidden(format!("`env {option}` is an option rules do not read")),
    };
    if words.get(at).is_some_and(|word| word.text == "-") {
        at += 1;
    }
    while let Some(word) = words.get(at) {
        let Some((name, _)) = word.text.split_once('=') else {
            break;
        };
        if !is_harmless_in_environment(name) {
            return Runs::Hidden(
                format!("`{name}=` set for a command may change what it does"),
                (at + 1 < words.len())
                    .then_some(at + 1..words.len())
                    .into_iter()
                    .collect(),
            );
        }
        at += 1;
    }
    wrapped(words, at)
}

/// `time [-p] COMMAND …` (bash's keyword, or `/usr/bin/time`, whose `-o` writes a file).
fn time(words: &[Word]) -> Runs {
    const TIME: OptionSpec = OptionSpec {
        flags: "pvq",
        values: "f",
        long_flags: &["portability", "verbose", "quiet"],
        long_values: &["format"],
    };
    match read_options(words, 1, &TIME) {
        Ok((_, at)) => wrapped(words, at),
        Err(option) => hidden(format!(
            "`time {option}` is an option rules do not read (`-o` writes a file)"
        )),
    }
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
    while let Some(word) = words.get(at) {
        let Some((name, _)) = word.text.split_once('=') else {
            break;
        };
        if !is_harmless_in_environment(name) {
            return hidden(format!(
                "`{name}=` set for a command may change what it does"
            ));
        }
        at += 1;
    }
    let moves = words[1..at].iter().any(|w| {
        w.text.starts_with("--chdir")
            || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('D'))
    });
    if moves {
        return hidden("`sudo -D` runs the command in another folder");
    }
    if at < words.len() {
        return Runs::Privileged(at);
    }
    let shell = words[1..at].iter().any(|w| {
        w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(['s', 'i'])
    });
    hidden_if(shell, "a shell reading its commands from its input")
}

/// `find … -exec COMMAND … ;` (and `-execdir`, `-ok`, `-okdir`, ending with `;` or `+`): the
/// command runs with the names find finds, which no rule sees.
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
        Runs::Hidden(
            "`find -exec` runs its command on the files it finds".to_owned(),
            commands,
        )
    }
}

/// `trap COMMAND SIGNAL…` runs a string later; `trap`, `trap -l`, `trap -p`, `trap - SIG` and
/// `trap '' SIG` (after an optional `--`) run nothing.
fn trap(words: &[Word]) -> Runs {
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
fn set(words: &[Word]) -> Runs {
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
fn shopt(words: &[Word]) -> Runs {
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
fn assigned_names(program: &str, words: &[Word]) -> Runs {
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
fn test(words: &[Word]) -> Runs {
    let evaluated = words.windows(2).any(|pair| {
        matches!(pair[0].text.as_str(), "-v" | "-R")
            && (!pair[1].literal || pair[1].text.contains('['))
    });
    hidden_if(evaluated, "`test -v` evaluates a subscript as arithmetic")
}

/// `awk [OPTIONS] PROGRAM [FILE…]`: the program may run commands and write files.
fn awk(words: &[Word]) -> Runs {
    let mut at = 1;
    let mut from_file = false;
    let mut programs: Vec<&Word> = Vec::new();
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        match text {
            "--" => {
                at += 1;
                break;
            }
            "-S" | "--sandbox" => return Runs::Nothing,
            "-f" | "--file" | "-E" | "--exec" => {
                from_file = true;
                at += 2;
            }
            "-e" | "--source" => {
                programs.extend(words.get(at + 1));
                at += 2;
            }
            "-i" | "--include" | "-l" | "--load" => {
                return hidden("`awk -i` and `-l` load code from a library");
            }
            "-F" | "-v" | "--field-separator" | "--assign" => at += 2,
            _ if text.starts_with('-') && text.len() > 1 => at += 1,
            _ => break,
        }
    }
    if !from_file && programs.is_empty() {
        programs.extend(words.get(at));
    }
    let safe = programs
        .iter()
        .all(|program| program.literal && awk_program_is_safe(&program.text));
    hidden_if(
        !safe,
        "the awk program may run commands or write files (`system`, `|`, `>`)",
    )
}

/// `sed [OPTIONS] SCRIPT [FILE…]`: GNU sed's script may run commands (`e`) and write files
/// (`w`) unless `--sandbox` is given. Its options are read as sed reads them (`-e'…'`, `-ne`).
fn sed(words: &[Word]) -> Runs {
    const SED: OptionSpec = OptionSpec {
        flags: "nErsuz",
        values: "efl",
        long_flags: &[
            "quiet",
            "silent",
            "debug",
            "posix",
            "regexp-extended",
            "separate",
            "unbuffered",
            "null-data",
            "sandbox",
            "follow-symlinks",
            "in-place",
        ],
        long_values: &["expression", "file", "line-length"],
    };
    // `-i` takes its suffix from the rest of its word only; read apart from the rest.
    let plain: Vec<Word> = words
        .iter()
        .map(|word| match word.text.strip_prefix("-i") {
            Some(_) if word.literal => Word::plain("-E"),
            None if word.literal && word.text.starts_with("--in-place=") => {
                Word::plain("--in-place")
            }
            _ => word.clone(),
        })
        .collect();
    let (given, at) = match read_options(&plain, 1, &SED) {
        Ok(read) => read,
        Err(option) => return hidden(format!("`sed {option}` is an option rules do not read")),
    };
    if given.iter().any(|option| option.name == "sandbox") {
        return Runs::Nothing;
    }
    let from_file = given
        .iter()
        .any(|option| matches!(option.name.as_str(), "f" | "file"));
    let mut scripts: Vec<&Word> = given
        .iter()
        .filter(|option| matches!(option.name.as_str(), "e" | "expression"))
        .filter_map(|option| option.value.as_ref())
        .collect();
    if !from_file && scripts.is_empty() {
        scripts.extend(plain.get(at));
    }
    let safe = scripts
        .iter()
        .all(|script| script.literal && sed_script_is_safe(&script.text));
    hidden_if(
        !safe,
        "the sed script may run commands or write files (`e`, `w`)",
    )
}

/// `bash [OPTIONS] -c SCRIPT …`, `bash FILE`, or a shell reading its commands from its input.
/// A login or interactive shell also runs its start-up scripts.
fn shell(words: &[Word]) -> Runs {
    let mut at = 1;
    let mut script = false;
    let mut from_input = false;
    let mut starts_up = false;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if text == "--" {
            at += 1;
            break;
        }
        if text.starts_with("--") {
            starts_up |= matches!(text, "--login" | "--rcfile" | "--init-file");
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
        starts_up |= text.starts_with('-') && letters.contains(['l', 'i']);
        at += if letters.ends_with('o') || letters.ends_with('O') {
            2
        } else {
            1
        };
    }
    let start_up =
        starts_up.then(|| "a login or interactive shell runs its start-up scripts".to_owned());
    match (script, words.get(at)) {
        (true, Some(_)) => Runs::Script(at, start_up),
        (true, None) => hidden("`-c` without a script"),
        (false, Some(file)) if !from_input && names_a_file(file) && start_up.is_none() => {
            Runs::Nothing
        }
        (false, Some(file)) if !from_input => hidden(
            start_up.unwrap_or_else(|| format!("a shell reading its script from `{}`", file.text)),
        ),
        _ => hidden("a shell reading its commands from its input"),
    }
}

/// `git -c NAME=VALUE …` sets configuration for the command, and much of git's configuration
/// runs commands (`core.fsmonitor`, `alias.x=!…`, `core.pager`); `--exec-path` picks the
/// programs git runs.
fn git(words: &[Word]) -> Runs {
    let configures = words[1..]
        .iter()
        .take_while(|w| w.text.starts_with('-'))
        .any(|w| {
            let text = w.text.as_str();
            text == "-c"
                || (text.starts_with("-c") && text.contains('='))
                || text.starts_with("--config-env")
                || text.starts_with("--exec-path=")
        });
    hidden_if(
        configures,
        "`git -c` sets configuration that may run commands",
    )
}

/// `python`, `python3`, `python3.12`, `pypy3`.
fn is_python(name: &str) -> bool {
    let version = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    version.is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `python [OPTIONS] SCRIPT`, `python -m MODULE`; `-c`, `-i`, `-` or no script run code that no
/// rule sees.
fn python(words: &[Word]) -> Runs {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if text == "--version" || text == "--help" {
            return Runs::Nothing;
        }
        let Some(letters) = text.strip_prefix('-').filter(|l| !l.is_empty()) else {
            break;
        };
        if letters.starts_with('-') {
            at += 1;
            continue;
        }
        for (index, letter) in letters.char_indices() {
            match letter {
                'm' => return Runs::Nothing,
                'V' | 'h' => return Runs::Nothing,
                'W' | 'X' => {
                    at += usize::from(index + 1 == letters.len());
                    break;
                }
                'b' | 'B' | 'd' | 'E' | 'I' | 'O' | 'P' | 'q' | 's' | 'S' | 'u' | 'v' => {}
                _ => {
                    return hidden(format!("`python -{letter}` runs code that no rule sees"));
                }
            }
        }
        at += 1;
    }
    match words.get(at) {
        Some(file) if names_a_file(file) => Runs::Nothing,
        _ => hidden("python reading its program from its input"),
    }
}

/// Other interpreters: understood only running a named script file, or asked their version.
fn interpreter(words: &[Word]) -> Runs {
    let name = words[0].text.rsplit('/').next().unwrap_or_default();
    match words.get(1) {
        Some(only)
            if words.len() == 2
                && matches!(
                    only.text.as_str(),
                    "--version" | "-v" | "-V" | "--help" | "-h"
                ) =>
        {
            Runs::Nothing
        }
        Some(file)
            if names_a_file(file)
                && !file.text.starts_with('-')
                && !matches!(file.text.as_str(), "eval" | "repl" | "-e") =>
        {
            Runs::Nothing
        }
        _ => hidden(format!(
            "`{name}` runs code given in its arguments or input, which no rule sees"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split(' ').map(Word::plain).collect()
    }

    fn runs_of(line: &str) -> Runs {
        let words = words(line);
        let name = words[0].text.rsplit('/').next().unwrap().to_owned();
        runs(&name, &words)
    }

    fn is_hidden(line: &str) -> bool {
        matches!(runs_of(line), Runs::Hidden(..))
    }

    #[test]
    fn wrappers_name_the_command_they_run() {
        assert_eq!(runs_of("nohup rm x"), Runs::Wrapped(1));
        assert_eq!(runs_of("env -i LANG=C rm x"), Runs::Wrapped(3));
        assert_eq!(runs_of("env -u B LC_ALL=C rm x"), Runs::Wrapped(4));
        assert_eq!(runs_of("env"), Runs::Nothing);
        assert_eq!(runs_of("time -p rm x"), Runs::Wrapped(2));
        assert_eq!(runs_of("timeout -s KILL 5 rm x"), Runs::Wrapped(4));
        assert_eq!(runs_of("nice -n 5 rm"), Runs::Wrapped(3));
        assert_eq!(runs_of("nice -10 rm"), Runs::Wrapped(2));
        assert_eq!(runs_of("setsid -f rm x"), Runs::Wrapped(2));
        assert_eq!(runs_of("ionice -c 3 rm x"), Runs::Wrapped(3));
        assert_eq!(runs_of("busybox rm x"), Runs::Wrapped(1));
        assert_eq!(runs_of("exec -a name rm"), Runs::Wrapped(3));
        assert_eq!(runs_of("command rm x"), Runs::Wrapped(1));
        assert_eq!(runs_of("command -v rm"), Runs::Nothing);
        assert_eq!(runs_of("sudo -u root -E rm x"), Runs::Privileged(4));
        assert_eq!(runs_of("/usr/bin/env rm"), Runs::Wrapped(1));
    }

    #[test]
    fn commands_run_with_what_only_running_shows_are_hidden_but_named() {
        assert_eq!(
            runs_of("xargs -0 -I {} rm {}"),
            Runs::Hidden(
                "`xargs` runs its command with arguments read from its input".to_owned(),
                vec![Range { start: 4, end: 6 }]
            )
        );
        assert!(matches!(
            runs_of("find . -name *.tmp -exec rm {} ; -execdir ls +"),
            Runs::Hidden(_, commands) if commands == vec![5..7, 9..10]
        ));
        assert!(matches!(
            runs_of("env GIT_CONFIG_COUNT=1 git status"),
            Runs::Hidden(_, commands) if commands == [Range { start: 2, end: 4 }]
        ));
        assert_eq!(runs_of("find . -name x -delete"), Runs::Nothing);
    }

    #[test]
    fn shells_and_interpreters_run_their_scripts_or_hide_what_they_read() {
        assert_eq!(runs_of("bash -c x"), Runs::Script(2, None));
        assert!(matches!(runs_of("bash -lc x"), Runs::Script(2, Some(_))));
        assert_eq!(runs_of("sh -e -c x y"), Runs::Script(3, None));
        assert_eq!(runs_of("bash -o pipefail -c x"), Runs::Script(4, None));
        assert_eq!(runs_of("bash script.sh"), Runs::Nothing);
        assert_eq!(runs_of("python3 -u script.py"), Runs::Nothing);
        assert_eq!(runs_of("python3 -m pytest -x"), Runs::Nothing);
        assert_eq!(runs_of("node --version"), Runs::Nothing);
        assert_eq!(runs_of("perl script.pl"), Runs::Nothing);
        assert_eq!(runs_of("source env.sh"), Runs::Nothing);
        assert_eq!(runs_of("sed -n s/a/b/p f"), Runs::Nothing);
        assert_eq!(runs_of("awk {print} f"), Runs::Nothing);
        for hidden in [
            "bash",
            "sh -s",
            "bash -c",
            "bash /dev/stdin",
            "bash -i",
            "python3 -c x",
            "python3",
            "python3 -",
            "python3 -ic x",
            "perl -e x",
            "perl -MPOSIX -e x",
            "node -e x",
            "deno eval x",
            "source /dev/stdin",
            ". /proc/self/fd/0",
            "sed e",
            "sed -e s/a/b/ -e e",
            "awk BEGIN{system(\"x\")}",
            "awk -l x",
            "eval rm",
            "env -S rm",
            "env PATH=/tmp ls",
            "trap x INT",
            "hash -p /bin/rm x",
            "mapfile -C cb a",
            "readarray -t -C cb a",
            "read PATH",
            "read a[x]",
            "printf -v PATH x",
            "getopts ab IFS",
            "let x",
            "test -v a[x]",
            "enable -f lib.so x",
            "complete -C x y",
            "setarch x86_64 rm x",
            "watch rm x",
            "coproc rm x",
            "sudo -s",
            "bash -l script.sh",
            "git -c alias.x=!rm x",
            "git -calias.x=!rm x",
            "git --exec-path=/tmp status",
        ] {
            assert!(is_hidden(hidden), "{hidden}");
        }
        for seen in [
            "trap - INT",
            "read -r line",
            "printf %s PATH",
            "test -f x",
            "git commit -c HEAD",
            "git status",
        ] {
            assert!(!is_hidden(seen), "{seen}");
        }
    }
}
