//! The [`Agent`] and its [`Session`]s: the agent loop of one prompt turn (a *chat*), exactly as
//! ACP's prompt turn describes it.
//!
//! A chat sends the history and the user's content to the model, streams its text, thinking and
//! tool calls out as events, runs the tool calls through the [`Executor`], sends the results
//! back, and repeats until the model stops asking for tools. It stops with a
//! [`StopReason`]: `end_turn`, `max_tokens`, `max_turn_requests`, `refusal` or `cancelled`.
//! Cancelling stops the model request and every running tool, answers pending permission
//! questions as cancelled, sends the last updates, and ends the chat with `cancelled` — never
//! with an error.

mod builder;
pub(crate) mod chat;
pub mod compaction;
mod lifecycle;
mod meter;
mod options;
mod rewind;
pub mod subagent;
pub mod tool_search;

pub use builder::{AgentBuilder, AgentConfig};
pub use options::{ChatIo, ChatOptions, SessionOptions};
pub use rewind::{RewindPoint, RewindScope, Rewound};

use crate::checkpoint::CheckpointKeeper;
use crate::commands::{CommandPrompt, CommandSource, SlashCommands};
use crate::cost::Spending;
use crate::error::AgentError;
use crate::event::{ChatSummary, StopReason, Usage};
use crate::executor::Executor;
use crate::hooks::{AgentHooks, SessionSource};
use crate::ids::SessionId;
use crate::model::named::NamedModels;
use crate::model::record::{RecordingModel, Redactor};
use crate::model::{Message, Model};
use crate::pause::{ChatPauses, PausedChat};
use crate::permission::{PermissionMode, RememberedAnswers};
use crate::prompt::InstructionSource;
use crate::provider::{Provider, RegistryError, ToolRegistry};
use crate::question::{QuestionAnswer, answers_text};
use crate::session::{SessionMeta, SessionStore, StoredSession, now_rfc3339};
use crate::session_servers::SessionServers;
use crate::sync::lock;
use crate::tool::ContentBlock;
use crate::tool::{SandboxMode, SessionState};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use subagent::Fork;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// An agent: a model, the tools of its providers, a configuration and (optionally) a store.
/// Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<AgentInner>,
}

struct AgentInner {
    model: Arc<dyn Model>,
    executor: Executor,
    config: AgentConfig,
    store: Option<Arc<dyn SessionStore>>,
    commands: Vec<Arc<dyn CommandSource>>,
    session_servers: Option<Arc<dyn SessionServers>>,
    hooks: Option<Arc<dyn AgentHooks>>,
    recordings: Option<SessionRecordings>,
    /// Where each session's JSON-lines transcript is kept, when it is.
    transcripts: Option<PathBuf>,
    named_models: Option<Arc<NamedModels>>,
    instructions: Option<Arc<dyn InstructionSource>>,
    checkpoints: Option<Arc<dyn CheckpointKeeper>>,
}

/// Where every session's model traffic is recorded: a file per session in `dir`.
#[derive(Debug, Clone)]
struct SessionRecordings {
    dir: PathBuf,
    redactor: Redactor,
}

impl SessionRecordings {
    /// `DIR/SESSION.jsonl`, or `DIR/SESSION.N.jsonl` when the session was recorded before (it
    /// was resumed).
    fn file_for(&self, id: &SessionId) -> PathBuf {
        let first = self.dir.join(format!("{id}.jsonl"));
        if !first.exists() {
            return first;
        }
        (2..)
            .map(|n| self.dir.join(format!("{id}.{n}.jsonl")))
            .find(|path| !path.exists())
            .unwrap_or(first)
    }
}

impl Agent {
    /// Starts building an agent that answers with `model` (a [`Model`],
    /// or an `Arc` of one).
    pub fn builder(model: impl crate::model::Model + 'static) -> AgentBuilder {
        AgentBuilder::new(model)
    }

