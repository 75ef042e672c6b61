//! Word wrapping of styled text: spans split at spaces and laid into lines of a width, styles
//! kept; a word longer than the width is cut.

use ratatui::text::Span;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `spans` laid into lines at most `width` columns wide.
pub fn wrap_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Vec<Span<'static>>> {
    let width = width.max(1);
    let mut lines = vec![Vec::new()];
    let mut used = 0;
    for span in spans {
        for word in split_keeping_spaces(&span.content) {
            let word_width = word.width();
            let is_space = word.trim().is_empty();
            if used + word_width > width && used > 0 {
                if is_space {
                    continue;
                }
                lines.push(Vec::new());
                used = 0;
            }
            // Spaces that would start a continuation line go; a first line keeps its indent.
            if used == 0 && is_space && lines.len() > 1 {
                continue;
            }
            if word_width > width {
                for piece in cut(word, width) {
                    if used > 0 && used + piece.width() > width {
                        lines.push(Vec::new());
                        used = 0;
                    }
                    used += piece.width();
                    push(&mut lines, Span::styled(piece, span.style));
                }
                continue;
            }
            used += word_width;
            push(&mut lines, Span::styled(word.to_owned(), span.style));
        }
    }
    for line in &mut lines {
        while let Some(last) = line.last_mut() {
            let kept = last.content.trim_end().len();
            if kept > 0 {
                last.content.to_mut().truncate(kept);
                break;
            }
            line.pop();
        }
    }
    lines
}

fn push(lines: &mut [Vec<Span<'static>>], span: Span<'static>) {
    if let Some(line) = lines.last_mut() {
        match line.last_mut() {
            Some(last) if last.style == span.style => last.content.to_mut().push_str(&span.content),
            _ => line.push(span),
        }
    }
}

/// `text` as words and the runs of spaces between them.
fn split_keeping_spaces(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (index, c) in text.char_indices() {
        let space = c == ' ';
        if in_space.is_some_and(|was| was != space) {
            parts.push(&text[start..index]);
            start = index;
        }
        in_space = Some(space);
    }
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}

/// `word` cut into pieces of at most `limit` columns.
fn cut(word: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(1);
    let mut pieces = vec![String::new()];
    let mut used = 0;
    for c in word.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > limit && used > 0 {
            pieces.push(String::new());
            used = 0;
        }
        used += w;
        if let Some(piece) = pieces.last_mut() {
            piece.push(c);
        }
    }
    pieces
}
