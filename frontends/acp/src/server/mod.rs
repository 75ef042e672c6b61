//! The agent side of an ACP connection: one handler per method, each answering at once or
//! handing long work (a prompt turn) to a task of its own so the connection keeps reading.

mod connection;
mod turn;

use crate::client::{ClientTerminalRunner, ClientTextFiles, ClientUpdates};
use crate::convert::SubAgentView;
use crate::live::{LiveSession, LiveSessions, lock};
use crate::options::{Offered, config_options, set_option};
use crate::trust::PendingTrust;
pub use crate::trust::TrustQuestion;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, ConnectTo, Error, ErrorCode};
use agentry::agent::{Agent, Session, SessionOptions};
use agentry::commands::CommandSource;
use agentry::ids::SessionId;
use agentry::model::ModelChoices;
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::tool::SandboxMode;
use connection::{connection, respond};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use turn::{TurnClient, run_turn};

/// The one authentication method: a key in the environment agentry starts in.
const ENVIRONMENT_AUTH: &str = "environment";

/// How long running turns get to wind down (killing their commands) when the client hangs up.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How the agent presents itself and sets up sessions.
#[derive(Clone)]
pub struct AcpSettings {
    /// The agent's name (`agentInfo.name`).
    pub name: String,
    /// Its version (`agentInfo.version`).
    pub version: String,
    /// The permission policy new sessions start with (the client may change the mode).
    pub policy: PermissionPolicy,
    /// Why the agent has no usable model (no API key, say), if it has none: sessions are then
    /// refused with `auth_required` and this reason.
    pub model_problem: Option<String>,
    /// The models a client may switch sessions to; none, no model option.
    pub models: Option<Arc<dyn ModelChoices>>,
    /// The sandbox new sessions' commands run in, when the agent's tools sandbox them (the
    /// client may choose another mode per session); none, no sandbox option.
    pub sandbox: Option<SandboxMode>,
    /// The folder the agent was started in, when its own settings were left out because it is
    /// not trusted: the user is asked once, at the first prompt, whether to trust it.
    pub trust: Option<TrustQuestion>,
}

/// What `session/load` and `session/resume` ask for.
struct Reopening {
    session_id: acp::SessionId,
    cwd: PathBuf,
    additional: Vec<PathBuf>,
    mcp_servers: Vec<acp::McpServer>,
    /// Replay the history first (`session/load`).
    replay: bool,
}

impl Reopening {
    /// Reopening without replay (`session/resume`).
    fn new(
        session_id: acp::SessionId,
        cwd: PathBuf,
        additional: Vec<PathBuf>,
        mcp_servers: Vec<acp::McpServer>,
    ) -> Self {
        Self {
            session_id,
            cwd,
            additional,
            mcp_servers,
            replay: false,
        }
    }
}

/// The state shared by a connection's handlers.
struct Server {
    agent: Agent,
    settings: AcpSettings,
    /// The question about the agent's folder, until it is asked.
    trust: Arc<PendingTrust>,
    sessions: LiveSessions,
    turns: Mutex<JoinSet<()>>,
    /// What the client said it can do, in `initialize`.
    client: Mutex<acp::ClientCapabilities>,
}

/// Serves `agent` over `transport` until the client hangs up; then cancels running turns and
/// waits (briefly) for their tools to stop.
pub async fn serve(
    agent: Agent,
    settings: AcpSettings,
    transport: impl ConnectTo<agent_client_protocol::Agent> + 'static,
) -> Result<(), Error> {
    let server = Arc::new(Server {
        agent,
        trust: Arc::new(PendingTrust::new(settings.trust.clone())),
        settings,
        sessions: LiveSessions::default(),
        turns: Mutex::new(JoinSet::new()),
        client: Mutex::default(),
    });
    let result = connection(server.clone()).connect_to(transport).await;
    server.sessions.cancel_all();
    let mut turns = std::mem::take(&mut *lock(&server.turns));
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while turns.join_next().await.is_some() {}
    })
    .await;
    result
}

/// An error with a message for the client.
fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

fn unknown_session(id: &acp::SessionId) -> Error {
    error(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!(
            "there is no open session `{id}` (create one with session/new or open it with session/load)"
        ),
    )
}

