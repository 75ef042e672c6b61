//! The conversation as the terminal shows it: a projection of the agent's event stream into
//! lines that are done (kept in the scrollback) and a live part (the answer still streaming,
//! the calls still running). The same projection draws a session taken up again from its
//! stored events.

use crate::calls::CallView;
use crate::markdown::Look;
use crate::palette::Palette;
use crate::stream::MarkdownStream;
use agentry::event::{
    AgentEvent, CHAT_INTERRUPTED, PlanStatus, Role, StopReason, ToolCallBook, Usage,
};
use agentry::ids::ToolCallId;
use agentry::tool::ContentBlock;
use ratatui::style::{Color, Modifier};
use ratatui::text::{Line, Span};
use std::collections::HashMap;
use std::time::Duration;

/// Lines of reasoning shown (dimmed) before it is folded.
const THINKING_LINES: usize = 3;

/// The conversation's lines.
pub struct Conversation {
    palette: Palette,
    width: u16,
    book: ToolCallBook,
    answer: MarkdownStream,
    thinking: String,
    /// The main loop's calls still running, in the order they were announced.
    calls: Vec<CallView>,
    /// Sub-agents' calls still running.
    child_calls: HashMap<ToolCallId, CallView>,
    keep: Vec<Line<'static>>,
    /// Whether anything was kept yet, and whether the last line kept was blank (blocks are
    /// separated by one blank line).
    kept_any: bool,
    last_blank: bool,
    /// Whether the answer streaming now has kept nothing yet.
    answer_fresh: bool,
    usage: Usage,
    /// What the chat's priced requests cost so far, in US dollars.
    cost_usd: Option<f64>,
    activity: String,
}

impl Conversation {
    /// An empty conversation drawn `width` columns wide.
    pub fn new(palette: Palette, width: u16) -> Self {
        Self {
            palette,
            width,
            book: ToolCallBook::new(),
            answer: MarkdownStream::new(),
            thinking: String::new(),
            calls: Vec::new(),
            child_calls: HashMap::new(),
            keep: Vec::new(),
            kept_any: false,
            last_blank: false,
            answer_fresh: true,
            usage: Usage::default(),
            cost_usd: None,
            activity: "Thinking".to_owned(),
        }
    }

    /// The terminal's width changed.
    pub fn set_width(&mut self, width: u16) {
        self.width = width;
    }

    /// What the agent is doing, for the status line.
    pub fn activity(&self) -> &str {
        &self.activity
    }

