//! The inline screen: finished lines go into the terminal's own scrollback, and below them a
//! live area (the streaming answer, running tools, the status line, the input) is redrawn in
//! place each frame. Nothing uses the alternate screen, so after exit the whole conversation
//! stays in the terminal to scroll and copy.
//!
//! Each frame moves the cursor back to the live area's first row (relative moves only, so it
//! works wherever the prompt started), erases the old live area, prints the lines to keep, then
//! the live area, inside one synchronized update (no flicker where the terminal supports it).
//! The erase never starts at the live area's first row: when that row is the screen's top one,
//! "erase to the end of the screen" from the top-left corner is what tmux (`scroll-on-clear`)
//! and some terminals take for clearing the screen, and they push it into the scrollback.

use crate::wrap::wrap_spans;
use crossterm::cursor::{MoveDown, MoveToColumn, MoveUp};
use crossterm::style::{
    Attribute, Print, ResetColor, SetAttribute, SetBackgroundColor, SetForegroundColor,
};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use crossterm::{QueueableCommand, queue};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use std::io::{self, Write};

/// Where the cursor goes in the live area: a row of it and a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CursorAt {
    /// The row, from the live area's first.
    pub row: usize,
    /// The column.
    pub column: usize,
}

/// The terminal seen as scrollback plus a live area at its bottom.
pub struct Screen<W: Write> {
    out: W,
    width: u16,
    height: u16,
    /// The rows the live area took when last drawn, each line's width (to know how the
    /// terminal reflows them when it is resized, however many times before the next frame).
    drawn: Vec<usize>,
    /// The row of the live area, as last drawn, the cursor was left on.
    cursor_line: usize,
}

impl<W: Write> Screen<W> {
    /// A screen writing to `out`, `width` × `height` cells.
    pub fn new(out: W, width: u16, height: u16) -> Self {
        Self {
            out,
            width: width.max(1),
            height: height.max(2),
            drawn: Vec::new(),
            cursor_line: 0,
        }
    }

    /// The width lines are laid out at.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// The size lines are laid out for: columns and rows.
    pub fn size(&self) -> (u16, u16) {
        (self.width, self.height)
    }

    /// The most rows the live area may take (the rest of the screen shows the scrollback).
    pub fn live_rows(&self) -> usize {
        usize::from(self.height).saturating_sub(1).max(1)
    }

    /// The terminal changed size. A terminal that reflows long rows has moved the live area's
    /// rows: the next frame starts as many rows up as the last drawn live area now takes above
    /// the cursor, and erases as many as it takes in all. Only the last size counts, so several
    /// resizes before a frame (a terminal dragged, or events read late) land where the terminal
    /// did.
    pub fn resize(&mut self, width: u16, height: u16) {
        self.width = width.max(1);
        self.height = height.max(2);
    }

    /// The rows the lines of the last frame take on the terminal at its present width.
    fn rows_of(&self, lines: &[usize]) -> usize {
        lines.iter().map(|&w| rows_taken(w, self.width)).sum()
    }

    /// The rows of the live area above the cursor's, as the terminal shows them now.
    fn cursor_row(&self) -> usize {
        self.rows_of(&self.drawn[..self.cursor_line.min(self.drawn.len())])
    }

    /// The rows the live area takes on the terminal now (more than were drawn after a resize
    /// that reflowed them).
    fn rows(&self) -> usize {
        self.rows_of(&self.drawn).max(self.cursor_row() + 1)
    }

