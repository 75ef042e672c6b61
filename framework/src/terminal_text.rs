//! Terminal output as plain text, for a model to read: escape sequences (colours, cursor
//! movement, titles) dropped; tabs and line feeds kept; carriage returns and other control
//! characters dropped, so `\r\n` reads as `\n`. Built on `vte`, the terminal parser.

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

#[cfg(test)]
mod tests {
    use super::*;

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
