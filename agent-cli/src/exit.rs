//! Exit codes, and the error type that carries one to `main`.

use agentry::AgentError;
use agentry::event::StopReason;

/// What the process exits with (see `agentry --help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The turn ended normally.
    EndTurn = 0,
    /// An internal error.
    Internal = 1,
    /// A usage or configuration error.
    Usage = 2,
    /// The model failed.
    Model = 3,
    /// max_tokens.
    MaxTokens = 4,
    /// max_turn_requests.
    MaxTurnRequests = 5,
    /// refusal.
    Refusal = 6,
    /// The answer did not satisfy the output schema.
    OutputSchema = 7,
    /// max_budget: the next request would have gone past the session's budget.
    MaxBudget = 8,
    /// hook_stopped: a hook said the agent must stop (`continue: false`).
    HookStopped = 9,
    /// The turn was cancelled.
    Cancelled = 130,
}

impl Exit {
    /// The exit code for a stop reason.
    pub fn for_stop(stop: StopReason) -> Exit {
        match stop {
            StopReason::EndTurn => Exit::EndTurn,
            StopReason::MaxTokens => Exit::MaxTokens,
            StopReason::MaxTurnRequests => Exit::MaxTurnRequests,
            StopReason::MaxBudget => Exit::MaxBudget,
            StopReason::HookStopped => Exit::HookStopped,
            StopReason::Refusal => Exit::Refusal,
            StopReason::Cancelled => Exit::Cancelled,
            // The CLI asks its questions at once (or offers none): its chats never pause.
            StopReason::Paused => Exit::EndTurn,
        }
    }

    /// The exit code for a failed turn.
    pub fn for_error(error: &AgentError) -> Exit {
        match error {
            // A credential missing or refused when the first request wants it is the same
            // configuration error as one found missing when the model was opened.
            AgentError::Model(agentry::model::ModelError::Config(_)) => Exit::Usage,
            AgentError::Model(_) => Exit::Model,
            AgentError::OutputSchema { .. } => Exit::OutputSchema,
            AgentError::InvalidOutputSchema(_)
            | AgentError::Registry(_)
            | AgentError::NoSuchQuestion(_)
            | AgentError::InvalidAnswer(_)
            | AgentError::PromptBlocked(_)
            | AgentError::CommandNotRun(_)
            | AgentError::CompactionBlocked(_)
            | AgentError::NoSuchChat(_)
            | AgentError::Recording { .. }
            | AgentError::Unpriced { .. }
            | AgentError::ContextFull { .. } => Exit::Usage,
            AgentError::Rewind(_) => Exit::Internal,
            AgentError::Store(agentry::session::StoreError::NotFound(_)) => Exit::Usage,
            AgentError::Store(_) => Exit::Internal,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}

/// An error on its way to `main`, with the exit code it means.
#[derive(Debug)]
pub struct CliError {
    /// The exit code.
    pub exit: Exit,
    /// What went wrong.
    pub error: anyhow::Error,
}

impl CliError {
    /// A usage or configuration error.
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self {
            exit: Exit::Usage,
            error: error.into(),
        }
    }

    /// An internal error.
    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        Self {
            exit: Exit::Internal,
            error: error.into(),
        }
    }
}

impl From<AgentError> for CliError {
    fn from(error: AgentError) -> Self {
        Self {
            exit: Exit::for_error(&error),
            error: error.into(),
        }
    }
}
