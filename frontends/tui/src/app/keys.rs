//! Keys from the terminal: editing, completion, history, interrupting the chat, the mode.

use super::{App, EXIT_WINDOW};
use crate::commands::Builtin;
use crate::complete::complete;
use crate::editor::Edit;
use crate::overlay::Overlay;
use agentry::permission::PermissionMode;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::time::Instant;

impl App {
    pub(super) async fn terminal_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(key).await,
            Event::Paste(text) => {
                if let Some(Overlay::Questions(_)) | None = &self.overlay {
                    self.editor.insert(&text);
                    self.refresh_completion();
                }
            }
            Event::Resize(width, height) => self.follow_terminal_size((width, height)),
            _ => {}
        }
    }

    pub(super) async fn key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.interrupt();
        }
        if let Some(overlay) = &mut self.overlay {
            let outcome = overlay.key(key);
            self.overlay_outcome(outcome).await;
            return;
        }
        if ctrl && key.code == KeyCode::Char('d') {
            if self.editor.is_empty() {
                self.quit = true;
            }
            return;
        }
        if key.code == KeyCode::Esc {
            if self.completion.take().is_none() {
                self.stop_work();
                self.esc_on_idle_prompt();
            }
            return;
        }
        if key.code == KeyCode::BackTab {
            return self.next_mode();
        }
        if self.completion_key(key) {
            return;
        }
        match self.editor.key(key) {
            Edit::Enter => self.submit().await,
            Edit::UpFromTop => {
                let current = self.editor.text().to_owned();
                if let Some(entry) = self.history.previous(&current) {
                    let entry = entry.to_owned();
                    self.editor.set(&entry);
                }
            }
            Edit::DownFromBottom => {
                if let Some(entry) = self.history.following() {
                    let entry = entry.to_owned();
                    self.editor.set(&entry);
                }
            }
            Edit::Changed => {
                self.exit_armed = None;
                self.refresh_completion();
            }
            Edit::Ignored => {}
        }
    }

    /// Keys the completion list takes: Tab and Enter accept, arrows move. Returns whether it
    /// took the key.
    pub(super) fn completion_key(&mut self, key: KeyEvent) -> bool {
        let Some((completion, highlighted)) = &mut self.completion else {
            return false;
        };
        let count = completion.suggestions.len();
        match key.code {
            KeyCode::Up => *highlighted = (*highlighted + count - 1) % count,
            KeyCode::Down => *highlighted = (*highlighted + 1) % count,
            KeyCode::Tab | KeyCode::Enter => {
                let chosen = completion.suggestions[*highlighted].text.clone();
                let start = completion.start;
                let is_command = chosen.starts_with('/');
                self.completion = None;
                // Enter on a command runs it.
                if key.code == KeyCode::Enter && is_command {
                    self.editor.replace_before_cursor(start, &chosen);
                    return false;
                }
                let spaced = if chosen.ends_with('/') {
                    chosen
                } else {
                    format!("{chosen} ")
                };
                self.editor.replace_before_cursor(start, &spaced);
                if spaced.ends_with('/') {
                    self.refresh_completion();
                }
            }
            _ => return false,
        }
        true
    }

    pub(super) fn refresh_completion(&mut self) {
        let mut commands: Vec<(String, Option<String>)> = Builtin::ALL
            .iter()
            .map(|b| (b.name().to_owned(), Some(b.description().to_owned())))
            .collect();
        for (name, command) in self.agent.slash_commands().iter() {
            commands.push((name.to_owned(), command.description()));
        }
        commands.sort();
        self.completion =
            complete(self.editor.before_cursor(), &commands, &self.files).map(|c| (c, 0));
    }

    /// Ctrl-C: answers an open question "cancelled" and stops the chat or command; on an
    /// empty prompt, twice, leaves.
    pub(super) fn interrupt(&mut self) {
        if let Some(mut overlay) = self.overlay.take() {
            overlay.cancel();
            self.stop_work();
            self.next_question();
            return;
        }
        if self.busy() {
            return self.stop_work();
        }
        if !self.editor.is_empty() {
            self.editor.take();
            self.completion = None;
            return;
        }
        if self.exit_armed.is_some_and(|at| at.elapsed() < EXIT_WINDOW) {
            self.quit = true;
        } else {
            self.exit_armed = Some(Instant::now());
        }
    }

    pub(super) fn stop_work(&mut self) {
        if let Some(running) = &self.running {
            running.cancel.cancel();
        }
        if let Some(shell) = &self.shell {
            shell.stop.cancel();
        }
        self.queued.clear();
    }

    pub(super) fn next_mode(&mut self) {
        let Some(session) = &mut self.session else {
            return self.note_dim("The mode changes when the agent is done.");
        };
        let current = session.options().policy.mode;
        let at = PermissionMode::ALL
            .iter()
            .position(|m| *m == current)
            .unwrap_or(0);
        let next = PermissionMode::ALL[(at + 1) % PermissionMode::ALL.len()];
        session.set_mode(next);
    }
}
