//! The interactive loop: keys, pastes and resizes from the terminal, events and questions from
//! the running chat, a spinner's ticks; after each, one frame on the inline [`Screen`].

use crate::ask::{AskTheUser, Asked};
use crate::complete::{Completion, FileIndex};
use crate::conversation::Conversation;
use crate::editor::Editor;
use crate::history::History;
use crate::overlay::Overlay;
use crate::palette::Palette;
use crate::screen::Screen;
use crate::shell::ShellRun;
use crate::{Start, TuiError, TuiSettings};

mod chat;
mod draw;
mod keys;
mod plugins;
mod rewind;
mod shell_job;
mod slash;
use agentry::agent::{Agent, Session, SessionOptions};
use agentry::error::AgentError;
use agentry::event::{AgentEvent, ChatSummary};
use agentry::hooks::SessionEndReason;
use agentry::ids::SessionId;
use crossterm::event::EventStream;
use futures::StreamExt;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use shell_job::ShellJob;
use std::collections::VecDeque;
use std::io::Stdout;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The least time between two frames while events stream in.
const FRAME: Duration = Duration::from_millis(16);
/// How long a first Ctrl-C on an empty prompt waits for the second.
const EXIT_WINDOW: Duration = Duration::from_secs(2);
/// The largest file attached with `@path`.
const MOST_ATTACHED_BYTES: u64 = 256 * 1024;

/// A chat in flight: the session is the task's until it ends.
struct Running {
    task: JoinHandle<(Session, Result<ChatSummary, AgentError>)>,
    cancel: CancellationToken,
    started: Instant,
}

/// The terminal's state.
pub(crate) struct App {
    agent: Agent,
    settings: TuiSettings,
    palette: Palette,
    session: Option<Session>,
    running: Option<Running>,
    shell: Option<ShellJob>,
    conversation: Conversation,
    screen: Screen<Stdout>,
    editor: Editor,
    history: History,
    completion: Option<(Completion, usize)>,
    files: FileIndex,
    overlay: Option<Overlay>,
    waiting_questions: VecDeque<Asked>,
    /// `!command` outputs that go with the next message.
    context: Vec<String>,
    /// Messages typed while the agent worked, sent in turn after it.
    queued: VecDeque<String>,
    exit_armed: Option<Instant>,
    /// When Esc was pressed on an empty, idle prompt: a second press opens the rewind.
    rewind_armed: Option<Instant>,
    events: mpsc::UnboundedSender<AgentEvent>,
    ask: AskTheUser,
    quit: bool,
}

impl App {
    pub(crate) fn new(
        agent: Agent,
        settings: TuiSettings,
        screen: Screen<Stdout>,
        events: mpsc::UnboundedSender<AgentEvent>,
        ask: AskTheUser,
    ) -> Self {
        let palette = settings.palette;
        let width = screen.width();
        Self {
            files: FileIndex::build(&settings.cwd),
            history: History::open(settings.history_file.clone()),
            agent,
            palette,
            session: None,
            running: None,
            shell: None,
            conversation: Conversation::new(palette, width),
            screen,
            editor: Editor::new(),
            completion: None,
            overlay: None,
            waiting_questions: VecDeque::new(),
            context: Vec::new(),
            queued: VecDeque::new(),
            exit_armed: None,
            rewind_armed: None,
            events,
            ask,
            quit: false,
            settings,
        }
    }

    /// Runs until the user leaves.
    pub(crate) async fn run(
        mut self,
        mut events: mpsc::UnboundedReceiver<AgentEvent>,
        mut asked: mpsc::UnboundedReceiver<Asked>,
    ) -> Result<(), TuiError> {
        self.open_session()?;
        if let Some(first) = self.settings.first_message.take() {
            self.history.record(&first);
            self.dispatch(first).await;
        }
        let mut input = EventStream::new();
        let mut ticks = tokio::time::interval(Duration::from_millis(80));
        let mut last_frame = Instant::now() - FRAME;
        let mut frame_due = true;
        loop {
            if frame_due && last_frame.elapsed() >= FRAME {
                self.draw()?;
                last_frame = Instant::now();
                frame_due = false;
            }
            if self.quit {
                break;
            }
            let next_frame = tokio::time::Instant::from_std(last_frame + FRAME);
            tokio::select! {
                terminal = input.next() => match terminal {
                    Some(Ok(event)) => {
                        self.terminal_event(event).await;
                        // Typing shows at once.
                        last_frame = Instant::now() - FRAME;
                    }
                    Some(Err(error)) => return Err(TuiError::Terminal(error)),
                    None => self.quit = true,
                },
                Some(event) = events.recv() => {
                    self.conversation.apply(&event);
                    while let Ok(event) = events.try_recv() {
                        self.conversation.apply(&event);
                    }
                }
                Some(question) = asked.recv() => self.asked(question),
                finished = wait_chat(&mut self.running) => {
                    // Every event of the chat is in the channel before its task ends.
                    while let Ok(event) = events.try_recv() {
                        self.conversation.apply(&event);
                    }
                    self.chat_ended(finished).await;
                }
                finished = wait_shell(&mut self.shell) => self.shell_ended(finished).await,
                _ = ticks.tick(), if self.busy() || self.overlay.is_some() => {
                    if self.overlay.as_ref().is_some_and(Overlay::abandoned) {
                        self.overlay = None;
                        self.next_question();
                    }
                }
                () = tokio::time::sleep_until(next_frame), if frame_due => {}
            }
            frame_due = true;
        }
        self.leave().await;
        self.screen.clear_live()?;
        Ok(())
    }

