//! A server's prompts (`prompts/list`, `prompts/get`): front-ends offer them as slash commands,
//! and a prompt's messages become the turn's input.

use crate::content::block;
use crate::link::Link;
use agentry::commands::CommandArgument;
use agentry::tool::ContentBlock;
use rmcp::model::{GetPromptRequestParams, JsonObject, Role};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A prompt of an MCP server.
#[derive(Clone)]
pub struct McpPrompt {
    /// The server's name.
    pub server: String,
    /// The prompt's name on the server.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its arguments, in order.
    pub arguments: Vec<CommandArgument>,
    link: Arc<Link>,
}

impl std::fmt::Debug for McpPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPrompt")
            .field("server", &self.server)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl McpPrompt {
    pub(crate) fn new(prompt: rmcp::model::Prompt, link: Arc<Link>) -> Self {
        Self {
            server: link.server.clone(),
            description: prompt.description.or(prompt.title),
            arguments: prompt
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|argument| CommandArgument {
                    name: argument.name,
                    description: argument.description,
                    required: argument.required.unwrap_or(false),
                })
                .collect(),
            name: prompt.name,
            link,
        }
    }

    /// The prompt's messages with `arguments` filled in, as the content of a turn: user
    /// messages as they are, assistant messages as text marked as the assistant's. A required
    /// argument that is missing is refused before the server is asked.
    pub async fn get(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> Result<Vec<ContentBlock>, String> {
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|a| a.required && !arguments.contains_key(&a.name))
        {
            return Err(format!(
                "the prompt `{}` needs its `{}` argument",
                self.name, missing.name
            ));
        }
        let mut params = GetPromptRequestParams::new(self.name.clone());
        params.arguments = Some(
            arguments
                .into_iter()
                .map(|(name, value)| (name, value.into()))
                .collect::<JsonObject>(),
        );
        self.link.wake().await;
        let peer = self.link.peer()?;
        let result = peer.get_prompt(params).await.map_err(|e| {
            format!(
                "the MCP server `{}` could not give the prompt: {e}",
                self.server
            )
        })?;
        Ok(result
            .messages
            .into_iter()
            .map(|message| match (message.role, block(message.content)) {
                (Role::Assistant, ContentBlock::Text { text }) => ContentBlock::Text {
                    text: format!("(The assistant said:) {text}"),
                },
                (_, content) => content,
            })
            .collect())
    }
}

impl agentry::commands::SlashCommand for McpPrompt {
    fn name(&self) -> &str {
        &self.name
    }

    fn origin(&self) -> Option<&str> {
        Some(&self.server)
    }

    fn description(&self) -> Option<String> {
        self.description.clone()
    }

    fn arguments(&self) -> &[CommandArgument] {
        &self.arguments
    }

    fn content(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> futures::future::BoxFuture<'_, Result<Vec<ContentBlock>, String>> {
        Box::pin(self.get(arguments))
    }
}
