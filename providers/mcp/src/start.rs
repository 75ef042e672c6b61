//! Starting (or reaching) one MCP server: a child process over stdio, or a server over HTTP
//! (with kept tokens, the newest protocol revision first), up to a completed handshake.

use crate::McpError;
use crate::config::{HttpServer, McpServerConfig, StdioServer};
use crate::handler::Handler;
use agentry::sync::lock;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ProtocolVersion;
use rmcp::service::ClientInitializeError;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How many lines of a server's stderr are kept to explain a failed start.
const STDERR_TAIL_LINES: usize = 20;

/// A running connection to one server.
pub(crate) type Service = RunningService<RoleClient, Handler>;

/// Starts (or reaches) a server and completes `initialize`.
pub(crate) async fn start(
    name: &str,
    config: &McpServerConfig,
    project: &Path,
    tokens: Option<&Path>,
    handler: Handler,
) -> Result<Service, McpError> {
    match config {
        McpServerConfig::Stdio(server) => start_child(name, server, project, handler).await,
        McpServerConfig::Http(server) => connect_http(name, server, tokens, handler).await,
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
    tokens: Option<&Path>,
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
    let authorized = match tokens {
        Some(folder) => crate::auth::authorized_client(name, server, folder).await,
        None => None,
    };
    let connected = match authorized {
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
