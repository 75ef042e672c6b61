//! The sessions the server has open: each with its framework [`Session`], its projection, its
//! running chat and its open permission questions. Events of a session go through its
//! projection to the [`Fanout`] under the session's id, in order.

use crate::error::ServeError;
use crate::metering::ServeMetrics;
use crate::metrics::ChatMeter;
use crate::projection::Projector;
use crate::protocol::ServerEvent;
use agentry::agent::{Agent, Session, SessionOptions};
use agentry::event::{AgentEvent, EventSink};
use agentry::hooks::SessionEndReason;
use agentry::ids::SessionId;
use agentry::model::ModelChoices;
use agentry::permission::{PermissionOptionKind, PermissionOutcome, PermissionPolicy};
use agentry::session::SessionStore;
use agentry::sync::lock;
use agentry_fanout::Fanout;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// A permission question waiting for a client's answer.
pub struct OpenQuestion {
    /// The `permission:request` event, sent again to clients that subscribe later.
    pub event: ServerEvent,
    /// Where the answer goes.
    pub answer: oneshot::Sender<PermissionOutcome>,
}

/// One open session.
pub struct LiveSession {
    /// Its id.
    pub id: SessionId,
    /// The folder it works in.
    pub cwd: PathBuf,
    /// The framework's session; a chat holds it while it runs.
    pub session: tokio::sync::Mutex<Session>,
    /// Its turns so far, as clients see them.
    pub projector: Mutex<Projector>,
    /// The running chat's cancellation, while one runs.
    pub running: Mutex<Option<CancellationToken>>,
    /// Permission questions waiting for an answer, by request id.
    pub questions: Mutex<HashMap<String, OpenQuestion>>,
    /// The session's `updated_at` in the store as this server last read it (none before it
    /// is stored): another server sharing the store that ran a chat since moved it.
    stored_at: Mutex<Option<String>>,
    fanout: Arc<dyn Fanout>,
}

impl LiveSession {
    /// Publishes events to the session's subscribers.
    pub fn publish(&self, events: Vec<ServerEvent>) {
        for event in events {
            self.fanout
                .publish(self.id.as_str(), Arc::new(json!(event)));
        }
    }

    /// An event of the session outside the conversation (`permission:request`, …), numbered in
    /// its sequence and published.
    pub fn publish_other(&self, event: &'static str, data: Value) -> ServerEvent {
        let mut projector = lock(&self.projector);
        let event = projector.other_event(event, data);
        self.publish(vec![event.clone()]);
        event
    }

    /// Marks a chat as running; `None` when one already runs.
    pub fn begin_chat(&self) -> Option<CancellationToken> {
        let mut running = lock(&self.running);
        if running.is_some() {
            return None;
        }
        let token = CancellationToken::new();
        *running = Some(token.clone());
        Some(token)
    }

    /// Marks the running chat as over, the session as stored at `stored_at` (its `updated_at`
    /// after the chat).
    pub fn end_chat(&self, stored_at: Option<String>) {
        *lock(&self.stored_at) = stored_at;
        *lock(&self.running) = None;
    }

    /// Gives up a chat marked as running that could not start.
    pub fn give_up_chat(&self) {
        *lock(&self.running) = None;
    }

    /// Whether a chat runs.
    fn is_running(&self) -> bool {
        lock(&self.running).is_some()
    }

    /// Tells the session's clients that its chat, run by a server that died or was cut off,
    /// was interrupted, numbering the events after `first_sequence`; the last number given.
    /// The session is read again from the store at its next use.
    pub fn interrupted_elsewhere(&self, first_sequence: u64) -> u64 {
        let mut projector = lock(&self.projector);
        projector.number_after(first_sequence);
        self.publish(projector.interrupt());
        *lock(&self.stored_at) = None;
        projector.last_sequence()
    }

    /// Answers the open permission question `request_id` with `option`, when it waits here;
    /// clients hear that it is answered. Whether it waited.
    pub fn answer_permission(&self, request_id: &str, option: PermissionOptionKind) -> bool {
        let Some(question) = lock(&self.questions).remove(request_id) else {
            return false;
        };
        let _ = question
            .answer
            .send(PermissionOutcome::Selected { kind: option });
        self.publish_other(
            "permission:resolved",
            json!({"session_id": self.id, "request_id": request_id, "option_id": option}),
        );
        true
    }