    /// Opens the session the settings ask for.
    fn open_session(&mut self) -> Result<(), TuiError> {
        let start = std::mem::replace(&mut self.settings.start, Start::New);
        match start {
            Start::New => self.new_session()?,
            Start::Continue => match self.latest_session() {
                Some(id) => self.resume(&id)?,
                None => {
                    self.new_session()?;
                    self.note_dim("No earlier session in this folder: a new one starts.");
                }
            },
            Start::Resume(Some(id)) => self.resume(&id)?,
            Start::Resume(None) => {
                self.new_session()?;
                self.pick_session();
            }
        }
        Ok(())
    }

    fn session_options(&self) -> SessionOptions {
        let mut options = SessionOptions::new(self.settings.cwd.clone());
        options.policy = self.settings.policy.clone();
        options.sandbox = self.settings.sandbox;
        options
    }

    fn new_session(&mut self) -> Result<(), TuiError> {
        self.session = Some(self.agent.new_session(self.session_options())?);
        Ok(())
    }

    /// Takes up a stored session, drawing its conversation again.
    fn resume(&mut self, id: &SessionId) -> Result<(), TuiError> {
        let stored = self.agent.load_session(id)?;
        let mut session = self.agent.resume_session(id, self.session_options())?;
        if let Some(current) = &self.session {
            session.set_mode(current.options().policy.mode);
            session.set_model(current.model().clone());
        }
        self.note_dim(&format!("Resuming session {id}"));
        let mut replay = Conversation::new(self.palette, self.screen.width());
        for event in &stored.events {
            replay.apply(event);
        }
        let lines = replay.take_done();
        self.conversation.note(lines);
        self.session = Some(session);
        Ok(())
    }

    /// The most recent session of this folder.
    fn latest_session(&self) -> Option<SessionId> {
        let store = self.agent.store()?;
        let sessions = store.list().ok()?;
        sessions
            .into_iter()
            .find(|meta| meta.cwd == self.settings.cwd)
            .map(|meta| meta.id)
    }

    fn busy(&self) -> bool {
        self.running.is_some() || self.shell.is_some()
    }

    fn since(&self) -> Duration {
        self.running
            .as_ref()
            .map(|r| r.started)
            .or(self.shell.as_ref().map(|s| s.started))
            .map_or(Duration::ZERO, |started| started.elapsed())
    }

    /// Runs the session's `SessionEnd` hooks, showing what they say.
    async fn end_session(&mut self, reason: SessionEndReason) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        for notice in session.end(reason).await {
            self.note_dim(&notice);
        }
    }

    fn note_dim(&mut self, text: &str) {
        self.conversation.note([Line::from(Span::styled(
            format!("  {text}"),
            self.palette.dim(),
        ))]);
    }

    fn note_error(&mut self, text: &str) {
        self.conversation.note([Line::from(Span::styled(
            format!("  ✗ {text}"),
            self.palette.paint(Color::Red),
        ))]);
    }

    /// Before leaving: stops the chat and any command, and waits for them to end (so no
    /// process is left behind).
    async fn leave(&mut self) {
        if let Some(mut overlay) = self.overlay.take() {
            overlay.cancel();
        }
        self.stop_work();
        if let Some(running) = self.running.take()
            && let Ok((session, _)) = running.task.await
        {
            self.session = Some(session);
        }
        self.end_session(SessionEndReason::PromptInputExit).await;
        if let Some(shell) = self.shell.take() {
            let _ = shell.task.await;
        }
        let _ = self.draw();
    }
}

async fn wait_chat(
    running: &mut Option<Running>,
) -> Result<(Session, Result<ChatSummary, AgentError>), tokio::task::JoinError> {
    match running {
        Some(running) => (&mut running.task).await,
        None => std::future::pending().await,
    }
}

async fn wait_shell(
    shell: &mut Option<ShellJob>,
) -> Result<std::io::Result<ShellRun>, tokio::task::JoinError> {
    match shell {
        Some(shell) => (&mut shell.task).await,
        None => std::future::pending().await,
    }
}
