//! The MCP client as the framework's [`SessionServers`] hook: the MCP servers a front-end's
//! client hands to a session (ACP's `mcpServers`) start in the background with the user's
//! [`McpOptions`], and their prompts are slash commands.

use crate::{HttpServer, McpOptions, McpProvider, McpServerConfig, StdioServer};
use agentry::commands::{CommandSource, SlashCommand};
use agentry::provider::Provider;
use agentry::session_servers::{ServerSpec, ServerTransports, SessionServers};
use std::path::Path;
use std::sync::Arc;

/// Connects a session's MCP servers (stdio and streamable HTTP) with these options.
#[derive(Debug, Clone, Default)]
pub struct McpSessionServers {
    options: McpOptions,
}

impl McpSessionServers {
    /// Servers connected with `options` (the timeouts of the user's `[mcp]`, say).
    pub fn new(options: McpOptions) -> Self {
        Self { options }
    }
}

/// A client's server description as the provider's configuration.
fn config(server: &ServerSpec) -> Result<McpServerConfig, String> {
    match server {
        ServerSpec::Stdio {
            command, args, env, ..
        } => Ok(McpServerConfig::Stdio(StdioServer {
            command: command.clone(),
            args: args.clone(),
            env: env.iter().cloned().collect(),
            cwd: None,
            lazy: false,
        })),
        ServerSpec::Http { url, headers, .. } => Ok(McpServerConfig::Http(HttpServer {
            url: url.clone(),
            headers: headers.iter().cloned().collect(),
            oauth: None,
            lazy: false,
        })),
        other => Err(format!(
            "MCP server `{}` uses a transport agentry does not speak",
            other.name()
        )),
    }
}

impl SessionServers for McpSessionServers {
    fn transports(&self) -> ServerTransports {
        ServerTransports {
            stdio: true,
            http: true,
        }
    }

    fn connect(&self, server: &ServerSpec, cwd: &Path) -> Result<Arc<dyn Provider>, String> {
        let config = config(server)?;
        Ok(Arc::new(crate::connect_in_background(
            server.name(),
            &config,
            cwd,
            &self.options,
        )))
    }
}

impl CommandSource for McpProvider {
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>> {
        self.prompts()
            .into_iter()
            .map(|prompt| Arc::new(prompt) as Arc<dyn SlashCommand>)
            .collect()
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.watch_prompts())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_servers_become_provider_configuration() {
        let stdio = ServerSpec::Stdio {
            name: "files".to_owned(),
            command: "server".to_owned(),
            args: vec!["--root".to_owned()],
            env: vec![("TOKEN".to_owned(), "t".to_owned())],
        };
        let McpServerConfig::Stdio(stdio) = config(&stdio).unwrap() else {
            panic!("a stdio server")
        };
        assert_eq!(stdio.command, "server");
        assert_eq!(stdio.args, ["--root"]);
        assert_eq!(stdio.env.get("TOKEN").map(String::as_str), Some("t"));
        let http = ServerSpec::Http {
            name: "web".to_owned(),
            url: "http://127.0.0.1:9/mcp".to_owned(),
            headers: vec![("Authorization".to_owned(), "Bearer x".to_owned())],
        };
        let McpServerConfig::Http(http) = config(&http).unwrap() else {
            panic!("an HTTP server")
        };
        assert_eq!(http.url, "http://127.0.0.1:9/mcp");
        assert_eq!(http.headers.len(), 1);
    }
}
