//! A plugin's slash commands, as the host's [`CommandSource`]: listed by asking the plugin each
//! time (its list may change, as an MCP server's does) and expanded by the plugin on a blocking
//! thread (a command's content may wait, as an MCP server's prompt does).

use super::Library;
use agentry::commands::{CommandArgument, CommandSource, SlashCommand};
use agentry::tool::ContentBlock;
use agentry_plugin_abi::wire::{CommandDescription, Query};
use futures::future::BoxFuture;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The slash commands of a plugin's provider.
pub(super) struct PluginCommands {
    pub(super) library: Arc<Library>,
    /// The plugin's handle of the provider (0: its own).
    pub(super) provider: u64,
    /// Whether its list changes over time (an MCP server's prompts).
    pub(super) changing: bool,
}

impl CommandSource for PluginCommands {
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>> {
        let query = Query::Commands {
            provider: self.provider,
        };
        match self.library.query::<Vec<CommandDescription>>(&query) {
            Some(Ok(listed)) => listed
                .into_iter()
                .map(|described| {
                    Arc::new(PluginCommand {
                        library: self.library.clone(),
                        provider: self.provider,
                        described,
                    }) as Arc<dyn SlashCommand>
                })
                .collect(),
            Some(Err(problem)) => {
                tracing::warn!("plugin {}: {problem}", self.library.path.display());
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.changing
            .then(|| super::hosted::command_changes(&self.library, self.provider))
            .flatten()
    }
}

/// One of a plugin's slash commands.
struct PluginCommand {
    library: Arc<Library>,
    provider: u64,
    described: CommandDescription,
}

impl SlashCommand for PluginCommand {
    fn name(&self) -> &str {
        &self.described.name
    }

    fn origin(&self) -> Option<&str> {
        self.described.origin.as_deref()
    }

    fn kind_label(&self) -> Option<&str> {
        self.described.kind_label.as_deref()
    }

    fn description(&self) -> Option<String> {
        self.described.description.clone()
    }

    fn arguments(&self) -> &[CommandArgument] {
        &self.described.arguments
    }

    fn content(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<Vec<ContentBlock>, String>> {
        let library = self.library.clone();
        let query = Query::CommandContent {
            provider: self.provider,
            name: self.described.name.clone(),
            origin: self.described.origin.clone(),
            arguments,
        };
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking(move || library.query(&query));
            match asked.await {
                Ok(Some(answer)) => answer,
                Ok(None) => Err("the plugin has no slash commands".to_owned()),
                Err(e) => Err(format!("the plugin's command did not finish: {e}")),
            }
        })
    }
}
