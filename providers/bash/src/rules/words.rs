//! The value of a word of a command line, when it can be known before the command runs: quotes
//! removed, escapes decoded (`r\m`, `"rm"`, `'r'm` and `$'\x72m'` are all `rm`); and whether bash
//! would still expand it into other words (a glob, a brace expansion).

use tree_sitter::Node;

/// A word of a simple command: its value, or its text as written when its value is only known
/// when it runs (an expansion, a substitution).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The value, or the text as written.
    pub text: String,
    /// Whether `text` is the word's value.
    pub literal: bool,
    /// Whether an unquoted glob or brace character (`*?[]{}`) may make bash expand the word
    /// into other words (`/bin/r?`, `{rm,x}`).
    pub pattern: bool,
}

impl Word {
    /// A word whose value is `text`, as written without quotes.
    pub fn plain(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            literal: true,
            pattern: false,
        }
    }

    /// Whether the word is exactly its value: known before it runs, and not expanded further.
    pub fn is_exact(&self) -> bool {
        self.literal && !self.pattern
    }
}

/// The word `node` of `source`.
pub fn word(node: Node<'_>, source: &str) -> Word {
    let pattern = has_pattern(node, source);
    match value(node, source) {
        Some(text) => Word {
            text,
            literal: true,
            pattern,
        },
        None => Word {
            text: text_of(node, source).to_owned(),
            literal: false,
            pattern,
        },
    }
}

/// Whether an unquoted part of the word holds a glob or brace character bash would expand.
fn has_pattern(node: Node<'_>, source: &str) -> bool {
    match node.kind() {
        "word" => {
            let mut escaped = false;
            text_of(node, source).chars().any(|c| {
                let special = !escaped && matches!(c, '*' | '?' | '[' | ']' | '{' | '}');
                escaped = !escaped && c == '\\';
                special
            })
        }
        "command_name" | "concatenation" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .any(|child| has_pattern(child, source))
        }
        _ => false,
    }
}

/// Whether a backslash-newline joins two parts of one word (`r\⏎m`): bash removes it before
/// it reads words, the grammar splits the word there. One after a blank or an operator only
/// continues the line.
pub fn joins_a_word(script: &str) -> bool {
    let bytes = script.as_bytes();
    let mut from = 0;
    while let Some(offset) = script[from..].find("\\\n") {
        let backslash = from + offset;
        from = backslash + 2;
        let run = bytes[..=backslash]
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count();
        if run % 2 == 0 {
            // An escaped backslash, then a newline.
            continue;
        }
        // An escaped backslash before it is part of the word it continues.
        let before = backslash + 1 - run;
        let joins = run > 1
            || before
                .checked_sub(1)
                .and_then(|at| bytes.get(at))
                .is_some_and(|b| !b.is_ascii_whitespace() && !b";&|()<>".contains(b));
        if joins {
            return true;
        }
    }
    false
}

/// The text of `node` as written.
pub fn text_of<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// The value of a word, if it can be known without running anything.
fn value(node: Node<'_>, source: &str) -> Option<String> {
    let text = text_of(node, source);
    match node.kind() {
        "command_name" => {
            let mut cursor = node.walk();
            let mut children = node.named_children(&mut cursor);
            match (children.next(), children.next()) {
                (Some(only), None) => value(only, source),
                _ => None,
            }
        }
        "word" | "number" => Some(unescape_bare(text)),
        "raw_string" => text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_owned),
        "string" => {
            let mut cursor = node.walk();
            let plain = node
                .named_children(&mut cursor)
                .all(|child| child.kind() == "string_content");
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            plain.then(|| unescape_double_quoted(inner))
        }
        "ansi_c_string" => {
            let inner = text.strip_prefix("$'")?.strip_suffix('\'')?;
            unescape_ansi_c(inner)
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let parts: Option<Vec<String>> = node
                .named_children(&mut cursor)
                .map(|child| value(child, source))
                .collect();
            parts.map(|parts| parts.concat())
        }
        _ => None,
    }
}

/// An unquoted word: each backslash keeps the character after it; a backslash before a newline
/// joins the lines.
fn unescape_bare(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') | None => {}
            Some(next) => out.push(next),
        }
    }
    out
}

/// The inside of `"…"`: a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline.
fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.extend(chars.next());
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// The inside of `$'…'`, its escapes decoded as bash decodes them; `None` for an escape whose
/// value depends on the bash version or the locale, or ends the string early: a NUL (`\0`,
/// `\x00`, `\400`), a byte past ASCII, `\x{…}`, a code point bash drops.
fn unescape_ansi_c(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match escape {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(escape),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            continue;
        }
        let (radix, most) = match escape {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            'c' => {
                // Control characters: `\cA` is 0x01.
                let letter = chars.next().filter(char::is_ascii)?;
                let control = (letter as u8) & 0x1f;
                if control == 0 {
                    return None;
                }
                out.push(char::from(control));
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(escape);
        }
        while digits.len() < most {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        let decoded = u32::from_str_radix(&digits, radix)
            .ok()
            .filter(|value| (1..0x80).contains(value))
            .and_then(char::from_u32)?;
        out.push(decoded);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_continuation_inside_a_word_is_found() {
        assert!(joins_a_word("r\\\nm victim"));
        assert!(joins_a_word("echo a; /bin/r\\\nm x"));
        assert!(!joins_a_word("ls \\\n  -la"));
        assert!(!joins_a_word("make &&\\\n make install"));
        assert!(!joins_a_word("echo a\\\\\nb"));
        assert!(!joins_a_word("plain"));
    }

    #[test]
    fn escapes_decode_as_bash_decodes_them() {
        assert_eq!(unescape_bare(r"r\m"), "rm");
        assert_eq!(unescape_bare("\\rm"), "rm");
        assert_eq!(unescape_bare("a\\\nb"), "ab");
        assert_eq!(unescape_double_quoted(r#"a\"b\$c\d"#), r#"a"b$c\d"#);
        assert_eq!(unescape_ansi_c(r"\x72m").as_deref(), Some("rm"));
        assert_eq!(unescape_ansi_c(r"\162m").as_deref(), Some("rm"));
        assert_eq!(unescape_ansi_c(r"\u0072m").as_deref(), Some("rm"));
        assert_eq!(unescape_ansi_c(r"a\tb\'c").as_deref(), Some("a\tb'c"));
        assert_eq!(unescape_ansi_c(r"\q").as_deref(), Some(r"\q"));
        assert_eq!(unescape_ansi_c(r"\0101").as_deref(), Some("\x081"));
        assert_eq!(unescape_ansi_c(r"\101").as_deref(), Some("A"));
        assert_eq!(unescape_ansi_c(r"\101").as_deref(), Some("A"));
        // Decoded differently by bash versions and locales, or cut short: not known.
        for unknown in [
            r"\x{72}m",
            r"rm\400",
            r"rm\x{100}",
            r"r\UFFFFFFFFm",
            r"r\x{}m",
            r"r\xgm",
            r"rm\0",
            r"rm\x00",
            r"r\c@m",
            r"\u00e9",
            r"\xff",
        ] {
            assert_eq!(unescape_ansi_c(unknown), None, "{unknown}");
        }
    }
}
