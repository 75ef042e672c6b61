//! `acp-floor`: an ACP agent that only answers `initialize` and `session/new`, on the same
//! `agent-client-protocol` crate and tokio runtime as `agentry acp`. The start-up and memory
//! benchmark of `agentry acp` measures it beside agentry, as the floor no agent on this stack
//! can go below.

use agent_client_protocol::v1::schema::{
    AgentCapabilities, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
};
use agent_client_protocol::{Agent, Stdio};

fn main() -> Result<(), agent_client_protocol::Error> {
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| agent_client_protocol::Error::internal_error().data(e.to_string()))?;
    runtime.block_on(
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
            .connect_to(Stdio::new()),
    )
}
