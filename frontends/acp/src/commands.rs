//! The session's slash commands: prompt templates (`agentry::templates`), announced with
//! `available_commands_update` and expanded when a prompt starts with `/name`.

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use agentry::templates::PromptTemplate;

/// The update that tells the client which commands a session has.
pub fn available(templates: &[PromptTemplate]) -> acp::SessionUpdate {
    let commands = templates
        .iter()
        .map(|template| {
            let description = template
                .description
                .clone()
                .unwrap_or_else(|| format!("Run the {} prompt", template.name));
            let command = acp::AvailableCommand::new(&template.name, description);
            match template.argument_hint() {
                Some(hint) => command.input(acp::AvailableCommandInput::Unstructured(
                    acp::UnstructuredCommandInput::new(hint),
                )),
                None => command,
            }
        })
        .collect();
    acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands))
}

/// A prompt whose first block is `/name rest…` for a known command, with the command's
/// rendered template in that block's place; any other prompt unchanged.
pub fn expand(
    templates: &[PromptTemplate],
    mut prompt: Vec<acp::ContentBlock>,
) -> Result<Vec<acp::ContentBlock>, Error> {
    let Some(acp::ContentBlock::Text(first)) = prompt.first() else {
        return Ok(prompt);
    };
    let Some(invocation) = first.text.trim_start().strip_prefix('/') else {
        return Ok(prompt);
    };
    let (name, rest) = invocation
        .split_once(char::is_whitespace)
        .unwrap_or((invocation, ""));
    let Some(template) = templates.iter().find(|t| t.name == name) else {
        return Ok(prompt);
    };
    let text = template
        .render(&template.arguments_from_text(rest))
        .map_err(|problem| Error::new(ErrorCode::INVALID_PARAMS, format!("/{name}: {problem}")))?;
    prompt[0] = acp::ContentBlock::Text(acp::TextContent::new(text));
    Ok(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn templates() -> Vec<PromptTemplate> {
        vec![PromptTemplate::parse(
            Path::new("/p/review.md"),
            "---\ndescription: Review code\narguments:\n  - name: target\n    required: true\n---\nReview {{target}}.",
        )
        .unwrap()]
    }

    fn text(text: &str) -> acp::ContentBlock {
        acp::ContentBlock::Text(acp::TextContent::new(text))
    }

    #[test]
    fn commands_are_announced_with_their_hints() {
        let update = serde_json::to_value(available(&templates())).unwrap();
        assert_eq!(
            update,
            serde_json::json!({"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": "review", "description": "Review code", "input": {"hint": "<target>"}}
            ]})
        );
    }

    #[test]
    fn a_known_command_expands_and_anything_else_passes() {
        let expanded =
            expand(&templates(), vec![text("/review src/lib.rs"), text("more")]).unwrap();
        assert_eq!(expanded, vec![text("Review src/lib.rs."), text("more")]);
        let path = vec![text("/usr/bin is odd")];
        assert_eq!(expand(&templates(), path.clone()).unwrap(), path);
        let missing = expand(&templates(), vec![text("/review")]).unwrap_err();
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
        assert!(missing.message.contains("target"), "{}", missing.message);
    }
}
