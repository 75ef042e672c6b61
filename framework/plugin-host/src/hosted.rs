//! What a plugin's providers change over time and what they host, on the host's side: a
//! changing provider's state (its revision and status, asked before use), the providers a
//! plugin hosts (an MCP client's servers), the servers it connects for a session, and the
//! login to what a provider reaches.

use super::{Library, PluginProvider};
use agentry::provider::{Login, Provider, ProviderStatus};
use agentry::session_servers::{ServerSpec, ServerTransports, SessionServers};
use agentry_plugin_abi::wire::{Description, ProviderState, Query};
use futures::future::BoxFuture;
use std::path::Path;
use std::sync::Arc;

/// How often a changing provider's slash commands are checked for a new list.
const COMMANDS_POLL: std::time::Duration = std::time::Duration::from_millis(500);

impl Library {
    /// How the plugin's provider `handle` stands now; `None` when the plugin cannot say (it
    /// is logged).
    pub(super) fn state(&self, handle: u64) -> Option<ProviderState> {
        match self.query::<ProviderState>(&Query::State { provider: handle })? {
            Ok(state) => Some(state),
            Err(problem) => {
                tracing::warn!("plugin {}: {problem}", self.path.display());
                None
            }
        }
    }

    /// The plugin's provider `handle` as it is now.
    pub(super) fn describe(&self, handle: u64) -> Result<Description, String> {
        self.query::<Description>(&Query::Describe { provider: handle })
            .unwrap_or_else(|| Err("it was built for ABI 1.0, which hosts no providers".into()))
    }
}

/// The providers the plugin hosts for its own provider, by `handles`; one the plugin cannot
/// describe is logged and left out.
pub(super) fn hosted(library: &Arc<Library>, handles: &[u64]) -> Vec<Arc<dyn Provider>> {
    handles
        .iter()
        .filter_map(|&handle| match library.describe(handle) {
            Ok(description) => Some(Arc::new(PluginProvider::hosted(
                library.clone(),
                handle,
                description,
                false,
            )) as Arc<dyn Provider>),
            Err(problem) => {
                tracing::warn!("plugin {}: {problem}", library.path.display());
                None
            }
        })
        .collect()
}

/// The status of a changing provider.
pub(super) fn status(library: &Library, handle: u64) -> ProviderStatus {
    library
        .state(handle)
        .map_or(ProviderStatus::Ready, |state| state.status)
}

/// A receiver that wakes up whenever the slash commands of the plugin's provider `handle`
/// change, fed by a task on the current runtime that asks the plugin now and then (the ABI
/// has no way for a plugin to call the host outside a call); `None` outside a runtime.
pub(super) fn command_changes(
    library: &Arc<Library>,
    handle: u64,
) -> Option<tokio::sync::watch::Receiver<u64>> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let first = library
        .state(handle)
        .map_or(0, |state| state.commands_revision);
    let (changed, changes) = tokio::sync::watch::channel(first);
    let library = library.clone();
    runtime.spawn(async move {
        while !changed.is_closed() {
            tokio::time::sleep(COMMANDS_POLL).await;
            let asked = tokio::task::spawn_blocking({
                let library = library.clone();
                move || library.state(handle)
            });
            if let Ok(Some(state)) = asked.await {
                changed.send_if_modified(|revision| {
                    std::mem::replace(revision, state.commands_revision) != state.commands_revision
                });
            }
        }
    });
    Some(changes)
}

/// The plugin's hook connecting the servers a client hands to a session.
pub(super) struct PluginSessionServers {
    pub(super) library: Arc<Library>,
    pub(super) transports: ServerTransports,
}

impl SessionServers for PluginSessionServers {
    fn transports(&self) -> ServerTransports {
        self.transports
    }

    fn connect(&self, server: &ServerSpec, cwd: &Path) -> Result<Arc<dyn Provider>, String> {
        let query = Query::ConnectServer {
            server: server.clone(),
            cwd: cwd.to_path_buf(),
        };
        let handle: u64 = self
            .library
            .query(&query)
            .unwrap_or_else(|| Err("it was built for ABI 1.0".to_owned()))?;
        let description = self.library.describe(handle)?;
        Ok(Arc::new(PluginProvider::hosted(
            self.library.clone(),
            handle,
            description,
            true,
        )))
    }
}

/// The login of the plugin's provider `handle`, run on the plugin's side (which opens the
/// browser and prints the address itself: it shares the process's standard error).
pub(super) struct PluginLogin {
    pub(super) library: Arc<Library>,
    pub(super) handle: u64,
}

impl PluginLogin {
    /// Asks `query` off the runtime (a login waits for the user).
    async fn ask<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        query: Query,
    ) -> Result<T, String> {
        let library = self.library.clone();
        tokio::task::spawn_blocking(move || {
            library
                .query::<T>(&query)
                .unwrap_or_else(|| Err("it was built for ABI 1.0, which has no login".into()))
        })
        .await
        .map_err(|e| format!("the login's thread failed: {e}"))?
    }
}

impl Login for PluginLogin {
    fn log_in(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            self.ask::<serde_json::Value>(Query::Login {
                provider: self.handle,
            })
            .await
            .map(drop)
        })
    }

    fn log_out(&self) -> BoxFuture<'_, Result<bool, String>> {
        Box::pin(self.ask(Query::Logout {
            provider: self.handle,
        }))
    }
}
