//! The interactive loop: keys, pastes and resizes from the terminal, events and questions from
//! the running chat, a spinner's ticks; after each, one frame on the inline [`Screen`].

use crate::ask::{AskTheUser, Asked};
use crate::commands::Builtin;
use crate::complete::{Completion, FileIndex, complete};
use crate::conversation::Conversation;
use crate::editor::{Edit, Editor};
use crate::history::History;
use crate::overlay::{Outcome, Overlay, QuestionsOverlay};
use crate::palette::Palette;
use crate::screen::{CursorAt, Screen};
use crate::shell::ShellRun;
use crate::{Start, TuiError, TuiSettings};

mod rewind;
mod shell_job;
mod slash;
use agentry::agent::{Agent, ChatIo, ChatOptions, Session, SessionOptions};
use agentry::error::AgentError;
use agentry::event::{AgentEvent, ChatSummary};
use agentry::ids::SessionId;
use agentry::permission::PermissionMode;
use agentry::tool::ContentBlock;
use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use shell_job::ShellJob;
use std::collections::VecDeque;
use std::io::Stdout;
use std::sync::Arc;
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

    /// Lays out for the terminal's size now, or `fallback` when it cannot be read. A resize
    /// event may have waited while the terminal changed again, and a frame laid out for a size
    /// the terminal has left moves the cursor by the wrong number of rows: over lines of the
    /// scrollback, which it would erase.
    fn follow_terminal_size(&mut self, fallback: (u16, u16)) {
        // A terminal that reports no size (0 × 0) has none to follow.
        let (width, height) = crossterm::terminal::window_size()
            .ok()
            .filter(|size| size.columns > 0 && size.rows > 0)
            .map_or(fallback, |size| (size.columns, size.rows));
        self.screen.resize(width, height);
        self.conversation.set_width(width);
    }

    /// Draws one frame, laid out for the terminal's size as it is now.
    fn draw(&mut self) -> std::io::Result<()> {
        self.follow_terminal_size(self.screen.size());
        let width = self.screen.width();
        let keep = self.conversation.take_done();
        let mut live = self.conversation.live(self.since());
        if let Some(shell) = &self.shell {
            live.push(Line::default());
            live.push(crate::status::line(
                "Running your command",
                shell.started.elapsed(),
                Default::default(),
                self.palette,
                width,
            ));
        } else if self.running.is_some() {
            live.push(Line::default());
            live.push(crate::status::line(
                self.conversation.activity(),
                self.since(),
                self.conversation.usage(),
                self.palette,
                width,
            ));
        }
        live.push(Line::default());
        let cursor = match &self.overlay {
            Some(overlay) => {
                let (lines, cursor) = overlay.lines(self.palette, width);
                let top = live.len();
                live.extend(lines);
                cursor.map(|(row, column)| CursorAt {
                    row: top + row,
                    column,
                })
            }
            None => Some(self.input_lines(&mut live, width)),
        };
        self.screen.draw(&keep, &live, cursor, self.palette.color)
    }

    /// The input box, its completions and the footer; returns where the cursor goes.
    fn input_lines(&self, live: &mut Vec<Line<'static>>, width: u16) -> CursorAt {
        let rule = Line::from(Span::styled(
            "─".repeat(usize::from(width)),
            self.palette.dim(),
        ));
        live.push(rule.clone());
        let prompt = Span::styled("› ", self.palette.paint(Color::Cyan));
        let (lines, (row, column)) = self.editor.lines(prompt, width);
        let cursor = CursorAt {
            row: live.len() + row,
            column,
        };
        live.extend(lines);
        live.push(rule);
        if let Some((completion, highlighted)) = &self.completion {
            for (index, suggestion) in completion.suggestions.iter().enumerate() {
                let style = if index == *highlighted {
                    self.palette.selected()
                } else {
                    Default::default()
                };
                let mut spans = vec![Span::styled(format!("  {}", suggestion.text), style)];
                if let Some(detail) = &suggestion.detail {
                    spans.push(Span::styled(format!("  {detail}"), self.palette.dim()));
                }
                live.push(Line::from(spans));
            }
        } else {
            live.push(self.footer());
        }
        cursor
    }

    fn footer(&self) -> Line<'static> {
        if self.exit_armed.is_some_and(|at| at.elapsed() < EXIT_WINDOW) {
            return Line::from(Span::styled(
                "  Press Ctrl-C again to leave",
                self.palette.paint(Color::Yellow),
            ));
        }
        let mut parts = Vec::new();
        if self.busy() {
            parts.push("ctrl-c to interrupt".to_owned());
        }
        if let Some(session) = &self.session {
            let mode = session.options().policy.mode;
            parts.push(format!("{} mode", mode.title().to_lowercase()));
            parts.push(session.model().name().to_owned());
        }
        if !self.queued.is_empty() {
            parts.push(format!("{} queued", self.queued.len()));
        }
        if !self.context.is_empty() {
            parts.push(format!(
                "{} command output(s) go with your next message",
                self.context.len()
            ));
        }
        parts.push("/help".to_owned());
        Line::from(Span::styled(
            format!("  {}", parts.join(" · ")),
            self.palette.dim(),
        ))
    }

    async fn terminal_event(&mut self, event: Event) {
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

    async fn key(&mut self, key: KeyEvent) {
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
    fn completion_key(&mut self, key: KeyEvent) -> bool {
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

    fn refresh_completion(&mut self) {
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
    fn interrupt(&mut self) {
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

    fn stop_work(&mut self) {
        if let Some(running) = &self.running {
            running.cancel.cancel();
        }
        if let Some(shell) = &self.shell {
            shell.stop.cancel();
        }
        self.queued.clear();
    }

    fn next_mode(&mut self) {
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

    async fn submit(&mut self) {
        let text = self.editor.take();
        self.completion = None;
        self.exit_armed = None;
        if text.trim().is_empty() {
            return;
        }
        self.history.record(&text);
        if self.busy() {
            self.queued.push_back(text);
            return;
        }
        self.dispatch(text).await;
    }

    /// Runs what was typed: a shell command, a command, or a message to the agent.
    async fn dispatch(&mut self, text: String) {
        let trimmed = text.trim();
        if let Some(command) = trimmed.strip_prefix('!') {
            return self.start_shell(command.trim().to_owned());
        }
        if let Some((builtin, rest)) = Builtin::parse(trimmed) {
            let rest = rest.to_owned();
            return self.builtin(builtin, &rest).await;
        }
        let mut content = if trimmed.starts_with('/') {
            match self.agent.slash_commands().expand(trimmed).await {
                Some(Ok(content)) => content,
                Some(Err(problem)) => return self.note_error(&problem),
                None if is_command_word(trimmed) => {
                    let name = trimmed.split_whitespace().next().unwrap_or_default();
                    return self.note_error(&format!("Unknown command {name}: /help lists them."));
                }
                None => self.attachments(&text),
            }
        } else {
            self.attachments(&text)
        };
        for output in self.context.drain(..).rev() {
            content.insert(0, ContentBlock::text(output));
        }
        self.start_chat(content);
    }

    /// The message with the files its `@path`s name attached.
    fn attachments(&mut self, text: &str) -> Vec<ContentBlock> {
        let mut content = vec![ContentBlock::text(text)];
        let mut problems = Vec::new();
        for word in text.split_whitespace() {
            let Some(name) = word.strip_prefix('@') else {
                continue;
            };
            let name = name.trim_end_matches([',', '.', ')', ':', ';', '!', '?']);
            let path = self.settings.cwd.join(name);
            let Ok(metadata) = std::fs::metadata(&path) else {
                continue;
            };
            let uri = format!("file://{}", path.display());
            if metadata.is_dir() {
                content.push(ContentBlock::ResourceLink {
                    uri,
                    name: name.to_owned(),
                    mime_type: None,
                    description: Some("a folder".to_owned()),
                });
            } else if metadata.len() > MOST_ATTACHED_BYTES {
                problems.push(format!(
                    "@{name} is over 256 KiB: not attached (the agent can read it)"
                ));
            } else {
                match std::fs::read_to_string(&path) {
                    Ok(text) => content.push(ContentBlock::Resource {
                        uri,
                        mime_type: Some("text/plain".to_owned()),
                        text: Some(text),
                    }),
                    Err(_) => problems.push(format!("@{name} is not a text file: not attached")),
                }
            }
        }
        for problem in problems {
            self.note_error(&problem);
        }
        content
    }

    fn start_chat(&mut self, content: Vec<ContentBlock>) {
        let Some(mut session) = self.session.take() else {
            return;
        };
        let cancel = CancellationToken::new();
        let io = ChatIo {
            events: Arc::new(self.events.clone()),
            permissions: Arc::new(self.ask.clone()),
            cancel: cancel.clone(),
            questions: Some(Arc::new(self.ask.clone())),
        };
        let task = tokio::spawn(async move {
            let outcome = session
                .prompt_with(content, &ChatOptions::default(), &io)
                .await;
            (session, outcome)
        });
        self.running = Some(Running {
            task,
            cancel,
            started: Instant::now(),
        });
    }

    async fn chat_ended(
        &mut self,
        finished: Result<(Session, Result<ChatSummary, AgentError>), tokio::task::JoinError>,
    ) {
        self.running = None;
        self.overlay = None;
        self.waiting_questions.clear();
        match finished {
            Ok((session, _)) => self.session = Some(session),
            Err(error) => {
                self.note_error(&format!("The chat stopped: {error}. A new session starts."));
                if let Err(error) = self.new_session() {
                    self.note_error(&error.to_string());
                }
            }
        }
        self.send_queued().await;
    }

    async fn send_queued(&mut self) {
        if let Some(next) = self.queued.pop_front() {
            Box::pin(self.dispatch(next)).await;
        }
    }

    fn asked(&mut self, question: Asked) {
        if self.overlay.is_some() {
            self.waiting_questions.push_back(question);
            return;
        }
        self.completion = None;
        self.overlay = Some(match question {
            Asked::Permission(request, answer) => {
                if let Some(whole) = crate::overlay::whole_input(&request, self.palette) {
                    self.conversation.note(whole);
                }
                Overlay::permission(&request, answer, self.palette)
            }
            Asked::Questions(request, answer) => {
                Overlay::Questions(QuestionsOverlay::new(request, answer, self.palette))
            }
        });
    }

    fn next_question(&mut self) {
        if let Some(question) = self.waiting_questions.pop_front() {
            self.asked(question);
        }
    }

    async fn overlay_outcome(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Open => return,
            Outcome::Closed => {}
            Outcome::Session(id) => {
                if let Err(error) = self.resume(&id) {
                    self.note_error(&error.to_string());
                }
            }
            Outcome::Model(spec) => self.switch_model(&spec),
            // Its next menu, if any, takes the overlay's place.
            Outcome::Rewind(step) => return self.rewind_step(step).await,
        }
        self.overlay = None;
        self.next_question();
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
        if let Some(running) = self.running.take() {
            let _ = running.task.await;
        }
        if let Some(shell) = self.shell.take() {
            let _ = shell.task.await;
        }
        let _ = self.draw();
    }
}

/// Whether text reads as a command name (`/name`), not a path (`/usr/bin …`).
fn is_command_word(text: &str) -> bool {
    let word = text.split_whitespace().next().unwrap_or_default();
    word.len() > 1
        && word[1..]
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
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