fn absolute(path: &Path, what: &str) -> Result<PathBuf, Error> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Err(error(
            ErrorCode::INVALID_PARAMS,
            format!("{what} must be an absolute path, not `{}`", path.display()),
        ))
    }
}

/// The permission modes, as ACP session modes.
fn modes(current: PermissionMode) -> acp::SessionModeState {
    let modes = PermissionMode::ALL
        .into_iter()
        .map(|mode| {
            acp::SessionMode::new(mode.as_str(), mode.title())
                .description(mode.description().to_owned())
        })
        .collect();
    acp::SessionModeState::new(current.as_str(), modes)
}

impl Server {
    /// Refuses to open sessions when there is no usable model.
    fn check_model(&self) -> Result<(), Error> {
        match &self.settings.model_problem {
            Some(problem) => Err(error(
                ErrorCode::AUTH_REQUIRED,
                format!(
                    "agentry has no usable model: {problem}. Set the key in the environment agentry starts in (or choose a model in its configuration) and restart the agent."
                ),
            )),
            None => Ok(()),
        }
    }

    /// A session's options; its file tools go through the client when the client offers
    /// both `fs` methods, and Bash runs in the client's terminals when it offers those.
    /// Connects the MCP servers the client passed, gives their tools to the session, and
    /// returns it as a live session, whose commands are the agent's and those of the
    /// session's servers.
    fn open_live(
        &self,
        mut session: Session,
        servers: &[acp::McpServer],
        cwd: &Path,
    ) -> LiveSession {
        let mut sources: Vec<Arc<dyn CommandSource>> = self.agent.command_sources().to_vec();
        for server in crate::mcp::connect(&self.agent, servers, cwd) {
            match session.add_provider(server.clone()) {
                Ok(()) => sources.extend(server.commands()),
                Err(problem) => {
                    tracing::warn!("MCP server `{}` left out: {problem}", server.name());
                }
            }
        }
        LiveSession::new(session, sources)
    }

