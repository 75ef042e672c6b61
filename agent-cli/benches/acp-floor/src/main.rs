//! `acp-floor`: the least an ACP agent does, on the same `agent-client-protocol` crate, stdio
//! transport (`agentry_acp::stdio`: stdout written in batches), tokio runtime and HTTP client as
//! `agentry acp`. It answers `initialize` and `session/new`, and a
//! `session/prompt` by streaming one Chat Completions request from `OPENAI_BASE_URL` and
//! relaying each text delta as an `agent_message_chunk`. The ACP benchmark measures it beside
//! agentry as the floor no agent on this stack can go below: start-up, memory and streaming.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, ContentBlock, ContentChunk, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, SessionNotification,
    SessionUpdate, StopReason,
};
use agent_client_protocol::{Agent, Client, Error};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// Streams the model's answer to `request`, each text delta to the client as it arrives.
async fn relay(
    http: &reqwest::Client,
    request: &PromptRequest,
    connection: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let failed = |e: &dyn std::fmt::Display| Error::internal_error().data(e.to_string());
    let base = std::env::var("OPENAI_BASE_URL").map_err(|e| failed(&e))?;
    let text: String = request
        .prompt
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    let body = json!({
        "model": "floor", "stream": true,
        "messages": [{"role": "user", "content": text}],
    });
    let response = http
        .post(format!("{base}/chat/completions"))
        .json(&body)
        .send()
        .await
        .map_err(|e| failed(&e))?;
    let mut events = response.bytes_stream().eventsource();
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| failed(&e))?;
        if event.data == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(&event.data).map_err(|e| failed(&e))?;
        let delta = chunk["choices"][0]["delta"]["content"].as_str();
        if let Some(delta) = delta.filter(|delta| !delta.is_empty()) {
            connection.send_notification(SessionNotification::new(
                request.session_id.clone(),
                SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(
                    delta.to_owned(),
                ))),
            ))?;
        }
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| Error::internal_error().data(e.to_string()))?;
    // Made on the first prompt: start-up stays the least it can be.
    let http = Arc::new(OnceLock::<reqwest::Client>::new());
    runtime.block_on(agentry_acp::stdio::over_stdio(async |transport| {
        Agent
            .v1()
            .name("acp-floor")
            .on_receive_request(
                async move |request: InitializeRequest, responder, _connection| {
                    responder.respond(
                        InitializeResponse::new(request.protocol_version)
                            .agent_capabilities(AgentCapabilities::new()),
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |_request: NewSessionRequest, responder, _connection| {
                    responder.respond(NewSessionResponse::new("floor-session"))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: PromptRequest, responder, connection: ConnectionTo<Client>| {
                    let http = http.clone();
                    // The turn runs beside the connection, as agentry's do.
                    tokio::spawn(async move {
                        let http = http.get_or_init(reqwest::Client::new);
                        let _ = match relay(http, &request, &connection).await {
                            Ok(()) => responder.respond(PromptResponse::new(StopReason::EndTurn)),
                            Err(error) => responder.respond_with_error(error),
                        };
                    });
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_to(transport)
            .await
    }))
}
