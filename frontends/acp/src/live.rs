//! The sessions open on one connection, and the turn each may be running.

use crate::commands::Commands;
use crate::mcp::PromptServer;
use agentry::agent::Session;
use agentry::model::Model;
use agentry::permission::PermissionMode;
use agentry::templates::PromptTemplate;
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
    /// The MCP servers whose prompts are among the session's commands.
    servers: Vec<PromptServer>,
    /// The session's slash commands.
    commands: Mutex<Commands>,
}

/// Locks a mutex, going on past a panic of another holder (the data stays usable).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl LiveSession {
    /// A session with no turn running, whose commands are `templates` and the prompts of
    /// `servers`.
    pub fn new(session: Session, templates: &[PromptTemplate], servers: Vec<PromptServer>) -> Self {
        let mode = session.options().policy.mode;
        let model = session.model().name();
        let commands = Commands::new(templates, &servers);
        Self {
            session: tokio::sync::Mutex::new(session),
            turn: Mutex::new(None),
            mode: Mutex::new(mode),
            model: Mutex::new((model, None)),
            servers,
            commands: Mutex::new(commands),
        }
    }

    /// The session's slash commands.
    pub fn commands(&self) -> Commands {
        lock(&self.commands).clone()
    }

    /// The MCP servers whose prompts are among the session's commands.
    pub fn prompt_servers(&self) -> &[PromptServer] {
        &self.servers
    }

    /// Takes up the servers' current prompts; returns the new commands.
    pub fn refresh_commands(&self, templates: &[PromptTemplate]) -> Commands {
        let commands = Commands::new(templates, &self.servers);
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

    /// Closes a session, cancelling its turn; whether it was open.
    pub fn remove(&self, id: &str) -> bool {
        match lock(&self.0).remove(id) {
            Some(session) => {
                session.cancel_turn();
                true
            }
            None => false,
        }
    }

    /// Cancels every running turn (the connection is closing).
    pub fn cancel_all(&self) {
        for session in lock(&self.0).values() {
            session.cancel_turn();
        }
    }
}
