//! Starting MCP servers and turning each into a provider.

use crate::McpError;
use crate::auth::token_folder;
use crate::config::{HttpServer, McpServerConfig, StdioServer};
use crate::handler::Handler;
use crate::link::{Link, Origin};
use crate::prompts::McpPrompt;
use crate::tool::McpTool;
use agentry::commands::CommandSource;
use agentry::provider::{Login, Provider, ProviderOrigin, ProviderStatus};
use agentry::sync::lock;
use agentry::tool::DynTool;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ProtocolVersion;
use rmcp::service::ClientInitializeError;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How many lines of a server's stderr are kept to explain a failed start.
const STDERR_TAIL_LINES: usize = 20;

/// A running connection to one server.
pub(crate) type Service = RunningService<RoleClient, Handler>;

/// How agentry treats its MCP servers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// How long a server gets to start and list what it offers.
    pub startup_timeout: Duration,
    /// How long a tool call may go without an answer or a progress notification before it is
    /// cancelled and fails; each progress notification starts the wait again.
    pub tool_timeout: Duration,
    /// How long to wait before starting a server that died; each further attempt in a row
    /// waits twice as long.
    pub restart_delay: Duration,
    /// How many attempts in a row before giving up on a server (a restart counts as one in a
    /// row when the server dies again within a minute).
    pub restart_attempts: u32,
    /// The most tokens the session's model's answer to a server's request for a message
    /// (sampling) may have (a server asking for more gets this many).
    pub sampling_max_tokens: u32,
    /// The servers whose tool annotations are trusted (`readOnlyHint` lets a tool run unasked
    /// as a read); every other server's hints can only make agentry ask more.
    pub trusted_hints: Vec<String>,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            startup_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(120),
            restart_delay: Duration::from_millis(500),
            restart_attempts: 5,
            sampling_max_tokens: 4096,
            trusted_hints: Vec::new(),
        }
    }
}

/// The tools and prompts of one MCP server, as a provider. Its tools follow the server's
/// `notifications/tools/list_changed` (see [`Provider::revision`]), and a server that dies is
/// started again (see [`McpProvider::status`]).
pub struct McpProvider {
    link: Arc<Link>,
}

impl McpProvider {
    /// The server's prompts, as last listed.
    pub fn prompts(&self) -> Vec<McpPrompt> {
        self.link.offer(|offer| {
            offer
                .prompts
                .iter()
                .map(|prompt| McpPrompt::new(prompt.clone(), self.link.clone()))
                .collect()
        })
    }

    /// Waits until the server has answered or failed to start (its status says which).
    pub async fn settled(&self) {
        self.link.settled().await;
    }

    /// Wakes up (`changed()`) whenever the server's prompt list changes, so a front-end can
    /// announce its commands again.
    pub fn watch_prompts(&self) -> tokio::sync::watch::Receiver<u64> {
        self.link.watch_prompts()
    }
}

impl Provider for McpProvider {
    fn name(&self) -> &str {
        &self.link.server
    }

    fn description(&self) -> String {
        self.link.offer(|offer| offer.description.clone())
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.link.offer(|offer| {
            crate::tool::distinct(&self.link.server, &offer.tools)
                .into_iter()
                .map(|tool| Arc::new(McpTool::new(tool, self.link.clone())) as Arc<dyn DynTool>)
                .collect()
        })
    }

    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::McpServer {
            server: self.link.server.clone(),
        }
    }

    fn revision(&self) -> u64 {
        self.link.tools_revision()
    }

    fn status(&self) -> ProviderStatus {
        self.link.status()
    }

    fn tool_prefix(&self) -> Option<String> {
        Some(crate::tool_prefix(&self.link.server))
    }

    fn commands(&self) -> Option<Arc<dyn CommandSource>> {
        Some(Arc::new(McpProvider {
            link: self.link.clone(),
        }))
    }

    fn login(&self) -> Option<Arc<dyn Login>> {
        let server = self.link.http.clone()?;
        Some(Arc::new(crate::auth::ServerLogin {
            name: self.link.server.clone(),
            server,
        }))
    }
}

/// Connects to one server (`project` is the folder relative paths start from) and lists what
/// it offers (every page), with the default [`McpOptions`].
pub async fn connect(
    name: &str,
    config: &McpServerConfig,
    project: &Path,
) -> Result<McpProvider, McpError> {
    connect_with(name, config, project, &McpOptions::default()).await
}

/// [`connect`] with options.
pub async fn connect_with(
    name: &str,
    config: &McpServerConfig,
    project: &Path,
    options: &McpOptions,
) -> Result<McpProvider, McpError> {
    let origin = Origin {
        config: config.clone(),
        project: project.to_path_buf(),
        options: options.clone(),
    };
    Ok(McpProvider {
        link: Link::open(name, origin).await?,
    })
}

/// Starts a server in the background and returns at once: its tools and prompts join when
/// it answers (the provider's revision and [`McpProvider::watch_prompts`] say so), so a slow
/// server holds up nothing; one that does not start shows it in [`McpProvider::status`].
pub fn connect_in_background(
    name: &str,
    config: &McpServerConfig,
    project: &Path,
    options: &McpOptions,
) -> McpProvider {
    let origin = Origin {
        config: config.clone(),
        project: project.to_path_buf(),
        options: options.clone(),
    };
    McpProvider {
        link: Link::open_in_background(name, origin),
    }
}

