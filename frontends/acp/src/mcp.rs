//! The MCP servers a client passes with a session (`mcpServers` in `session/new`, `load`,
//! `resume`), connected through the MCP provider; their tools serve that session only.

use agent_client_protocol::v1::schema as acp;
use agentry::provider::Provider;
use std::path::Path;

/// How long the servers of one session get to start (they start at once, side by side).
#[cfg(feature = "mcp")]
const STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether this build connects a client's MCP servers (and over which transports).
pub fn capabilities() -> acp::McpCapabilities {
    acp::McpCapabilities::new()
        .http(cfg!(feature = "mcp"))
        .sse(false)
}

/// A client's MCP server as the MCP provider's configuration, or why it cannot be used.
#[cfg(feature = "mcp")]
fn config(server: &acp::McpServer) -> Result<(String, agentry_mcp::McpServerConfig), String> {
    use agentry_mcp::{HttpServer, McpServerConfig, StdioServer};
    match server {
        acp::McpServer::Stdio(stdio) => Ok((
            stdio.name.clone(),
            McpServerConfig::Stdio(StdioServer {
                command: stdio.command.display().to_string(),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                cwd: None,
            }),
        )),
        acp::McpServer::Http(http) => Ok((
            http.name.clone(),
            McpServerConfig::Http(HttpServer {
                url: http.url.clone(),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            }),
        )),
        acp::McpServer::Sse(sse) => Err(format!(
            "MCP server `{}` uses the old HTTP+SSE transport, which agentry does not speak",
            sse.name
        )),
        _ => Err("an MCP server of a kind this agent does not know".to_owned()),
    }
}

/// What a session's servers brought: their tools (as providers) and their prompts.
#[derive(Default)]
pub struct Connected {
    /// The servers, as providers of tools.
    pub providers: Vec<std::sync::Arc<dyn Provider>>,
    /// Their prompts.
    pub prompts: Vec<ServerPrompt>,
}

/// A prompt of a session's MCP server.
#[cfg(feature = "mcp")]
#[derive(Debug, Clone)]
pub struct ServerPrompt(agentry_mcp::McpPrompt);

/// A prompt of a session's MCP server (none in a build without MCP).
#[cfg(not(feature = "mcp"))]
#[derive(Debug, Clone)]
pub enum ServerPrompt {}

#[cfg(feature = "mcp")]
impl ServerPrompt {
    /// The server's name.
    pub fn server(&self) -> &str {
        &self.0.server
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// What it does.
    pub fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }

    /// Its arguments (name, required), in order.
    pub fn arguments(&self) -> Vec<(String, bool)> {
        self.0
            .arguments
            .iter()
            .map(|a| (a.name.clone(), a.required))
            .collect()
    }

    /// The prompt's content, with `arguments` filled in.
    pub async fn content(
        &self,
        arguments: std::collections::BTreeMap<String, String>,
    ) -> Result<Vec<agentry::model::ContentBlock>, String> {
        self.0.get(arguments).await
    }
}

#[cfg(not(feature = "mcp"))]
impl ServerPrompt {
    /// The server's name.
    pub fn server(&self) -> &str {
        match *self {}
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        match *self {}
    }

    /// What it does.
    pub fn description(&self) -> Option<&str> {
        match *self {}
    }

    /// Its arguments (name, required), in order.
    pub fn arguments(&self) -> Vec<(String, bool)> {
        match *self {}
    }

    /// The prompt's content, with `arguments` filled in.
    pub async fn content(
        &self,
        _arguments: std::collections::BTreeMap<String, String>,
    ) -> Result<Vec<agentry::model::ContentBlock>, String> {
        match *self {}
    }
}

/// Connects a session's servers; those that fail are logged (on stderr) and left out.
#[cfg(feature = "mcp")]
pub async fn connect(servers: &[acp::McpServer], cwd: &Path) -> Connected {
    let mut configs = std::collections::BTreeMap::new();
    for server in servers {
        match config(server) {
            Ok((name, config)) => {
                configs.insert(name, config);
            }
            Err(problem) => tracing::warn!("{problem}"),
        }
    }
    let mut connected = Connected::default();
    for (_, result) in agentry_mcp::connect_all(&configs, cwd, STARTUP_TIMEOUT).await {
        match result {
            Ok(provider) => {
                connected
                    .prompts
                    .extend(provider.prompts().iter().cloned().map(ServerPrompt));
                connected.providers.push(std::sync::Arc::new(provider));
            }
            Err(error) => tracing::warn!("{error}"),
        }
    }
    connected
}

/// This build has no MCP provider: the servers are reported, not silently dropped.
#[cfg(not(feature = "mcp"))]
pub async fn connect(servers: &[acp::McpServer], _cwd: &Path) -> Connected {
    if !servers.is_empty() {
        tracing::warn!(
            "the client passed {} MCP server(s); this agent was built without MCP support, so their tools are not available",
            servers.len()
        );
    }
    Connected::default()
}