    /// Draws a frame: `keep` goes into the scrollback for good, `live` below it (its first
    /// rows dropped when it is taller than the screen allows), the cursor at `cursor` (hidden
    /// when `None`).
    pub fn draw(
        &mut self,
        keep: &[Line<'static>],
        live: &[Line<'static>],
        cursor: Option<CursorAt>,
        color: bool,
    ) -> io::Result<()> {
        let width = usize::from(self.width);
        let live = fit(live, width);
        let skip = live.len().saturating_sub(self.live_rows());
        let live = &live[skip..];
        let cursor = cursor.and_then(|at| {
            let row = at.row.checked_sub(skip)?;
            Some(CursorAt {
                row,
                column: at.column.min(width.saturating_sub(1)),
            })
        });
        self.out.queue(BeginSynchronizedUpdate)?;
        self.out.queue(crossterm::cursor::Hide)?;
        self.rewind()?;
        for line in fit(keep, width) {
            write_line(&mut self.out, &line, color)?;
            queue!(self.out, Print("\r\n"))?;
        }
        for (index, line) in live.iter().enumerate() {
            write_line(&mut self.out, line, color)?;
            if index + 1 < live.len() {
                queue!(self.out, Print("\r\n"))?;
            }
        }
        self.drawn = live.iter().map(|line| line.width()).collect();
        let last_row = live.len().saturating_sub(1);
        match cursor {
            Some(at) => {
                let up = last_row.saturating_sub(at.row);
                if up > 0 {
                    self.out.queue(MoveUp(up as u16))?;
                }
                self.out.queue(MoveToColumn(at.column as u16))?;
                self.out.queue(crossterm::cursor::Show)?;
                self.cursor_line = at.row.min(last_row);
            }
            None => self.cursor_line = last_row,
        }
        self.out.queue(EndSynchronizedUpdate)?;
        self.out.flush()
    }

    /// Clears the live area, leaving the cursor at the start of its first row, where the shell's
    /// prompt comes back after exit.
    pub fn clear_live(&mut self) -> io::Result<()> {
        self.rewind()?;
        self.drawn.clear();
        self.cursor_line = 0;
        self.out.queue(crossterm::cursor::Show)?;
        self.out.flush()
    }

    /// Moves to the live area's first row and erases the live area: that row on its own, the
    /// rest from the row below it to the end of the screen (never from the first row, which
    /// may be the screen's top-left corner).
    fn rewind(&mut self) -> io::Result<()> {
        self.out.queue(MoveToColumn(0))?;
        let cursor_row = self.cursor_row();
        if cursor_row > 0 {
            self.out.queue(MoveUp(cursor_row as u16))?;
        }
        self.out.queue(Clear(ClearType::CurrentLine))?;
        if self.rows() > 1 {
            queue!(
                self.out,
                MoveDown(1),
                Clear(ClearType::FromCursorDown),
                MoveUp(1)
            )?;
        }
        Ok(())
    }
}

/// How many rows a row `width` cells wide takes on a terminal `columns` wide.
fn rows_taken(width: usize, columns: u16) -> usize {
    width.div_ceil(usize::from(columns).max(1)).max(1)
}

/// The lines, each wrapped to `width` so that the terminal never wraps one itself. What they
/// say is shown, not obeyed: a control character from a model, a tool or a file is made visible
/// (`␛[2K`, `^M`), and a line feed inside a span starts a row of its own.
fn fit(lines: &[Line<'static>], width: usize) -> Vec<Line<'static>> {
    let mut fitted = Vec::with_capacity(lines.len());
    for line in lines {
        for row in shown_rows(line) {
            if row.width() <= width {
                fitted.push(row);
            } else {
                fitted.extend(wrap_spans(row.spans, width).into_iter().map(Line::from));
            }
        }
    }
    fitted
}

/// A line as the rows it shows: its control characters visible, cut at its line feeds, each
/// span with the line's style laid under its own.
fn shown_rows(line: &Line<'static>) -> Vec<Line<'static>> {
    let plain = line.spans.iter().all(|span| {
        !span.content.chars().any(|c| {
            c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
    });
    if plain {
        let spans = line
            .spans
            .iter()
            .map(|span| Span::styled(span.content.clone(), line.style.patch(span.style)))
            .collect::<Vec<_>>();
        return vec![Line::from(spans)];
    }
    let mut rows = vec![Vec::new()];
    for span in &line.spans {
        let style = line.style.patch(span.style);
        let shown = agentry_plugin::terminal_text::visible(&span.content).replace('\t', "    ");
        let mut pieces = shown.split('\n');
        if let (Some(first), Some(row)) = (
            pieces.next().filter(|piece| !piece.is_empty()),
            rows.last_mut(),
        ) {
            row.push(Span::styled(first.to_owned(), style));
        }
        for piece in pieces {
            rows.push(if piece.is_empty() {
                Vec::new()
            } else {
                vec![Span::styled(piece.to_owned(), style)]
            });
        }
    }
    rows.into_iter().map(Line::from).collect()
}

/// Prints one line's spans with their styles, then resets the style.
fn write_line<W: Write>(out: &mut W, line: &Line<'_>, color: bool) -> io::Result<()> {
    for span in &line.spans {
        let style = line.style.patch(span.style);
        let styled = style != Style::default();
        if styled {
            apply(out, style, color)?;
        }
        out.queue(Print(&span.content))?;
        if styled {
            out.queue(SetAttribute(Attribute::Reset))?;
            if color {
                out.queue(ResetColor)?;
            }
        }
    }
    Ok(())
}

/// Sets a style's colours (when colour is on) and attributes.
fn apply<W: Write>(out: &mut W, style: Style, color: bool) -> io::Result<()> {
    if color {
        if let Some(fg) = style.fg.filter(|c| *c != Color::Reset) {
            out.queue(SetForegroundColor(fg.into()))?;
        }
        if let Some(bg) = style.bg.filter(|c| *c != Color::Reset) {
            out.queue(SetBackgroundColor(bg.into()))?;
        }
    }
    let attributes = [
        (Modifier::BOLD, Attribute::Bold),
        (Modifier::DIM, Attribute::Dim),
        (Modifier::ITALIC, Attribute::Italic),
        (Modifier::UNDERLINED, Attribute::Underlined),
        (Modifier::REVERSED, Attribute::Reverse),
        (Modifier::CROSSED_OUT, Attribute::CrossedOut),
    ];
    for (modifier, attribute) in attributes {
        if style.add_modifier.contains(modifier) {
            out.queue(SetAttribute(attribute))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    #[test]
    fn what_a_model_or_tool_wrote_is_shown_not_obeyed() {
        let mut screen = Screen::new(Vec::new(), 80, 10);
        let forged = Line::from(vec![
            Span::raw("rm -f victim "),
            Span::raw("\u{1b}[2K\r\u{1b}[1Aecho hello # \u{1b}]52;c;aGk=\u{7}"),
        ]);
        screen
            .draw(
                &[forged, Line::from(vec![Span::raw("two\nrows")])],
                &[],
                None,
                false,
            )
            .unwrap();
        let out = text(&screen.out);
        assert!(
            out.contains("rm -f victim ␛[2K^M␛[1Aecho hello # ␛]52;c;aGk=^G\r\n"),
            "{out:?}"
        );
        assert!(!out.contains("\u{1b}]52"), "{out:?}");
        assert!(out.contains("two\r\nrows\r\n"), "{out:?}");
    }

    #[test]
    fn kept_lines_come_before_the_live_area_and_the_next_frame_starts_at_its_top() {
        let mut screen = Screen::new(Vec::new(), 20, 10);
        let live = [Line::from("one"), Line::from("two")];
        screen
            .draw(
                &[Line::from("kept")],
                &live,
                Some(CursorAt { row: 0, column: 2 }),
                false,
            )
            .unwrap();
        let first = text(&screen.out);
        assert!(first.contains("kept\r\none\r\ntwo"), "{first:?}");
        // The cursor went up one row to the live area's first line, then to column 2.
        assert!(first.contains("\u{1b}[1A\u{1b}[3G"), "{first:?}");
        screen.out.clear();
        screen.draw(&[], &live, None, false).unwrap();
        // Back to the first live row: it is where the cursor was, so it is erased with no
        // move up; the second row is erased from below.
        let second = text(&screen.out);
        assert!(
            second.contains("\u{1b}[1G\u{1b}[2K\u{1b}[1B\u{1b}[J"),
            "{second:?}"
        );
    }

    #[test]
    fn the_screen_is_never_erased_from_the_live_areas_first_row() {
        let mut screen = Screen::new(Vec::new(), 20, 10);
        let mut live = vec![Line::from("input")];
        for rows in 1..5 {
            screen.out.clear();
            screen
                .draw(&[], &live, Some(CursorAt { row: 0, column: 1 }), false)
                .unwrap();
            let frame = text(&screen.out);
            // Erased to the end only after moving one row down from the first.
            assert_eq!(
                frame.matches("\u{1b}[J").count(),
                frame.matches("\u{1b}[1B\u{1b}[J").count(),
                "{frame:?}"
            );
            // The old rows below the first are erased once the area has had more than one.
            assert_eq!(frame.contains("\u{1b}[J"), rows > 2, "{rows}: {frame:?}");
            assert!(frame.contains("\u{1b}[2K"), "{frame:?}");
            live.push(Line::from(format!("row {rows}")));
        }
        screen.out.clear();
        screen.clear_live().unwrap();
        let cleared = text(&screen.out);
        assert!(
            cleared.contains("\u{1b}[2K\u{1b}[1B\u{1b}[J\u{1b}[1A"),
            "{cleared:?}"
        );
    }

    #[test]
    fn long_lines_are_wrapped_and_a_tall_live_area_shows_its_end() {
        let mut screen = Screen::new(Vec::new(), 10, 4);
        let live: Vec<Line<'static>> = (0..6).map(|i| Line::from(format!("line {i}"))).collect();
        screen
            .draw(&[Line::from("aaaa bbbb cccc")], &live, None, false)
            .unwrap();
        let out = text(&screen.out);
        assert!(out.contains("aaaa bbbb\r\ncccc"), "{out:?}");
        assert!(!out.contains("line 2"), "{out:?}");
        assert!(out.contains("line 3\r\nline 4\r\nline 5"), "{out:?}");
    }

    /// A 20-column screen whose live area is a full row, then the cursor's row.
    fn full_row_above_the_cursor() -> (Screen<Vec<u8>>, [Line<'static>; 2]) {
        let mut screen = Screen::new(Vec::new(), 20, 10);
        let live = [Line::from("x".repeat(20)), Line::from("input")];
        screen
            .draw(&[], &live, Some(CursorAt { row: 1, column: 0 }), false)
            .unwrap();
        (screen, live)
    }

    #[test]
    fn after_a_resize_the_next_frame_starts_above_the_reflowed_rows() {
        let (mut screen, live) = full_row_above_the_cursor();
        // At 10 columns the 20-cell row above the cursor takes two rows.
        screen.resize(10, 10);
        screen.out.clear();
        screen.draw(&[], &live, None, false).unwrap();
        assert!(text(&screen.out).contains("\u{1b}[2A"));
    }

    #[test]
    fn resizes_before_a_frame_count_from_the_last_frame_at_the_last_size() {
        let (mut screen, live) = full_row_above_the_cursor();
        // Narrowed, then widened back before a frame: the terminal rejoined the row.
        screen.resize(10, 10);
        screen.resize(20, 8);
        screen.out.clear();
        screen.draw(&[], &live, None, false).unwrap();
        let frame = text(&screen.out);
        assert!(
            frame.starts_with("\u{1b}[?2026h\u{1b}[?25l\u{1b}[1G\u{1b}[1A\u{1b}[2K"),
            "{frame:?}"
        );
        // Narrowed twice: the 20-cell row takes four rows at 5 columns.
        screen.resize(10, 10);
        screen.resize(5, 10);
        screen.out.clear();
        screen.draw(&[], &live, None, false).unwrap();
        assert!(text(&screen.out).contains("\u{1b}[1G\u{1b}[4A\u{1b}[2K"));
    }
}
