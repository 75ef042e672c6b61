//! What the agent asks of the ACP client during a turn: showing events (`session/update`) and
//! answering permission questions (`session/request_permission`).

use crate::convert::{SubAgentView, permission_option, permission_subject};
use crate::view::ChatView;
use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agentry::event::{AgentEvent, EventSink};
use agentry::permission::{
    PermissionHandler, PermissionOptionKind, PermissionOutcome, PermissionRequest,
};
use agentry::sync::lock;
use agentry::tool::{ClientFiles, ClientTerminals, TerminalCommand, TerminalExit};
use futures::future::BoxFuture;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Sends a session's events to the client as `session/update` notifications, in order.
pub struct ClientUpdates {
    /// The connection to the client.
    pub connection: ConnectionTo<Client>,
    /// The session the updates belong to.
    pub session_id: acp::SessionId,
    /// The model's context window, for `usage_update`.
    pub context_window: Option<u64>,
    /// The turn's calls and sub-agents so far (shared with its [`ClientPermissions`]).
    pub view: Arc<Mutex<ChatView>>,
}

impl ClientUpdates {
    /// Updates of `session_id` to the client at the other end of `connection` (without a
    /// context window: usage is then not reported), sub-agents shown inline.
    pub fn new(connection: ConnectionTo<Client>, session_id: acp::SessionId) -> Self {
        let view = ChatView::new(session_id.clone(), SubAgentView::Inline);
        Self {
            connection,
            session_id,
            context_window: None,
            view: Arc::new(Mutex::new(view)),
        }
    }

    /// Shows sub-agents as `view` says.
    pub fn showing_sub_agents(self, view: SubAgentView) -> Self {
        let view = ChatView::new(self.session_id.clone(), view);
        Self {
            view: Arc::new(Mutex::new(view)),
            ..self
        }
    }

    /// Sends one update of the session (a closed connection drops it: the turn is being torn
    /// down).
    pub fn send(&self, update: acp::SessionUpdate) {
        self.send_to(self.session_id.clone(), update);
    }

    /// Sends one update of `session_id` (the session, or a sub-agent's child session).
    fn send_to(&self, session_id: acp::SessionId, update: acp::SessionUpdate) {
        let notification = acp::SessionNotification::new(session_id, update);
        if let Err(error) = self.connection.send_notification(notification) {
            tracing::debug!("session/update not sent: {error}");
        }
    }

    /// Replays stored events (`session/load`).
    pub fn replay<'e>(&self, events: impl IntoIterator<Item = &'e AgentEvent>) {
        for event in events {
            let updates = lock(&self.view).replayed(event);
            for (session_id, update) in updates {
                self.send_to(session_id, update);
            }
        }
    }
}

impl EventSink for ClientUpdates {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::Notice { message } = &event {
            tracing::info!(session = %self.session_id, "{message}");
        }
        let updates = lock(&self.view).updates(&event, self.context_window);
        for (session_id, update) in updates {
            self.send_to(session_id, update);
        }
    }
}

/// Asks the client, with `session/request_permission`, whether a tool call may run.
pub struct ClientPermissions {
    /// The connection to the client.
    pub connection: ConnectionTo<Client>,
    /// The turn's calls and sub-agents (its [`ClientUpdates`]' view), to say which sub-agent
    /// asks, in which session.
    pub view: Arc<Mutex<ChatView>>,
}

#[async_trait::async_trait]
impl PermissionHandler for ClientPermissions {
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        let (session_id, subject) = {
            let view = lock(&self.view);
            let subject = permission_subject(&request.tool_call, &view.book, view.sub_agents());
            (
                view.session_of_call(&request.tool_call.tool_call_id),
                subject,
            )
        };
        let question = acp::RequestPermissionRequest::new(
            session_id,
            subject,
            request.options.iter().map(permission_option).collect(),
        );
        match self.connection.send_request(question).block_task().await {
            Ok(answer) => match answer.outcome {
                acp::RequestPermissionOutcome::Selected(selected) => request
                    .options
                    .iter()
                    .find(|option| option.option_id == selected.option_id.to_string())
                    .map(|option| PermissionOutcome::Selected { kind: option.kind })
                    .unwrap_or_else(|| {
                        tracing::warn!(
                            "the client chose an option that was not offered ({}); the call is rejected",
                            selected.option_id
                        );
                        reject()
                    }),
                acp::RequestPermissionOutcome::Cancelled => PermissionOutcome::Cancelled,
                _ => reject(),
            },
            Err(error) => {
                tracing::warn!("session/request_permission failed ({error}); the call is rejected");
                reject()
            }
        }
    }
}

