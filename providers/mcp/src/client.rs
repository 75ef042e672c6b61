//! The MCP client as one provider, made by [`RECIPE`] whether linked or loaded as a plugin: it
//! hosts each configured server (the project's `.mcp.json`, then agentry's `[mcp_servers]`,
//! which wins on a name both have) as a provider of its own, and connects the servers a
//! front-end's client hands to a session with the user's `[mcp]` timeouts.

use crate::config::{SECTION, SERVERS_SECTION, read_mcp_json, servers_from_section};
use crate::{McpOptions, McpProvider, McpSessionServers, connect_in_background};
use agentry::provider::{Provider, ProviderStatus};
use agentry::session_servers::SessionServers;
use agentry::settings::{Configured, Making, Recipe, Settings, made};
use agentry::tool::DynTool;
use std::sync::Arc;

/// How the MCP client is made: from `[mcp]`, `[mcp_servers]` and the project's `.mcp.json`.
pub const RECIPE: Recipe = Recipe {
    name: "mcp",
    sections: &[SECTION, SERVERS_SECTION],
    make,
};

/// The MCP client: its servers, and the hook for a session's own.
struct McpClient {
    servers: Vec<Arc<McpProvider>>,
    options: McpOptions,
}

/// Reads the configured servers; with none, the client is made at once (a plugin then starts
/// no runtime for it). Otherwise starts them in the background and, when the front-end waits,
/// waits for each to answer or fail (within its startup timeout) and reports those that failed.
fn make(settings: Settings) -> Making {
    let read = || -> Result<_, String> {
        let mut options = McpOptions::from_section(settings.section(SECTION))?;
        options.token_folder = settings
            .data_folder
            .as_ref()
            .map(|data| data.join("mcp-auth"));
        options.tool_cache_folder = settings
            .data_folder
            .as_ref()
            .map(|data| data.join("mcp-tools"));
        let mut problems = Vec::new();
        // Settings without a project (a plugin's first making, before the host configures it)
        // have no `.mcp.json`: the servers start once, when the host's settings come. An
        // untrusted project's `.mcp.json` starts nothing (the host says it was left out).
        let mut configured = if settings.project.as_os_str().is_empty() || !settings.project_trusted
        {
            Default::default()
        } else {
            read_mcp_json(&settings.project.join(".mcp.json")).unwrap_or_else(|error| {
                problems.push(error.to_string());
                Default::default()
            })
        };
        configured.extend(servers_from_section(settings.section(SERVERS_SECTION))?);
        Ok((options, configured, problems))
    };
    let (options, mut configured, mut problems) = match read() {
        Ok(read) => read,
        Err(problem) => return made(Err(problem)),
    };
    problems.extend(drop_confusable(&mut configured));
    if configured.is_empty() {
        let client = McpClient {
            servers: Vec::new(),
            options,
        };
        return made(Ok(Configured::new(client).with_problems(problems)));
    }
    Making::later(async move {
        let servers: Vec<Arc<McpProvider>> = configured
            .iter()
            .map(|(name, server)| {
                Arc::new(connect_in_background(
                    name,
                    server,
                    &settings.project,
                    &options,
                ))
            })
            .collect();
        if settings.wait {
            futures::future::join_all(servers.iter().map(|server| server.settled())).await;
            problems.extend(servers.iter().filter_map(|server| match server.status() {
                ProviderStatus::Failed { reason } => Some(reason),
                ProviderStatus::NeedsLogin { how } => {
                    Some(format!("MCP server `{}` needs login: {how}", server.name()))
                }
                _ => None,
            }));
        }
        Ok(Configured::new(McpClient { servers, options }).with_problems(problems))
    })
}

/// Leaves out each server whose tools would be named as an earlier one's (`gh` and `gh_` both
/// give `mcp__gh__…`), so that a rule naming one server never names another; says which.
fn drop_confusable<T>(servers: &mut std::collections::BTreeMap<String, T>) -> Vec<String> {
    let mut prefixes = std::collections::BTreeMap::new();
    let mut dropped = Vec::new();
    servers.retain(|name, _| {
        let prefix = crate::tool_prefix(name);
        match prefixes.get(&prefix) {
            Some(first) => {
                dropped.push(format!(
                    "the MCP servers `{first}` and `{name}` would both name their tools `{prefix}…`: `{name}` is left out (rename one)"
                ));
                false
            }
            None => {
                prefixes.insert(prefix, name.clone());
                true
            }
        }
    });
    dropped
}

impl Provider for McpClient {
    fn name(&self) -> &str {
        "mcp"
    }

    fn description(&self) -> String {
        "The MCP client: the tools and prompts of MCP servers.".to_owned()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        Vec::new()
    }

    fn hosted(&self) -> Vec<Arc<dyn Provider>> {
        self.servers
            .iter()
            .map(|server| server.clone() as Arc<dyn Provider>)
            .collect()
    }

    fn session_servers(&self) -> Option<Arc<dyn SessionServers>> {
        Some(Arc::new(McpSessionServers::new(self.options.clone())))
    }
}
