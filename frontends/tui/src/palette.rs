//! Styles with or without colour: with `NO_COLOR` or a terminal without colours, every style
//! keeps its bold / dim / reverse and loses its colours.

use ratatui::style::{Color, Modifier, Style};

/// How the terminal is painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// Whether colours are used.
    pub color: bool,
}

impl Palette {
    /// A palette with colours or without.
    pub fn new(color: bool) -> Self {
        Self { color }
    }

    /// Whether this process's terminal should get colours: not when `NO_COLOR` is set (to
    /// anything non-empty), nor for `TERM=dumb`.
    pub fn from_environment() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|term| term == "dumb");
        Self::new(!no_color && !dumb)
    }

    /// Text in `color` (plain without colours).
    pub fn paint(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    /// Text that matters less.
    pub fn dim(self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default().add_modifier(Modifier::DIM)
        }
    }

    /// Text that matters more.
    pub fn bold(self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// A highlighted choice.
    pub fn selected(self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }
}
