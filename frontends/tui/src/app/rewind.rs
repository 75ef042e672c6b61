//! Rewinding from the terminal: `/rewind`, or Esc twice on an empty prompt, opens the
//! session's messages; the rewind runs once the menus have said what to restore (and whether
//! to overwrite files changed by hand). A rewound conversation's message goes back into the
//! prompt, to edit and send again.

use super::App;
use crate::overlay::Overlay;
use crate::rewind::{self, Step};
use agentry::agent::RewindScope;
use agentry::ids::TurnId;
use ratatui::text::{Line, Span};
use std::time::{Duration, Instant};

/// How soon a second Esc must follow the first to open the rewind.
const DOUBLE_ESC: Duration = Duration::from_millis(800);

impl App {
    /// Esc on an empty prompt while nothing runs: the second within [`DOUBLE_ESC`] opens the
    /// rewind.
    pub(super) fn esc_on_idle_prompt(&mut self) {
        if self.busy() || !self.editor.is_empty() {
            return;
        }
        match self.rewind_armed.take() {
            Some(at) if at.elapsed() < DOUBLE_ESC => self.pick_rewind(),
            _ => self.rewind_armed = Some(Instant::now()),
        }
    }

    /// Opens the menu of the messages to rewind to.
    pub(super) fn pick_rewind(&mut self) {
        let Some(session) = &self.session else {
            return self.note_dim("A rewind waits until the agent is done.");
        };
        match session.rewind_points() {
            Ok(points) if points.is_empty() => self.note_dim("Nothing to rewind yet."),
            Ok(points) => self.open_rewind(rewind::messages(points, self.palette)),
            Err(error) => self.note_error(&error.to_string()),
        }
    }

    fn open_rewind(&mut self, (menu, stage): (crate::menu::Menu, rewind::Stage)) {
        self.overlay = Some(Overlay::Rewind { menu, stage });
    }

    /// Takes a rewind a step further: the next menu, or the rewind itself.
    pub(super) async fn rewind_step(&mut self, step: Option<Step>) {
        self.overlay = None;
        match step {
            None => {}
            Some(Step::Message(point)) => self.open_rewind(rewind::what(point, self.palette)),
            Some(Step::What(chat, scope)) => self.rewind_unless_hand_edited(chat, scope).await,
            Some(Step::Confirmed(chat, scope, overwrite)) => {
                self.rewind(chat, scope, overwrite).await
            }
        }
        if self.overlay.is_none() {
            self.next_question();
        }
    }

    /// Rewinds, unless files changed by hand would be overwritten: then asks first.
    async fn rewind_unless_hand_edited(&mut self, chat: TurnId, scope: RewindScope) {
        if scope.files {
            let Some(session) = &self.session else { return };
            match session.plan_rewind(&chat).await {
                Ok(plan) if !plan.hand_edited.is_empty() => {
                    let menu = rewind::hand_edits(chat, scope, &plan.hand_edited, self.palette);
                    return self.open_rewind(menu);
                }
                Ok(_) => {}
                Err(error) => return self.note_error(&error.to_string()),
            }
        }
        self.rewind(chat, scope, false).await;
    }

    async fn rewind(&mut self, chat: TurnId, scope: RewindScope, overwrite: bool) {
        let Some(session) = &mut self.session else {
            return;
        };
        match session.rewind(&chat, scope, overwrite).await {
            Ok(rewound) => {
                let mut lines = vec![Line::from(Span::styled(
                    "  ── Rewound ──",
                    self.palette.bold(),
                ))];
                let mut described = rewound.describe();
                if described.is_empty() {
                    described.push("nothing changed since then".to_owned());
                }
                for line in described {
                    lines.push(Line::from(Span::styled(
                        format!("  {line}"),
                        self.palette.dim(),
                    )));
                }
                self.conversation.note(lines);
                if rewound.conversation {
                    self.editor.set(&agentry::model::text_of(&rewound.prompt));
                }
            }
            Err(error) => self.note_error(&format!("The rewind failed: {error}")),
        }
    }
}
