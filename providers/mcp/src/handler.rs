//! agentry's side of an MCP connection: what it tells the server about itself, what it does
//! with the server's notifications (progress, changed tool and prompt lists), and how it
//! answers what the server asks of it, as a request of its own or inside a result that needs
//! more input (the 2026-07-28 revision's multi-round-trip requests).
//!
//! It offers the project folder as its root: roots are deprecated in the newest protocol
//! version (SEP-2577), but servers on the earlier versions still ask for them.
#![allow(deprecated)]

use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitResult, ElicitationAction, Implementation,
    InputRequest, ListRootsResult, ProgressNotificationParam, Root, RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::path::Path;
use tokio::sync::mpsc;

/// A list the server said has changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
}

/// The client half of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    /// Hands each progress notification to the call waiting for it.
    pub(crate) progress: ProgressDispatcher,
    /// Tells the server's supervisor to list again.
    pub(crate) changes: mpsc::UnboundedSender<Changed>,
    /// The folders the server may work in (`roots/list`): the project's.
    pub(crate) roots: Vec<Root>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("agentry", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // The supervisor is gone only when the server is being shut down.
        let _ = self.changes.send(Changed::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changes.send(Changed::Prompts);
    }
}

/// agentry's answer to `request`, one of the inputs a server's result asked for, as the retry
/// carries it; or why there is none. `roots` are the connection's.
pub(crate) fn input_response(
    request: &InputRequest,
    roots: &[Root],
) -> Result<serde_json::Value, String> {
    let answer = match request {
        InputRequest::ListRoots(_) => serde_json::to_value(ListRootsResult::new(roots.to_vec())),
        // Nobody is asked yet: the question is declined, as a person may.
        InputRequest::Elicitation(_) => {
            serde_json::to_value(ElicitResult::new(ElicitationAction::Decline))
        }
        InputRequest::CreateMessage(_) => {
            return Err("it asked for a message from agentry's model (sampling), which agentry does not answer yet".to_owned());
        }
        _ => return Err("it asked for an input agentry does not know".to_owned()),
    };
    answer.map_err(|error| error.to_string())
}

/// A folder as an MCP root (a `file://` URI, named after the folder).
pub(crate) fn root(folder: &Path) -> Root {
    let uri = url::Url::from_directory_path(folder)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", folder.display()));
    let root = Root::new(uri);
    match folder.file_name() {
        Some(name) => root.with_name(name.to_string_lossy()),
        None => root,
    }
}
