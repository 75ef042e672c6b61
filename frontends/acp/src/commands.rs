//! A session's slash commands: prompt templates (`agentry::templates`) and the prompts of the
//! session's MCP servers (`/PROMPT`, or `/SERVER:PROMPT` when two share a name), announced with
//! `available_commands_update` and expanded when a prompt starts with `/name`.

use crate::convert::content_block;
use crate::mcp::{PromptServer, ServerPrompt};
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error, ErrorCode};
use agentry::templates::{PromptTemplate, argument_hint, arguments_from_text};
use std::collections::BTreeMap;

/// What a command runs.
#[derive(Debug, Clone)]
enum Source {
    Template(PromptTemplate),
    Server(ServerPrompt),
}

/// A session's slash commands, by name.
#[derive(Debug, Clone, Default)]
pub struct Commands(BTreeMap<String, Source>);

impl Commands {
    /// The templates' commands and the servers' prompts, named without clashes.
    // Without MCP there are no server prompts, so the loop over them cannot run.
    #[cfg_attr(not(feature = "mcp"), allow(unreachable_code))]
    pub fn new(templates: &[PromptTemplate], servers: &[PromptServer]) -> Self {
        let prompts: Vec<ServerPrompt> = servers.iter().flat_map(PromptServer::prompts).collect();
        let mut commands: BTreeMap<String, Source> = templates
            .iter()
            .map(|t| (t.name.clone(), Source::Template(t.clone())))
            .collect();
        for prompt in &prompts {
            let shared = commands.contains_key(prompt.name())
                || prompts
                    .iter()
                    .filter(|other| other.name() == prompt.name())
                    .count()
                    > 1;
            let name = if shared {
                format!("{}:{}", prompt.server(), prompt.name())
            } else {
                prompt.name().to_owned()
            };
            commands.insert(name, Source::Server(prompt.clone()));
        }
        Self(commands)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The update that tells the client which commands the session has.
    pub fn available(&self) -> acp::SessionUpdate {
        let commands = self
            .0
            .iter()
            .map(|(name, source)| {
                let (description, hint) = match source {
                    Source::Template(template) => {
                        (template.description.clone(), template.argument_hint())
                    }
                    Source::Server(prompt) => {
                        let arguments = prompt.arguments();
                        let arguments: Vec<(&str, bool)> =
                            arguments.iter().map(|(n, r)| (n.as_str(), *r)).collect();
                        (
                            prompt.description().map(str::to_owned),
                            argument_hint(&arguments),
                        )
                    }
                };
                let description = description.unwrap_or_else(|| format!("Run the {name} prompt"));
                let command = acp::AvailableCommand::new(name.as_str(), description);
                match hint {
                    Some(hint) => command.input(acp::AvailableCommandInput::Unstructured(
                        acp::UnstructuredCommandInput::new(hint),
                    )),
                    None => command,
                }
            })
            .collect();
        acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands))
    }

    /// A prompt whose first block is `/name rest…` for one of the commands, with the command's
    /// content in that block's place; any other prompt unchanged.
    pub async fn expand(
        &self,
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
        let Some(source) = self.0.get(name) else {
            return Ok(prompt);
        };
        let failed =
            |problem: String| Error::new(ErrorCode::INVALID_PARAMS, format!("/{name}: {problem}"));
        let content: Vec<acp::ContentBlock> = match source {
            Source::Template(template) => template
                .render_content(&template.arguments_from_text(rest))
                .map_err(|problem| failed(problem.to_string()))?
                .iter()
                .map(content_block)
                .collect(),
            Source::Server(prompt) => {
                let arguments = prompt.arguments();
                let names: Vec<&str> = arguments.iter().map(|(n, _)| n.as_str()).collect();
                prompt
                    .content(arguments_from_text(&names, rest))
                    .await
                    .map_err(failed)?
                    .iter()
                    .map(content_block)
                    .collect()
            }
        };
        prompt.splice(0..1, content);
        Ok(prompt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn commands() -> Commands {
        let review = PromptTemplate::parse(
            Path::new("/p/review.md"),
            "---\ndescription: Review code\narguments:\n  - name: target\n    required: true\n---\nReview {{target}}.",
        )
        .unwrap();
        Commands::new(&[review], &[])
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
                {"name": "review", "description": "Review code", "input": {"hint": "<target>"}}
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
