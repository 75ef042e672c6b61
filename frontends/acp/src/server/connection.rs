//! The connection's handlers: each ACP method routed to the [`Server`] method that answers it.

use super::{Reopening, Server, unknown_session};
use crate::client::ClientUpdates;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use agentry::hooks::SessionEndReason;
use std::sync::Arc;

impl Server {
    /// Opens a new session off the dispatch loop (its MCP servers may take a while to start),
    /// then offers its commands.
    fn open_in_task(
        self: Arc<Self>,
        request: acp::NewSessionRequest,
        responder: Responder<acp::NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        tokio::spawn(async move {
            let opened = self.new_session(request, &cx).await;
            let id = opened.as_ref().ok().map(|r| r.session_id.clone());
            let _ = respond(responder, opened);
            if let Some(id) = id {
                self.announce_commands(&cx, id);
            }
        });
    }

    /// `session/load`: reopens a stored session, its transcript replayed to the client.
    fn load(
        self: &Arc<Self>,
        request: acp::LoadSessionRequest,
        responder: Responder<acp::LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let reopening = Reopening {
            replay: true,
            ..Reopening::new(
                request.session_id,
                request.cwd,
                request.additional_directories,
                request.mcp_servers,
            )
        };
        self.reopen_in_task(reopening, cx, responder, |modes, options| {
            acp::LoadSessionResponse::new()
                .modes(modes)
                .config_options(options)
        });
    }

    /// `session/resume`: reopens a stored session without replaying it.
    fn resume(
        self: &Arc<Self>,
        request: acp::ResumeSessionRequest,
        responder: Responder<acp::ResumeSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let reopening = Reopening::new(
            request.session_id,
            request.cwd,
            request.additional_directories,
            request.mcp_servers,
        );
        self.reopen_in_task(reopening, cx, responder, |modes, options| {
            acp::ResumeSessionResponse::new()
                .modes(modes)
                .config_options(options)
        });
    }

    /// `session/close`: the session is let go (its store keeps it).
    fn close_session(&self, id: &acp::SessionId) -> Result<acp::CloseSessionResponse, Error> {
        let Some(live) = self.sessions.remove(&id.to_string()) else {
            return Err(unknown_session(id));
        };
        // Its `SessionEnd` hooks run once its turn has let it go.
        tokio::spawn(async move {
            for notice in live.session.lock().await.end(SessionEndReason::Other).await {
                tracing::warn!("{notice}");
            }
        });
        Ok(acp::CloseSessionResponse::new())
    }

    /// `session/set_mode`: answered, then the client told the mode now in force.
    fn switch_mode(
        &self,
        request: acp::SetSessionModeRequest,
        responder: Responder<acp::SetSessionModeResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let mode = match self.set_mode(&request) {
            Ok(mode) => mode,
            Err(problem) => return responder.respond_with_error(problem),
        };
        responder.respond(acp::SetSessionModeResponse::new())?;
        ClientUpdates::new(cx, request.session_id).send(acp::SessionUpdate::CurrentModeUpdate(
            acp::CurrentModeUpdate::new(mode.as_str()),
        ));
        Ok(())
    }

    /// `session/cancel`: the session's running turn stops.
    fn cancel(&self, id: &acp::SessionId) {
        match self.sessions.get(&id.to_string()) {
            Some(live) => live.cancel_turn(),
            None => tracing::warn!("session/cancel for unknown session `{id}`"),
        }
    }
}

/// The connection's handlers.
pub(super) fn connection(
    server: Arc<Server>,
) -> agent_client_protocol::v1::Builder<
    agent_client_protocol::Agent,
    impl agent_client_protocol::HandleDispatchFrom<Client>,
> {
    let on_initialize = server.clone();
    let on_new = server.clone();
    let on_authenticate = server.clone();
    let on_load = server.clone();
    let on_resume = server.clone();
    let on_list = server.clone();
    let on_close = server.clone();
    let on_delete = server.clone();
    let on_mode = server.clone();
    let on_prompt = server.clone();
    let on_config = server.clone();
    let on_cancel = server;
    agent_client_protocol::Agent
        .v1()
        .name("agentry")
        .on_receive_request(
            async move |request: acp::InitializeRequest,
                        responder: Responder<acp::InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                responder.respond(on_initialize.initialize(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::AuthenticateRequest,
                        responder: Responder<acp::AuthenticateResponse>,
                        _cx: ConnectionTo<Client>| {
                respond(responder, on_authenticate.authenticate(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::NewSessionRequest,
                        responder: Responder<acp::NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                on_new.clone().open_in_task(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::LoadSessionRequest,
                        responder: Responder<acp::LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                on_load.load(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::ResumeSessionRequest,
                        responder: Responder<acp::ResumeSessionResponse>,
                        cx: ConnectionTo<Client>| {
                on_resume.resume(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::ListSessionsRequest,
                        responder: Responder<acp::ListSessionsResponse>,
                        _cx: ConnectionTo<Client>| {
                respond(responder, on_list.list_sessions(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::CloseSessionRequest,
                        responder: Responder<acp::CloseSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                respond(responder, on_close.close_session(&request.session_id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::DeleteSessionRequest,
                        responder: Responder<acp::DeleteSessionResponse>,
                        _cx: ConnectionTo<Client>| {
                respond(responder, on_delete.delete_session(&request.session_id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionModeRequest,
                        responder: Responder<acp::SetSessionModeResponse>,
                        cx: ConnectionTo<Client>| {
                on_mode.switch_mode(request, responder, cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionConfigOptionRequest,
                        responder: Responder<acp::SetSessionConfigOptionResponse>,
                        _cx: ConnectionTo<Client>| {
                respond(responder, on_config.set_config_option(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::PromptRequest,
                        responder: Responder<acp::PromptResponse>,
                        cx: ConnectionTo<Client>| {
                on_prompt.prompt(request, responder, cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: acp::CancelNotification, _cx: ConnectionTo<Client>| {
                on_cancel.cancel(&notification.session_id);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

/// Answers a request with a result or an error.
pub(super) fn respond<T: agent_client_protocol::JsonRpcResponse>(
    responder: Responder<T>,
    result: Result<T, Error>,
) -> Result<(), Error> {
    match result {
        Ok(response) => responder.respond(response),
        Err(error) => responder.respond_with_error(error),
    }
}