    /// Reopens a session in a task of its own (its MCP servers may take a while), answers with
    /// `answer`, then announces the session's commands.
    fn reopen_in_task<T: agent_client_protocol::JsonRpcResponse + Send + 'static>(
        self: &Arc<Self>,
        reopening: Reopening,
        connection: ConnectionTo<Client>,
        responder: Responder<T>,
        answer: fn(acp::SessionModeState, Option<Vec<acp::SessionConfigOption>>) -> T,
    ) {
        let server = self.clone();
        tokio::spawn(async move {
            let reopened = server.reopen(&reopening, &connection).await;
            let opened = reopened.is_ok();
            let _ = respond(
                responder,
                reopened.map(|live| answer(modes(live.mode()), server.config_options(&live))),
            );
            if opened {
                server.announce_commands(&connection, reopening.session_id);
            }
        });
    }

    /// Tells the client a session's slash commands (after the session's own answer), and
    /// again whenever one of its MCP servers changes its prompts, while the session is open.
    fn announce_commands(&self, connection: &ConnectionTo<Client>, session_id: acp::SessionId) {
        let Some(live) = self.sessions.get(&session_id.to_string()) else {
            return;
        };
        let updates = ClientUpdates::new(connection.clone(), session_id);
        updates.send(live.commands().available());
        let mut watches: Vec<_> = live
            .command_sources()
            .iter()
            .filter_map(|source| source.changes())
            .collect();
        if watches.is_empty() {
            return;
        }
        let live = Arc::downgrade(&live);
        tokio::spawn(async move {
            loop {
                let changes = watches.iter_mut().map(|watch| Box::pin(watch.changed()));
                let (changed, _, _) = futures::future::select_all(changes).await;
                let Some(live) = live.upgrade().filter(|_| changed.is_ok()) else {
                    return;
                };
                updates.send(live.refresh_commands().available());
            }
        });
    }

    /// What sessions' config options offer.
    fn offered(&self) -> Offered<'_> {
        Offered {
            models: self.settings.models.as_deref(),
            sandbox: self.settings.sandbox.is_some(),
        }
    }

    /// A session's config options (the model, the sandbox), when the agent offers any.
    fn config_options(&self, live: &LiveSession) -> Option<Vec<acp::SessionConfigOption>> {
        config_options(self.offered(), live)
    }

    /// An open session, or the error that says there is none.
    fn open_session(&self, id: &acp::SessionId) -> Result<Arc<LiveSession>, Error> {
        self.sessions
            .get(&id.to_string())
            .ok_or_else(|| unknown_session(id))
    }

    /// Chooses a session's permission mode (from its next turn on).
    fn set_mode(&self, request: &acp::SetSessionModeRequest) -> Result<PermissionMode, Error> {
        let live = self.open_session(&request.session_id)?;
        let mode: PermissionMode = request
            .mode_id
            .to_string()
            .parse()
            .map_err(|problem| error(ErrorCode::INVALID_PARAMS, format!("{problem}")))?;
        live.set_mode(mode);
        Ok(mode)
    }

    fn set_config_option(
        &self,
        request: &acp::SetSessionConfigOptionRequest,
    ) -> Result<acp::SetSessionConfigOptionResponse, Error> {
        let live = self.open_session(&request.session_id)?;
        let options = set_option(self.offered(), &live, request)?;
        Ok(acp::SetSessionConfigOptionResponse::new(options))
    }

    fn session_options(
        &self,
        id: &SessionId,
        cwd: PathBuf,
        additional: Vec<PathBuf>,
        connection: &ConnectionTo<Client>,
    ) -> SessionOptions {
        let mut options = SessionOptions::new(cwd);
        options.workspace_roots.extend(additional);
        options.policy = self.settings.policy.clone();
        options.sandbox = self.settings.sandbox;
        let client = lock(&self.client).clone();
        if client.fs.read_text_file && client.fs.write_text_file {
            options.client.files = Some(Arc::new(ClientTextFiles {
                connection: connection.clone(),
                session_id: id.to_string().into(),
            }));
        }
        if client.terminal {
            options.client.terminals = Some(Arc::new(ClientTerminalRunner {
                connection: connection.clone(),
                session_id: id.to_string().into(),
            }));
        }
        options
    }

    /// How the client shows sub-agents: as child sessions when it advertises ACP's subagent
    /// sessions.
    fn sub_agent_view(&self) -> SubAgentView {
        match lock(&self.client).subagents {
            Some(_) => SubAgentView::ChildSessions,
            None => SubAgentView::Inline,
        }
    }

    fn initialize(&self, request: &acp::InitializeRequest) -> acp::InitializeResponse {
        tracing::debug!(
            "client {:?} asks for protocol {:?}",
            request.client_info,
            request.protocol_version
        );
        *lock(&self.client) = request.client_capabilities.clone();
        let capabilities = acp::AgentCapabilities::new()
            .load_session(true)
            .mcp_capabilities(crate::mcp::capabilities(&self.agent))
            .prompt_capabilities(
                acp::PromptCapabilities::new()
                    .image(true)
                    .audio(false)
                    .embedded_context(true),
            )
            .session_capabilities(
                acp::SessionCapabilities::new()
                    .list(acp::SessionListCapabilities::new())
                    .resume(acp::SessionResumeCapabilities::new())
                    .close(acp::SessionCloseCapabilities::new())
                    .delete(acp::SessionDeleteCapabilities::new()),
            );
        acp::InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .auth_methods(vec![acp::AuthMethod::Agent(
                acp::AuthMethodAgent::new(ENVIRONMENT_AUTH, "API key in the environment").description(
                    "agentry reads the model provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, …) from the environment it starts in".to_owned(),
                ),
            )])
            .agent_info(acp::Implementation::new(
                &self.settings.name,
                &self.settings.version,
            ))
    }

    fn authenticate(
        &self,
        request: &acp::AuthenticateRequest,
    ) -> Result<acp::AuthenticateResponse, Error> {
        if request.method_id.to_string() != ENVIRONMENT_AUTH {
            return Err(error(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "unknown authentication method `{}` (this agent offers `{ENVIRONMENT_AUTH}`)",
                    request.method_id
                ),
            ));
        }
        self.check_model()?;
        Ok(acp::AuthenticateResponse::new())
    }

    async fn new_session(
        &self,
        request: acp::NewSessionRequest,
        connection: &ConnectionTo<Client>,
    ) -> Result<acp::NewSessionResponse, Error> {
        self.check_model()?;
        let cwd = absolute(&request.cwd, "cwd")?;
        let id = SessionId::generate();
        let options =
            self.session_options(&id, cwd.clone(), request.additional_directories, connection);
        let session = self
            .agent
            .new_session_with_id(id, options)
            .map_err(|e| error(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
        let id = session.id().to_string();
        let live = self.open_live(session, &request.mcp_servers, &cwd);
        let live = self.sessions.insert(id.clone(), live);
        Ok(acp::NewSessionResponse::new(id)
            .modes(modes(live.mode()))
            .config_options(self.config_options(&live)))
    }

    /// Reopens a stored session (`session/load` replays it first, `session/resume` does not).
    async fn reopen(
        &self,
        reopening: &Reopening,
        connection: &ConnectionTo<Client>,
    ) -> Result<Arc<LiveSession>, Error> {
        self.check_model()?;
        let id = &reopening.session_id;
        let cwd = absolute(&reopening.cwd, "cwd")?;
        let session_id = SessionId::from(id.to_string());
        let stored = self
            .agent
            .load_session(&session_id)
            .map_err(|_| unknown_stored_session(id))?;
        if reopening.replay {
            ClientUpdates::new(connection.clone(), id.clone())
                .showing_sub_agents(self.sub_agent_view())
                .replay(&stored.events);
        }
        let options = self.session_options(
            &session_id,
            cwd.clone(),
            reopening.additional.clone(),
            connection,
        );
        let session = self
            .agent
            .resume_session(&session_id, options)
            .map_err(|e| error(ErrorCode::INTERNAL_ERROR, e.to_string()))?;
        let live = self.open_live(session, &reopening.mcp_servers, &cwd);
        Ok(self.sessions.insert(id.to_string(), live))
    }

    fn list_sessions(
        &self,
        request: &acp::ListSessionsRequest,
    ) -> Result<acp::ListSessionsResponse, Error> {
        let Some(store) = self.agent.store() else {
            return Ok(acp::ListSessionsResponse::new(Vec::new()));
        };
        let sessions = store
            .list()
            .map_err(|e| error(ErrorCode::INTERNAL_ERROR, e.to_string()))?
            .into_iter()
            .filter(|meta| request.cwd.as_ref().is_none_or(|cwd| *cwd == meta.cwd))
            .map(|meta| {
                acp::SessionInfo::new(meta.id.to_string(), meta.cwd)
                    .title(meta.title)
                    .updated_at(meta.updated_at)
            })
            .collect();
        Ok(acp::ListSessionsResponse::new(sessions))
    }

    fn delete_session(&self, id: &acp::SessionId) -> Result<acp::DeleteSessionResponse, Error> {
        self.sessions.remove(&id.to_string());
        if let Some(store) = self.agent.store() {
            store
                .delete(&SessionId::from(id.to_string()))
                .map_err(|_| unknown_stored_session(id))?;
        }
        Ok(acp::DeleteSessionResponse::new())
    }

    /// Starts a prompt turn in a task of its own; the task answers the request.
    fn prompt(
        self: &Arc<Self>,
        request: acp::PromptRequest,
        responder: Responder<acp::PromptResponse>,
        connection: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let live = match self.open_session(&request.session_id) {
            Ok(live) => live,
            Err(problem) => return responder.respond_with_error(problem),
        };
        let cancel = CancellationToken::new();
        if !live.begin_turn(cancel.clone()) {
            return responder.respond_with_error(error(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "session `{}` is already running a prompt turn: wait for its response or send session/cancel",
                    request.session_id
                ),
            ));
        }
        // A client that renders forms answers the model's questions.
        let asks = lock(&self.client)
            .elicitation
            .as_ref()
            .is_some_and(|elicitation| elicitation.form.is_some());
        let client = TurnClient {
            asks,
            sub_agents: self.sub_agent_view(),
            trust: self.trust.clone(),
        };
        let turn = async move {
            let answer = run_turn(&live, request, connection, cancel, client).await;
            live.end_turn();
            let sent = match answer {
                Ok(response) => responder.respond(response),
                Err(error) => responder.respond_with_error(error),
            };
            if let Err(error) = sent {
                tracing::debug!("session/prompt answer not sent: {error}");
            }
        };
        let mut turns = lock(&self.turns);
        // A finished turn's task stays in the set, memory and all, until it is reaped.
        while turns.try_join_next().is_some() {}
        turns.spawn(turn);
        Ok(())
    }
}

fn unknown_stored_session(id: &acp::SessionId) -> Error {
    error(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("there is no stored session `{id}`"),
    )
}
