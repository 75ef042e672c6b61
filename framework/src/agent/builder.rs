//! Building an [`Agent`]: its model, providers, configuration and the integrations it uses.

use super::{Agent, AgentInner, SessionRecordings};
use crate::checkpoint::CheckpointKeeper;
use crate::commands::CommandSource;
use crate::error::AgentError;
use crate::executor::Executor;
use crate::hooks::AgentHooks;
use crate::model::Model;
use crate::model::named::NamedModels;
use crate::model::record::Redactor;
use crate::prompt::InstructionSource;
use crate::provider::{Provider, ToolRegistry};
use crate::session::SessionStore;
use crate::session_servers::SessionServers;
use std::path::PathBuf;
use std::sync::Arc;

/// How an agent behaves, apart from its model and tools.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The base of the system prompt: who the agent is and how it works. None by default: the
    /// framework gives an agent no identity of its own.
    pub base_prompt: String,
    /// The most model requests one chat may make; a chat that reaches it stops with ACP's
    /// `max_turn_requests` (ACP's turn is agentry's chat).
    pub max_chat_requests: u32,
    /// How many times the model may correct an answer that does not satisfy the output schema.
    pub output_schema_retries: u32,
    /// How deep sub-agents may nest (a sub-agent of the main loop is 1 deep); a deeper fork
    /// fails as a tool error.
    pub max_fork_depth: u32,
    /// The most tool calls one model answer may make; the calls after them are refused, each
    /// with a result the model reads, unprepared.
    pub max_calls_per_answer: usize,
    /// The most a session may spend on model requests, in US dollars (`None`: no limit). A
    /// chat whose next request would go past it stops with
    /// [`StopReason::MaxBudget`](crate::event::StopReason::MaxBudget), its answer so far kept;
    /// its sub-agents' requests and its tools' side questions (WebFetch's) count toward it, and
    /// so do the session's earlier chats (those recorded in the store too). With a budget, a model without a
    /// [price](crate::model::Model::price) fails the chat ([`AgentError::Unpriced`]).
    pub max_budget_usd: Option<f64>,
    /// When the tools of MCP servers (and of providers that defer theirs) are left out of
    /// requests for the model to find with `ToolSearch` (see [`tool_search`](super::tool_search)).
    pub tool_search: super::tool_search::ToolSearchSettings,
    /// When and how a conversation nearing the model's context window is compacted (see
    /// [`compaction`](super::compaction)).
    pub compaction: super::compaction::CompactionSettings,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            base_prompt: String::new(),
            max_chat_requests: crate::limits::MAX_CHAT_REQUESTS,
            output_schema_retries: 2,
            max_fork_depth: crate::limits::MAX_FORK_DEPTH,
            max_calls_per_answer: crate::limits::MAX_CALLS_PER_ANSWER,
            max_budget_usd: None,
            tool_search: super::tool_search::ToolSearchSettings::default(),
            compaction: super::compaction::CompactionSettings::default(),
        }
    }
}

/// Builds an [`Agent`] (see [`Agent::builder`]). Each part it takes may be given as itself or
/// shared, in an `Arc`.
pub struct AgentBuilder {
    model: Arc<dyn Model>,
    providers: Vec<Arc<dyn Provider>>,
    disabled_tools: Vec<String>,
    config: AgentConfig,
    store: Option<Arc<dyn SessionStore>>,
    commands: Vec<Arc<dyn CommandSource>>,
    session_servers: Option<Arc<dyn SessionServers>>,
    hooks: Vec<Arc<dyn AgentHooks>>,
    recordings: Option<SessionRecordings>,
    transcripts: Option<PathBuf>,
    named_models: Option<Arc<NamedModels>>,
    instructions: Option<Arc<dyn InstructionSource>>,
    checkpoints: Option<Arc<dyn CheckpointKeeper>>,
}

impl AgentBuilder {
    /// A builder of an agent answering with `model`.
    pub(super) fn new(model: impl Model + 'static) -> Self {
        Self {
            model: Arc::new(model),
            providers: Vec::new(),
            disabled_tools: Vec::new(),
            config: AgentConfig::default(),
            store: None,
            commands: Vec::new(),
            session_servers: None,
            hooks: Vec::new(),
            recordings: None,
            transcripts: None,
            named_models: None,
            instructions: None,
            checkpoints: None,
        }
    }

    /// Opens the models that side questions name (WebFetch's own model) through `models`
    /// (given as itself, or shared in an `Arc`); without them, such a question fails.
    pub fn named_models(mut self, models: impl Into<Arc<NamedModels>>) -> Self {
        self.named_models = Some(models.into());
        self
    }

    /// Adds a provider's tools (an `Arc<dyn Provider>` for one chosen at run time, or one the
    /// caller keeps a handle on).
    pub fn provider(mut self, provider: impl Provider + 'static) -> Self {
        self.providers.push(Arc::new(provider));
        self
    }

    /// Leaves these tools out, whichever provider offers them.
    pub fn disable_tools(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.disabled_tools.extend(names);
        self
    }