    /// The agent's configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.inner.config
    }

    /// The agent's tool registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        self.inner.executor.registry()
    }

    /// The agent's model.
    pub fn model(&self) -> &Arc<dyn Model> {
        &self.inner.model
    }

    /// The agent's store, if it has one.
    pub fn store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.inner.store.as_ref()
    }

    /// The agent's checkpoints, when it keeps them.
    pub fn checkpoints(&self) -> Option<&Arc<dyn CheckpointKeeper>> {
        self.inner.checkpoints.as_ref()
    }

    /// The agent's sources of slash commands.
    pub fn command_sources(&self) -> &[Arc<dyn CommandSource>] {
        &self.inner.commands
    }

    /// The agent's slash commands as they are now.
    pub fn slash_commands(&self) -> SlashCommands {
        SlashCommands::from_sources(&self.inner.commands)
    }

    /// The hooks around tool calls, if any.
    pub fn hooks(&self) -> Option<&Arc<dyn AgentHooks>> {
        self.inner.hooks.as_ref()
    }

    /// The models side questions may name, if the agent opens any.
    pub fn named_models(&self) -> Option<&Arc<NamedModels>> {
        self.inner.named_models.as_ref()
    }

    /// What connects the servers a client hands to a session, if the agent has it.
    pub fn session_servers(&self) -> Option<&Arc<dyn SessionServers>> {
        self.inner.session_servers.as_ref()
    }

    /// Starts a new session. The store, when there is one, records it with its first chat: a
    /// session opened and left without a message leaves nothing behind.
    pub fn new_session(&self, options: SessionOptions) -> Result<Session, AgentError> {
        self.new_session_with_id(SessionId::generate(), options)
    }

    /// Starts a new session under an id the front-end chose (one it had to hand out before
    /// the session existed, to the services in `options`, say).
    pub fn new_session_with_id(
        &self,
        id: SessionId,
        options: SessionOptions,
    ) -> Result<Session, AgentError> {
        let now = now_rfc3339();
        let meta = SessionMeta {
            id: id.clone(),
            cwd: options.cwd.clone(),
            title: None,
            created_at: now.clone(),
            updated_at: now,
        };
        let mut session =
            self.session(id, options, Vec::new(), RememberedAnswers::default(), false)?;
        session.unstored = self.inner.store.is_some().then_some(meta);
        Ok(session)
    }

    /// Reopens a stored session with its history and remembered permission answers.
    pub fn resume_session(
        &self,
        id: &SessionId,
        options: SessionOptions,
    ) -> Result<Session, AgentError> {
        let stored = self.load_session(id)?;
        let mut session = self.session(
            id.clone(),
            options,
            stored.messages,
            stored.remembered,
            true,
        )?;
        session.paused = stored.paused;
        session.spending = Spending::of_events(&stored.events);
        Ok(session)
    }

    /// Reads a stored session (for listing or replaying it).
    pub fn load_session(&self, id: &SessionId) -> Result<StoredSession, AgentError> {
        match &self.inner.store {
            Some(store) => Ok(store.load(id)?),
            None => Err(crate::session::StoreError::NotFound(id.clone()).into()),
        }
    }

    fn session(
        &self,
        id: SessionId,
        mut options: SessionOptions,
        history: Vec<Message>,
        mut remembered: RememberedAnswers,
        resumed: bool,
    ) -> Result<Session, AgentError> {
        // Roots are compared with canonical paths, so they are canonical too. The policy's
        // additional directories are roots as well.
        options.cwd = agentry_plugin::paths::canonical_path(&options.cwd);
        // "Always" answers are for the folder they were given in.
        remembered.keep_for_folder(&options.cwd);
        let additional = options.policy.additional_directories.clone();
        let roots = std::mem::take(&mut options.workspace_roots);
        for root in roots.iter().chain(&additional) {
            let root = agentry_plugin::paths::canonical_path(root);
            if !options.workspace_roots.contains(&root) {
                options.workspace_roots.push(root);
            }
        }
        if !options.workspace_roots.contains(&options.cwd) {
            options.workspace_roots.insert(0, options.cwd.clone());
        }
        let mut session = Session {
            agent: self.clone(),
            executor: self.inner.executor.clone(),
            model: self.inner.model.clone(),
            recording: None,
            id,
            options,
            remembered: Arc::new(Mutex::new(remembered)),
            state: SessionState::default(),
            history,
            fork: None,
            paused: None,
            rules_reported: false,
            unstored: None,
            spending: Spending::default(),
            transcript: None,
            lifecycle: lifecycle::Lifecycle::starting(if resumed {
                SessionSource::Resume
            } else {
                SessionSource::Startup
            }),
        };
        if let Some(folder) = &self.inner.transcripts {
            let path = folder.join(format!("{}.jsonl", session.id));
            session.keep_transcript(path);
        }
        if let Some(recordings) = &self.inner.recordings {
            let file = recordings.file_for(&session.id);
            session.record_to(&file, recordings.redactor.clone())?;
        }
        Ok(session)
    }
}

