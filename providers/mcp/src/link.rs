//! One server's live link: the connection the tools and prompts use, what the server offers,
//! and the supervisor that lists again when the server says its lists changed and restarts it
//! (with backoff) when it dies.

// The roots it offers are deprecated in the newest protocol version (SEP-2577), but servers on
// the earlier versions still ask for them (see `handler`).
#![allow(deprecated)]

use crate::McpError;
use crate::McpOptions;
use crate::config::{HttpServer, McpServerConfig};
use crate::handler::{Changed, Handler, root};
use crate::in_flight::CallsInFlight;
use crate::offer::Offer;
use crate::sampling::SamplingPolicy;
use crate::start::{Service, start};
use crate::tokens::TokenFile;
use crate::tool_cache::ToolCache;
use agentry::provider::ProviderStatus;
use rmcp::RoleClient;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{Root, ServerNotification, SubscriptionFilter};
use rmcp::service::Peer;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How long a restarted server must stay up for its next death to start the backoff afresh.
const STABLE_UPTIME: std::time::Duration = std::time::Duration::from_secs(60);

/// How often a server that needs a login looks for its tokens (written by `agentry mcp login`,
/// perhaps from another terminal).
const LOGIN_LOOK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a list change waits for the ones that follow it before the lists are fetched again.
const LIST_CHANGES_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

struct State {
    /// The connection, while the server is up.
    peer: Option<Peer<RoleClient>>,
    status: ProviderStatus,
    offer: Offer,
}

/// Where and how to start the server again.
pub(crate) struct Origin {
    pub(crate) config: McpServerConfig,
    pub(crate) project: PathBuf,
    pub(crate) options: McpOptions,
}