    /// Keeps sessions in a store (without one, sessions live in memory only).
    pub fn store(mut self, store: impl SessionStore + 'static) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Replaces the configuration.
    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds a source of slash commands every front-end offers (prompt templates, an MCP
    /// server's prompts).
    pub fn command_source(mut self, source: impl CommandSource + 'static) -> Self {
        self.commands.push(Arc::new(source));
        self
    }

    /// Connects the tool servers a front-end's client hands to a session (see
    /// [`crate::session_servers`]); without it, such servers are refused.
    pub fn session_servers(mut self, servers: impl SessionServers + 'static) -> Self {
        self.session_servers = Some(Arc::new(servers));
        self
    }

    /// Runs `hooks` at every event of Claude Code's that the agent has (see [`crate::hooks`]).
    /// Hooks given in several calls all run, in the order given: the strictest decision
    /// stands, and a rewritten input is what the next one sees.
    pub fn hooks(mut self, hooks: impl AgentHooks + 'static) -> Self {
        self.hooks.push(Arc::new(hooks));
        self
    }

    /// Reads instruction files into each chat's environment from `source` (the stock agent's
    /// are `agentry_stock::memory::InstructionFiles`: `AGENTS.md`, `CLAUDE.md`).
    /// Without a source, an agent reads none.
    pub fn instructions(mut self, source: impl InstructionSource + 'static) -> Self {
        self.instructions = Some(Arc::new(source));
        self
    }

    /// Keeps every session's conversation as a JSON-lines transcript in `dir`
    /// (`SESSION_ID.jsonl`; a sub-agent's in `SESSION_ID/subagents/agent-ID.jsonl`), in the
    /// line shape of Claude Code's transcripts: what hooks find at `transcript_path` (see
    /// [`TranscriptFile`](crate::session::TranscriptFile)).
    pub fn transcripts(mut self, dir: impl Into<PathBuf>) -> Self {
        self.transcripts = Some(dir.into());
        self
    }

    /// Records every session's model traffic (see [`crate::model::record`]) to a file of its
    /// own in `dir` (`SESSION_ID.jsonl`), redacted by `redactor`.
    pub fn record_sessions(mut self, dir: impl Into<PathBuf>, redactor: Redactor) -> Self {
        self.recordings = Some(SessionRecordings {
            dir: dir.into(),
            redactor,
        });
        self
    }

    /// Keeps a checkpoint of the workspace before each chat's first change to it, with
    /// `keeper`, so sessions can be rewound (see [`crate::checkpoint`] and
    /// [`Session::rewind`](super::Session::rewind)); `agentry-checkpoint`'s keeper holds them in a
    /// shadow git repository.
    pub fn checkpoints(mut self, keeper: impl CheckpointKeeper + 'static) -> Self {
        self.checkpoints = Some(Arc::new(keeper));
        self
    }

    /// Builds the agent; fails when a provider's tools clash or are invalid.
    pub fn build(self) -> Result<Agent, AgentError> {
        let model = self.model;
        let mut registry = ToolRegistry::new();
        for provider in &self.providers {
            registry.register_except(provider.clone(), &self.disabled_tools)?;
        }
        super::tool_search::offer_search(&mut registry, &self.config.tool_search)?;
        // The providers' slash commands (skills, a plugin's) join the agent's own.
        let mut commands = self.commands;
        commands.extend(self.providers.iter().filter_map(|p| p.commands()));
        Ok(Agent {
            inner: Arc::new(AgentInner {
                model,
                executor: Executor::new(Arc::new(registry)),
                config: self.config,
                store: self.store,
                commands,
                session_servers: self.session_servers,
                hooks: stacked(self.hooks),
                recordings: self.recordings,
                transcripts: self.transcripts,
                named_models: self.named_models,
                instructions: self.instructions,
                checkpoints: self.checkpoints,
            }),
        })
    }
}

/// The agent's hooks: none, the one given, or all given, run in turn.
fn stacked(mut hooks: Vec<Arc<dyn AgentHooks>>) -> Option<Arc<dyn AgentHooks>> {
    match hooks.len() {
        0 | 1 => hooks.pop(),
        _ => Some(Arc::new(crate::hooks::HookStack(hooks))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::{HookInput, HookReply};

    /// A hook whose context for every event is its name.
    struct Named(&'static str);

    #[async_trait::async_trait]
    impl AgentHooks for Named {
        async fn on_event(&self, _: &HookInput) -> HookReply {
            HookReply {
                additional_context: Some(self.0.to_owned()),
                ..HookReply::default()
            }
        }
    }

    #[tokio::test]
    async fn hooks_given_to_an_agent_twice_both_run_in_order() {
        let model = crate::model::scripted::ScriptedModel::new(Vec::new());
        let agent = Agent::builder(Arc::new(model))
            .hooks(Arc::new(Named("ours")))
            .hooks(Arc::new(Named("the team's")))
            .build()
            .unwrap();
        let call = crate::hooks::sample_call();
        let reply = agent.hooks().unwrap().on_event(&call).await;
        assert_eq!(
            reply.additional_context.as_deref(),
            Some("ours\nthe team's")
        );
    }
}
