//! Where Edit's `old_string` stands in a file, forgiving what models cannot see: a file with
//! CRLF line endings (Read shows its lines without `\r`) is matched and written back in CRLF,
//! and when the exact text is not there, text that differs only in curly vs straight quotes is
//! taken instead (and the result says so).

/// How a file ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEndings {
    /// `\n` (or a mix, which is kept byte for byte).
    Lf,
    /// `\r\n` on every line.
    Crlf,
}

impl LineEndings {
    /// The file's line endings: CRLF only when every line break is `\r\n`.
    pub fn of(text: &str) -> Self {
        let breaks = text.matches('\n').count();
        if breaks > 0 && text.matches("\r\n").count() == breaks {
            LineEndings::Crlf
        } else {
            LineEndings::Lf
        }
    }

    /// `text` with the model's line breaks: `\n`.
    pub fn to_model(self, text: &str) -> String {
        match self {
            LineEndings::Lf => text.to_owned(),
            LineEndings::Crlf => text.replace("\r\n", "\n"),
        }
    }

    /// `text` (with `\n` breaks, or with `\r\n` pasted in) in the file's line endings.
    pub fn to_file(self, text: &str) -> String {
        match self {
            LineEndings::Lf => text.to_owned(),
            LineEndings::Crlf => text.replace("\r\n", "\n").replace('\n', "\r\n"),
        }
    }
}

/// The occurrences of a needle in a text, as byte ranges of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where each occurrence starts and ends, in order.
    pub ranges: Vec<(usize, usize)>,
    /// Whether they were found only by taking curly and straight quotes as the same.
    pub quotes_differ: bool,
}

/// The occurrences of `needle` in `text`: exact ones, else ones that differ only in quotes.
pub fn find(text: &str, needle: &str) -> Found {
    let exact: Vec<(usize, usize)> = text
        .match_indices(needle)
        .map(|(at, part)| (at, at + part.len()))
        .collect();
    if !exact.is_empty() {
        return Found {
            ranges: exact,
            quotes_differ: false,
        };
    }
    let (plain_text, offsets) = straighten_with_offsets(text);
    let plain_needle = straighten(needle);
    let ranges = plain_text
        .match_indices(plain_needle.as_str())
        .map(|(at, part)| (offsets[at], offsets[at + part.len()]))
        .collect();
    Found {
        ranges,
        quotes_differ: true,
    }
}

/// `text` with its occurrences at `ranges` replaced by `replacement`.
pub fn replace_ranges(text: &str, ranges: &[(usize, usize)], replacement: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for &(start, end) in ranges {
        out.push_str(&text[from..start]);
        out.push_str(replacement);
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

/// The straight form of a curly quote.
fn straight(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        other => other,
    }
}

fn straighten(text: &str) -> String {
    text.chars().map(straight).collect()
}

/// `text` with straight quotes, and for each byte of it (and one past the end) the byte of
/// `text` it came from.
fn straighten_with_offsets(text: &str) -> (String, Vec<usize>) {
    let mut plain = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len() + 1);
    for (at, c) in text.char_indices() {
        let s = straight(c);
        offsets.extend(std::iter::repeat_n(at, s.len_utf8()));
        plain.push(s);
    }
    offsets.push(text.len());
    (plain, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_only_when_every_break_is_crlf() {
        assert_eq!(LineEndings::of("a\r\nb\r\n"), LineEndings::Crlf);
        assert_eq!(LineEndings::of("a\nb\r\n"), LineEndings::Lf);
        assert_eq!(LineEndings::of("one line"), LineEndings::Lf);
        let crlf = LineEndings::Crlf;
        assert_eq!(crlf.to_model("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(crlf.to_file("x\ny\r\nz"), "x\r\ny\r\nz");
        assert_eq!(LineEndings::Lf.to_file("x\ny"), "x\ny");
    }

    #[test]
    fn exact_matches_come_first_and_quotes_are_forgiven_only_without_one() {
        let exact = find("say 'hi' and 'hi'", "'hi'");
        assert_eq!(exact.ranges, [(4, 8), (13, 17)]);
        assert!(!exact.quotes_differ);
        let text = "let s = \u{201C}caf\u{E9}\u{201D}; // it\u{2019}s";
        let curly = find(text, "\"caf\u{E9}\"");
        assert!(curly.quotes_differ);
        assert_eq!(curly.ranges.len(), 1);
        let (start, end) = curly.ranges[0];
        assert_eq!(&text[start..end], "\u{201C}caf\u{E9}\u{201D}");
        assert_eq!(
            replace_ranges(text, &curly.ranges, "\"tea\""),
            "let s = \"tea\"; // it\u{2019}s"
        );
        assert!(find(text, "nowhere").ranges.is_empty());
    }
}
