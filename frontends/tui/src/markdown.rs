//! Markdown as the terminal shows it: styled lines for ratatui, wrapped to the width — headings,
//! emphasis, inline code, links, lists (nested, numbered, tasks), quotes, rules, tables, and code
//! blocks highlighted by syntect. Without colour (`NO_COLOR`, a dumb terminal) the structure and
//! the bold / italic stay, colours go, and inline code keeps its backticks.

use crate::highlight::Highlighter;
use crate::wrap::wrap_spans;
use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// How Markdown is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// The width lines wrap at (at least 20 is used).
    pub width: u16,
    /// Whether colours are used.
    pub color: bool,
}

/// `markdown` as lines for a terminal `look.width` columns wide.
pub fn render(markdown: &str, look: Look) -> Vec<Line<'static>> {
    let mut renderer = Renderer::new(look);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    renderer.finish()
}

/// One list being drawn: its next number (`None` for bullets), and how wide its items'
/// markers are (its nested lists are indented by that much).
struct List {
    next: Option<u64>,
    marker_width: usize,
}

/// A table being collected: its rows of cells of spans.
struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
}

struct Renderer {
    look: Look,
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<List>,
    /// The marker of the list item whose first line is still to come.
    item_marker: Option<String>,
    quote_depth: usize,
    code: Option<(String, String)>,
    table: Option<Table>,
    link: Option<String>,
    highlighter: Highlighter,
}

impl Renderer {
    fn new(look: Look) -> Self {
        Self {
            look: Look {
                width: look.width.max(20),
                ..look
            },
            lines: Vec::new(),
            spans: Vec::new(),
            styles: vec![Style::default()],
            lists: Vec::new(),
            item_marker: None,
            quote_depth: 0,
            code: None,
            table: None,
            link: None,
            highlighter: Highlighter::new(look.color),
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, change: impl FnOnce(Style) -> Style) {
        let next = change(self.style());
        self.styles.push(next);
    }

    fn color(&self, color: Color) -> Style {
        if self.look.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((_, code)) = &mut self.code {
            match event {
                Event::Text(text) => code.push_str(&text),
                Event::End(TagEnd::CodeBlock) => self.end_code_block(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                let text = if self.look.color {
                    code.to_string()
                } else {
                    format!("`{code}`")
                };
                let style = self.style().patch(self.color(Color::Yellow));
                self.spans.push(Span::styled(text, style));
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.blank();
                let rule = "─".repeat(usize::from(self.look.width));
                self.lines
                    .push(Line::from(Span::styled(rule, self.color(Color::DarkGray))));
            }
            Event::TaskListMarker(done) => {
                self.spans
                    .push(Span::raw(if done { "[x] " } else { "[ ] " }));
            }
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph if self.item_marker.is_none() && self.table.is_none() => self.blank(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.blank();
                let color = if level == HeadingLevel::H1 {
                    Color::Magenta
                } else {
                    Color::Cyan
                };
                let heading = self.color(color).add_modifier(Modifier::BOLD);
                let heading = if level == HeadingLevel::H1 {
                    heading.add_modifier(Modifier::UNDERLINED)
                } else {
                    heading
                };
                self.styles.push(heading);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote_depth += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.blank();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
                self.lists.push(List {
                    next: start,
                    marker_width: 2,
                });
            }
            Tag::Item => {
                self.flush();
                let Some(list) = self.lists.last_mut() else {
                    return;
                };
                let marker = match list.next.as_mut() {
                    Some(n) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    None => "• ".to_owned(),
                };
                list.marker_width = marker.width();
                self.item_marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let link = self.color(Color::Blue).add_modifier(Modifier::UNDERLINED);
                self.styles.push(self.style().patch(link));
                self.link = Some(dest_url.to_string());
            }
            Tag::Table(alignments) => {
                self.flush();
                self.blank();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => self.spans.clear(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph if self.table.is_none() => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote_depth = self.quote_depth.saturating_sub(1);
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let text: String = self.spans.iter().map(|s| s.content.as_ref()).collect();
                    if !text.ends_with(url.as_str()) {
                        self.spans.push(Span::styled(
                            format!(" ({url})"),
                            self.color(Color::DarkGray),
                        ));
                    }
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.spans);
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::Table => self.end_table(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        self.spans.push(Span::styled(text.to_owned(), self.style()));
    }

    /// The prefix of each line at the current depth: quote bars, then list indentation.
    fn prefix(&self, first: bool) -> Vec<Span<'static>> {
        let mut prefix = Vec::new();
        for _ in 0..self.quote_depth {
            prefix.push(Span::styled("│ ", self.color(Color::DarkGray)));
        }
        if let Some((_, outer)) = self.lists.split_last() {
            let indent = " ".repeat(outer.iter().map(|l| l.marker_width).sum());
            let marker = match (&self.item_marker, first) {
                (Some(marker), true) => marker.clone(),
                (Some(marker), false) => " ".repeat(marker.width()),
                (None, _) => "  ".to_owned(),
            };
            prefix.push(Span::raw(format!("{indent}{marker}")));
        }
        prefix
    }

    /// Wraps the pending spans into lines.
    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let first = self.prefix(true);
        let rest = self.prefix(false);
        let room = usize::from(self.look.width)
            .saturating_sub(line_width(&first))
            .max(10);
        for (index, line) in wrap_spans(spans, room).into_iter().enumerate() {
            let mut spans = if index == 0 {
                first.clone()
            } else {
                rest.clone()
            };
            spans.extend(line);
            self.lines.push(Line::from(spans));
        }
        self.item_marker = None;
    }

    /// A blank line between blocks (never two, never first).
    fn blank(&mut self) {
        let last_blank = self
            .lines
            .last()
            .is_none_or(|l| l.spans.iter().all(|s| s.content.trim().is_empty()));
        if !last_blank && self.lists.is_empty() {
            self.lines.push(Line::default());
        }
    }

    fn end_code_block(&mut self) {
        let Some((language, code)) = self.code.take() else {
            return;
        };
        let prefix = self.prefix(false);
        for line in self.highlighter.highlight(&code, &language) {
            let mut spans = prefix.clone();
            spans.push(Span::raw("  "));
            spans.extend(line);
            self.lines.push(Line::from(spans));
        }
    }

    fn end_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (column, cell) in row.iter().enumerate() {
                widths[column] = widths[column].max(line_width(cell));
            }
        }
        let border = self.color(Color::DarkGray);
        for (index, row) in table.rows.into_iter().enumerate() {
            let mut spans = Vec::new();
            for (column, width) in widths.iter().enumerate() {
                if column > 0 {
                    spans.push(Span::styled(" │ ", border));
                }
                let cell = row.get(column).cloned().unwrap_or_default();
                let pad = width - line_width(&cell);
                let (before, after) = match table.alignments.get(column) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                spans.push(Span::raw(" ".repeat(before)));
                let header = index < table.header_rows;
                spans.extend(cell.into_iter().map(|s| {
                    if header {
                        let style = s.style.add_modifier(Modifier::BOLD);
                        s.style(style)
                    } else {
                        s
                    }
                }));
                spans.push(Span::raw(" ".repeat(after)));
            }
            self.lines.push(Line::from(spans));
            if index + 1 == table.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.lines
                    .push(Line::from(Span::styled(rule.join("─┼─"), border)));
            }
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush();
        if self.code.is_some() {
            // An unclosed fence (an answer still streaming): its code so far.
            self.end_code_block();
        }
        if self.table.is_some() {
            self.end_table();
        }
        self.lines
    }
}

/// The display width of some spans.
pub fn line_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}
