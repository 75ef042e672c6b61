//! `/compact [INSTRUCTIONS]`, a command of every session: the conversation is replaced by a
//! summary the model writes now (following the instructions, when given), and the answer says
//! what was kept and how many tokens it saved.

use agent_client_protocol::v1::schema as acp;
use agentry::agent::Session;
use agentry::event::{AgentEvent, EventSink};
use agentry::ids::TurnId;
use tokio_util::sync::CancellationToken;

/// The command's name.
pub const NAME: &str = "compact";

/// The command as `available_commands_update` announces it.
pub fn available() -> acp::AvailableCommand {
    acp::AvailableCommand::new(
        NAME,
        "Replace the conversation by a summary, to free the context",
    )
    .input(acp::AvailableCommandInput::Unstructured(
        acp::UnstructuredCommandInput::new("[what the summary should keep]"),
    ))
}

/// The instructions of a prompt that is `/compact …`, if it is one.
pub fn arguments(prompt: &[acp::ContentBlock]) -> Option<String> {
    crate::builtin::arguments(prompt, NAME)
}

/// Compacts `session` with `instructions` (none when empty), answering through `updates` (as
/// the agent's message).
pub async fn run(
    session: &mut Session,
    instructions: &str,
    updates: &dyn EventSink,
    cancel: &CancellationToken,
) {
    let instructions = Some(instructions).filter(|text| !text.is_empty());
    let answer = match session.compact(instructions, cancel).await {
        Ok(Some(compaction)) => compaction.describe(),
        Ok(None) => "There is nothing to compact yet.".to_owned(),
        Err(error) => format!("Compacting failed: {error}"),
    };
    updates.emit(AgentEvent::TextDelta {
        turn_id: TurnId::generate(),
        text: answer,
    });
}