fn reject() -> PermissionOutcome {
    PermissionOutcome::Selected {
        kind: PermissionOptionKind::RejectOnce,
    }
}

/// The client's files (`fs/read_text_file`, `fs/write_text_file`), for the file tools.
pub struct ClientTextFiles {
    /// The connection to the client.
    pub connection: ConnectionTo<Client>,
    /// The session whose tools use them.
    pub session_id: acp::SessionId,
}

impl ClientFiles for ClientTextFiles {
    fn read_text_file(&self, path: PathBuf) -> BoxFuture<'static, Result<String, String>> {
        let request = acp::ReadTextFileRequest::new(self.session_id.clone(), path);
        let sent = self.connection.send_request(request);
        Box::pin(async move {
            sent.block_task()
                .await
                .map(|response| response.content)
                .map_err(|e| format!("the editor could not read it ({})", e.message))
        })
    }

    fn write_text_file(
        &self,
        path: PathBuf,
        text: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        let request = acp::WriteTextFileRequest::new(self.session_id.clone(), path, text);
        let sent = self.connection.send_request(request);
        Box::pin(async move {
            sent.block_task()
                .await
                .map(|_| ())
                .map_err(|e| format!("the editor could not write it ({})", e.message))
        })
    }
}

/// The client's terminals (`terminal/*`), for Bash.
pub struct ClientTerminalRunner {
    /// The connection to the client.
    pub connection: ConnectionTo<Client>,
    /// The session whose tools use them.
    pub session_id: acp::SessionId,
}

impl ClientTerminalRunner {
    /// Sends a request and turns its error into a message for the model.
    fn ask<R: agent_client_protocol::JsonRpcRequest>(
        &self,
        request: R,
    ) -> BoxFuture<'static, Result<R::Response, String>>
    where
        R::Response: Send,
    {
        let sent = self.connection.send_request(request);
        Box::pin(async move { sent.block_task().await.map_err(|e| e.message) })
    }
}

impl ClientTerminals for ClientTerminalRunner {
    fn create(&self, command: TerminalCommand) -> BoxFuture<'static, Result<String, String>> {
        let request = acp::CreateTerminalRequest::new(self.session_id.clone(), command.command)
            .args(command.args)
            .cwd(command.cwd)
            .output_byte_limit(command.output_byte_limit);
        let created = self.ask(request);
        Box::pin(async move { created.await.map(|r| r.terminal_id.to_string()) })
    }

    fn output(&self, terminal_id: String) -> BoxFuture<'static, Result<String, String>> {
        let output = self.ask(acp::TerminalOutputRequest::new(
            self.session_id.clone(),
            terminal_id,
        ));
        Box::pin(async move { output.await.map(|r| r.output) })
    }

    fn wait_for_exit(
        &self,
        terminal_id: String,
    ) -> BoxFuture<'static, Result<TerminalExit, String>> {
        let exit = self.ask(acp::WaitForTerminalExitRequest::new(
            self.session_id.clone(),
            terminal_id,
        ));
        Box::pin(async move {
            exit.await.map(|r| TerminalExit {
                exit_code: r
                    .exit_status
                    .exit_code
                    .and_then(|code| i32::try_from(code).ok()),
                signal: r.exit_status.signal,
            })
        })
    }

    fn kill(&self, terminal_id: String) -> BoxFuture<'static, Result<(), String>> {
        let killed = self.ask(acp::KillTerminalRequest::new(
            self.session_id.clone(),
            terminal_id,
        ));
        Box::pin(async move { killed.await.map(|_| ()) })
    }

    fn release(&self, terminal_id: String) -> BoxFuture<'static, Result<(), String>> {
        let released = self.ask(acp::ReleaseTerminalRequest::new(
            self.session_id.clone(),
            terminal_id,
        ));
        Box::pin(async move { released.await.map(|_| ()) })
    }
}
