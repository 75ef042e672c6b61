//! The small languages of `sed` and `awk`, read far enough to tell whether a program given on
//! the command line can run a command or write a file: GNU sed's `e` command and `s///e` flag
//! run one, its `w` writes a file; awk's `system()`, pipes and `print >` do the same. A
//! program is understood only when it is read to its end and holds none of those.

/// Whether the sed script `script` neither runs a command nor writes a file.
pub fn sed_script_is_safe(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    loop {
        while chars
            .get(at)
            .is_some_and(|c| c.is_whitespace() || *c == ';')
        {
            at += 1;
        }
        let Some(after_address) = skip_address(&chars, at) else {
            return false;
        };
        at = after_address;
        while chars
            .get(at)
            .is_some_and(|c| c.is_whitespace() || *c == '!')
        {
            at += 1;
        }
        let Some(&command) = chars.get(at) else {
            return true;
        };
        at += 1;
        match command {
            '{' | '}' | 'd' | 'D' | 'p' | 'P' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '='
            | 'z' | 'F' => {}
            'q' | 'Q' | 'l' | 'L' => {
                while chars
                    .get(at)
                    .is_some_and(|c| c.is_ascii_digit() || *c == ' ')
                {
                    at += 1;
                }
            }
            // A comment, text to add, or a file to read: the rest of the line.
            '#' | 'a' | 'i' | 'c' | 'r' | 'R' => at = end_of_text(&chars, at),
            // A label or a version: up to the next command.
            ':' | 'b' | 't' | 'T' | 'v' => {
                while chars
                    .get(at)
                    .is_some_and(|c| !matches!(c, ';' | '\n' | '}'))
                {
                    at += 1;
                }
            }
            's' => {
                let Some(after) = skip_delimited(&chars, at, 2) else {
                    return false;
                };
                at = after;
                while let Some(&flag) = chars.get(at) {
                    match flag {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => at += 1,
                        // `e` runs the pattern space, `w` writes a file.
                        'e' | 'w' => return false,
                        _ => break,
                    }
                }
            }
            'y' => match skip_delimited(&chars, at, 2) {
                Some(after) => at = after,
                None => return false,
            },
            // `e` runs a command; `w` and `W` write files; anything else is not read.
            _ => return false,
        }
    }
}

/// Skips an address (`3`, `$`, `/re/I`, `\%re%`, `1,5`, `0~2`, `addr,+3`), if there is one.
fn skip_address(chars: &[char], mut at: usize) -> Option<usize> {
    loop {
        match chars.get(at) {
            Some(c) if c.is_ascii_digit() || matches!(c, '$' | '~' | '+' | ',') => at += 1,
            Some('/') => {
                at = skip_delimited(chars, at, 1)?;
                while chars.get(at).is_some_and(|c| matches!(c, 'I' | 'M')) {
                    at += 1;
                }
            }
            Some('\\') => {
                at = skip_delimited(chars, at + 1, 1)?;
                while chars.get(at).is_some_and(|c| matches!(c, 'I' | 'M')) {
                    at += 1;
                }
            }
            _ => return Some(at),
        }
    }
}

/// Skips `parts` parts after the delimiter at `at` (`/re/` is one, `/re/replacement/` two),
/// returning the index after the last delimiter.
fn skip_delimited(chars: &[char], at: usize, parts: usize) -> Option<usize> {
    let delimiter = *chars.get(at)?;
    if delimiter == '\n' || delimiter == '\\' {
        return None;
    }
    let mut at = at + 1;
    let mut left = parts;
    while left > 0 {
        match chars.get(at)? {
            '\\' => at += 2,
            c if *c == delimiter => {
                left -= 1;
                at += 1;
            }
            _ => at += 1,
        }
    }
    Some(at)
}

/// The end of a command's text argument: the end of the line, where a backslash-newline goes
/// on to the next.
fn end_of_text(chars: &[char], mut at: usize) -> usize {
    while let Some(c) = chars.get(at) {
        match c {
            '\\' => at += 2,
            '\n' => return at,
            _ => at += 1,
        }
    }
    at
}

/// Whether the awk program `program` neither runs a command nor writes a file: no `system`,
/// no pipe (`|`, `|&`), no output redirection (`>`, `>>`; `>=` is a comparison) and no gawk
/// directive or indirect call (`@load`, `@f()`).
pub fn awk_program_is_safe(program: &str) -> bool {
    if program.contains("system") || program.contains('|') || program.contains('@') {
        return false;
    }
    let mut chars = program.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '>' && chars.peek() != Some(&'=') {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_edit_text_are_safe() {
        for safe in [
            "s/a/b/",
            "s/a/b/g",
            "s|/usr|/opt|2p",
            "1d",
            "$d",
            "/^#/d",
            "2,5p",
            "1~3{p;n}",
            "/start/,/end/s/x/y/gI",
            ":a;N;$!ba;s/\\n/ /g",
            "1i\\\nheader",
            "s/e/w/",
            "y/abc/xyz/",
            "\\%x%d",
            "r notes.txt",
        ] {
            assert!(sed_script_is_safe(safe), "{safe}");
        }
    }

    #[test]
    fn sed_scripts_that_run_or_write_are_not() {
        for unsafe_ in [
            "e rm -f victim",
            "1e rm -f victim",
            "s/x/rm -f victim/e",
            "s/x/y/w out.txt",
            "w out.txt",
            "W out.txt",
            "s/a/b",
            "s/x/y/ge",
            "p;e date",
            ":a;e rm -f victim",
            "k",
        ] {
            assert!(!sed_script_is_safe(unsafe_), "{unsafe_}");
        }
    }

    #[test]
    fn awk_programs_that_only_print_are_safe() {
        assert!(awk_program_is_safe("{ print $1 }"));
        assert!(awk_program_is_safe("$3 >= 100 { n++ } END { print n }"));
        for unsafe_ in [
            "BEGIN { system(\"rm -f victim\") }",
            "{ print | \"sh\" }",
            "BEGIN { \"date\" | getline d }",
            "{ print > \"out.txt\" }",
            "@load \"filefuncs\"",
            "BEGIN { f = \"system\"; @f(\"x\") }",
            "$3 > 100",
        ] {
            assert!(!awk_program_is_safe(unsafe_), "{unsafe_}");
        }
    }
}
