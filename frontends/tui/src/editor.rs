//! The input: a multi-line text with a cursor, the usual editing keys (readline's among them),
//! and soft wrapping to the terminal's width. Enter is the caller's to interpret; Alt-Enter,
//! Ctrl-J or a `\` before Enter add a line.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// What a key did to the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The text or the cursor changed.
    Changed,
    /// Enter: the caller decides (send, complete, …).
    Enter,
    /// Up on the first row: the caller may go back in history.
    UpFromTop,
    /// Down on the last row: the caller may go forward in history.
    DownFromBottom,
    /// The key means nothing to the input.
    Ignored,
}

/// The text being typed.
#[derive(Debug, Clone, Default)]
pub struct Editor {
    text: String,
    /// A byte offset into `text`, on a character boundary.
    cursor: usize,
}

impl Editor {
    /// An empty input.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text before the cursor.
    pub fn before_cursor(&self) -> &str {
        &self.text[..self.cursor]
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text, the cursor at its end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    /// Empties the input and returns what it held.
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Replaces the bytes `start..cursor` with `replacement` (a completion).
    pub fn replace_before_cursor(&mut self, start: usize, replacement: &str) {
        let start = start.min(self.cursor);
        self.text.replace_range(start..self.cursor, replacement);
        self.cursor = start + replacement.len();
    }

    /// Inserts text at the cursor (typed or pasted; a paste's `\r\n` become `\n`).
    pub fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
    }