/// The link to one server, shared by its provider, tools and prompts. Dropping the last
/// handle stops the supervisor, which closes the connection (and stops a child process).
pub(crate) struct Link {
    pub(crate) server: String,
    pub(crate) options: McpOptions,
    pub(crate) progress: ProgressDispatcher,
    /// The folders the server may work in (`roots/list`): the project's.
    pub(crate) roots: Vec<Root>,
    /// Its tool calls waiting for it (the server's questions go to their user).
    pub(crate) calls: Arc<CallsInFlight>,
    /// Where it is reached, for a server over HTTP (its tools log in again when it asks for
    /// more scope).
    pub(crate) http: Option<HttpServer>,
    state: RwLock<State>,
    /// Bumped whenever the tool list changes (the registry re-reads the tools then).
    tools_revision: AtomicU64,
    /// Bumped whenever the prompt list changes (front-ends announce the commands again).
    prompts_revision: watch::Sender<u64>,
    /// Bumped whenever the state changes (the status, say).
    state_revision: watch::Sender<u64>,
    stop: CancellationToken,
    /// Where a lazy server's listing is kept.
    cache: Option<ToolCache>,
    /// A lazy server not started yet: its supervisor, to start it on first use.
    dormant: tokio::sync::Mutex<Option<Supervisor>>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Link {
    /// A link to a server that has just started, with its supervisor running.
    pub(crate) async fn open(name: &str, origin: Origin) -> Result<Arc<Link>, McpError> {
        let (link, supervisor) = Link::new(name, origin);
        let service = supervisor.start(name).await?;
        let offer = list(name, service.peer()).await?;
        link.connected(service.peer().clone(), offer);
        tokio::spawn(supervisor.run(service));
        Ok(link)
    }

    /// A link to a server being started in the background: its tools and prompts come when it
    /// answers (the revisions say so); if it does not start, its status says why. A server that
    /// needs a login is started again once its tokens are written anew (`agentry mcp login`,
    /// from any terminal).
    pub(crate) fn open_in_background(name: &str, origin: Origin) -> Arc<Link> {
        let (link, supervisor) = Link::new(name, origin);
        link.start_in_background(supervisor);
        link
    }

    /// A link to a lazy server: offered as it listed itself when it last ran, and started on
    /// first use ([`Link::wake`]); one never listed before (or configured otherwise since) is
    /// started in the background at once, to be listed.
    pub(crate) fn open_lazily(name: &str, origin: Origin) -> Arc<Link> {
        let (link, supervisor) = Link::new(name, origin);
        match link.cache.as_ref().and_then(ToolCache::read) {
            Some(offer) => {
                link.update(offer);
                link.write(|state| state.status = ProviderStatus::Ready);
                // Nobody else can hold a new link's lock; were it held, the server would start
                // at once instead.
                let mut supervisor = Some(supervisor);
                if let Ok(mut dormant) = link.dormant.try_lock() {
                    *dormant = supervisor.take();
                }
                if let Some(supervisor) = supervisor {
                    link.start_in_background(supervisor);
                }
            }
            None => link.start_in_background(supervisor),
        }
        link
    }

    /// Starts a dormant lazy server, if this link has one, and waits until it has answered or
    /// failed (calls that come meanwhile wait with this one).
    pub(crate) async fn wake(&self) {
        let mut dormant = self.dormant.lock().await;
        let Some(supervisor) = dormant.take() else {
            return;
        };
        tracing::info!(
            "starting the lazy MCP server `{}` on first use",
            self.server
        );
        match supervisor.start_in_time(&self.server).await {
            Some(Ok((service, offer))) => {
                self.connected(service.peer().clone(), offer);
                tokio::spawn(supervisor.run(service));
            }
            Some(Err(error)) => {
                tracing::warn!("{error}");
                self.write(|state| {
                    state.status = match error {
                        McpError::NeedsLogin { server } => ProviderStatus::NeedsLogin {
                            how: format!("run `agentry mcp login {server}`"),
                        },
                        other => ProviderStatus::Failed {
                            reason: other.to_string(),
                        },
                    }
                });
            }
            None => {}
        }
    }

    /// Starts the server in the background with `supervisor`, which then watches it.
    fn start_in_background(self: &Arc<Self>, supervisor: Supervisor) {
        let server = self.server.clone();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(started) = supervisor.start_in_time(&server).await else {
                    return;
                };
                let Some(link) = weak.upgrade() else { return };
                match started {
                    Ok((service, offer)) => {
                        link.connected(service.peer().clone(), offer);
                        drop(link);
                        return supervisor.run(service).await;
                    }
                    Err(McpError::NeedsLogin { server }) => {
                        // Nothing is wrong: the user logs in when they want the server's tools.
                        tracing::info!("MCP server `{server}` needs login");
                        link.write(|state| {
                            state.status = ProviderStatus::NeedsLogin {
                                how: format!("run `agentry mcp login {server}`"),
                            }
                        });
                        drop(link);
                        if !supervisor.logged_in_anew().await {
                            return;
                        }
                        let Some(link) = weak.upgrade() else { return };
                        link.write(|state| state.status = ProviderStatus::Starting);
                    }
                    Err(error) => {
                        tracing::warn!("{error}");
                        link.write(|state| {
                            state.status = ProviderStatus::Failed {
                                reason: error.to_string(),
                            }
                        });
                        return;
                    }
                }
            }
        });
    }

    /// A link to a server being started (nothing listed yet), and its supervisor.
    fn new(name: &str, origin: Origin) -> (Arc<Link>, Supervisor) {
        let (changes, changed) = mpsc::unbounded_channel();
        let link = Arc::new(Link {
            server: name.to_owned(),
            options: origin.options.clone(),
            progress: ProgressDispatcher::new(),
            roots: vec![root(&origin.project)],
            calls: Arc::default(),
            http: match &origin.config {
                McpServerConfig::Http(server) => Some(server.clone()),
                McpServerConfig::Stdio(_) => None,
            },
            state: RwLock::new(State {
                peer: None,
                status: ProviderStatus::Starting,
                offer: Offer::default(),
            }),
            tools_revision: AtomicU64::new(0),
            prompts_revision: watch::Sender::new(0),
            state_revision: watch::Sender::new(0),
            stop: CancellationToken::new(),
            cache: origin
                .options
                .tool_cache_folder
                .as_deref()
                .filter(|_| origin.config.lazy())
                .map(|folder| ToolCache::new(folder, name, &origin.config, &origin.project)),
            dormant: tokio::sync::Mutex::new(None),
        });
        let supervisor = Supervisor {
            link: Arc::downgrade(&link),
            progress: link.progress.clone(),
            roots: link.roots.clone(),
            calls: link.calls.clone(),
            server: name.to_owned(),
            stop: link.stop.clone(),
            origin,
            changes,
            changed,
        };
        (link, supervisor)
    }

    /// The server answers: takes its connection and what it offers.
    fn connected(&self, peer: Peer<RoleClient>, offer: Offer) {
        // What it offers first, so that whoever sees it ready sees its tools.
        self.update(offer);
        self.write(|state| {
            state.peer = Some(peer);
            state.status = ProviderStatus::Ready;
        });
    }

    fn read<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.state.read().unwrap_or_else(|e| e.into_inner()))
    }

    fn write(&self, write: impl FnOnce(&mut State)) {
        write(&mut self.state.write().unwrap_or_else(|e| e.into_inner()));
        self.state_revision.send_modify(|revision| *revision += 1);
    }

    /// Waits until the server has answered or failed to start.
    pub(crate) async fn settled(&self) {
        let mut changes = self.state_revision.subscribe();
        while self.status() == ProviderStatus::Starting {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// The connection, or why there is none.
    pub(crate) fn peer(&self) -> Result<Peer<RoleClient>, String> {
        self.read(|state| match (&state.peer, &state.status) {
            (Some(peer), _) => Ok(peer.clone()),
            (None, status) => Err(format!(
                "the MCP server `{}` is not running: {status}",
                self.server
            )),
        })
    }

    /// How the server is doing.
    pub(crate) fn status(&self) -> ProviderStatus {
        self.read(|state| state.status.clone())
    }

    /// Reads what the server offers, as last listed.
    pub(crate) fn offer<T>(&self, read: impl FnOnce(&Offer) -> T) -> T {
        self.read(|state| read(&state.offer))
    }

    /// Changes whenever the tool list changes.
    pub(crate) fn tools_revision(&self) -> u64 {
        self.tools_revision.load(Ordering::SeqCst)
    }

    /// Wakes up whenever the prompt list changes.
    pub(crate) fn watch_prompts(&self) -> watch::Receiver<u64> {
        self.prompts_revision.subscribe()
    }

    /// Takes a new listing: bumps the revisions of the lists that changed.
    fn update(&self, offer: Offer) {
        let (tools_changed, prompts_changed) = self.read(|state| {
            (
                state.offer.tools != offer.tools,
                state.offer.prompts != offer.prompts,
            )
        });
        if let Some(cache) = &self.cache
            && (tools_changed || prompts_changed)
        {
            cache.write(&offer);
        }
        self.write(|state| state.offer = offer);
        if tools_changed {
            self.tools_revision.fetch_add(1, Ordering::SeqCst);
        }
        if prompts_changed {
            self.prompts_revision.send_modify(|revision| *revision += 1);
        }
    }
}

/// Lists what a server offers: its description, every page of its tools and (when it has
/// them) of its prompts.
pub(crate) async fn list(name: &str, peer: &Peer<RoleClient>) -> Result<Offer, McpError> {
    let listing_error = |what: &str, e: rmcp::service::ServiceError| {
        // Tokens it took to start with and no longer takes (or none, where it lets the start
        // through): a login is what it needs.
        if crate::auth::wants_login(&e) {
            McpError::NeedsLogin {
                server: name.to_owned(),
            }
        } else {
            McpError::Listing {
                server: name.to_owned(),
                message: format!("{what} failed: {e}"),
            }
        }
    };
    let info = peer.peer_info();
    let description = info
        .as_ref()
        .and_then(|info| info.server_info.clone())
        .map(|server| {
            let title = server.title.clone().unwrap_or_else(|| server.name.clone());
            format!("{title} {}", server.version)
        })
        .unwrap_or_else(|| format!("MCP server {name}"));
    let tools = peer
        .list_all_tools()
        .await
        .map_err(|e| listing_error("tools/list", e))?;
    let prompts = if info.is_some_and(|info| info.capabilities.prompts.is_some()) {
        peer.list_all_prompts()
            .await
            .map_err(|e| listing_error("prompts/list", e))?
    } else {
        Vec::new()
    };
    Ok(Offer {
        description,
        tools,
        prompts,
    })
}

/// Watches one server for as long as its link lives.
struct Supervisor {
    link: Weak<Link>,
    progress: ProgressDispatcher,
    roots: Vec<Root>,
    calls: Arc<CallsInFlight>,
    server: String,
    stop: CancellationToken,
    origin: Origin,
    changes: mpsc::UnboundedSender<Changed>,
    changed: mpsc::UnboundedReceiver<Changed>,
}

impl Supervisor {
    /// Starts (or reaches) the server, with a handler wired to this supervisor.
    async fn start(&self, name: &str) -> Result<Service, McpError> {
        let handler = Handler {
            progress: self.progress.clone(),
            changes: self.changes.clone(),
            roots: self.roots.clone(),
            server: self.server.clone(),
            calls: self.calls.clone(),
            sampling: SamplingPolicy::of(&self.origin.options),
        };
        let origin = &self.origin;
        let tokens = origin.options.token_folder.as_deref();
        start(name, &origin.config, &origin.project, tokens, handler).await
    }

    /// Starts the server and lists what it offers, within the start-up timeout; `None` when
    /// nobody wants the server any more (dropping the start stops it).
    async fn start_in_time(&self, server: &str) -> Option<Result<(Service, Offer), McpError>> {
        let timeout = self.origin.options.startup_timeout;
        let starting = tokio::time::timeout(timeout, async {
            let service = self.start(server).await?;
            let offer = list(server, service.peer()).await?;
            Ok::<_, McpError>((service, offer))
        });
        tokio::select! {
            () = self.stop.cancelled() => None,
            started = starting => Some(started.unwrap_or_else(|_| {
                Err(McpError::Start {
                    server: server.to_owned(),
                    message: format!("no answer within {} s", timeout.as_secs_f32()),
                })
            })),
        }
    }

    /// Waits until the server's tokens are written anew (a login), looking every
    /// [`LOGIN_LOOK_EVERY`]; false when nobody wants the server any more, or it is not one
    /// that logs in.
    async fn logged_in_anew(&self) -> bool {
        let (McpServerConfig::Http(server), Some(folder)) =
            (&self.origin.config, &self.origin.options.token_folder)
        else {
            return false;
        };
        let tokens = TokenFile::new(folder, &self.server, &server.url);
        let before = tokens.written_at();
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return false,
                () = tokio::time::sleep(LOGIN_LOOK_EVERY) => {}
            }
            let now = tokens.written_at();
            if now.is_some() && now != before {
                return true;
            }
        }
    }

    async fn run(mut self, mut service: Service) {
        // Restarts in a row: a server that keeps dying soon after starting is given up on
        // as one that does not start.
        let mut attempts = 0;
        loop {
            let started = tokio::time::Instant::now();
            let reason = self.watch(service).await;
            let Some(reason) = reason else { return };
            if started.elapsed() >= STABLE_UPTIME {
                attempts = 0;
            }
            match self.restart(reason, attempts).await {
                Some((restarted, attempt)) => {
                    service = restarted;
                    attempts = attempt;
                }
                None => return,
            }
        }
    }

    /// Serves list changes (a burst of them with one listing) until the server quits (`Some(why)`) or the link is dropped (`None`).
    async fn watch(&mut self, service: Service) -> Option<String> {
        let peer = service.peer().clone();
        let closing = service.cancellation_token();
        let _listening = modern(&peer).then(|| {
            AbortOnDrop(tokio::spawn(listen_for_changes(
                peer.clone(),
                self.changes.clone(),
            )))
        });
        let quit = service.waiting();
        tokio::pin!(quit);
        loop {
            tokio::select! {
                () = self.stop.cancelled() => {
                    closing.cancel();
                    let _ = quit.await;
                    return None;
                }
                reason = &mut quit => {
                    return Some(match reason {
                        Ok(reason) => format!("the connection ended ({reason:?})"),
                        Err(error) => format!("the connection failed: {error}"),
                    });
                }
                Some(_) = self.changed.recv() => {
                    // A burst of changes needs one listing: the ones that come while it
                    // settles are answered by it too.
                    tokio::time::sleep(LIST_CHANGES_SETTLE).await;
                    while self.changed.try_recv().is_ok() {}
                    let link = self.link.upgrade()?;
                    match list(&link.server, &peer).await {
                        Ok(offer) => link.update(offer),
                        Err(error) => tracing::warn!("{error}"),
                    }
                }
            }
        }
    }

    /// Starts the server again after `done` attempts in a row, waiting twice as long before
    /// each one; the new connection and the attempt it took, or `None` when the attempts are
    /// spent or the link is dropped meanwhile.
    async fn restart(&mut self, reason: String, done: u32) -> Option<(Service, u32)> {
        let name = self.link.upgrade()?.server.clone();
        tracing::warn!("MCP server `{name}` stopped: {reason}");
        let options = &self.origin.options;
        let mut reason = reason;
        for attempt in done + 1..=options.restart_attempts {
            let delay = options
                .restart_delay
                .saturating_mul(2u32.saturating_pow(attempt - 1));
            self.link.upgrade()?.write(|state| {
                state.peer = None;
                state.status = ProviderStatus::Restarting {
                    attempt,
                    reason: reason.clone(),
                };
            });
            tokio::select! {
                () = self.stop.cancelled() => return None,
                () = tokio::time::sleep(delay) => {}
            }
            let started = tokio::time::timeout(options.startup_timeout, self.start(&name))
                .await
                .unwrap_or_else(|_| {
                    Err(McpError::Start {
                        server: name.clone(),
                        message: "no answer in time".to_owned(),
                    })
                });
            let listed = match started {
                Ok(service) => list(&name, service.peer())
                    .await
                    .map(|offer| (service, offer)),
                Err(error) => Err(error),
            };
            match listed {
                Ok((service, offer)) => {
                    self.link
                        .upgrade()?
                        .connected(service.peer().clone(), offer);
                    tracing::info!("MCP server `{name}` restarted");
                    return Some((service, attempt));
                }
                Err(error) => reason = error.to_string(),
            }
        }
        let link = self.link.upgrade()?;
        tracing::error!("MCP server `{name}` could not be restarted: {reason}");
        link.write(|state| {
            state.status = ProviderStatus::Failed {
                reason: format!(
                    "gave up after {} restart attempts; the last failed with: {reason}",
                    options.restart_attempts
                ),
            }
        });
        None
    }
}

/// Whether the connection speaks the 2026-07-28 revision or later (started with
/// `server/discover`, no `initialize`).
fn modern(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize())
}

/// On a connection of the 2026-07-28 revision, a server's list changes come on a
/// `subscriptions/listen` stream rather than by themselves: passed on to the supervisor as
/// they come, until the stream or the connection ends.
async fn listen_for_changes(peer: Peer<RoleClient>, changes: mpsc::UnboundedSender<Changed>) {
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(error) => {
            tracing::debug!("no subscription to list changes: {error}");
            return;
        }
    };
    while let Ok(Some(notification)) = subscription.next().await {
        let change = match notification {
            ServerNotification::ToolListChangedNotification(_) => Changed::Tools,
            ServerNotification::PromptListChangedNotification(_) => Changed::Prompts,
            _ => continue,
        };
        if changes.send(change).is_err() {
            return;
        }
    }
}

/// A task stopped when its handle is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
