//! agentry's side of an MCP connection: what it tells the server about itself, what it does
//! with the server's notifications (progress, changed tool and prompt lists), and how it
//! answers what the server asks of it, as a request of its own or inside a result that needs
//! more input (the 2026-07-28 revision's multi-round-trip requests).
//!
//! It offers the project folder as its root: roots are deprecated in the newest protocol
//! version (SEP-2577), but servers on the earlier versions still ask for them.
#![allow(deprecated)]

use crate::in_flight::CallsInFlight;
use crate::sampling::{Refused, SamplingPolicy};
use agentry::tool::{ToolContext, ToolError};
use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, InputRequest, ListRootsResult,
    ProgressNotificationParam, Root, RootsCapabilities, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::path::Path;
use std::sync::{Arc, Mutex};
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
    /// The server's name, to tell the user who asks.
    pub(crate) server: String,
    /// Whether and how far the session's model answers the server.
    pub(crate) sampling: SamplingPolicy,
    /// The tool calls waiting for the server: a question it asks goes to the user of the
    /// one it belongs to.
    pub(crate) calls: Arc<CallsInFlight>,
}

/// The server's answer to an elicitation asked during a call: a question the user could not
/// answer now is noted for the call in `unanswered` and cancelled for the server.
fn answered(
    asked: Result<ElicitResult, ToolError>,
    unanswered: &Mutex<Option<ToolError>>,
) -> ElicitResult {
    asked.unwrap_or_else(|error| {
        *agentry::sync::lock(unanswered) = Some(error);
        ElicitResult::new(ElicitationAction::Cancel)
    })
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        capabilities.sampling = Some(Default::default());
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::default())
                .with_url(UrlElicitationCapability::default()),
        );
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

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(match self.calls.asking(context.extensions.get()).await {
            Some((ctx, unanswered)) => answered(
                crate::elicitation::ask(&self.server, &request, &ctx).await,
                &unanswered,
            ),
            // Asked outside a tool call: there is nobody to put it to.
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some((ctx, unanswered)) = self.calls.asking(context.extensions.get()).await else {
            return Err(ErrorData::invalid_request(
                "agentry answers sampling only during a tool call of this server",
                None,
            ));
        };
        match crate::sampling::answer(&self.server, &params, &ctx, &self.sampling).await {
            Ok(result) => Ok(result),
            Err(Refused::Said(why)) => Err(ErrorData::invalid_request(why, None)),
            Err(Refused::Ended(error)) => {
                *agentry::sync::lock(&unanswered) = Some(error);
                Err(ErrorData::invalid_request(
                    "the user has not answered yet",
                    None,
                ))
            }
        }
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

/// Why an input a server's result asked for has no answer.
pub(crate) enum Unanswered {
    /// agentry cannot give it.
    Unsupported(String),
    /// The asking ended the call (the chat pauses for the answer, or it was cancelled).
    Ended(ToolError),
}

/// agentry's answer to `request`, one of the inputs the result of call `ctx` of `server` asked
/// for, as the retry carries it; or why there is none. `roots` are the connection's.
pub(crate) async fn input_response(
    server: &str,
    request: &InputRequest,
    roots: &[Root],
    ctx: &ToolContext,
    sampling: &SamplingPolicy,
) -> Result<serde_json::Value, Unanswered> {
    let answer = match request {
        InputRequest::ListRoots(_) => serde_json::to_value(ListRootsResult::new(roots.to_vec())),
        InputRequest::Elicitation(request) => {
            match crate::elicitation::ask(server, &request.params, ctx).await {
                Ok(answer) => serde_json::to_value(answer),
                Err(error) => return Err(Unanswered::Ended(error)),
            }
        }
        InputRequest::CreateMessage(request) => {
            match crate::sampling::answer(server, &request.params, ctx, sampling).await {
                Ok(result) => serde_json::to_value(result),
                Err(Refused::Said(why)) => return Err(Unanswered::Unsupported(why)),
                Err(Refused::Ended(error)) => return Err(Unanswered::Ended(error)),
            }
        }
        _ => {
            return Err(Unanswered::Unsupported(
                "it asked for an input agentry does not know".to_owned(),
            ));
        }
    };
    answer.map_err(|error| Unanswered::Unsupported(error.to_string()))
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
