//! Text and terminals. Terminal output as plain text, for a model to read: escape sequences
//! (colours, cursor movement, titles) dropped; tabs and line feeds kept; carriage returns and
//! other control characters dropped, so `\r\n` reads as `\n`, built on `vte`, the terminal
//! parser. And text from a model, a tool, a file or a server as a terminal may show it
//! ([`visible`]): its control characters shown, not obeyed.

/// A cleaner fed one chunk at a time: an escape sequence or a UTF-8 character split between
/// chunks is read whole.
#[derive(Default)]
pub struct TerminalText {
    parser: vte::Parser,
}

impl std::fmt::Debug for TerminalText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TerminalText")
    }
}

impl TerminalText {
    /// The plain text of the next chunk.
    pub fn clean(&mut self, bytes: &[u8]) -> String {
        let mut text = Printed(String::with_capacity(bytes.len()));
        self.parser.advance(&mut text, bytes);
        text.0
    }
}

/// What a terminal would print.
struct Printed(String);

impl vte::Perform for Printed {
    fn print(&mut self, c: char) {
        self.0.push(c);
    }

    fn execute(&mut self, byte: u8) {
        if byte == b'\n' || byte == b'\t' {
            self.0.push(char::from(byte));
        }
    }
}

/// The plain text of a whole piece of terminal output.
pub fn plain_text(bytes: impl AsRef<[u8]>) -> String {
    TerminalText::default().clean(bytes.as_ref())
}

/// `text` as it may be shown in a terminal when it came from a model, a tool, a file or a
/// server: every control character that could move the cursor, erase, retitle the window or
/// write the clipboard (C0 controls, DEL, C1 controls and the escape that starts them) is shown
/// as text instead (`␛[2K`, `^M`, `<U+009B>`), so that what the user reads is all there is.
/// Line feeds and tabs stay.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_showing) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{1b}' => shown.push('␛'),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                shown.push('^');
                shown.push(char::from(((c as u8) ^ 0x40) & 0x7f));
            }
            c if needs_showing(c) => shown.push_str(&format!("<U+{:04X}>", c as u32)),
            c => shown.push(c),
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// Whether `c` does something in a terminal other than print: a control character other than
/// a line feed or a tab, or a character that reorders or hides what follows it (bidirectional
/// overrides and isolates).
fn needs_showing(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        c if (c as u32) < 0x20 || c == '\u{7f}' => true,
        '\u{80}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let forged = "rm -f victim \u{1b}[2K\r\u{1b}[1Aecho hello # \u{1b}]52;c;aGk=\u{7}";
        let shown = visible(forged);
        assert_eq!(shown, "rm -f victim ␛[2K^M␛[1Aecho hello # ␛]52;c;aGk=^G");
        assert!(!shown.chars().any(|c| c.is_control()));
        assert_eq!(visible("a\tb\nc"), "a\tb\nc");
        assert_eq!(visible("csi \u{9b}2J del \u{7f}"), "csi <U+009B>2J del ^?");
        assert_eq!(visible("abc\u{202e}txt.exe"), "abc<U+202E>txt.exe");
        assert!(matches!(visible("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn colours_and_carriage_returns_go_and_tabs_stay() {
        assert_eq!(
            plain_text("\x1b[31mred\x1b[0m line\r\nnext\tcolumn\r\n\x1b]0;title\x07"),
            "red line\nnext\tcolumn\n"
        );
    }

    #[test]
    fn escapes_and_characters_split_between_chunks_are_cleaned_whole() {
        let mut cleaner = TerminalText::default();
        let mut text = cleaner.clean(b"a\x1b[3");
        text += &cleaner.clean(b"1mb \xc3");
        text += &cleaner.clean(b"\xa9\r\n");
        assert_eq!(text, "ab \u{e9}\n");
    }
}
