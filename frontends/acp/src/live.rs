//! The sessions open on one connection, and the turn each may be running.

use crate::commands::Commands;
use agentry::agent::Session;
use agentry::commands::CommandSource;
use agentry::model::Model;
use agentry::permission::PermissionMode;
pub(crate) use agentry::sync::lock;
use agentry::tool::SandboxMode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One open session.
pub struct LiveSession {
    /// The session; a running turn holds it.
    pub session: tokio::sync::Mutex<Session>,
    /// The running turn's cancellation, if a turn is running.
    turn: Mutex<Option<CancellationToken>>,
    /// The permission mode the client chose; applied when the next turn starts.
    mode: Mutex<PermissionMode>,
    /// The model the session uses (as its spec), and the one the client chose that the next
    /// turn starts with.
    model: Mutex<(String, Option<Arc<dyn Model>>)>,
    /// The sandbox the session's commands run in from the next turn on (`None`: the tools'
    /// own setting).
    sandbox: Mutex<Option<SandboxMode>>,
    /// Where the session's commands come from: the agent's sources and its own servers'.
    sources: Vec<Arc<dyn CommandSource>>,
    /// The session's slash commands.
    commands: Mutex<Commands>,
}

impl LiveSession {
    /// A session with no turn running, whose commands are those of `sources`.
    pub fn new(session: Session, sources: Vec<Arc<dyn CommandSource>>) -> Self {
        let mode = session.options().policy.mode;
        let sandbox = session.options().sandbox;
        let model = session.model().name();
        let commands = Commands::new(&sources);
        Self {
            session: tokio::sync::Mutex::new(session),
            turn: Mutex::new(None),
            mode: Mutex::new(mode),
            model: Mutex::new((model, None)),
            sandbox: Mutex::new(sandbox),
            sources,
            commands: Mutex::new(commands),
        }
    }

    /// The session's slash commands.
    pub fn commands(&self) -> Commands {
        lock(&self.commands).clone()
    }

    /// Where the session's commands come from.
    pub fn command_sources(&self) -> &[Arc<dyn CommandSource>] {
        &self.sources
    }

    /// Takes up the sources' current commands; returns them.
    pub fn refresh_commands(&self) -> Commands {
        let commands = Commands::new(&self.sources);
        *lock(&self.commands) = commands.clone();
        commands
    }

    /// Marks a turn as running, unless one already is.
    pub fn begin_turn(&self, cancel: CancellationToken) -> bool {
        let mut turn = lock(&self.turn);
        if turn.is_some() {
            return false;
        }
        *turn = Some(cancel);
        true
    }

    /// Marks the running turn as over.
    pub fn end_turn(&self) {
        lock(&self.turn).take();
    }

    /// Cancels the running turn, if any.
    pub fn cancel_turn(&self) {
        if let Some(cancel) = lock(&self.turn).as_ref() {
            cancel.cancel();
        }
    }

    /// The permission mode for the next turn.
    pub fn mode(&self) -> PermissionMode {
        *lock(&self.mode)
    }

    /// Chooses the permission mode from the next turn on.
    pub fn set_mode(&self, mode: PermissionMode) {
        *lock(&self.mode) = mode;
    }

    /// The sandbox for the next turn (`None`: the tools' own setting).
    pub fn sandbox(&self) -> Option<SandboxMode> {
        *lock(&self.sandbox)
    }

    /// Chooses the sandbox from the next turn on.
    pub fn set_sandbox(&self, mode: Option<SandboxMode>) {
        *lock(&self.sandbox) = mode;
    }

    /// The session's model, as its spec.
    pub fn model_spec(&self) -> String {
        lock(&self.model).0.clone()
    }

    /// Chooses the model from the next turn on.
    pub fn set_model(&self, spec: String, model: Arc<dyn Model>) {
        *lock(&self.model) = (spec, Some(model));
    }

    /// The model chosen since the last turn began, if any (taken: applied once).
    pub fn take_chosen_model(&self) -> Option<Arc<dyn Model>> {
        lock(&self.model).1.take()
    }
}

/// The open sessions of a connection, by id.
#[derive(Default)]
pub struct LiveSessions(Mutex<HashMap<String, Arc<LiveSession>>>);

impl LiveSessions {
    /// Adds (or replaces) a session.
    pub fn insert(&self, id: String, session: LiveSession) -> Arc<LiveSession> {
        let session = Arc::new(session);
        if let Some(previous) = lock(&self.0).insert(id, session.clone()) {
            previous.cancel_turn();
        }
        session
    }

    /// A session, if open.
    pub fn get(&self, id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.0).get(id).cloned()
    }

    /// Closes a session, cancelling its turn; the session, when it was open.
    pub fn remove(&self, id: &str) -> Option<Arc<LiveSession>> {
        let session = lock(&self.0).remove(id)?;
        session.cancel_turn();
        Some(session)
    }

    /// Cancels every running turn (the connection is closing).
    pub fn cancel_all(&self) {
        for session in lock(&self.0).values() {
            session.cancel_turn();
        }
    }
}
