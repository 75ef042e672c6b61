//! Starting MCP servers and turning each into a provider.

use crate::McpError;
use crate::config::{HttpServer, McpServerConfig, StdioServer};
use crate::prompts::McpPrompt;
use crate::tool::McpTool;
use agentry::provider::{Provider, ProviderOrigin};
use agentry::tool::DynTool;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How many lines of a server's stderr are kept to explain a failed start.
const STDERR_TAIL_LINES: usize = 20;

/// A live session with one server, shared by its tools. Dropping the last handle closes it
/// (and stops a child process).
pub(crate) type Session = RunningService<RoleClient, ClientConfig>;

/// The tools of one MCP server, as a provider.
pub struct McpProvider {
    server: String,
    description: String,
    tools: Vec<Arc<dyn DynTool>>,
    prompts: Vec<McpPrompt>,
}

impl McpProvider {
    /// The server's prompts.
    pub fn prompts(&self) -> &[McpPrompt] {
        &self.prompts
    }
}

impl Provider for McpProvider {
    fn name(&self) -> &str {
        &self.server
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.tools.clone()
    }

    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::McpServer {
            server: self.server.clone(),
        }
    }
}

/// What agentry says about itself in `initialize`.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("agentry", env!("CARGO_PKG_VERSION")),
    )
}

/// Connects to one server (`project` is the folder relative paths start from), lists its
/// tools (every page) and returns them as a provider.
pub async fn connect(
    name: &str,
    config: &McpServerConfig,
    project: &Path,
) -> Result<McpProvider, McpError> {
    let session = match config {
        McpServerConfig::Stdio(server) => start_child(name, server, project).await?,
        McpServerConfig::Http(server) => connect_http(name, server).await?,
    };
    let listed = session
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| McpError::Listing {
            server: name.to_owned(),
            message: format!("tools/list failed: {e}"),
        })?;
    let description = session
        .peer()
        .peer_info()
        .and_then(|info| info.server_info.clone())
        .map(|server| {
            let title = server.title.clone().unwrap_or_else(|| server.name.clone());
            format!("{title} {}", server.version)
        })
        .unwrap_or_else(|| format!("MCP server {name}"));
    let offers_prompts = session
        .peer()
        .peer_info()
        .is_some_and(|info| info.capabilities.prompts.is_some());
    let prompts = if offers_prompts {
        session
            .peer()
            .list_all_prompts()
            .await
            .map_err(|e| McpError::Listing {
                server: name.to_owned(),
                message: format!("prompts/list failed: {e}"),
            })?
    } else {
        Vec::new()
    };
    let session = Arc::new(session);
    let prompts = prompts
        .into_iter()
        .map(|prompt| McpPrompt::new(name, prompt, session.clone()))
        .collect();
    let tools = listed
        .into_iter()
        .map(|tool| Arc::new(McpTool::new(name, tool, session.clone())) as Arc<dyn DynTool>)
        .collect();
    Ok(McpProvider {
        server: name.to_owned(),
        description,
        tools,
        prompts,
    })
}

/// Connects to every server at once. Each gets `timeout` to start and list its tools; the
/// answers come back in the servers' order.
pub async fn connect_all(
    servers: &BTreeMap<String, McpServerConfig>,
    project: &Path,
    timeout: Duration,
) -> Vec<(String, Result<McpProvider, McpError>)> {
    let attempts = servers.iter().map(|(name, config)| async move {
        let result = match tokio::time::timeout(timeout, connect(name, config, project)).await {
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

async fn start_child(
    name: &str,
    server: &StdioServer,
    project: &Path,
) -> Result<Session, McpError> {
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
    match client_config().serve(transport).await {
        Ok(session) => Ok(session),
        Err(error) => {
            // The server is gone or broken: give its stderr a moment to reach us.
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
            }
            let tail: Vec<String> = tail
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .cloned()
                .collect();
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
        let mut tail = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

async fn connect_http(name: &str, server: &HttpServer) -> Result<Session, McpError> {
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
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).custom_headers(headers),
    );
    client_config()
        .serve(transport)
        .await
        .map_err(|e| start_error(format!("{} did not answer initialize: {e}", server.url)))
}
