//! Which variables a command line may set without changing what the programs it runs do.
//!
//! Most environment variables change a program's behaviour, many of them into running code
//! (`GIT_CONFIG_*`, `LD_PRELOAD`, `PAGER`, `BASH_ENV`, `PYTHONSTARTUP`, `CFLAGS` for a build),
//! and no list of dangerous ones is ever complete. So the list is of the harmless ones: the
//! locale, the time zone and colour switches. Anything else set for a command (`NAME=value cmd`,
//! `env NAME=value cmd`, `export NAME=value`) is something no rule can see through.
//!
//! A command line's own variables (`for f in *`, `n=3`) do not reach the programs it runs
//! unless exported, and the shell's environment is agentry's: a name with a lowercase letter
//! is the line's own, but for the few that programs read in lowercase (the proxies).

/// Variables that may be set for a command without changing what it runs.
const HARMLESS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "CI",
    "DEBIAN_FRONTEND",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CARGO_TERM_COLOR",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
];

/// Lowercase names programs read from their environment.
const LOWERCASE_ENVIRONMENT: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "ftp_proxy",
    "all_proxy",
    "no_proxy",
    "rsync_proxy",
];

/// Whether `name` may be set for a command, or exported, without changing what it runs.
pub fn is_harmless_in_environment(name: &str) -> bool {
    HARMLESS.contains(&name)
}

/// Whether `name` is a variable of the command line's own when set there (not exported): a
/// name with a lowercase letter that programs do not read, or a harmless one.
pub fn is_local_name(name: &str) -> bool {
    is_harmless_in_environment(name)
        || (is_name(name)
            && name.chars().any(|c| c.is_ascii_lowercase())
            && !LOWERCASE_ENVIRONMENT.contains(&name))
}

/// Whether `text` is a shell variable name.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listed_variables_reach_a_program_and_lowercase_names_stay_local() {
        assert!(is_harmless_in_environment("LC_ALL"));
        for changing in [
            "PATH",
            "GIT_CONFIG_COUNT",
            "LD_PRELOAD",
            "PAGER",
            "HOME",
            "FOO",
        ] {
            assert!(!is_harmless_in_environment(changing), "{changing}");
            assert!(!is_local_name(changing), "{changing}");
        }
        for local in ["f", "count", "myVar", "LANG"] {
            assert!(is_local_name(local), "{local}");
        }
        for not_local in ["http_proxy", "no_proxy", "a[1]", "", "1x"] {
            assert!(!is_local_name(not_local), "{not_local}");
        }
    }
}
