//! Programs that run a script of their own: shells, `awk`, `sed`, `git`, Python and other
//! interpreters — whose script is read in turn where it can be, and hides the line where not.

use crate::rules::options::{OptionSpec, read_options};
use crate::rules::runs::{Runs, hidden, hidden_if, names_a_file};
use crate::rules::scripts::{awk_program_is_safe, sed_script_is_safe};
use crate::rules::words::Word;

/// The shells, whose `-c` script is read as a command line of its own.
pub const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh",
    "tcsh",
];

/// Interpreters that run code given in an option or read from their input.
pub const INTERPRETERS: &[&str] = &[
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

/// `awk [OPTIONS] PROGRAM [FILE…]`: the program may run commands and write files.
pub fn awk(words: &[Word]) -> Runs {
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
pub fn sed(words: &[Word]) -> Runs {
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
pub fn shell(words: &[Word]) -> Runs {
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
/// programs git runs. `--output=FILE` (of `log`, `diff`, `show`, `archive`, and git's
/// abbreviations of it) and `-o` of `format-patch` and `archive` write a file no rule reads:
/// `.git/config` or `~/.bashrc` as well as a patch.
pub fn git(words: &[Word]) -> Runs {
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
    if configures {
        return hidden("`git -c` sets configuration that may run commands");
    }
    let writes_to_a_file = |text: &str| text.starts_with("--ou");
    let takes_o = words[1..]
        .iter()
        .any(|w| w.text == "format-patch" || w.text == "archive");
    let writes = words[1..].iter().any(|w| {
        writes_to_a_file(&w.text)
            || (takes_o && w.text.starts_with("-o") && !w.text.starts_with("--"))
    });
    hidden_if(
        writes,
        "`git … --output` writes a file that rules do not read",
    )
}

/// `python`, `python3`, `python3.12`, `pypy3`.
pub fn is_python(name: &str) -> bool {
    let version = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    version.is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `python [OPTIONS] SCRIPT`, `python -m MODULE`; `-c`, `-i`, `-` or no script run code that no
/// rule sees.
pub fn python(words: &[Word]) -> Runs {
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
pub fn interpreter(words: &[Word]) -> Runs {
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
