//! Slash commands, whatever front-end offers them: prompt templates (the stock agent's are
//! `agentry_stock::templates`) and the prompts of MCP servers, named without clashes and expanded
//! into a turn's content when a prompt starts with `/name`.
//!
//! Commands come from [`CommandSource`]s: an agent has its own
//! ([`AgentBuilder::command_source`](crate::agent::AgentBuilder::command_source)) and its
//! providers' ([`Provider::commands`](crate::provider::Provider::commands): skills, a plugin's),
//! and a session may add more (the MCP servers a client passes with it). A front-end reads them all
//! with [`SlashCommands::from_sources`] and reads them again when a source's
//! [`changes`](CommandSource::changes) say its list changed.

pub use agentry_plugin::commands::{
    CommandArgument, CommandCall, CommandList, CommandPrompt, CommandSource, PromptPart,
    SlashCommand,
};

use std::collections::BTreeMap;
use std::sync::Arc;

/// The values of `arguments` in a command's free text (`/review src/main.rs quickly`): words
/// fill them in order, the last argument taking the rest of the text.
pub fn arguments_from_text(arguments: &[CommandArgument], text: &str) -> BTreeMap<String, String> {
    let mut values = BTreeMap::new();
    let mut rest = text.trim();
    for (index, argument) in arguments.iter().enumerate() {
        if rest.is_empty() {
            break;
        }
        let value = if index + 1 == arguments.len() {
            std::mem::take(&mut rest)
        } else {
            let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            rest = after.trim_start();
            word
        };
        values.insert(argument.name.clone(), value.to_owned());
    }
    values
}

/// A one-line hint of `arguments` for command pickers: `<required> [optional]`.
pub fn argument_hint(arguments: &[CommandArgument]) -> Option<String> {
    (!arguments.is_empty()).then(|| {
        arguments
            .iter()
            .map(|argument| {
                if argument.required {
                    format!("<{}>", argument.name)
                } else {
                    format!("[{}]", argument.name)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// A set of slash commands, by the name users type.
#[derive(Clone, Default)]
pub struct SlashCommands(BTreeMap<String, Arc<dyn SlashCommand>>);

impl SlashCommands {
    /// The commands, each under its own name, except that one from an origin (an MCP server)
    /// whose name another command has too is `ORIGIN:NAME`.
    pub fn new(commands: Vec<Arc<dyn SlashCommand>>) -> Self {
        let mut named = BTreeMap::new();
        for command in &commands {
            let shared = commands
                .iter()
                .filter(|other| other.name() == command.name())
                .count()
                > 1;
            let name = match command.origin() {
                Some(origin) if shared => format!("{origin}:{}", command.name()),
                _ => command.name().to_owned(),
            };
            named.insert(name, command.clone());
        }
        Self(named)
    }

    /// Every command of `sources`, as [`SlashCommands::new`] names them.
    pub fn from_sources(sources: &[Arc<dyn CommandSource>]) -> Self {
        Self::new(
            sources
                .iter()
                .flat_map(|source| source.commands())
                .collect(),
        )
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The commands by the names users type, sorted.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &dyn SlashCommand)> {
        self.0
            .iter()
            .map(|(name, command)| (name.as_str(), command.as_ref()))
    }

    /// A one-line hint of a command's arguments (`<target> [focus]`).
    pub fn hint(command: &dyn SlashCommand) -> Option<String> {
        argument_hint(command.arguments())
    }

    /// The prompt of `text` when it is `/name rest…` for one of the commands (the rest fills
    /// its arguments in order); `None` for any other text. A command that fails (a required
    /// argument missing, a server that cannot give its prompt) says why, prefixed `/name: `.
    /// The prompt's calls run when a session is given it
    /// ([`Session::prompt_with`](crate::agent::Session::prompt_with)).
    pub async fn expand(&self, text: &str) -> Option<Result<CommandPrompt, String>> {
        let invocation = text.trim_start().strip_prefix('/')?;
        let (name, rest) = invocation
            .split_once(char::is_whitespace)
            .unwrap_or((invocation, ""));
        let command = self.0.get(name)?;
        Some(
            command
                .prompt(arguments_from_text(command.arguments(), rest))
                .await
                .map_err(|problem| format!("/{name}: {problem}")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ContentBlock;
    use futures::future::BoxFuture;

    /// A command with one required argument: of an origin (`Some`), it says its origin and
    /// the argument; of none, it asks to review the argument.
    struct Fake {
        origin: Option<&'static str>,
        name: &'static str,
        arguments: Vec<CommandArgument>,
    }

    fn fake(origin: Option<&'static str>, name: &'static str) -> Arc<dyn SlashCommand> {
        let argument = CommandArgument {
            name: if origin.is_some() { "city" } else { "target" }.to_owned(),
            description: None,
            required: true,
        };
        Arc::new(Fake {
            origin,
            name,
            arguments: vec![argument],
        })
    }

    impl SlashCommand for Fake {
        fn name(&self) -> &str {
            self.name
        }
        fn origin(&self) -> Option<&str> {
            self.origin
        }
        fn description(&self) -> Option<String> {
            None
        }
        fn arguments(&self) -> &[CommandArgument] {
            &self.arguments
        }
        fn content(
            &self,
            arguments: BTreeMap<String, String>,
        ) -> BoxFuture<'_, Result<Vec<ContentBlock>, String>> {
            Box::pin(async move {
                let name = &self.arguments[0].name;
                let value = arguments
                    .get(name)
                    .ok_or_else(|| format!("the `{name}` argument is missing"))?;
                Ok(vec![ContentBlock::text(match self.origin {
                    Some(origin) => format!("{origin} in {value}"),
                    None => format!("Review {value}."),
                })])
            })
        }
    }

    fn commands() -> SlashCommands {
        SlashCommands::new(vec![
            fake(None, "review"),
            fake(Some("one"), "weather"),
            fake(Some("two"), "weather"),
            fake(Some("one"), "review"),
            fake(Some("two"), "alone"),
        ])
    }

    #[test]
    fn clashing_names_take_their_origin() {
        let commands = commands();
        let names: Vec<&str> = commands.iter().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            [
                "alone",
                "one:review",
                "one:weather",
                "review",
                "two:weather"
            ]
        );
    }

    #[tokio::test]
    async fn a_known_command_expands_and_anything_else_is_none() {
        let commands = commands();
        assert_eq!(
            commands.expand("/review src/lib.rs").await,
            Some(Ok(vec![ContentBlock::text("Review src/lib.rs.")].into()))
        );
        assert_eq!(
            commands.expand("/two:weather Paris").await,
            Some(Ok(vec![ContentBlock::text("two in Paris")].into()))
        );
        assert_eq!(commands.expand("/usr/bin is odd").await, None);
        assert_eq!(commands.expand("review this").await, None);
        let missing = commands.expand("/alone").await.unwrap().unwrap_err();
        assert_eq!(missing, "/alone: the `city` argument is missing");
    }
}
