//! Bash's rule patterns, as in Claude Code: `git status` (that command exactly),
//! `git commit:*` (a command whose words start with these), `npm run * --silent` (`*` matches
//! any text; a final ` *` also matches nothing, so `ls *` matches `ls` and `ls -la` but not
//! `lsof`). A pattern is matched against one simple command at a time.

/// A pattern, read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// The command's words are these.
    Exact(Vec<String>),
    /// The command's words start with these.
    Prefix(Vec<String>),
    /// The command's words, joined by spaces, match this text with `*` for any text.
    Wildcard(String),
}

/// Reads a pattern, or says why it can never match.
fn read(pattern: &str) -> Result<Pattern, String> {
    let pattern = pattern.trim();
    let (text, prefix) = match pattern.strip_suffix(":*") {
        Some(text) => (text, true),
        None => (pattern, false),
    };
    let words =
        shlex::split(text).ok_or_else(|| format!("`{pattern}` has a quote it does not close"))?;
    if words.is_empty() {
        return Err(format!("`{pattern}` names no command"));
    }
    if let Some(operator) = words
        .iter()
        .find(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|" | "&") || w.ends_with(';'))
    {
        return Err(format!(
            "rules match one simple command at a time, so `{pattern}` (with `{operator}`) matches none; \
             write one rule per command"
        ));
    }
    let wildcard = words.iter().any(|w| w.contains('*'));
    Ok(match (wildcard, prefix) {
        (true, true) => Pattern::Wildcard(format!("{} *", words.join(" "))),
        (true, false) => Pattern::Wildcard(words.join(" ")),
        (false, true) => Pattern::Prefix(words),
        (false, false) => Pattern::Exact(words),
    })
}

/// Why `pattern` can never match, if it cannot.
pub fn check(pattern: &str) -> Result<(), String> {
    read(pattern).map(|_| ())
}

/// The pattern that would allow the simple command `words` (`git status --short` →
/// `git status:*`: its name and a subcommand-like next word; `ls -la` → `ls:*`), or the file a
/// redirection writes exactly (`> out.txt`).
pub fn suggest(words: &[String]) -> Option<String> {
    let (name, rest) = words.split_first()?;
    if name == ">" {
        let file = shlex::try_join(rest.iter().map(String::as_str)).ok()?;
        return Some(format!("> {file}"));
    }
    let subcommand = rest.first().filter(|word| {
        word.starts_with(|c: char| c.is_ascii_alphabetic())
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    });
    let prefix = std::iter::once(name).chain(subcommand).map(String::as_str);
    Some(format!("{}:*", shlex::try_join(prefix).ok()?))
}

/// Whether `pattern` matches the simple command `words`.
pub fn matches(pattern: &str, words: &[String]) -> bool {
    match read(pattern) {
        Ok(Pattern::Exact(expected)) => words == expected.as_slice(),
        Ok(Pattern::Prefix(prefix)) => words.starts_with(&prefix),
        Ok(Pattern::Wildcard(pattern)) => {
            let text = words.join(" ");
            wildcard_match(&pattern, &text)
                || pattern
                    .strip_suffix(" *")
                    .is_some_and(|bare| wildcard_match(bare, &text))
        }
        Err(_) => false,
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any text.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let (pattern, text): (Vec<char>, Vec<char>) =
        (pattern.chars().collect(), text.chars().collect());
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match backtrack {
                Some((star, from)) => {
                    p = star + 1;
                    t = from + 1;
                    backtrack = Some((star, from + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        shlex::split(line).unwrap()
    }

    #[test]
    fn the_three_forms_match_as_in_claude_code() {
        assert!(matches("git status", &words("git status")));
        assert!(!matches("git status", &words("git status -s")));
        assert!(matches("git status:*", &words("git status -s")));
        assert!(matches("git status:*", &words("git status")));
        assert!(!matches("git status:*", &words("git statusx")));
        assert!(matches(
            "npm run * --silent",
            &words("npm run build --silent")
        ));
        assert!(!matches("npm run * --silent", &words("npm run build")));
        assert!(matches("ls *", &words("ls")));
        assert!(matches("ls *", &words("ls -la")));
        assert!(!matches("ls *", &words("lsof")));
        assert!(matches("ls*", &words("lsof")));
        assert!(matches(
            "git commit -m \"a b\":*",
            &words("git commit -m 'a b' --amend")
        ));
        assert!(matches("git *:*", &words("git log")));
    }

    #[test]
    fn the_suggested_pattern_matches_the_command_it_was_made_from() {
        for (line, expected) in [
            ("git status --short", "git status:*"),
            ("ls -la", "ls:*"),
            ("cat notes/todo.txt", "cat:*"),
            ("cargo test -p agentry", "cargo test:*"),
            ("> out.txt", "> out.txt"),
        ] {
            let suggested = suggest(&words(line)).unwrap();
            assert_eq!(suggested, expected);
            assert!(matches(&suggested, &words(line)), "{line}");
        }
    }

    #[test]
    fn patterns_that_can_never_match_say_why() {
        assert!(check("git status:*").is_ok());
        assert!(
            check("git status && rm:*")
                .unwrap_err()
                .contains("one simple command")
        );
        assert!(check("echo 'oops").unwrap_err().contains("quote"));
        assert!(check(":*").is_err());
    }
}