impl Drop for Session {
    /// Providers that keep a session's state of their own (plugins) drop it; a sub-agent's
    /// session leaves its parent's alone.
    fn drop(&mut self) {
        if self.fork.is_none() {
            self.executor.registry().end_session(&self.id);
        }
    }
}

/// A conversation with the agent.
pub struct Session {
    agent: Agent,
    /// The agent's tools plus the session's own providers.
    executor: Executor,
    /// The agent's model, unless the session switched (wrapped in its recording, if any).
    model: Arc<dyn Model>,
    /// The recording the session's model traffic goes to, if it is recorded.
    recording: Option<Arc<RecordingModel>>,
    id: SessionId,
    options: SessionOptions,
    remembered: Arc<Mutex<RememberedAnswers>>,
    state: SessionState,
    history: Vec<Message>,
    /// Set for a sub-agent's session: where it sits, its system prompt and limits.
    fork: Option<Fork>,
    /// What waits for the user's answer, when the last chat paused.
    paused: Option<PausedChat>,
    /// Whether the permission rules that can never match were reported (at the first chat).
    rules_reported: bool,
    /// The session's description until the store records it, with its first chat.
    unstored: Option<SessionMeta>,
    /// What the session's finished chats spent (those recorded before it was resumed too).
    spending: Spending,
    /// The session's JSON-lines transcript, when the agent keeps transcripts.
    transcript: Option<Arc<crate::session::TranscriptFile>>,
    /// Where the session stands with the hooks of its start and end.
    lifecycle: lifecycle::Lifecycle,
}

impl Session {
    /// A sub-agent's session: the calling session's options, these tools and model, its own
    /// history (empty, or as it paused) and state; never stored on its own (its events are the
    /// calling chat's).
    pub(crate) fn forked(
        agent: &Agent,
        options: SessionOptions,
        registry: Arc<ToolRegistry>,
        model: Arc<dyn Model>,
        remembered: Arc<Mutex<RememberedAnswers>>,
        history: Vec<Message>,
        fork: Fork,
    ) -> Session {
        Session {
            agent: agent.clone(),
            executor: Executor::new(registry),
            model,
            recording: None,
            id: SessionId::generate(),
            options,
            remembered,
            state: SessionState::default(),
            history,
            fork: Some(fork),
            paused: None,
            rules_reported: false,
            unstored: None,
            spending: Spending::default(),
            transcript: None,
            lifecycle: lifecycle::Lifecycle::default(),
        }
    }

    /// Keeps the session's JSON-lines transcript at `path` (one that cannot be opened is said
    /// in the log, and the session goes on without it).
    pub(crate) fn keep_transcript(&mut self, path: PathBuf) {
        let id = self.id.to_string();
        match crate::session::TranscriptFile::open(path, &id, &self.options.cwd) {
            Ok(file) => self.transcript = Some(Arc::new(file)),
            Err(error) => tracing::warn!(%error, "the session's transcript cannot be kept"),
        }
    }

