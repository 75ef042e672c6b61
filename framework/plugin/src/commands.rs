//! Slash commands as providers contribute them: a [`SlashCommand`] is something a user runs as
//! `/name arguments…` (a skill, an MCP server's prompt, a prompt template), and a
//! [`CommandSource`] offers a list of them. The framework's `agentry::commands` names them
//! without clashes and expands them; a plugin's provider offers its own across the ABI.

use crate::tool::ContentBlock;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One argument of a slash command: a template's or an MCP server's prompt's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandArgument {
    /// Its name (a template's placeholder is `{{name}}`).
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the command needs it.
    #[serde(default)]
    pub required: bool,
}

/// Something a user runs as `/name arguments…`.
pub trait SlashCommand: Send + Sync {
    /// Its own name.
    fn name(&self) -> &str;
    /// Where it comes from when that can clash (an MCP server's name); `None` for the
    /// user's own templates, which keep their names.
    fn origin(&self) -> Option<&str>;
    /// What kind of command it is, for listings ("skill"); `None` leaves it to `origin`
    /// (an MCP server's prompt, or else a prompt template).
    fn kind_label(&self) -> Option<&str> {
        None
    }
    /// What it does.
    fn description(&self) -> Option<String>;
    /// Its arguments, in order.
    fn arguments(&self) -> &[CommandArgument];
    /// Its content with `arguments` filled in, or why it cannot be had.
    fn content(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<Vec<ContentBlock>, String>>;
}

/// Where slash commands come from: a fixed list (prompt templates), or a provider whose list
/// may change (an MCP server's prompts).
pub trait CommandSource: Send + Sync {
    /// Its commands as they are now.
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>>;
    /// A receiver that wakes up whenever the list changes; `None` for a list that never does.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// A shared source is the source it shares.
impl<S: CommandSource + ?Sized> CommandSource for Arc<S> {
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>> {
        (**self).commands()
    }
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        (**self).changes()
    }
}

/// A fixed list of commands (the prompt templates read at start, say).
#[derive(Clone, Default)]
pub struct CommandList(Vec<Arc<dyn SlashCommand>>);

impl CommandList {
    /// The list of `commands`.
    pub fn new(commands: Vec<Arc<dyn SlashCommand>>) -> Self {
        Self(commands)
    }
}

impl CommandSource for CommandList {
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>> {
        self.0.clone()
    }
}
