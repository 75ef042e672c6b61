//! A session's slash commands (`agentry::commands`): prompt templates and the prompts of the
//! session's MCP servers, announced with `available_commands_update` (with the built-in
//! [`/rewind`](crate::rewind)) and expanded when a prompt starts with `/name`.

use crate::convert::content_block;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use agentry::commands::{CommandSource, SlashCommands};
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
    /// content in that block's place; any other prompt unchanged. A command that cannot run
    /// (a required argument missing, say) is -32602.
    pub async fn expand(
        &self,
        mut prompt: Vec<acp::ContentBlock>,
    ) -> Result<Vec<acp::ContentBlock>, Error> {
        let Some(acp::ContentBlock::Text(first)) = prompt.first() else {
            return Ok(prompt);
        };
        let Some(expanded) = self.0.expand(&first.text).await else {
            return Ok(prompt);
        };
        let content = expanded.map_err(|problem| Error::new(ErrorCode::INVALID_PARAMS, problem))?;
        prompt.splice(0..1, content.iter().map(content_block));
        Ok(prompt)
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
        assert_eq!(expanded, vec![text("Review src/lib.rs."), text("more")]);
        let path = vec![text("/usr/bin is odd")];
        assert_eq!(commands.expand(path.clone()).await.unwrap(), path);
        let missing = commands.expand(vec![text("/review")]).await.unwrap_err();
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
        assert!(missing.message.contains("target"), "{}", missing.message);
    }
}
