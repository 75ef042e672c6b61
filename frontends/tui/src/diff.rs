//! An edit as the terminal shows it: a line diff (similar) with `-` / `+` lines coloured red and
//! green, unchanged lines around each change for context, and `…` between distant changes.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

/// Unchanged lines kept on each side of a change.
const CONTEXT: usize = 2;

/// The diff of `old` → `new` as lines, coloured when `color` is set.
pub fn render(old: &str, new: &str, color: bool) -> Vec<Line<'static>> {
    let paint = |c: Color| {
        if color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    };
    let diff = TextDiff::from_lines(old, new);
    let mut lines = Vec::new();
    for (index, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if index > 0 {
            lines.push(Line::from(Span::styled("  …", paint(Color::DarkGray))));
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, style) = match change.tag() {
                    ChangeTag::Delete => ("-", paint(Color::Red)),
                    ChangeTag::Insert => ("+", paint(Color::Green)),
                    ChangeTag::Equal => (" ", paint(Color::DarkGray)),
                };
                let text = change.value().trim_end_matches(['\n', '\r']);
                lines.push(Line::from(Span::styled(format!("{sign} {text}"), style)));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn changes_come_with_context_and_colour() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\n";
        let lines = render(old, new, true);
        assert_eq!(
            text(&lines),
            [
                "  a", "- b", "+ B", "  c", "  d", "  …", "  h", "  i", "- j", "+ J"
            ]
        );
        assert_eq!(lines[1].spans[0].style.fg, Some(Color::Red));
        assert_eq!(lines[2].spans[0].style.fg, Some(Color::Green));
        assert!(
            render(old, new, false)
                .iter()
                .all(|l| l.spans[0].style.fg.is_none())
        );
        assert!(render(old, old, true).is_empty());
    }
}
