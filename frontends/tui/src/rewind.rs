//! The menus of a rewind (`/rewind`, or Esc twice on an empty prompt): which message to go
//! back to before, what to restore, and — when files were changed by hand since the agent's
//! last change — whether to overwrite them.

use crate::menu::{Choice, Menu, Picked};
use crate::palette::Palette;
use agentry::agent::{RewindPoint, RewindScope};
use agentry::checkpoint::FileChange;
use agentry::ids::TurnId;
use ratatui::text::{Line, Span};

/// Where a rewind being chosen stands.
pub enum Stage {
    /// Choosing the message: the chats, in the menu's order.
    Message(Vec<RewindPoint>),
    /// Choosing what to restore, for this chat.
    What(RewindPoint),
    /// Choosing whether to overwrite the hand-edited files.
    HandEdits(TurnId, RewindScope),
}

/// What a choice in a rewind's menu decided.
pub enum Step {
    /// The message: next, what to restore.
    Message(RewindPoint),
    /// What to restore: next, the rewind (after asking about hand edits, if any).
    What(TurnId, RewindScope),
    /// Whether to overwrite the hand-edited files: the rewind.
    Confirmed(TurnId, RewindScope, bool),
}

/// What to restore, in the menu's order.
const WHATS: [(&str, RewindScope); 3] = [
    ("Files and conversation", RewindScope::BOTH),
    (
        "Conversation only",
        RewindScope {
            files: false,
            conversation: true,
        },
    ),
    (
        "Files only",
        RewindScope {
            files: true,
            conversation: false,
        },
    ),
];

/// The first line of a prompt, for a menu.
fn first_line(prompt: &str) -> String {
    let line = prompt.lines().next().unwrap_or_default();
    match line.char_indices().nth(70) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// The menu of the messages to go back to, the latest first.
pub fn messages(mut points: Vec<RewindPoint>, palette: Palette) -> (Menu, Stage) {
    points.reverse();
    let title = vec![Line::from(Span::styled(
        "Rewind to before which message?",
        palette.bold(),
    ))];
    let choices = points
        .iter()
        .map(|point| {
            let detail = (!point.files_changed).then(|| "no files changed since".to_owned());
            Choice::new(first_line(&point.prompt)).detail(detail)
        })
        .collect();
    (Menu::new(title, choices), Stage::Message(points))
}

/// The menu of what to restore.
pub fn what(point: RewindPoint, palette: Palette) -> (Menu, Stage) {
    let title = vec![Line::from(vec![
        Span::styled("Restore what, to before “", palette.bold()),
        Span::styled(first_line(&point.prompt), palette.bold()),
        Span::styled("”?", palette.bold()),
    ])];
    let choices = WHATS.iter().map(|(label, _)| Choice::new(*label)).collect();
    (Menu::new(title, choices), Stage::What(point))
}

/// The question about files changed by hand.
pub fn hand_edits(
    chat: TurnId,
    scope: RewindScope,
    files: &[FileChange],
    palette: Palette,
) -> (Menu, Stage) {
    let mut title = vec![Line::from(Span::styled(
        "These files were changed by hand since the agent's last change:",
        palette.bold(),
    ))];
    for file in files {
        title.push(Line::from(Span::styled(
            format!("  {}", file.path),
            palette.dim(),
        )));
    }
    let choices = vec![
        Choice::new("Keep them as they are").key('k'),
        Choice::new("Overwrite them too").key('o'),
    ];
    (Menu::new(title, choices), Stage::HandEdits(chat, scope))
}

impl Stage {
    /// What a key in `menu` at this stage decided: `None` while nothing is, `Some(None)` when
    /// the rewind was cancelled.
    pub fn key(&self, menu: &mut Menu, key: crossterm::event::KeyEvent) -> Option<Option<Step>> {
        let picked = match menu.key(key) {
            Picked::Nothing => return None,
            Picked::Dismissed => return Some(None),
            Picked::Choices(picked) => picked[0],
        };
        Some(Some(match self {
            Stage::Message(points) => Step::Message(points[picked].clone()),
            Stage::What(point) => Step::What(point.chat.clone(), WHATS[picked].1),
            Stage::HandEdits(chat, scope) => Step::Confirmed(chat.clone(), *scope, picked == 1),
        }))
    }
}
