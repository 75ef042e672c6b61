//! A session's slash commands (`agentry::commands`): prompt templates and the prompts of the
//! session's MCP servers, announced with `available_commands_update` (with the built-in
//! [`/rewind`](crate::rewind)) and expanded when a prompt starts with `/name`.

use crate::convert::prompt_block;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use agentry::commands::{CommandPrompt, CommandSource, PromptPart, SlashCommands};
use std::sync::Arc;

/// A session's slash commands, by name.
#[derive(Clone, Default)]
pub struct Commands(SlashCommands);

impl Commands {
    /// The commands of `sources` (the agent's and the session's), named without clashes.
    pub fn new(sources: &[Arc<dyn CommandSource>]) -> Self {
        Self(SlashCommands::from_sources(sources))
    }

    /// The update that tells the client which commands the session has: these, then the
    /// built-in `/rewind` and `/compact`.
    pub fn available(&self) -> acp::SessionUpdate {
        let mut commands: Vec<acp::AvailableCommand> = self
            .0
            .iter()
            .map(|(name, command)| {
                let description = command
                    .description()
                    .unwrap_or_else(|| format!("Run the {name} prompt"));
                let available = acp::AvailableCommand::new(name, description);
                match SlashCommands::hint(command) {
                    Some(hint) => available.input(acp::AvailableCommandInput::Unstructured(
                        acp::UnstructuredCommandInput::new(hint),
                    )),
                    None => available,
                }
            })
            .collect();
        commands.push(crate::rewind::available());
        commands.push(crate::compact::available());
        acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands))
    }

    /// A prompt whose first block is `/name rest…` for one of the commands, with the command's
    /// prompt in that block's place; any other prompt as it is. A command that cannot run (a
    /// required argument missing, say) is -32602.
    pub async fn expand(&self, prompt: Vec<acp::ContentBlock>) -> Result<CommandPrompt, Error> {
        let expanded = match prompt.first() {
            Some(acp::ContentBlock::Text(first)) => self.0.expand(&first.text).await,
            _ => None,
        };
        let Some(expanded) = expanded else {
            let content: Vec<_> = prompt.into_iter().map(prompt_block).collect();
            return Ok(content.into());
        };
        let mut command =
            expanded.map_err(|problem| Error::new(ErrorCode::INVALID_PARAMS, problem))?;
        let rest = prompt.into_iter().skip(1).map(prompt_block);
        command.parts.extend(rest.map(PromptPart::Content));
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::commands::CommandList;
    use agentry_stock::templates::PromptTemplate;
    use std::path::Path;

    fn commands() -> Commands {
        let review = PromptTemplate::parse(
            Path::new("/p/review.md"),
            "---\ndescription: Review code\narguments:\n  - name: target\n    required: true\n---\nReview {{target}}.",
        )
        .unwrap();
        Commands::new(&[Arc::new(CommandList::new(vec![Arc::new(review)]))])
    }

    fn text(text: &str) -> acp::ContentBlock {
        acp::ContentBlock::Text(acp::TextContent::new(text))
    }

    #[test]
    fn commands_are_announced_with_their_hints() {
        let update = serde_json::to_value(commands().available()).unwrap();
        assert_eq!(
            update,
            serde_json::json!({"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": "review", "description": "Review code", "input": {"hint": "<target>"}},
                {"name": "rewind", "description": "Rewind the files and the conversation to before a message", "input": {"hint": "[N] [files|conversation] [overwrite|keep]"}},
            {"name": "compact", "description": "Replace the conversation by a summary, to free the context", "input": {"hint": "[what the summary should keep]"}}
            ]})
        );
    }

    #[tokio::test]
    async fn a_known_command_expands_and_anything_else_passes() {
        let commands = commands();
        let expanded = commands
            .expand(vec![text("/review src/lib.rs"), text("more")])
            .await
            .unwrap();
        let blocks = |texts: &[&str]| -> CommandPrompt {
            let content: Vec<_> = texts.iter().map(|t| prompt_block(text(t))).collect();
            content.into()
        };
        assert_eq!(expanded, blocks(&["Review src/lib.rs.", "more"]));
        let path = vec![text("/usr/bin is odd")];
        assert_eq!(
            commands.expand(path).await.unwrap(),
            blocks(&["/usr/bin is odd"])
        );
        let missing = commands.expand(vec![text("/review")]).await.unwrap_err();
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
        assert!(missing.message.contains("target"), "{}", missing.message);
    }
}