    /// Applies a key.
    pub fn key(&mut self, key: KeyEvent) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.insert("\n")
            }
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter if self.before_cursor().ends_with('\\') => {
                self.text.remove(self.cursor - 1);
                self.cursor -= 1;
                self.insert("\n");
            }
            KeyCode::Enter => return Edit::Enter,
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('b') if ctrl => self.left(),
            KeyCode::Char('f') if ctrl => self.right(),
            KeyCode::Char('k') if ctrl => {
                let end = self
                    .line_end()
                    .max(self.cursor + usize::from(self.at_line_end()));
                self.text
                    .replace_range(self.cursor..end.min(self.text.len()), "");
            }
            KeyCode::Char('u') if ctrl => {
                let start = self.line_start();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            KeyCode::Char('w') if ctrl => self.delete_word_back(),
            KeyCode::Backspace if alt || ctrl => self.delete_word_back(),
            KeyCode::Char(c) if !ctrl => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace => {
                if let Some(c) = self.before_cursor().chars().next_back() {
                    self.cursor -= c.len_utf8();
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Delete => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Left if ctrl || alt => self.word_left(),
            KeyCode::Right if ctrl || alt => self.word_right(),
            KeyCode::Left => self.left(),
            KeyCode::Right => self.right(),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up => {
                if !self.vertical(-1) {
                    return Edit::UpFromTop;
                }
            }
            KeyCode::Down => {
                if !self.vertical(1) {
                    return Edit::DownFromBottom;
                }
            }
            _ => return Edit::Ignored,
        }
        Edit::Changed
    }

    /// The input drawn `width` columns wide after `prompt` (continuation rows are indented as
    /// far), and where the cursor is in those lines.
    pub fn lines(&self, prompt: Span<'static>, width: u16) -> (Vec<Line<'static>>, (usize, usize)) {
        let indent = prompt.width();
        let room = usize::from(width).saturating_sub(indent + 1).max(1);
        let mut lines = Vec::new();
        let mut cursor = (0, indent);
        let mut row_text = String::new();
        let mut row_width = 0;
        let mut offset = 0;
        let push_row = |lines: &mut Vec<Line<'static>>, text: &mut String| {
            let lead = if lines.is_empty() {
                prompt.clone()
            } else {
                Span::raw(" ".repeat(indent))
            };
            lines.push(Line::from(vec![lead, Span::raw(std::mem::take(text))]));
        };
        for c in self.text.chars() {
            if offset == self.cursor {
                cursor = (lines.len(), indent + row_width);
            }
            if c == '\n' {
                push_row(&mut lines, &mut row_text);
                row_width = 0;
            } else {
                let w = c.width().unwrap_or(0);
                if row_width + w > room {
                    push_row(&mut lines, &mut row_text);
                    row_width = 0;
                    if offset == self.cursor {
                        cursor = (lines.len(), indent);
                    }
                }
                row_text.push(c);
                row_width += w;
            }
            offset += c.len_utf8();
        }
        if offset == self.cursor {
            cursor = (lines.len(), indent + row_width);
        }
        push_row(&mut lines, &mut row_text);
        (lines, cursor)
    }

    fn at_line_end(&self) -> bool {
        self.text[self.cursor..].starts_with('\n')
    }

    fn line_start(&self) -> usize {
        self.before_cursor().rfind('\n').map_or(0, |at| at + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |at| self.cursor + at)
    }

    fn left(&mut self) {
        if let Some(c) = self.before_cursor().chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn word_left(&mut self) {
        let before = self.before_cursor().trim_end();
        self.cursor = before.rfind(char::is_whitespace).map_or(0, |at| at + 1);
    }

    fn word_right(&mut self) {
        let rest = &self.text[self.cursor..];
        let skipped = rest.len() - rest.trim_start().len();
        let word = rest
            .trim_start()
            .find(char::is_whitespace)
            .unwrap_or(rest.trim_start().len());
        self.cursor += skipped + word;
    }

    fn delete_word_back(&mut self) {
        let end = self.cursor;
        self.word_left();
        self.text.replace_range(self.cursor..end, "");
    }

    /// Moves a line up (-1) or down (1), keeping the column; false when there is none.
    fn vertical(&mut self, direction: i32) -> bool {
        let start = self.line_start();
        let column = self.text[start..self.cursor].chars().count();
        let target_start = if direction < 0 {
            if start == 0 {
                return false;
            }
            self.text[..start - 1].rfind('\n').map_or(0, |at| at + 1)
        } else {
            match self.text[self.cursor..].find('\n') {
                Some(at) => self.cursor + at + 1,
                None => return false,
            }
        };
        let line = self.text[target_start..]
            .split('\n')
            .next()
            .unwrap_or_default();
        let offset: usize = line.chars().take(column).map(char::len_utf8).sum();
        self.cursor = target_start + offset;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn typed(editor: &mut Editor, text: &str) {
        for c in text.chars() {
            editor.key(key(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    #[test]
    fn typing_editing_and_new_lines() {
        let mut editor = Editor::new();
        typed(&mut editor, "hello wörld");
        editor.key(key(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(editor.text(), "hello ");
        typed(&mut editor, "there\\");
        assert_eq!(
            editor.key(key(KeyCode::Enter, KeyModifiers::NONE)),
            Edit::Changed
        );
        typed(&mut editor, "second");
        editor.key(key(KeyCode::Enter, KeyModifiers::ALT));
        typed(&mut editor, "third");
        assert_eq!(editor.text(), "hello there\nsecond\nthird");
        assert_eq!(
            editor.key(key(KeyCode::Enter, KeyModifiers::NONE)),
            Edit::Enter
        );
        // Up moves between lines, keeping the column, and then leaves the top to the caller.
        editor.key(key(KeyCode::Up, KeyModifiers::NONE));
        editor.key(key(KeyCode::Char('a'), KeyModifiers::CONTROL));
        editor.key(key(KeyCode::Char('k'), KeyModifiers::CONTROL));
        assert_eq!(editor.text(), "hello there\n\nthird");
        editor.key(key(KeyCode::Up, KeyModifiers::NONE));
        assert_eq!(
            editor.key(key(KeyCode::Up, KeyModifiers::NONE)),
            Edit::UpFromTop
        );
        editor.insert("pasted\r\ntext ");
        assert_eq!(editor.text(), "pasted\ntext hello there\n\nthird");
    }

    #[test]
    fn long_input_wraps_and_the_cursor_follows() {
        let mut editor = Editor::new();
        typed(&mut editor, "abcdefghij");
        let (lines, cursor) = editor.lines(Span::raw("> "), 8);
        let rows: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(rows, ["> abcde", "  fghij"]);
        assert_eq!(cursor, (1, 7));
        editor.key(key(KeyCode::Home, KeyModifiers::NONE));
        assert_eq!(editor.lines(Span::raw("> "), 8).1, (0, 2));
    }
}
