//! Slash commands as providers contribute them: a [`SlashCommand`] is something a user runs as
//! `/name arguments…` (a skill, an MCP server's prompt, a prompt template), and a
//! [`CommandSource`] offers a list of them. The framework's `agentry::commands` names them
//! without clashes and expands them; a plugin's provider offers its own across the ABI.
//!
//! A command's [`CommandPrompt`] may ask for calls to run before it is sent (a Claude Code
//! command file's shell lines and file references): their output takes their place in the
//! prompt. The session runs them through its executor, like any call, allowed only by its
//! permission rules and the command's own [`allowed_tools`](CommandPrompt::allowed_tools),
//! never asking the user.

use crate::tool::ContentBlock;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
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
    /// Its prompt with `arguments` filled in: its content, the calls to run before it is
    /// sent, and the tools it allows while its chat runs. By default its
    /// [`content`](Self::content) alone.
    fn prompt(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<CommandPrompt, String>> {
        Box::pin(async move { self.content(arguments).await.map(CommandPrompt::from) })
    }
}

/// A prompt a command makes: content, and calls whose output takes their place.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandPrompt {
    /// Its parts, in order.
    pub parts: Vec<PromptPart>,
    /// Permission rules as a settings file writes them (`Bash(git status:*)`), allowing their
    /// calls for the chat the prompt starts, its own calls first (Claude Code's
    /// `allowed-tools`). They add to the session's rules: a deny or ask rule still holds.
    pub allowed_tools: Vec<String>,
    /// The file the command is written in, which the rules are said to come from.
    pub source: Option<PathBuf>,
}

/// One part of a [`CommandPrompt`].
#[derive(Debug, Clone, PartialEq)]
pub enum PromptPart {
    /// Content as it is.
    Content(ContentBlock),
    /// A call to run before the prompt is sent; its output's text goes in its place.
    Call(CommandCall),
}

/// A call a command's prompt asks for (a shell line runs as a `Bash` call, a file reference
/// as a `Read` call).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandCall {
    /// The tool to call.
    pub tool: String,
    /// Its input.
    pub input: Value,
    /// What the prompt says in the call's place when the call fails or is not allowed;
    /// `None`: the command is not run at all, and the user is told why.
    pub if_failed: Option<String>,
}

impl From<Vec<ContentBlock>> for CommandPrompt {
    fn from(content: Vec<ContentBlock>) -> Self {
        Self {
            parts: content.into_iter().map(PromptPart::Content).collect(),
            allowed_tools: Vec::new(),
            source: None,
        }
    }
}

impl CommandPrompt {
    /// Its content parts alone, its calls left out.
    pub fn content(&self) -> impl Iterator<Item = &ContentBlock> {
        self.parts.iter().filter_map(|part| match part {
            PromptPart::Content(block) => Some(block),
            PromptPart::Call(_) => None,
        })
    }
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