    /// Cancels the running chat, if any; whether one ran.
    pub fn cancel(&self) -> bool {
        match &*lock(&self.running) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

/// A running chat's place among those a server may run (counted in `chats_running`); given
/// back when dropped.
pub struct ChatPlace {
    taken: Arc<std::sync::atomic::AtomicUsize>,
    shown: prometheus_client::metrics::gauge::Gauge,
}

impl Drop for ChatPlace {
    fn drop(&mut self) {
        self.taken.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.shown.dec();
    }
}

/// A chat's events, counted in the metrics, projected and published in order.
pub struct ProjectedEvents {
    /// The chat's session.
    pub live: Arc<LiveSession>,
    /// The chat's meter, when chats are counted.
    pub meter: Option<Mutex<ChatMeter>>,
}

impl EventSink for ProjectedEvents {
    fn emit(&self, event: AgentEvent) {
        if let Some(meter) = &self.meter {
            lock(meter).observe(&event);
        }
        // Projected and published under one lock: concurrent sub-agents keep the order.
        // `chat:end` is held back until the session takes a new chat (see `chat::start`):
        // a client that answers it at once must not find the chat still running.
        let mut projector = lock(&self.live.projector);
        let events = projector.apply(&event);
        self.live.publish(
            events
                .into_iter()
                .filter(|e| e.event != "chat:end")
                .collect(),
        );
    }
}

/// What new sessions get.
#[derive(Clone)]
pub struct SessionDefaults {
    /// The working directory of a session created without one.
    pub cwd: PathBuf,
    /// The largest request body or message a client may send, in bytes.
    pub max_message_bytes: usize,
    /// The permission policy of new sessions (a session may set its own mode).
    pub policy: PermissionPolicy,
    /// How long a chat's claim on its session holds without renewal, where servers share a
    /// store ([`DEFAULT_LEASE`](crate::DEFAULT_LEASE) unless configured).
    pub lease: std::time::Duration,
    /// What one user may take of the server.
    pub limits: Limits,
    /// Whether chats are counted in the agent's metrics (model requests, tokens, tool calls,
    /// how chats end); off, `/metrics` has the server's own counts alone. On in `agentry serve`.
    pub chat_metrics: bool,
}

/// What one user may take of a server, so that none starves the rest; none by default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// The most chats running at once in this server: one more gets `busy`, never a queue.
    pub max_running_chats: Option<usize>,
    /// The most messages a connection may send a second (a burst of as many is let through):
    /// more get `rate_limited`, and the connection stays.
    pub max_messages_per_second: Option<u32>,
    /// The most sessions a token may have made and not deleted in this server (a server has
    /// one token, so its clients share them): one more gets `too_many_sessions`.
    pub max_sessions_per_token: Option<usize>,
}

/// The open sessions.
pub struct Sessions {
    agent: Agent,
    defaults: SessionDefaults,
    models: Option<Arc<dyn ModelChoices>>,
    fanout: Arc<dyn Fanout>,
    open: Mutex<HashMap<SessionId, Arc<LiveSession>>>,
    /// This server, as the leases of the chats it runs name it.
    owner: String,
    /// Whether the server is draining: it takes no new chat.
    draining: std::sync::atomic::AtomicBool,
    /// The server's and its agent's metrics.
    metrics: Arc<ServeMetrics>,
    /// Chats running here, as admitted against [`Limits::max_running_chats`].
    admitted: Arc<std::sync::atomic::AtomicUsize>,
    /// The sessions made here and not deleted, as counted against
    /// [`Limits::max_sessions_per_token`]; held while a session is made, so that two made at
    /// once cannot both take the last place.
    made: Mutex<std::collections::HashSet<SessionId>>,
}

impl Sessions {
    /// Sessions of `agent` (switching to `models` when asked), publishing through `fanout`.
    pub fn new(
        agent: Agent,
        defaults: SessionDefaults,
        models: Option<Arc<dyn ModelChoices>>,
        fanout: Arc<dyn Fanout>,
    ) -> Self {
        Self {
            agent,
            defaults,
            models,
            fanout,
            open: Mutex::default(),
            owner: format!("serve_{}", uuid::Uuid::new_v4().simple()),
            draining: std::sync::atomic::AtomicBool::new(false),
            metrics: ServeMetrics::new(),
            admitted: Arc::default(),
            made: Mutex::default(),
        }
    }

    /// Admits one more running chat, or refuses it with `busy` when the server runs its most:
    /// the chat's place, given back when dropped.
    pub fn admit_chat(&self) -> Result<ChatPlace, ServeError> {
        use std::sync::atomic::Ordering;
        let most = self.defaults.limits.max_running_chats.unwrap_or(usize::MAX);
        self.admitted
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |running| {
                (running < most).then_some(running + 1)
            })
            .map(|_| {
                self.metrics.chats_running.inc();
                ChatPlace {
                    taken: self.admitted.clone(),
                    shown: self.metrics.chats_running.clone(),
                }
            })
            .map_err(|running| {
                self.metrics.refused("busy");
                ServeError::Busy(running)
            })
    }

