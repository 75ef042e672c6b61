//! What a program does with its arguments: most only read them; wrappers run the command they
//! are given (`nohup rm x`); shells and interpreters run a script (`bash -c 'rm x'`, which is
//! read in turn, or `python -c …`, which is not); some builtins run a string or change what a
//! later name runs (`eval`, `trap`, `hash -p`). What cannot be followed is said, so that no
//! rule allows it.

use crate::rules::builtins::{assigned_names, set, shopt, test, trap};
use crate::rules::interpreters::{
    INTERPRETERS, SHELLS, awk, git, interpreter, is_python, python, sed, shell,
};
use crate::rules::options::{OptionSpec, read_options};
use crate::rules::runs::{
    NO_OPTIONS, Options, Runs, hidden, hidden_if, names_a_file, skip_options, wrapped,
};
use crate::rules::variables::is_harmless_in_environment;
use crate::rules::words::Word;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

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
            "git log -1 --output=../../.bashrc",
            "git log --output ../.git/config",
            "git diff --out=x",
            "git show HEAD --output-directory=x",
            "git format-patch -o /tmp/x -1",
            "git format-patch -o/tmp/x -1",
            "git archive -o ~/.profile HEAD",
        ] {
            assert!(is_hidden(hidden), "{hidden}");
        }
        for seen in [
            "trap - INT",
            "read -r line",
            "printf %s PATH",
            "test -f x",
            "git commit -c HEAD",
            "git commit -o file.txt -m x",
            "git log --oneline -1",
            "git status",
        ] {
            assert!(!is_hidden(seen), "{seen}");
        }
    }
}
