//! The MCP servers a client passes with a session (`mcpServers` in `session/new`, `load`,
//! `resume`), connected through the agent's [`SessionServers`] hook; their tools serve that
//! session only, and their prompts join its slash commands.

use agent_client_protocol::v1::schema as acp;
use agentry::agent::Agent;
use agentry::provider::Provider;
use agentry::session_servers::{ServerSpec, SessionServers};
use std::path::Path;
use std::sync::Arc;

/// The transports the agent's hook speaks (none without one).
pub fn capabilities(agent: &Agent) -> acp::McpCapabilities {
    let transports = agent
        .session_servers()
        .map(|servers| servers.transports())
        .unwrap_or_default();
    acp::McpCapabilities::new().http(transports.http).sse(false)
}

/// A client's MCP server in the framework's terms, or why it cannot be used.
fn spec(server: &acp::McpServer) -> Result<ServerSpec, String> {
    match server {
        acp::McpServer::Stdio(stdio) => Ok(ServerSpec::Stdio {
            name: stdio.name.clone(),
            command: stdio.command.display().to_string(),
            args: stdio.args.clone(),
            env: stdio
                .env
                .iter()
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect(),
        }),
        acp::McpServer::Http(http) => Ok(ServerSpec::Http {
            name: http.name.clone(),
            url: http.url.clone(),
            headers: http
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
        }),
        acp::McpServer::Sse(sse) => Err(format!(
            "MCP server `{}` uses the old HTTP+SSE transport, which agentry does not speak",
            sse.name
        )),
        _ => Err("an MCP server of a kind this agent does not know".to_owned()),
    }
}

/// Starts a session's servers in the background (the session does not wait for them: their
/// tools and prompts join when they answer); those that cannot be used are logged on stderr.
pub fn connect(agent: &Agent, servers: &[acp::McpServer], cwd: &Path) -> Vec<Arc<dyn Provider>> {
    if servers.is_empty() {
        return Vec::new();
    }
    let Some(hook) = agent.session_servers() else {
        tracing::warn!(
            "the client passed {} MCP server(s); this agent connects none, so their tools are not available",
            servers.len()
        );
        return Vec::new();
    };
    // One server per name: a later one of the same name replaces an earlier one.
    let mut specs = std::collections::BTreeMap::new();
    for server in servers {
        match spec(server) {
            Ok(spec) => {
                specs.insert(spec.name().to_owned(), spec);
            }
            Err(problem) => tracing::warn!("{problem}"),
        }
    }
    specs
        .values()
        .filter_map(|spec| connect_one(hook.as_ref(), spec, cwd))
        .collect()
}

fn connect_one(
    hook: &dyn SessionServers,
    spec: &ServerSpec,
    cwd: &Path,
) -> Option<Arc<dyn Provider>> {
    hook.connect(spec, cwd)
        .map_err(|problem| tracing::warn!("MCP server `{}` left out: {problem}", spec.name()))
        .ok()
}