    /// The server's and its agent's metrics.
    pub fn metrics(&self) -> &Arc<ServeMetrics> {
        &self.metrics
    }

    /// Keeps `sessions_open` to the number of open sessions.
    fn count_open(&self, open: &HashMap<SessionId, Arc<LiveSession>>) {
        self.metrics
            .sessions_open
            .set(i64::try_from(open.len()).unwrap_or(i64::MAX));
    }

    /// Takes no new chat from now on (the server is stopping).
    pub fn start_draining(&self) {
        self.draining
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the server is draining.
    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many chats run here.
    pub fn running_chats(&self) -> usize {
        self.admitted.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops every chat running here; they end interrupted.
    pub fn stop_all(&self) {
        for live in lock(&self.open).values() {
            live.cancel();
        }
    }

    /// This server, as the leases of the chats it runs name it.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The models chats may switch to.
    pub fn models(&self) -> Option<&Arc<dyn ModelChoices>> {
        self.models.as_ref()
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The largest message a client may send, in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.defaults.max_message_bytes
    }

    /// What new sessions get.
    pub fn defaults(&self) -> &SessionDefaults {
        &self.defaults
    }

    /// The fan-out the sessions publish through.
    pub fn fanout(&self) -> &Arc<dyn Fanout> {
        &self.fanout
    }

    /// Creates a session in `cwd` (the default one when absent), which must be an existing
    /// folder.
    pub fn create(
        &self,
        cwd: Option<PathBuf>,
        policy: Option<PermissionPolicy>,
    ) -> Result<Arc<LiveSession>, ServeError> {
        let cwd = cwd.unwrap_or_else(|| self.defaults.cwd.clone());
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(ServeError::Invalid {
                message: format!(
                    "`cwd` must be an existing folder, given as an absolute path: {}",
                    cwd.display()
                ),
                detail: Some("cwd".to_owned()),
            });
        }
        let mut made = lock(&self.made);
        if let Some(most) = self.defaults.limits.max_sessions_per_token
            && made.len() >= most
        {
            self.metrics.refused("too_many_sessions");
            return Err(ServeError::TooManySessions(most));
        }
        let mut options = SessionOptions::new(cwd);
        options.policy = policy.unwrap_or_else(|| self.defaults.policy.clone());
        let mut session = self.agent.new_session(options).map_err(ServeError::agent)?;
        // Other servers sharing the store must know it at once: a client's next request may
        // reach any of them.
        let stored_at = match self.shared_store() {
            Some(_) => session
                .store_now()
                .map_err(ServeError::agent)?
                .map(|meta| meta.updated_at),
            None => None,
        };
        let projector = self.project(&session, &[]);
        let live = self.open_live(session, projector, stored_at);
        made.insert(live.id.clone());
        let mut open = lock(&self.open);
        open.insert(live.id.clone(), live.clone());
        self.count_open(&open);
        drop(open);
        Ok(live)
    }

    /// The open session `id`, reopened from the store when it is not open, or when it is idle
    /// and another server sharing the store has changed it since this one read it.
    pub fn get(&self, id: &str) -> Result<Arc<LiveSession>, ServeError> {
        let id = SessionId::from(id.to_owned());
        let open = lock(&self.open).get(&id).cloned();
        if let Some(live) = open
            && (live.is_running() || !self.changed_elsewhere(&live))
        {
            return Ok(live);
        }
        let (session, projector, stored_at) = self.read(&id)?;
        let live = self.open_live(session, projector, Some(stored_at));
        let mut open = lock(&self.open);
        open.insert(id, live.clone());
        self.count_open(&open);
        drop(open);
        Ok(live)
    }

    /// The open session `id` as it is, read from the store only when it is not open: for a
    /// chat, which claims the session before it runs and reads it again then if another
    /// server changed it (see [`refresh`](Self::refresh)).
    pub fn open(&self, id: &str) -> Result<Arc<LiveSession>, ServeError> {
        let open = lock(&self.open)
            .get(&SessionId::from(id.to_owned()))
            .cloned();
        match open {
            Some(live) => Ok(live),
            None => self.get(id),
        }
    }

    /// Whether `live` was read before the session's last change, `updated_at` (as a claim
    /// found it).
    pub fn is_stale(&self, live: &LiveSession, updated_at: Option<&str>) -> bool {
        lock(&live.stored_at).as_deref() != updated_at
    }

    /// Reads `live`'s session again from the store, another server having changed it, while
    /// this server holds it for a chat that has not started.
    pub fn refresh(&self, live: &LiveSession) -> Result<(), ServeError> {
        let (session, projector, stored_at) = self.read(&live.id)?;
        let mut slot = live
            .session
            .try_lock()
            .map_err(|_| ServeError::ChatRunning(live.id.to_string()))?;
        *slot = session;
        *lock(&live.projector) = projector;
        *lock(&live.stored_at) = Some(stored_at);
        Ok(())
    }

    /// Session `id` as the store has it: resumed, projected, and its `updated_at`.
    fn read(&self, id: &SessionId) -> Result<(Session, Projector, String), ServeError> {
        let stored = self
            .agent
            .load_session(id)
            .map_err(|_| ServeError::UnknownSession(id.to_string()))?;
        let mut options = SessionOptions::new(stored.meta.cwd.clone());
        options.policy = self.defaults.policy.clone();
        let session = self
            .agent
            .resume_session(id, options)
            .map_err(ServeError::agent)?;
        let projector = self.project(&session, &stored.events);
        Ok((session, projector, stored.meta.updated_at))
    }

    /// The store, when other servers share it (it keeps leases on chats): only then can a
    /// session change without this server, and only then is it worth asking.
    pub fn shared_store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.agent.store().filter(|store| store.leases().is_some())
    }

