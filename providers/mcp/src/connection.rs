//! Starting MCP servers and turning each into a provider.

use crate::McpError;
use crate::config::{McpOptions, McpServerConfig};
use crate::link::{Link, Origin};
use crate::prompts::McpPrompt;
use crate::tool::McpTool;
use agentry::commands::CommandSource;
use agentry::provider::{Login, Provider, ProviderOrigin, ProviderStatus};
use agentry::tool::DynTool;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

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
            folder: self.link.options.token_folder.clone(),
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
/// server holds up nothing; one that does not start shows it in [`McpProvider::status`]. A
/// [lazy](McpServerConfig::lazy) server listed before (with [`McpOptions::tool_cache_folder`]
/// set) is not started: it offers what it listed then, and starts when first used.
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
    let link = if config.lazy() {
        Link::open_lazily(name, origin)
    } else {
        Link::open_in_background(name, origin)
    };
    McpProvider { link }
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
