//! A `!command` typed at the prompt: run in the session's folder beside the chat, its output
//! shown in the conversation (its last 20 lines) and passed to the model with the next message.
//! The terminal runs its own commands this way too (`/mcp login`), kept from the model.

use super::App;
use crate::shell::ShellRun;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use std::time::Instant;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A `!command` in flight.
pub(super) struct ShellJob {
    pub(super) task: JoinHandle<std::io::Result<ShellRun>>,
    pub(super) stop: CancellationToken,
    pub(super) started: Instant,
    /// Whether the model reads its output with the next message (the user's `!command`).
    pub(super) for_model: bool,
}

impl App {
    pub(super) fn start_shell(&mut self, command: String) {
        if command.is_empty() {
            return;
        }
        self.conversation.note([
            Line::default(),
            Line::from(vec![
                Span::styled("! ", self.palette.paint(Color::Magenta)),
                Span::styled(command.clone(), self.palette.bold()),
            ]),
        ]);
        self.run_shell(command, true);
    }

    /// Runs `command` beside the chat, its output shown and, when `for_model`, passed to the
    /// model with the next message.
    pub(super) fn run_shell(&mut self, command: String, for_model: bool) {
        let stop = CancellationToken::new();
        let cwd = self.settings.cwd.clone();
        let token = stop.clone();
        let task = tokio::spawn(async move { crate::shell::run(&command, &cwd, token).await });
        self.shell = Some(ShellJob {
            task,
            stop,
            started: Instant::now(),
            for_model,
        });
    }

    pub(super) async fn shell_ended(
        &mut self,
        finished: Result<std::io::Result<ShellRun>, tokio::task::JoinError>,
    ) {
        let for_model = self.shell.take().is_some_and(|job| job.for_model);
        match finished {
            Ok(Ok(run)) => {
                let mut lines: Vec<Line<'static>> = Vec::new();
                let output: Vec<&str> = run.output.trim_end().lines().collect();
                let skipped = output.len().saturating_sub(20);
                if skipped > 0 {
                    lines.push(Line::from(Span::styled(
                        format!("  ⎿ … {skipped} lines before"),
                        self.palette.dim(),
                    )));
                }
                for (index, line) in output[skipped..].iter().enumerate() {
                    let lead = if index == 0 && skipped == 0 {
                        "  ⎿ "
                    } else {
                        "    "
                    };
                    lines.push(Line::from(vec![
                        Span::styled(lead, self.palette.dim()),
                        Span::raw(line.to_string()),
                    ]));
                }
                let ending = match (run.stopped, run.exit_code) {
                    (true, _) => Some("stopped".to_owned()),
                    (false, Some(0)) => None,
                    (false, Some(code)) => Some(format!("exit code {code}")),
                    (false, None) => Some("killed by a signal".to_owned()),
                };
                if let Some(ending) = ending {
                    lines.push(Line::from(Span::styled(
                        format!("    {ending}"),
                        self.palette.paint(Color::Red),
                    )));
                }
                self.conversation.note(lines);
                if for_model {
                    self.context.push(run.for_model());
                }
            }
            Ok(Err(error)) => self.note_error(&format!("The command could not run: {error}")),
            Err(error) => self.note_error(&format!("The command stopped: {error}")),
        }
        self.send_queued().await;
    }
}
