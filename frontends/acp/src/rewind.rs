//! `/rewind`, a command of every stored session (ACP has no rewind method): without an
//! argument it lists the session's chats, numbered; `/rewind N` rewinds to just before chat N
//! (files and conversation; `files` or `conversation` for one of them). Files changed by hand
//! since the agent's last change are not overwritten without `overwrite` (or kept with
//! `keep`): the first answer asks. The answer is the agent's message; the client keeps showing
//! what it showed, and a `session/load` replays the session as rewound.

use agent_client_protocol::v1::schema as acp;
use agentry::agent::{RewindScope, Session};
use agentry::event::{AgentEvent, EventSink};
use agentry::ids::TurnId;

/// The command's name.
pub const NAME: &str = "rewind";

/// The command as `available_commands_update` announces it.
pub fn available() -> acp::AvailableCommand {
    acp::AvailableCommand::new(
        NAME,
        "Rewind the files and the conversation to before a message",
    )
    .input(acp::AvailableCommandInput::Unstructured(
        acp::UnstructuredCommandInput::new("[N] [files|conversation] [overwrite|keep]"),
    ))
}

/// The arguments of a prompt that is `/rewind …`, if it is one.
pub fn arguments(prompt: &[acp::ContentBlock]) -> Option<String> {
    crate::builtin::arguments(prompt, NAME)
}

/// What `/rewind ARGUMENTS` asks for.
struct Request {
    /// The chat's number, from 1.
    chat: usize,
    scope: RewindScope,
    /// Whether to overwrite hand edits: `None` when the user has not said.
    overwrite: Option<bool>,
}

fn parse(arguments: &str) -> Result<Option<Request>, String> {
    let mut words = arguments.split_whitespace();
    let Some(number) = words.next() else {
        return Ok(None);
    };
    let chat = number
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{number}` is not a message number: see `/rewind`"))?;
    let mut request = Request {
        chat,
        scope: RewindScope::BOTH,
        overwrite: None,
    };
    for word in words {
        match word {
            "files" => request.scope.conversation = false,
            "conversation" => request.scope.files = false,
            "both" => request.scope = RewindScope::BOTH,
            "overwrite" => request.overwrite = Some(true),
            "keep" => request.overwrite = Some(false),
            other => {
                return Err(format!(
                    "`{other}`: say files, conversation, overwrite or keep"
                ));
            }
        }
    }
    Ok(Some(request))
}

/// Runs `/rewind ARGUMENTS` on `session`, answering through `updates` (as the agent's
/// message).
pub async fn run(session: &mut Session, arguments: &str, updates: &dyn EventSink) {
    let answer = match answer(session, arguments).await {
        Ok(text) | Err(text) => text,
    };
    updates.emit(AgentEvent::TextDelta {
        turn_id: TurnId::generate(),
        text: answer,
    });
}

async fn answer(session: &mut Session, arguments: &str) -> Result<String, String> {
    let points = session.rewind_points().map_err(|e| e.to_string())?;
    let Some(request) = parse(arguments)? else {
        if points.is_empty() {
            return Ok("There is nothing to rewind yet.".to_owned());
        }
        let mut text = "Rewind to before which message? `/rewind N` (add `files` or \
                        `conversation` for one of them):\n"
            .to_owned();
        for (n, point) in points.iter().enumerate() {
            let first_line = point.prompt.lines().next().unwrap_or_default();
            let files = if point.files_changed {
                ""
            } else {
                " (no files changed since)"
            };
            text.push_str(&format!("\n{}. {first_line}{files}", n + 1));
        }
        return Ok(text);
    };
    let point = points
        .get(request.chat - 1)
        .ok_or_else(|| format!("there is no message {}: see `/rewind`", request.chat))?;
    if request.scope.files && request.overwrite.is_none() {
        let plan = session
            .plan_rewind(&point.chat)
            .await
            .map_err(|e| e.to_string())?;
        if !plan.hand_edited.is_empty() {
            let files: Vec<&str> = plan.hand_edited.iter().map(|f| f.path.as_str()).collect();
            return Ok(format!(
                "These files were changed by hand since the agent's last change: {}. \
                 `/rewind {n} overwrite` puts them back too; `/rewind {n} keep` leaves them as \
                 they are. Nothing was rewound yet.",
                files.join(", "),
                n = request.chat
            ));
        }
    }
    let rewound = session
        .rewind(&point.chat, request.scope, request.overwrite == Some(true))
        .await
        .map_err(|e| e.to_string())?;
    let mut lines = rewound.describe();
    if lines.is_empty() {
        lines.push("nothing changed since then".to_owned());
    }
    Ok(format!("Rewound:\n- {}", lines.join("\n- ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> Vec<acp::ContentBlock> {
        vec![acp::ContentBlock::Text(acp::TextContent::new(text))]
    }

    #[test]
    fn only_the_command_itself_is_a_rewind() {
        assert_eq!(arguments(&text("/rewind")).as_deref(), Some(""));
        assert_eq!(
            arguments(&text(" /rewind 2 files ")).as_deref(),
            Some("2 files")
        );
        assert_eq!(arguments(&text("/rewinder")), None);
        assert_eq!(arguments(&text("rewind 2")), None);
    }

    #[test]
    fn arguments_say_which_message_and_what() {
        let request = parse("2 files keep").unwrap().unwrap();
        assert_eq!(request.chat, 2);
        assert!(request.scope.files && !request.scope.conversation);
        assert_eq!(request.overwrite, Some(false));
        assert!(parse("").unwrap().is_none());
        assert!(parse("0").is_err());
        assert!(parse("2 everything").is_err());
    }
}
