//! One prompt turn: the session set up as the client left it, the client's permission and
//! question handlers, a rewind command or the chat itself.

use super::error;
use crate::client::{ClientPermissions, ClientUpdates};
use crate::convert::{SubAgentView, prompt_response};
use crate::live::LiveSession;
use crate::questions::ClientQuestions;
use crate::trust::PendingTrust;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, Error, ErrorCode};
use agentry::agent::{ChatIo, ChatOptions};
use agentry::error::AgentError;
use agentry::question::QuestionHandler;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the client does that a turn needs to know.
pub(super) struct TurnClient {
    /// It renders forms: it answers the model's questions.
    pub(super) asks: bool,
    /// How it shows sub-agents.
    pub(super) sub_agents: SubAgentView,
    /// The question about the agent's folder, until it is asked.
    pub(super) trust: Arc<PendingTrust>,
}

/// Runs the turn `request` asks for in `live`, until it ends or `cancel` fires.
pub(super) async fn run_turn(
    live: &LiveSession,
    request: acp::PromptRequest,
    connection: ConnectionTo<Client>,
    cancel: CancellationToken,
    client: TurnClient,
) -> Result<acp::PromptResponse, Error> {
    let mut session = live.session.lock().await;
    session.set_mode(live.mode());
    session.set_sandbox(live.sandbox());
    if let Some(model) = live.take_chosen_model() {
        session.set_model(model);
    }
    let context_window = session.model().context_window();
    let updates = ClientUpdates {
        context_window,
        ..ClientUpdates::new(connection.clone(), request.session_id.clone())
            .showing_sub_agents(client.sub_agents)
    };
    let questions = client.asks.then(|| {
        Arc::new(ClientQuestions {
            connection: connection.clone(),
            view: updates.view.clone(),
        }) as Arc<dyn QuestionHandler>
    });
    let permissions = ClientPermissions {
        connection,
        view: updates.view.clone(),
    };
    if let Some(told) = client
        .trust
        .ask_once(&permissions.connection, &request.session_id)
        .await
    {
        updates.send(acp::SessionUpdate::AgentMessageChunk(
            acp::ContentChunk::new(acp::ContentBlock::from(format!("{told}\n\n"))),
        ));
    }
    if let Some(arguments) = crate::rewind::arguments(&request.prompt) {
        crate::rewind::run(&mut session, &arguments, &updates).await;
        return Ok(acp::PromptResponse::new(acp::StopReason::EndTurn));
    }
    if let Some(instructions) = crate::compact::arguments(&request.prompt) {
        crate::compact::run(&mut session, &instructions, &updates, &cancel).await;
        let stop = match cancel.is_cancelled() {
            true => acp::StopReason::Cancelled,
            false => acp::StopReason::EndTurn,
        };
        return Ok(acp::PromptResponse::new(stop));
    }
    let io = ChatIo {
        events: Arc::new(updates),
        permissions: Arc::new(permissions),
        cancel,
        questions,
    };
    let prompt = live.commands().expand(request.prompt).await?;
    match session
        .prompt_with(prompt, &ChatOptions::default(), &io)
        .await
    {
        Ok(summary) => Ok(prompt_response(&summary)),
        // A command whose calls could not run is the prompt's problem, as one missing an
        // argument is.
        Err(failure @ AgentError::CommandNotRun(_)) => {
            Err(error(ErrorCode::INVALID_PARAMS, failure.to_string()))
        }
        Err(failure) => Err(error(ErrorCode::INTERNAL_ERROR, failure.to_string())),
    }
}
