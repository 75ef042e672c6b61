//! A streamed Markdown answer split in two: the top-level blocks that are complete (a later
//! block has begun) are rendered once and go into the scrollback; the block still arriving is
//! rendered again each frame in the live area. Each complete block is rendered on its own, so
//! an answer of any length costs the same per chunk.

use crate::markdown::{Look, render};
use pulldown_cmark::{Event, Options, Parser};
use ratatui::text::Line;

/// The most lines of an unfinished code block drawn in the live area (its end is what shows).
const LIVE_CODE_LINES: usize = 60;

/// An answer as it streams in.
#[derive(Debug, Default)]
pub struct MarkdownStream {
    text: String,
    /// Bytes of `text` already rendered into the scrollback.
    kept: usize,
    /// Whether anything was kept yet (later blocks start with a blank line).
    kept_any: bool,
}

impl MarkdownStream {
    /// An empty answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a streamed piece.
    pub fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
    }

    /// Whether nothing arrived.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// The lines of the blocks completed since the last call, to keep.
    pub fn take_complete(&mut self, look: Look) -> Vec<Line<'static>> {
        // Only whole lines count: the start of a line still arriving may read as a new block
        // and turn out to continue the last one (a table's next row).
        let tail = &self.text[self.kept..];
        let whole_lines = tail.rfind('\n').map_or(0, |at| at + 1);
        let end = self.kept + last_block_start(&tail[..whole_lines]);
        self.keep_until(end, look)
    }

    /// The lines of the block still arriving, for the live area.
    pub fn live(&self, look: Look) -> Vec<Line<'static>> {
        let tail = &self.text[self.kept..];
        if tail.trim().is_empty() {
            return Vec::new();
        }
        let lines = render(&visible_part(tail), look);
        self.separated(lines)
    }

    /// The rest, once the answer is complete.
    pub fn finish(&mut self, look: Look) -> Vec<Line<'static>> {
        let end = self.text.len();
        self.keep_until(end, look)
    }

    fn keep_until(&mut self, end: usize, look: Look) -> Vec<Line<'static>> {
        if end <= self.kept {
            return Vec::new();
        }
        let part = &self.text[self.kept..end];
        self.kept = end;
        if part.trim().is_empty() {
            return Vec::new();
        }
        let lines = self.separated(render(part, look));
        self.kept_any |= !lines.is_empty();
        lines
    }

    /// `lines` with a blank line first when they follow kept blocks.
    fn separated(&self, mut lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
        let starts_blank = lines.first().is_some_and(|l| l.width() == 0);
        if self.kept_any && !starts_blank && !lines.is_empty() {
            lines.insert(0, Line::default());
        }
        lines
    }
}

/// Where the last top-level block of `text` starts (0 when there is only one).
fn last_block_start(text: &str) -> usize {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut depth = 0usize;
    let mut last = 0;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    last = range.start;
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Rule if depth == 0 => last = range.start,
            _ => {}
        }
    }
    last
}

/// What of an unfinished block is drawn: all of it, except a long code block's last lines
/// (with its opening fence, so it still reads as code).
fn visible_part(block: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = block.trim_start_matches('\n');
    let is_fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
    let lines = trimmed.lines().count();
    if !is_fence || lines <= LIVE_CODE_LINES + 1 {
        return block.into();
    }
    let fence = trimmed.lines().next().unwrap_or_default();
    let tail: Vec<&str> = trimmed.lines().skip(lines - LIVE_CODE_LINES).collect();
    format!("{fence}\n{}\n", tail.join("\n")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOK: Look = Look {
        width: 40,
        color: false,
    };

    fn plain(lines: &[Line<'static>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn complete_blocks_are_kept_once_and_the_last_stays_live() {
        let mut stream = MarkdownStream::new();
        stream.push("# Title\n\nFirst para");
        // The paragraph's line is not whole yet: the heading waits with it.
        assert!(stream.take_complete(LOOK).is_empty());
        assert_eq!(plain(&stream.live(LOOK)), ["Title", "", "First para"]);
        stream.push("graph.\n\n- one\n- two");
        assert_eq!(
            plain(&stream.take_complete(LOOK)),
            ["Title", "", "First paragraph."]
        );
        assert!(stream.take_complete(LOOK).is_empty());
        assert_eq!(plain(&stream.live(LOOK)), ["", "• one", "• two"]);
        assert_eq!(plain(&stream.finish(LOOK)), ["", "• one", "• two"]);
        assert!(stream.finish(LOOK).is_empty());
    }

    #[test]
    fn the_kept_lines_equal_the_whole_answer_rendered_at_once() {
        let answer = "Intro text.\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n1. x\n2. y\n\n> quote\n\n---\n\nEnd.";
        let mut stream = MarkdownStream::new();
        let mut kept = Vec::new();
        for piece in answer.as_bytes().chunks(3) {
            stream.push(std::str::from_utf8(piece).unwrap());
            kept.extend(stream.take_complete(LOOK));
        }
        kept.extend(stream.finish(LOOK));
        assert_eq!(plain(&kept), plain(&render(answer, LOOK)));
    }

    #[test]
    fn a_long_unfinished_code_block_shows_its_end() {
        let mut stream = MarkdownStream::new();
        stream.push("```\n");
        for i in 0..500 {
            stream.push(&format!("line {i}\n"));
        }
        let live = plain(&stream.live(LOOK));
        assert!(live.len() <= LIVE_CODE_LINES + 2, "{}", live.len());
        assert!(live.iter().any(|l| l.contains("line 499")));
        assert!(!live.iter().any(|l| l.contains("line 10\u{20}")));
        assert_eq!(stream.finish(LOOK).len(), render(&stream.text, LOOK).len());
    }
}
