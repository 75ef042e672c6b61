//! Which expansions can run code. `$name` and `${name}` only read a value; but a value read as
//! arithmetic (`$((x))`, `${a[i]}`, `${s:i}`) is evaluated, and an array subscript in it runs
//! any `$( )` it holds; `${x@P}` expands the value as a prompt, which runs substitutions; and a
//! default or pattern (`${x:-…}`) is expanded in turn. These checks read the text as written, so
//! that they hold wherever the grammar puts the expansion.

use crate::rules::variables::is_local_name;

/// Whether the braced parameter expansion `text` (`${…}`, whole) runs nothing and assigns only
/// a variable of the command line's own.
pub fn braced_expansion_is_safe(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) else {
        return false;
    };
    // `${!x}` reads the variable x names, subscript and all.
    if inner.starts_with('!') {
        return false;
    }
    if inner == "#" {
        return true;
    }
    let (length, inner) = match inner.strip_prefix('#') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let Some((name, rest)) = parameter(inner) else {
        return false;
    };
    let Some(rest) = subscript(rest) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    if length {
        return false;
    }
    operation_is_safe(name, rest)
}

/// The parameter a braced expansion starts with, and what follows it.
fn parameter(text: &str) -> Option<(&str, &str)> {
    let first = text.chars().next()?;
    let end = if first.is_ascii_alphabetic() || first == '_' {
        text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len())
    } else if first.is_ascii_digit() {
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len())
    } else if matches!(first, '@' | '*' | '#' | '?' | '-' | '$' | '!') {
        1
    } else {
        return None;
    };
    Some(text.split_at(end))
}

/// What follows an array subscript made of digits (or `@`, `*`), if there is one; `None` when
/// the subscript is anything else (it would be evaluated as arithmetic).
fn subscript(text: &str) -> Option<&str> {
    let Some(rest) = text.strip_prefix('[') else {
        return Some(text);
    };
    let (index, rest) = rest.split_once(']')?;
    let index = index.trim();
    let literal = matches!(index, "@" | "*")
        || (!index.is_empty()
            && index
                .strip_prefix('-')
                .unwrap_or(index)
                .chars()
                .all(|c| c.is_ascii_digit()));
    literal.then_some(rest)
}

/// Whether the operation after a parameter (`:-word`, `#pattern`, `@Q`, `:1:2`) runs nothing.
fn operation_is_safe(name: &str, operation: &str) -> bool {
    // Case changes and quoting; `@P` expands the value as a prompt, which runs `$( )`.
    if let Some(operator) = operation.strip_prefix('@') {
        return matches!(
            operator,
            "Q" | "E" | "U" | "u" | "L" | "a" | "K" | "k" | "A"
        );
    }
    const WORD_OPERATORS: [&str; 20] = [
        ":-", ":+", ":?", ":=", "-", "+", "?", "=", "##", "#", "%%", "%", "//", "/#", "/%", "/",
        "^^", "^", ",,", ",",
    ];
    if let Some(operator) = WORD_OPERATORS
        .iter()
        .find(|operator| operation.starts_with(**operator))
    {
        let word = &operation[operator.len()..];
        let assigns = operator.ends_with('=');
        // The word is expanded in turn: it may hold nothing that expands.
        return !word.contains(['$', '`']) && (!assigns || is_local_name(name));
    }
    // `${s:offset:length}`: both are arithmetic.
    if let Some(range) = operation.strip_prefix(':') {
        return range.split(':').all(is_literal_arithmetic);
    }
    false
}

/// Whether an arithmetic expression is made of numbers and operators only: a name in it is
/// evaluated as arithmetic in turn, and a subscript of its value runs its `$( )`.
pub fn is_literal_arithmetic(expression: &str) -> bool {
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0'..='9' => {
                // A number: decimal, `0x1f`, or `base#digits` (`16#ff`, `36#zz`).
                while let Some(&next) = chars.peek() {
                    if next.is_ascii_alphanumeric() || matches!(next, '#' | '@' | '_') {
                        chars.next();
                    } else {
                        break;
                    }
                }
            }
            ' ' | '\t' | '\n' | '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' | '&' | '|'
            | '^' | '~' | '?' | ':' | ',' | '(' | ')' => {}
            _ => return false,
        }
    }
    true
}

