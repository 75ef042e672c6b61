//! The MCP servers a client passes with a session (`mcpServers` in `session/new`, `load`,
//! `resume`), connected through the MCP provider; their tools serve that session only.

use agent_client_protocol::v1::schema as acp;
use agentry::commands::SlashCommand;
use agentry::provider::Provider;
use std::path::Path;
use std::sync::Arc;

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
    pub providers: Vec<Arc<dyn Provider>>,
    /// The same servers, as sources of prompts.
    pub servers: Vec<PromptServer>,
}

/// An MCP server whose prompts are slash commands (its prompt list may change).
#[cfg(feature = "mcp")]
#[derive(Clone)]
pub struct PromptServer(Arc<agentry_mcp::McpProvider>);

/// An MCP server whose prompts are slash commands (none in a build without MCP).
#[cfg(not(feature = "mcp"))]
#[derive(Clone)]
pub enum PromptServer {}

#[cfg(feature = "mcp")]
impl PromptServer {
    /// The prompts of a connected server.
    pub fn new(server: Arc<agentry_mcp::McpProvider>) -> Self {
        Self(server)
    }

    /// Its prompts, as last listed.
    pub fn prompts(&self) -> Vec<Arc<dyn SlashCommand>> {
        self.0
            .prompts()
            .into_iter()
            .map(|prompt| Arc::new(prompt) as Arc<dyn SlashCommand>)
            .collect()
    }

    /// Wakes up whenever its prompt list changes.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.watch_prompts()
    }
}

#[cfg(not(feature = "mcp"))]
impl PromptServer {
    /// Its prompts, as last listed.
    pub fn prompts(&self) -> Vec<Arc<dyn SlashCommand>> {
        match *self {}
    }

    /// Wakes up whenever its prompt list changes.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        match *self {}
    }
}

/// Starts a session's servers in the background (the session does not wait for them: their
/// tools and prompts join when they answer); those that fail are logged on stderr.
#[cfg(feature = "mcp")]
pub fn connect(servers: &[acp::McpServer], cwd: &Path) -> Connected {
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
    let options = agentry_mcp::McpOptions::default();
    for (name, config) in &configs {
        let provider = agentry_mcp::connect_in_background(name, config, cwd, &options);
        let provider = Arc::new(provider);
        connected.servers.push(PromptServer(provider.clone()));
        connected.providers.push(provider);
    }
    connected
}

/// This build has no MCP provider: the servers are reported, not silently dropped.
#[cfg(not(feature = "mcp"))]
pub fn connect(servers: &[acp::McpServer], _cwd: &Path) -> Connected {
    if !servers.is_empty() {
        tracing::warn!(
            "the client passed {} MCP server(s); this agent was built without MCP support, so their tools are not available",
            servers.len()
        );
    }
    Connected::default()
}