    /// What the session's finished chats spent, by model (a resumed session's recorded chats
    /// included, each request at the price it was counted at).
    pub fn spending(&self) -> &Spending {
        &self.spending
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Records the session in the store now, rather than with its first message: for a
    /// session that other processes sharing the store must find before it has one. The
    /// description stored, when this stored it.
    pub fn store_now(&mut self) -> Result<Option<SessionMeta>, AgentError> {
        let (Some(meta), Some(store)) = (&self.unstored, self.agent.store()) else {
            return Ok(None);
        };
        store.create(meta)?;
        Ok(self.unstored.take())
    }

    /// The conversation so far.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The session's options.
    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// What the session keeps for its tools: their state, its temporary folder, and the
    /// notices waiting for the model's next request (an application may post its own there:
    /// "the user changed `config.toml`").
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// Adds a provider's tools to this session only (an MCP server the front-end's client
    /// passed, say); the model sees them from its next request.
    pub fn add_provider(&mut self, provider: Arc<dyn Provider>) -> Result<(), RegistryError> {
        let mut registry = ToolRegistry::clone(self.executor.registry());
        registry.register(provider)?;
        tool_search::offer_search(&mut registry, &self.agent.inner.config.tool_search)?;
        self.executor = Executor::new(Arc::new(registry));
        Ok(())
    }

    /// The tools this session's model may call: the agent's and the session's own.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        self.executor.registry()
    }

    /// The model the session's chats use.
    pub fn model(&self) -> &Arc<dyn Model> {
        &self.model
    }

    /// Switches the session to another model from its next chat on (the history stays; a
    /// recording goes on).
    pub fn set_model(&mut self, model: Arc<dyn Model>) {
        self.model = match &self.recording {
            Some(recording) => Arc::new(recording.with_model(model)),
            None => model,
        };
    }

