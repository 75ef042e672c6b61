//! [`AgentError`]: why a chat or session operation failed.

use crate::model::ModelError;
use crate::provider::RegistryError;
use crate::session::StoreError;

/// Why a chat or a session operation failed. Cancellation is not an error: it is the
/// [`StopReason::Cancelled`](crate::event::StopReason::Cancelled) stop reason.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The model failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The session store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A provider could not be registered.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The output schema is not a valid JSON Schema.
    #[error("the output schema is not a valid JSON Schema: {0}")]
    InvalidOutputSchema(String),
    /// The model's answer still did not satisfy the output schema after the allowed corrections.
    #[error("the answer does not satisfy the output schema after {attempts} attempts: {problems}")]
    OutputSchema {
        /// How many answers were checked.
        attempts: u32,
        /// What was wrong with the last one.
        problems: String,
    },
    /// An answer names a call that does not wait for one.
    #[error("no question of this session waits for an answer from tool call `{0}`")]
    NoSuchQuestion(crate::ids::ToolCallId),
    /// An answer does not fit its questions.
    #[error("the answer does not fit the questions: {0}")]
    InvalidAnswer(String),
    /// A `UserPromptSubmit` hook blocked the prompt: the model never saw it.
    #[error("a hook blocked the prompt: {0}")]
    PromptBlocked(String),
    /// A slash command was not run: a call its prompt asks for before it is sent failed or
    /// was not allowed, or a tool it allows is not a permission rule. The model never saw it.
    #[error("the command was not run: {0}")]
    CommandNotRun(String),
    /// A `PreCompact` hook stopped a compaction the user asked for.
    #[error("a hook stopped the compaction: {0}")]
    CompactionBlocked(String),
    /// A rewind names a chat the session does not have (or no longer has).
    #[error("this session has no chat beginning with turn `{0}`")]
    NoSuchChat(crate::ids::TurnId),
    /// A rewind could not be done.
    #[error("cannot rewind: {0}")]
    Rewind(String),
    /// The session has a budget and the model it would ask next has no price to keep it with.
    #[error(
        "the session may spend ${budget_usd} and the model `{model}` has no price to count it with: \
         give it one (`[providers.NAME.models.\"MODEL\"] price = {{ input = …, output = … }}`, in \
         dollars per million tokens) or run without a budget"
    )]
    Unpriced {
        /// The model.
        model: String,
        /// The session's budget, in US dollars.
        budget_usd: f64,
    },
    /// The next request would not fit the model's context window, and compaction is off.
    #[error(
        "the conversation (about {tokens} tokens) no longer fits the model's context window of \
         {window} tokens, and compaction is off ([compaction] enabled = false): compact it by hand \
         (/compact), start a new session, or turn compaction on"
    )]
    ContextFull {
        /// The request's estimated tokens.
        tokens: u64,
        /// The model's context window.
        window: u64,
    },
    /// The session's recording could not be created.
    #[error("cannot record the session to {path}: {source}")]
    Recording {
        /// The recording's file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl AgentError {
    /// The kind of failure, in a word (`model_api`, `store`, …), as a trace records it.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentError::Model(error) => error.kind(),
            AgentError::Store(_) => "store",
            AgentError::Registry(_) => "registry",
            AgentError::InvalidOutputSchema(_) => "invalid_output_schema",
            AgentError::OutputSchema { .. } => "output_schema",
            AgentError::NoSuchQuestion(_) => "no_such_question",
            AgentError::InvalidAnswer(_) => "invalid_answer",
            AgentError::PromptBlocked(_) => "prompt_blocked",
            AgentError::CommandNotRun(_) => "command_not_run",
            AgentError::CompactionBlocked(_) => "compaction_blocked",
            AgentError::NoSuchChat(_) => "no_such_chat",
            AgentError::Rewind(_) => "rewind",
            AgentError::Recording { .. } => "recording",
            AgentError::Unpriced { .. } => "unpriced",
            AgentError::ContextFull { .. } => "context_full",
        }
    }
}