    /// Whether the shared store's `updated_at` of the idle session `live` differs from the one
    /// this server read (a session not stored yet, or a store that cannot say, has not
    /// changed; a store no other server uses, never).
    fn changed_elsewhere(&self, live: &LiveSession) -> bool {
        let Some(store) = self.shared_store() else {
            return false;
        };
        let seen = lock(&live.stored_at).clone();
        match store.meta(&live.id) {
            Ok(meta) => seen.as_deref() != Some(meta.updated_at.as_str()),
            Err(_) => false,
        }
    }

    /// Forgets the open session `id` and deletes it from the store.
    pub fn delete(&self, id: &str) -> Result<(), ServeError> {
        let id = SessionId::from(id.to_owned());
        lock(&self.made).remove(&id);
        let open = {
            let mut open = lock(&self.open);
            let removed = open.remove(&id);
            self.count_open(&open);
            removed
        };
        if let Some(live) = &open {
            live.cancel();
            // Its `SessionEnd` hooks run once its chat has let it go.
            let live = live.clone();
            tokio::spawn(async move {
                let ended = live.session.lock().await.end(SessionEndReason::Other).await;
                for notice in ended {
                    tracing::warn!("{notice}");
                }
            });
        }
        match self.agent.store().map(|store| store.delete(&id)) {
            // An open session without a message yet was never stored.
            Some(Err(_)) if open.is_none() => Err(ServeError::UnknownSession(id.to_string())),
            _ => Ok(()),
        }
    }

    /// `session`'s projection, rebuilt from its stored events.
    fn project(&self, session: &Session, stored: &[AgentEvent]) -> Projector {
        let id = session.id().clone();
        let shared = self.shared_store().and_then(|store| store.leases());
        let last = match shared.map(|leases| leases.last_sequence(&id)) {
            // Shared with other servers: after the last number the session's lease keeps.
            Some(Ok(last)) => Some(last),
            Some(Err(error)) => {
                tracing::warn!("session `{id}`: its last event number cannot be read ({error})");
                Some(now_micros())
            }
            None => None,
        };
        // One server's own: numbered from the current time in microseconds, above every
        // number a previous run of the server gave out for this session.
        let mut projector = Projector::new(id.to_string(), last.unwrap_or_else(now_micros));
        projector.set_model(session.model().name());
        for event in stored {
            projector.apply(event);
        }
        if let Some(last) = last {
            projector.settle_at(last);
        }
        projector
    }

    /// `session` as an open session with its `projector`, stored at `stored_at`.
    fn open_live(
        &self,
        session: Session,
        projector: Projector,
        stored_at: Option<String>,
    ) -> Arc<LiveSession> {
        Arc::new(LiveSession {
            id: session.id().clone(),
            cwd: session.options().cwd.clone(),
            session: tokio::sync::Mutex::new(session),
            projector: Mutex::new(projector),
            running: Mutex::default(),
            questions: Mutex::default(),
            stored_at: Mutex::new(stored_at),
            fanout: self.fanout.clone(),
        })
    }
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}
