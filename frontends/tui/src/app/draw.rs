//! Drawing a frame: the conversation's live part, the input with its cursor, the footer; the
//! screen following the terminal's size.

use super::{App, EXIT_WINDOW};
use crate::screen::CursorAt;
use ratatui::style::Color;
use ratatui::text::{Line, Span};

impl App {
    /// Lays out for the terminal's size now, or `fallback` when it cannot be read. A resize
    /// event may have waited while the terminal changed again, and a frame laid out for a size
    /// the terminal has left moves the cursor by the wrong number of rows: over lines of the
    /// scrollback, which it would erase.
    pub(super) fn follow_terminal_size(&mut self, fallback: (u16, u16)) {
        // A terminal that reports no size (0 × 0) has none to follow.
        let (width, height) = crossterm::terminal::window_size()
            .ok()
            .filter(|size| size.columns > 0 && size.rows > 0)
            .map_or(fallback, |size| (size.columns, size.rows));
        self.screen.resize(width, height);
        self.conversation.set_width(width);
    }

    /// Draws one frame, laid out for the terminal's size as it is now.
    pub(super) fn draw(&mut self) -> std::io::Result<()> {
        self.follow_terminal_size(self.screen.size());
        let width = self.screen.width();
        let keep = self.conversation.take_done();
        let mut live = self.conversation.live(self.since());
        if let Some(shell) = &self.shell {
            live.push(Line::default());
            live.push(crate::status::line(
                "Running your command",
                shell.started.elapsed(),
                Default::default(),
                None,
                self.palette,
                width,
            ));
        } else if self.running.is_some() {
            live.push(Line::default());
            live.push(crate::status::line(
                self.conversation.activity(),
                self.since(),
                self.conversation.usage(),
                self.conversation.cost_usd(),
                self.palette,
                width,
            ));
        }
        live.push(Line::default());
        let cursor = match &self.overlay {
            Some(overlay) => {
                let (lines, cursor) = overlay.lines(self.palette, width);
                let top = live.len();
                live.extend(lines);
                cursor.map(|(row, column)| CursorAt {
                    row: top + row,
                    column,
                })
            }
            None => Some(self.input_lines(&mut live, width)),
        };
        self.screen.draw(&keep, &live, cursor, self.palette.color)
    }

    /// The input box, its completions and the footer; returns where the cursor goes.
    pub(super) fn input_lines(&self, live: &mut Vec<Line<'static>>, width: u16) -> CursorAt {
        let rule = Line::from(Span::styled(
            "─".repeat(usize::from(width)),
            self.palette.dim(),
        ));
        live.push(rule.clone());
        let prompt = Span::styled("› ", self.palette.paint(Color::Cyan));
        let (lines, (row, column)) = self.editor.lines(prompt, width);
        let cursor = CursorAt {
            row: live.len() + row,
            column,
        };
        live.extend(lines);
        live.push(rule);
        if let Some((completion, highlighted)) = &self.completion {
            for (index, suggestion) in completion.suggestions.iter().enumerate() {
                let style = if index == *highlighted {
                    self.palette.selected()
                } else {
                    Default::default()
                };
                let mut spans = vec![Span::styled(format!("  {}", suggestion.text), style)];
                if let Some(detail) = &suggestion.detail {
                    spans.push(Span::styled(format!("  {detail}"), self.palette.dim()));
                }
                live.push(Line::from(spans));
            }
        } else {
            live.push(self.footer());
        }
        cursor
    }

    pub(super) fn footer(&self) -> Line<'static> {
        if self.exit_armed.is_some_and(|at| at.elapsed() < EXIT_WINDOW) {
            return Line::from(Span::styled(
                "  Press Ctrl-C again to leave",
                self.palette.paint(Color::Yellow),
            ));
        }
        let mut parts = Vec::new();
        if self.busy() {
            parts.push("ctrl-c to interrupt".to_owned());
        }
        if let Some(session) = &self.session {
            let mode = session.options().policy.mode;
            parts.push(format!("{} mode", mode.title().to_lowercase()));
            parts.push(session.model().name().to_owned());
        }
        if !self.queued.is_empty() {
            parts.push(format!("{} queued", self.queued.len()));
        }
        if !self.context.is_empty() {
            parts.push(format!(
                "{} command output(s) go with your next message",
                self.context.len()
            ));
        }
        parts.push("/help".to_owned());
        Line::from(Span::styled(
            format!("  {}", parts.join(" · ")),
            self.palette.dim(),
        ))
    }
}