    /// Records the session's model traffic to `path` from now on (see
    /// [`crate::model::record`]): each request and its response, redacted by `redactor`, for
    /// `--model replay:FILE` or [`ReplayModel`](crate::model::replay::ReplayModel) to play back.
    pub fn record_to(&mut self, path: &Path, redactor: Redactor) -> Result<(), AgentError> {
        let recording =
            RecordingModel::create(self.model.clone(), path, redactor).map_err(|source| {
                AgentError::Recording {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        let recording = Arc::new(recording);
        self.model = recording.clone();
        self.recording = Some(recording);
        Ok(())
    }

    /// Changes the permission mode from the next tool call on.
    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.options.policy.mode = mode;
    }

    /// Chooses the sandbox the session's commands run in, from the next tool call on (`None`:
    /// each sandboxing tool's own setting).
    pub fn set_sandbox(&mut self, mode: Option<SandboxMode>) {
        self.options.sandbox = mode;
    }

    /// The answers "always allow / reject" given so far.
    pub fn remembered_answers(&self) -> RememberedAnswers {
        lock(&self.remembered).clone()
    }

    /// Runs one chat on `text`, the plain case: default [`ChatOptions`], the events not
    /// watched, every permission question answered no (calls that need asking are refused:
    /// give [`prompt_with`](Self::prompt_with) a [`ChatIo`] with a permission handler to
    /// answer them). The answer is [`ChatSummary::answer`].
    pub async fn prompt(&mut self, text: &str) -> Result<ChatSummary, AgentError> {
        let io = ChatIo::new(|_: crate::event::AgentEvent| {});
        self.prompt_with(vec![ContentBlock::text(text)], &ChatOptions::default(), &io)
            .await
    }

    /// Runs one chat (prompt turn) to its stop reason. Errors are for failures (the model, the
    /// store); a cancelled chat returns `Ok` with [`StopReason::Cancelled`].
    /// When the last chat paused for an answer, its waiting calls are given up first (the model
    /// reads that the user wrote this instead of answering).
    ///
    /// `content` is the user's content, or a slash command's [`CommandPrompt`]: its calls run
    /// first, shown like any call, allowed by the session's rules and the command's own
    /// (never by asking: a call that would ask is refused), each call's output in its place;
    /// one that fails, unless the prompt says what to put instead, ends the chat with
    /// [`AgentError::CommandNotRun`] before the model is asked anything. The command's
    /// allowed tools hold for the whole chat.
    pub async fn prompt_with(
        &mut self,
        content: impl Into<CommandPrompt>,
        options: &ChatOptions,
        io: &ChatIo,
    ) -> Result<ChatSummary, AgentError> {
        let start = chat::Start::Prompt(content.into());
        let span = chat_span(self);
        let outcome = chat::run(self, start, options, io, Arc::default(), None, None)
            .instrument(span.clone())
            .await;
        end_chat_span(&span, &outcome);
        outcome
    }

    /// Replaces the history by a summary the model writes now (a user's `/compact`, following
    /// their `instructions` when given), kept in the store like a compaction during a chat, with
    /// its [`AgentEvent::Compacted`](crate::event::AgentEvent::Compacted). Returns what it did,
    /// or `None` when the history was empty or `cancel` fired first (nothing then changes).
    pub async fn compact(
        &mut self,
        instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Option<compaction::Compaction>, AgentError> {
        chat::compact(self, instructions, cancel).await
    }

    /// What waits for the user's answer, when the last chat paused (see [`pause`](crate::pause)).
    pub fn paused(&self) -> Option<&PausedChat> {
        self.paused.as_ref()
    }

    /// Resumes the paused chat with the user's answer to one of its questions: the loops take
    /// up where they stopped (also in a new process that reopened the session). Other questions
    /// of the chat are asked again as their calls run again. Fails, changing nothing, when no
    /// question of the session waits for that call or the answer does not fit its questions.
    pub async fn answer(
        &mut self,
        answer: QuestionAnswer,
        options: &ChatOptions,
        io: &ChatIo,
    ) -> Result<ChatSummary, AgentError> {
        let question = self
            .paused
            .as_ref()
            .and_then(|paused| paused.question(&answer.tool_call_id))
            .ok_or_else(|| AgentError::NoSuchQuestion(answer.tool_call_id.clone()))?;
        answers_text(&question.questions, &answer.answers).map_err(AgentError::InvalidAnswer)?;
        let (root, sub_agents) = self.paused.take().unwrap_or_default().into_loops();
        let Some(paused) = root else {
            return Err(AgentError::NoSuchQuestion(answer.tool_call_id));
        };
        let pauses = Arc::new(ChatPauses::resuming(sub_agents, answer.clone()));
        let start = chat::Start::Resume {
            paused,
            answer: Some(answer),
        };
        let span = chat_span(self);
        let outcome = chat::run(self, start, options, io, pauses, None, None)
            .instrument(span.clone())
            .await;
        end_chat_span(&span, &outcome);
        outcome
    }

    /// Runs a sub-agent's chat, sharing the calling chat's pauses and checkpoint.
    pub(crate) async fn run_sub_chat(
        &mut self,
        start: chat::Start,
        io: &ChatIo,
        pauses: Arc<ChatPauses>,
        before_change: Option<Arc<dyn crate::executor::BeforeChange>>,
        meter: Arc<meter::Meter>,
    ) -> Result<ChatSummary, AgentError> {
        let span = crate::telemetry::chat_span("sub-agent", &self.id, &self.model.name());
        let outcome = chat::run(
            self,
            start,
            &ChatOptions::default(),
            io,
            pauses,
            before_change,
            Some(meter),
        )
        .instrument(span.clone())
        .await;
        crate::telemetry::chat_ended(&span, chat_end(&outcome));
        outcome
    }
}

/// The span a chat of the main loop runs in (its logs carry the session's id and a chat id of
/// its own; a sub-agent's chat has a span of its own inside it), its start logged.
fn chat_span(session: &Session) -> tracing::Span {
    let span = crate::telemetry::chat_span("agentry", &session.id, &session.model.name());
    span.in_scope(|| tracing::info!(target: crate::telemetry::CHAT_LOG_TARGET, "chat started"));
    span
}

/// Logs how a chat ended and records it on its span.
fn end_chat_span(span: &tracing::Span, outcome: &Result<ChatSummary, AgentError>) {
    span.in_scope(|| match outcome {
        Ok(summary) => tracing::info!(
            target: crate::telemetry::CHAT_LOG_TARGET,
            stop_reason = summary.stop_reason.as_str(),
            "chat ended"
        ),
        Err(error) => {
            tracing::warn!(target: crate::telemetry::CHAT_LOG_TARGET, %error, "chat failed")
        }
    });
    crate::telemetry::chat_ended(span, chat_end(outcome));
}

/// How a chat ended, as its span records it.
fn chat_end(
    outcome: &Result<ChatSummary, AgentError>,
) -> Result<(StopReason, Usage), &'static str> {
    match outcome {
        Ok(summary) => Ok((summary.stop_reason, summary.usage)),
        Err(error) => Err(error.kind()),
    }
}
