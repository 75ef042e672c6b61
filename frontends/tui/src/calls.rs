//! A tool call as the terminal shows it: a header (status mark, title, kind), then under a
//! `⎿` what it did — the command and the tail of its output, the diff of an edit, a short
//! summary of what it read, the error of a failed call — and the calls of its sub-agent.

use crate::diff;
use crate::palette::Palette;
use agentry::event::{ToolCallSnapshot, ToolCallStatus};
use agentry::tool::ContentBlock;
use agentry::tool::{ToolContent, ToolKind};
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use serde_json::Value;
use std::time::Duration;

/// Output lines shown under a finished call.
const DONE_OUTPUT_LINES: usize = 4;
/// Output lines shown under a running call.
const LIVE_OUTPUT_LINES: usize = 5;
/// Diff lines shown under an edit.
const DIFF_LINES: usize = 40;
/// Sub-agent calls shown under a finished Agent call.
const CHILD_LINES: usize = 8;

/// What the terminal knows of one call.
#[derive(Debug, Clone)]
pub struct CallView {
    /// The call as announced and updated.
    pub call: ToolCallSnapshot,
    /// Its latest content.
    pub content: Vec<ToolContent>,
    /// Its latest raw output (figures of its output so far while it runs).
    pub raw_output: Option<Value>,
    /// How long it ran, once over.
    pub duration: Option<Duration>,
    /// One line per finished call of its sub-agent.
    pub children: Vec<Line<'static>>,
    /// The sub-agent's calls still running, by title.
    pub running_children: Vec<String>,
}

impl CallView {
    /// A call just announced.
    pub fn new(call: ToolCallSnapshot) -> Self {
        Self {
            call,
            content: Vec::new(),
            raw_output: None,
            duration: None,
            children: Vec::new(),
            running_children: Vec::new(),
        }
    }

    /// The call's lines; `spinner` is the mark of a call still running.
    pub fn lines(&self, palette: Palette, spinner: &str) -> Vec<Line<'static>> {
        let mut lines = vec![self.header(palette, spinner)];
        let mut body = Vec::new();
        if self.call.kind == ToolKind::Execute
            && let Some(command) = self.call.raw_input.get("command").and_then(Value::as_str)
            && !self
                .call
                .title
                .contains(command.lines().next().unwrap_or_default())
        {
            body.push(Line::from(Span::styled(
                format!("$ {}", first_line(command)),
                palette.dim(),
            )));
        }
        body.extend(self.content_lines(palette));
        let children_shown = if self.call.status.is_final() {
            CHILD_LINES
        } else {
            3
        };
        let skipped = self.children.len().saturating_sub(children_shown);
        if skipped > 0 {
            body.push(Line::from(Span::styled(
                format!("… {skipped} earlier calls"),
                palette.dim(),
            )));
        }
        body.extend(self.children[skipped..].iter().cloned());
        if !self.call.status.is_final() {
            for title in &self.running_children {
                body.push(Line::from(vec![
                    Span::styled(format!("{spinner} "), palette.paint(Color::Yellow)),
                    Span::raw(title.clone()),
                ]));
            }
        }
        for (index, line) in body.into_iter().enumerate() {
            let lead = if index == 0 { "  ⎿ " } else { "    " };
            let mut spans = vec![Span::styled(lead, palette.dim())];
            spans.extend(line.spans);
            lines.push(Line::from(spans));
        }
        lines
    }

    /// The line a finished call of a sub-agent leaves under its Agent call.
    pub fn child_line(&self, palette: Palette) -> Line<'static> {
        let (mark, style) = status_mark(self.call.status, palette, "");
        Line::from(vec![
            Span::styled(format!("{mark} "), style),
            Span::raw(self.call.title.clone()),
        ])
    }

    fn header(&self, palette: Palette, spinner: &str) -> Line<'static> {
        let (mark, style) = status_mark(self.call.status, palette, spinner);
        let mut spans = vec![
            Span::styled(format!("{mark} "), style),
            Span::styled(self.call.title.clone(), palette.bold()),
            Span::styled(format!(" · {}", kind_name(self.call.kind)), palette.dim()),
        ];
        match (self.call.status, self.duration) {
            (ToolCallStatus::Failed, _) => {
                spans.push(Span::styled(" · failed", palette.paint(Color::Red)))
            }
            (ToolCallStatus::AwaitingAnswer, _) => {
                spans.push(Span::styled(" · waiting for your answer", palette.dim()))
            }
            (_, Some(took)) if took >= Duration::from_secs(1) => spans.push(Span::styled(
                format!(" · {}", crate::status::elapsed(took)),
                palette.dim(),
            )),
            _ => {}
        }
        Line::from(spans)
    }

    fn content_lines(&self, palette: Palette) -> Vec<Line<'static>> {
        let failed = self.call.status == ToolCallStatus::Failed;
        let mut lines = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        for content in &self.content {
            match content {
                ToolContent::Diff {
                    path,
                    old_text,
                    new_text,
                } => lines.extend(diff_lines(
                    &path.display().to_string(),
                    old_text.as_deref(),
                    new_text,
                    palette,
                )),
                ToolContent::Content {
                    content: ContentBlock::Text { text },
                } => texts.push(text),
                ToolContent::Content {
                    content: ContentBlock::Image { mime_type, .. },
                } => lines.push(Line::from(Span::styled(
                    format!("[image {mime_type}]"),
                    palette.dim(),
                ))),
                _ => {}
            }
        }
        if failed && let Some(message) = texts.pop() {
            lines.extend(output_tail(
                texts.join("\n").as_str(),
                DONE_OUTPUT_LINES,
                palette,
            ));
            for line in message.lines().take(6) {
                lines.push(Line::from(Span::styled(
                    line.to_owned(),
                    palette.paint(Color::Red),
                )));
            }
            return lines;
        }
        let text = texts.join("\n");
        if text.trim().is_empty() {
            return lines;
        }
        let running = !self.call.status.is_final();
        if !running && self.call.kind.is_read_only() && self.call.kind != ToolKind::Execute {
            let count = text.lines().count();
            let noun = if count == 1 { "line" } else { "lines" };
            lines.push(Line::from(Span::styled(
                format!("{count} {noun}"),
                palette.dim(),
            )));
        } else {
            let so_far = self
                .raw_output
                .as_ref()
                .and_then(|raw| raw.get("output_lines")?.as_u64())
                .filter(|_| running);
            match so_far {
                Some(count) => {
                    lines.push(Line::from(Span::styled(
                        format!("{count} lines so far"),
                        palette.dim(),
                    )));
                    let tail = text.lines().collect::<Vec<_>>();
                    let start = tail.len().saturating_sub(LIVE_OUTPUT_LINES);
                    lines.extend(output_tail(
                        &tail[start..].join("\n"),
                        LIVE_OUTPUT_LINES,
                        palette,
                    ));
                }
                None if running => lines.extend(output_tail(&text, LIVE_OUTPUT_LINES, palette)),
                None => lines.extend(output_tail(&text, DONE_OUTPUT_LINES, palette)),
            }
        }
        lines
    }
}

