//! Code blocks highlighted by syntect (its default syntaxes and a dark theme); without colour,
//! or for a language syntect does not know, the code as it is.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// The syntaxes and theme, loaded once per process (loading takes milliseconds).
fn assets() -> &'static (SyntaxSet, Theme) {
    static ASSETS: OnceLock<(SyntaxSet, Theme)> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let theme = themes
            .themes
            .remove("base16-ocean.dark")
            .unwrap_or_default();
        (syntaxes, theme)
    })
}

/// Highlights code.
pub struct Highlighter {
    color: bool,
}

impl Highlighter {
    /// A highlighter that colours when `color` is set.
    pub fn new(color: bool) -> Self {
        Self { color }
    }

    /// `code` in `language` (a fence's info string: `rust`, `py`, …) as lines of spans.
    pub fn highlight(&self, code: &str, language: &str) -> Vec<Vec<Span<'static>>> {
        let code = code.strip_suffix('\n').unwrap_or(code);
        let plain = || {
            code.lines()
                .map(|l| vec![Span::raw(l.to_owned())])
                .collect()
        };
        if !self.color {
            return plain();
        }
        let (syntaxes, theme) = assets();
        let Some(syntax) = syntaxes
            .find_syntax_by_token(language)
            .filter(|_| !language.is_empty())
        else {
            return plain();
        };
        let mut highlighter = HighlightLines::new(syntax, theme);
        let mut lines = Vec::new();
        for line in code.split('\n') {
            let with_newline = format!("{line}\n");
            let Ok(regions) = highlighter.highlight_line(&with_newline, syntaxes) else {
                return plain();
            };
            lines.push(
                regions
                    .into_iter()
                    .map(|(style, text)| {
                        Span::styled(text.trim_end_matches('\n').to_owned(), to_ratatui(style))
                    })
                    .filter(|span| !span.content.is_empty())
                    .collect(),
            );
        }
        lines
    }
}

fn to_ratatui(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::default().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    out
}