/// Connects to every server at once. Each gets the startup timeout to start and list what it
/// offers; the answers come back in the servers' order.
pub async fn connect_all(
    servers: &BTreeMap<String, McpServerConfig>,
    project: &Path,
    options: &McpOptions,
) -> Vec<(String, Result<McpProvider, McpError>)> {
    let timeout = options.startup_timeout;
    let attempts = servers.iter().map(|(name, config)| async move {
        let connecting = connect_with(name, config, project, options);
        let result = match tokio::time::timeout(timeout, connecting).await {
            Ok(result) => result,
            Err(_) => Err(McpError::Start {
                server: name.clone(),
                message: format!("no answer within {} s", timeout.as_secs_f32()),
            }),
        };
        (name.clone(), result)
    });
    futures::future::join_all(attempts).await
}

/// Starts (or reaches) a server and completes `initialize`.
pub(crate) async fn start(
    name: &str,
    config: &McpServerConfig,
    project: &Path,
    handler: Handler,
) -> Result<Service, McpError> {
    match config {
        McpServerConfig::Stdio(server) => start_child(name, server, project, handler).await,
        McpServerConfig::Http(server) => connect_http(name, server, handler).await,
    }
}

async fn start_child(
    name: &str,
    server: &StdioServer,
    project: &Path,
    handler: Handler,
) -> Result<Service, McpError> {
    let start_error = |message: String| McpError::Start {
        server: name.to_owned(),
        message,
    };
    let mut command = tokio::process::Command::new(&server.command);
    command
        .args(&server.args)
        .envs(&server.env)
        .current_dir(project.join(server.cwd.as_deref().unwrap_or(Path::new("."))))
        .kill_on_drop(true);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| start_error(format!("cannot run `{}`: {e}", server.command)))?;
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let reader =
        stderr.map(|stderr| tokio::spawn(keep_stderr(name.to_owned(), stderr, tail.clone())));
    match handler.serve(transport).await {
        Ok(session) => Ok(session),
        Err(error) => {
            // The server is gone or broken: give its stderr a moment to reach us.
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
            }
            let tail: Vec<String> = lock(&tail).iter().cloned().collect();
            let mut message = error.to_string();
            if !tail.is_empty() {
                message.push_str("; its stderr ended with:\n");
                message.push_str(&tail.join("\n"));
            }
            Err(start_error(message))
        }
    }
}

/// Logs a server's stderr and keeps its last lines.
async fn keep_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %server, "{line}");
        let mut tail = lock(&tail);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

async fn connect_http(
    name: &str,
    server: &HttpServer,
    handler: Handler,
) -> Result<Service, McpError> {
    let start_error = |message: String| McpError::Start {
        server: name.to_owned(),
        message,
    };
    let mut headers = HashMap::new();
    for (header, value) in &server.headers {
        let header = HeaderName::try_from(header.as_str())
            .map_err(|e| start_error(format!("header `{header}`: {e}")))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|e| start_error(format!("the value of header `{header}`: {e}")))?;
        headers.insert(header, value);
    }
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).custom_headers(headers);
    let connected = match crate::auth::authorized_client(name, server, &token_folder()).await {
        Some(client) => connect_through(client, config, handler).await,
        None => connect_through(reqwest::Client::new(), config, handler).await,
    };
    connected.map_err(|error| match needs_login(&error) {
        true => McpError::NeedsLogin {
            server: name.to_owned(),
        },
        false => start_error(format!("{} did not answer initialize: {error}", server.url)),
    })
}

/// Connects through `client` (plain, or sending kept tokens), the newest revision first.
async fn connect_through<C>(
    client: C,
    config: StreamableHttpClientTransportConfig,
    handler: Handler,
) -> Result<Service, ClientInitializeError>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    let connect = |lifecycle: ClientLifecycleMode| {
        let transport = StreamableHttpClientTransport::with_client(client.clone(), config.clone());
        handler.clone().serve_with_lifecycle(transport, lifecycle)
    };
    match connect(lifecycle()).await {
        // A server of an earlier revision that answered `server/discover` as if it knew it:
        // asked again the earlier way.
        Err(ClientInitializeError::ExpectedInitResult(_)) => {
            connect(ClientLifecycleMode::Initialize).await
        }
        // A server that knows `server/discover` but speaks only earlier revisions (an rmcp
        // server capped at 2025-11-25, say): asked again the way those start.
        Err(ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        }) if server_supported.iter().any(ProtocolVersion::has_initialize) => {
            connect(ClientLifecycleMode::Initialize).await
        }
        other => other,
    }
}

/// Whether a connection failed because the server wants a login (HTTP 401).
fn needs_login(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::TransportError { error, .. } => matches!(
            error.error.downcast_ref(),
            Some(StreamableHttpError::<reqwest::Error>::AuthRequired(_))
        ),
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            needs_login(discover) || needs_login(fallback)
        }
        _ => false,
    }
}

/// How a connection to a server over HTTP starts: with `server/discover` (the 2026-07-28
/// revision's stateless lifecycle, each request carrying its own `_meta`), falling back to
/// `initialize` for a server of an earlier revision.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::LATEST],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}