/// The mark and style a status is drawn with (`spinner` for a running call).
fn status_mark(
    status: ToolCallStatus,
    palette: Palette,
    spinner: &str,
) -> (String, ratatui::style::Style) {
    match status {
        ToolCallStatus::Completed => ("●".to_owned(), palette.paint(Color::Green)),
        ToolCallStatus::Failed => ("✗".to_owned(), palette.paint(Color::Red)),
        ToolCallStatus::AwaitingAnswer => ("?".to_owned(), palette.paint(Color::Yellow)),
        ToolCallStatus::Pending => ("○".to_owned(), palette.dim()),
        ToolCallStatus::InProgress if spinner.is_empty() => ("○".to_owned(), palette.dim()),
        ToolCallStatus::InProgress => (spinner.to_owned(), palette.paint(Color::Yellow)),
    }
}

/// A kind's name as users read it.
fn kind_name(kind: ToolKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "other".to_owned())
}

/// The first line of a command, with `…` when there are more.
fn first_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}

/// The last `count` lines of some output, with how many came before.
fn output_tail(text: &str, count: usize, palette: Palette) -> Vec<Line<'static>> {
    let text = text.trim_end_matches('\n');
    if text.is_empty() {
        return Vec::new();
    }
    let all: Vec<&str> = text.lines().collect();
    let skipped = all.len().saturating_sub(count);
    let mut lines = Vec::new();
    if skipped > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {skipped} lines before ({} in all)", all.len()),
            palette.dim(),
        )));
    }
    for line in &all[skipped..] {
        lines.push(Line::from(agentry_plugin::terminal_text::plain_text(line)));
    }
    lines
}

/// An edit: what changed in which file, then the diff.
fn diff_lines(path: &str, old: Option<&str>, new: &str, palette: Palette) -> Vec<Line<'static>> {
    let old = old.unwrap_or_default();
    let changes = diff::render(old, new, palette.color);
    let added = changes.iter().filter(|l| starts_with(l, "+")).count();
    let removed = changes.iter().filter(|l| starts_with(l, "-")).count();
    let verb = if old.is_empty() { "Wrote" } else { "Updated" };
    let mut lines = vec![Line::from(vec![
        Span::raw(format!("{verb} ")),
        Span::styled(path.to_owned(), palette.bold()),
        Span::styled(format!(" (+{added} -{removed})"), palette.dim()),
    ])];
    let skipped = changes.len().saturating_sub(DIFF_LINES);
    lines.extend(changes.into_iter().take(DIFF_LINES));
    if skipped > 0 {
        lines.push(Line::from(Span::styled(
            format!("… {skipped} more diff lines"),
            palette.dim(),
        )));
    }
    lines
}

fn starts_with(line: &Line<'_>, sign: &str) -> bool {
    line.spans
        .first()
        .is_some_and(|span| span.content.starts_with(sign))
}