    /// The tokens used since the chat began.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// What the chat's priced requests cost so far, in US dollars (`None` while none was).
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_usd
    }

    /// Lines that are done since the last call, for the scrollback.
    pub fn take_done(&mut self) -> Vec<Line<'static>> {
        let look = self.look();
        let complete = self.answer.take_complete(look);
        self.keep_answer(complete);
        std::mem::take(&mut self.keep)
    }

    /// Adds lines of the front-end's own (a command's output, a notice) to the scrollback.
    pub fn note(&mut self, lines: impl IntoIterator<Item = Line<'static>>) {
        self.flush_text();
        self.keep_lines(lines);
    }

    /// Keeps lines that make a block: a blank line first when something came before.
    fn keep_block(&mut self, lines: impl IntoIterator<Item = Line<'static>>) {
        let mut lines = lines.into_iter().peekable();
        if lines.peek().is_none() {
            return;
        }
        if self.kept_any && !self.last_blank {
            self.keep.push(Line::default());
        }
        self.keep_lines(lines);
    }

    /// Keeps lines as they are.
    fn keep_lines(&mut self, lines: impl IntoIterator<Item = Line<'static>>) {
        for line in lines {
            self.last_blank = line.width() == 0;
            self.kept_any = true;
            self.keep.push(line);
        }
    }

    /// Keeps lines of the answer: its first ones start a block.
    fn keep_answer(&mut self, lines: Vec<Line<'static>>) {
        if lines.is_empty() {
            return;
        }
        if std::mem::take(&mut self.answer_fresh) {
            self.keep_block(lines);
        } else {
            self.keep_lines(lines);
        }
    }

    /// The live part: the reasoning and answer still arriving, the calls still running
    /// (`since` drives their spinners).
    pub fn live(&self, since: Duration) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if !self.thinking.trim().is_empty() {
            let tail: Vec<&str> = self.thinking.trim_end().lines().collect();
            lines.push(self.thinking_heading());
            for line in &tail[tail.len().saturating_sub(2)..] {
                lines.push(Line::from(Span::styled(
                    format!("  {line}"),
                    self.palette.dim().add_modifier(Modifier::ITALIC),
                )));
            }
        }
        lines.extend(self.answer.live(self.look()));
        let spinner = crate::status::spinner(since);
        for call in &self.calls {
            lines.push(Line::default());
            lines.extend(call.lines(self.palette, spinner));
        }
        lines
    }

    /// Takes in one event.
    pub fn apply(&mut self, event: &AgentEvent) {
        self.book.apply(event);
        match event {
            AgentEvent::ChatStarted { .. } => {
                self.usage = Usage::default();
                self.cost_usd = None;
                self.activity = "Thinking".to_owned();
            }
            AgentEvent::TurnStarted {
                role: Role::Assistant,
                parent_fork_tool_call_id: None,
                ..
            } => {
                self.flush_text();
                self.activity = "Thinking".to_owned();
            }
            AgentEvent::UserMessage { turn_id, content }
                if self.book.fork_of_turn(turn_id).is_none() =>
            {
                self.user_message(content)
            }
            AgentEvent::TextDelta { turn_id, text }
                if self.book.fork_of_turn(turn_id).is_none() =>
            {
                self.fold_thinking();
                self.answer.push(text);
                self.activity = "Answering".to_owned();
            }
            AgentEvent::ThinkingDelta { turn_id, text }
                if self.book.fork_of_turn(turn_id).is_none() =>
            {
                self.thinking.push_str(text);
                self.activity = "Thinking".to_owned();
            }
            AgentEvent::Plan { entries } => {
                self.flush_text();
                let mut lines = vec![Line::from(Span::styled("Plan", self.palette.bold()))];
                for entry in entries {
                    let (mark, style) = match entry.status {
                        PlanStatus::Completed => ("☒", self.palette.dim()),
                        PlanStatus::InProgress => ("◐", self.palette.bold()),
                        PlanStatus::Pending => ("☐", Default::default()),
                    };
                    lines.push(Line::from(Span::styled(
                        format!("  {mark} {}", entry.content),
                        style,
                    )));
                }
                self.keep_block(lines);
            }
            AgentEvent::ToolCall(call) => {
                let id = call.tool_call_id.clone();
                match self.book.fork_of_call(&id).cloned() {
                    Some(parent) => {
                        if let Some(view) = self
                            .calls
                            .iter_mut()
                            .find(|c| c.call.tool_call_id == parent)
                        {
                            view.running_children.push(call.title.clone());
                        }
                        self.child_calls.insert(id, CallView::new(call.clone()));
                    }
                    None => {
                        self.flush_text();
                        self.activity = call.title.clone();
                        self.calls.push(CallView::new(call.clone()));
                    }
                }
            }
            AgentEvent::ToolCallUpdate(update) => self.update_call(update),
            AgentEvent::Usage {
                usage, cost_usd, ..
            } => {
                self.usage += *usage;
                if let Some(cost) = cost_usd {
                    *self.cost_usd.get_or_insert(0.0) += cost;
                }
            }
            AgentEvent::Compacted(compaction) => {
                self.flush_text();
                let line = format!("  ⎿ {}", compaction.describe());
                self.keep_block([Line::from(Span::styled(line, self.palette.dim()))]);
            }
            AgentEvent::Notice { message } => {
                self.flush_text();
                let warning = self.palette.paint(Color::Yellow);
                self.keep_block([Line::from(Span::styled(format!("  ⚠ {message}"), warning))]);
            }
            AgentEvent::QuestionAnswered { answer, .. } => {
                self.keep_lines([Line::from(Span::styled(
                    format!(
                        "  ⎿ answered {}",
                        serde_json::to_string(&answer.answers).unwrap_or_default()
                    ),
                    self.palette.dim(),
                ))]);
            }
            AgentEvent::TurnEnded {
                role: Role::Assistant,
                parent_fork_tool_call_id: None,
                ..
            } => self.flush_text(),
            AgentEvent::ChatEnded(summary) => {
                self.flush_text();
                self.end_running_calls();
                let ending = match summary.stop_reason {
                    StopReason::EndTurn | StopReason::Paused => None,
                    StopReason::Cancelled => Some("Interrupted: the turn was cancelled".to_owned()),
                    StopReason::MaxTokens => {
                        Some("The answer hit the model's output token limit".to_owned())
                    }
                    StopReason::MaxTurnRequests => {
                        Some("The turn made as many model requests as it may".to_owned())
                    }
                    StopReason::MaxBudget => Some(
                        "Stopped: the next request would go past the session's budget".to_owned(),
                    ),
                    StopReason::Refusal => Some("The model refused to go on".to_owned()),
                    StopReason::HookStopped => Some("Stopped by a hook".to_owned()),
                };
                if let Some(ending) = ending {
                    let red = self.palette.paint(Color::Red);
                    self.keep_lines([Line::from(Span::styled(format!("  ⎿ {ending}"), red))]);
                }
            }
            AgentEvent::ChatFailed { message, .. } => {
                self.flush_text();
                self.end_running_calls();
                let red = self.palette.paint(Color::Red);
                self.keep_block([Line::from(Span::styled(format!("✗ {message}"), red))]);
            }
            AgentEvent::ChatInterrupted { .. } => {
                self.flush_text();
                let red = self.palette.paint(Color::Red);
                let line = format!("  ⎿ {CHAT_INTERRUPTED}");
                self.keep_lines([Line::from(Span::styled(line, red))]);
            }
            _ => {}
        }
    }

    fn update_call(&mut self, update: &agentry::event::ToolCallUpdate) {
        let id = &update.tool_call_id;
        let Some(call) = self.book.get(id).cloned() else {
            return;
        };
        let parent = self.book.fork_of_call(id).cloned();
        let view = match &parent {
            Some(_) => self.child_calls.get_mut(id),
            None => self.calls.iter_mut().find(|c| &c.call.tool_call_id == id),
        };
        let Some(view) = view else {
            return;
        };
        view.call = call;
        if let Some(content) = &update.content {
            view.content = content.clone();
        }
        if let Some(raw_output) = &update.raw_output {
            view.raw_output = Some(raw_output.clone());
        }
        if let Some(ms) = update.duration_ms {
            view.duration = Some(Duration::from_millis(ms));
        }
        if !view.call.status.is_final() {
            return;
        }
        match parent {
            Some(parent) => {
                let Some(done) = self.child_calls.remove(id) else {
                    return;
                };
                let line = done.child_line(self.palette);
                if let Some(owner) = self
                    .calls
                    .iter_mut()
                    .find(|c| c.call.tool_call_id == parent)
                {
                    if let Some(at) = owner
                        .running_children
                        .iter()
                        .position(|t| *t == done.call.title)
                    {
                        owner.running_children.remove(at);
                    }
                    owner.children.push(line);
                }
            }
            None => {
                let Some(at) = self.calls.iter().position(|c| &c.call.tool_call_id == id) else {
                    return;
                };
                let done = self.calls.remove(at);
                self.keep_block(done.lines(self.palette, ""));
                self.activity = self
                    .calls
                    .last()
                    .map_or_else(|| "Thinking".to_owned(), |c| c.call.title.clone());
            }
        }
    }

    /// A chat that ended leaves no call drawn as running.
    fn end_running_calls(&mut self) {
        for call in std::mem::take(&mut self.calls) {
            self.keep_block(call.lines(self.palette, ""));
        }
        self.child_calls.clear();
    }

    fn user_message(&mut self, content: &[ContentBlock]) {
        self.flush_text();
        let mut text = String::new();
        for block in content {
            match block {
                ContentBlock::Text { text: part } => text.push_str(part),
                ContentBlock::Resource { uri, .. } | ContentBlock::ResourceLink { uri, .. } => {
                    text.push_str(&format!("\n[attached {uri}]"))
                }
                ContentBlock::Image { mime_type, .. } => {
                    text.push_str(&format!("\n[image {mime_type}]"))
                }
                other => text.push_str(&format!("\n{}", agentry::model::resource_text(other))),
            }
        }
        let style = self.palette.bold();
        let mut lines = Vec::new();
        for (index, line) in text.trim_end().lines().enumerate() {
            let lead = if index == 0 { "› " } else { "  " };
            lines.push(Line::from(vec![
                Span::styled(lead, self.palette.dim()),
                Span::styled(line.to_owned(), style),
            ]));
        }
        self.keep_block(lines);
    }

    /// Keeps the reasoning (folded) and the answer so far.
    fn flush_text(&mut self) {
        self.fold_thinking();
        let look = self.look();
        let rest = self.answer.finish(look);
        self.keep_answer(rest);
        self.answer = MarkdownStream::new();
        self.answer_fresh = true;
    }

    /// Keeps the reasoning, dimmed, its first lines only.
    fn fold_thinking(&mut self) {
        let thinking = std::mem::take(&mut self.thinking);
        let lines: Vec<&str> = thinking
            .trim()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        if lines.is_empty() {
            return;
        }
        let mut folded = vec![self.thinking_heading()];
        let style = self.palette.dim().add_modifier(Modifier::ITALIC);
        for line in lines.iter().take(THINKING_LINES) {
            folded.push(Line::from(Span::styled(format!("  {line}"), style)));
        }
        if lines.len() > THINKING_LINES {
            folded.push(Line::from(Span::styled(
                format!(
                    "  … {} more lines of reasoning",
                    lines.len() - THINKING_LINES
                ),
                self.palette.dim(),
            )));
        }
        self.keep_block(folded);
    }

    fn thinking_heading(&self) -> Line<'static> {
        Line::from(Span::styled(
            "✻ Thinking",
            self.palette.dim().add_modifier(Modifier::ITALIC),
        ))
    }

    fn look(&self) -> Look {
        Look {
            width: self.width,
            color: self.palette.color,
        }
    }
}