/// The expression of an arithmetic expansion or command as written (`$((…))`, `$[…]`,
/// `((…))`), if `text` is one.
pub fn arithmetic_expression(text: &str) -> Option<&str> {
    text.strip_prefix("$((")
        .and_then(|t| t.strip_suffix("))"))
        .or_else(|| text.strip_prefix("((").and_then(|t| t.strip_suffix("))")))
        .or_else(|| text.strip_prefix("$[").and_then(|t| t.strip_suffix(']')))
}

/// Why the body of an unquoted here-document may run something no rule sees, if it may: it is
/// expanded like a double-quoted word, and the grammar does not read every expansion in it
/// (backquotes, arithmetic, and `$( )` in some bodies). `read` holds the offsets in `body` of the
/// substitutions the grammar did read.
pub fn unseen_in_here_document(body: &str, read: &[usize]) -> Option<String> {
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '`' => return Some("a here-document's body runs a backquoted command".to_owned()),
            '$' => match chars.peek().map(|&(_, next)| next) {
                Some('[') => return Some("a here-document's body holds arithmetic".to_owned()),
                Some('(') if body[at..].starts_with("$((") => {
                    return Some("a here-document's body holds arithmetic".to_owned());
                }
                Some('(') if read.binary_search(&at).is_err() => {
                    return Some(
                        "a here-document's body runs a command the grammar does not read"
                            .to_owned(),
                    );
                }
                Some('{') => {
                    let text = braced_at(&body[at..]);
                    if !braced_expansion_is_safe(text) {
                        return Some(format!(
                            "a here-document's body holds the expansion `{text}`, which may run code"
                        ));
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    None
}

/// The braced expansion `${…}` at the start of `text`, up to its matching brace (or all of the
/// text when it has none).
fn braced_at(text: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &text[..=at];
                }
            }
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_that_only_read_a_value_are_safe() {
        for safe in [
            "${x}",
            "${#x}",
            "${#}",
            "${1}",
            "${@}",
            "${a[0]}",
            "${a[@]}",
            "${#a[*]}",
            "${x:-default}",
            "${x-}",
            "${x:+set}",
            "${x#*/}",
            "${x%%.txt}",
            "${x//a/b}",
            "${x^^}",
            "${x@Q}",
            "${x:1:2}",
            "${x: -1}",
            "${x:=default}",
        ] {
            assert!(braced_expansion_is_safe(safe), "{safe}");
        }
    }

    #[test]
    fn expansions_that_run_or_evaluate_are_not() {
        for unsafe_ in [
            "${x@P}",
            "${!x}",
            "${a[i]}",
            "${a[$(rm x)]}",
            "${x:-$(rm x)}",
            "${x:-`rm x`}",
            "${x:=$(rm x)}",
            "${x/a/$(rm x)}",
            "${x:i}",
            "${x:0:n}",
            "${PATH:=/tmp}",
            "${#x:-a}",
            "${x",
        ] {
            assert!(!braced_expansion_is_safe(unsafe_), "{unsafe_}");
        }
    }

    #[test]
    fn arithmetic_is_literal_only_without_names() {
        for literal in ["1 + 2", "16#ff * 0x1F", "(1<<3) % 5", "-1", "1 ? 2 : 3"] {
            assert!(is_literal_arithmetic(literal), "{literal}");
        }
        for evaluated in ["x", "x + 1", "a[$(rm x)]", "$x", "`rm x`", "'1'"] {
            assert!(!is_literal_arithmetic(evaluated), "{evaluated}");
        }
        assert_eq!(arithmetic_expression("$((1+2))"), Some("1+2"));
        assert_eq!(arithmetic_expression("$[x]"), Some("x"));
        assert_eq!(arithmetic_expression("(( x ))"), Some(" x "));
    }

    #[test]
    fn here_document_bodies_hide_what_the_grammar_skips() {
        assert_eq!(
            unseen_in_here_document("plain $HOME ${x} $(date)\n", &[17]),
            None
        );
        assert!(unseen_in_here_document("plain $(date)\n", &[]).is_some());
        assert_eq!(
            unseen_in_here_document("price: \\`1\\`, \\$((2)) \\$(x)\n", &[]),
            None
        );
        for hidden in [
            "`rm -f victim`\n",
            "$((x))\n",
            "$[x]\n",
            "${x@P}\n",
            "${x:-`rm -f victim`}\n",
        ] {
            assert!(unseen_in_here_document(hidden, &[]).is_some(), "{hidden}");
        }
    }
}
