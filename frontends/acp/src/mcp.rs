//! The MCP servers a client passes with a session (`mcpServers` in `session/new`, `load`,
//! `resume`), connected through the MCP provider; their tools serve that session only.

use agent_client_protocol::v1::schema as acp;
use agentry::provider::Provider;
use std::path::Path;

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
    /// The same servers, as sources of prompts.
    pub servers: Vec<PromptServer>,
}

/// An MCP server whose prompts are slash commands (its prompt list may change).
#[cfg(feature = "mcp")]
#[derive(Clone)]
pub struct PromptServer(std::sync::Arc<agentry_mcp::McpProvider>);

/// An MCP server whose prompts are slash commands (none in a build without MCP).
#[cfg(not(feature = "mcp"))]
#[derive(Clone)]
pub enum PromptServer {}

#[cfg(feature = "mcp")]
impl PromptServer {
    /// The prompts of a connected server.
    pub fn new(server: std::sync::Arc<agentry_mcp::McpProvider>) -> Self {
        Self(server)
    }

    /// Its prompts, as last listed.
    pub fn prompts(&self) -> Vec<ServerPrompt> {
        self.0.prompts().into_iter().map(ServerPrompt).collect()
    }

    /// Wakes up whenever its prompt list changes.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.watch_prompts()
    }
}

#[cfg(not(feature = "mcp"))]
impl PromptServer {
    /// Its prompts, as last listed.
    pub fn prompts(&self) -> Vec<ServerPrompt> {
        match *self {}
    }

    /// Wakes up whenever its prompt list changes.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        match *self {}
    }
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
        let provider = std::sync::Arc::new(provider);
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
