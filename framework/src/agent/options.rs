//! What a front-end sets up a session and a chat with.

use crate::event::EventSink;
use crate::permission::{PermissionHandler, PermissionPolicy};
use crate::question::QuestionHandler;
use crate::tool::{ClientServices, SandboxMode};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How a session is set up by its front-end.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// Directories the session may work in without asking; `cwd` is always one.
    pub workspace_roots: Vec<PathBuf>,
    /// The permission policy.
    pub policy: PermissionPolicy,
    /// What the front-end's client does for tools (its files, its terminals).
    pub client: ClientServices,
    /// Instructions for this session only, added to the agent's system prompt (its tools are
    /// the agent's plus those given with [`Session::add_provider`](super::Session::add_provider)).
    pub instructions: Option<String>,
    /// The sandbox the session's commands run in, over the sandboxing tools' own setting
    /// (`None`: theirs).
    pub sandbox: Option<SandboxMode>,
}

impl SessionOptions {
    /// Options for a session in `cwd` with the default policy.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        Self {
            workspace_roots: vec![cwd.clone()],
            cwd,
            policy: PermissionPolicy::default(),
            client: ClientServices::default(),
            instructions: None,
            sandbox: None,
        }
    }
}

/// What a front-end provides for one chat: where events go, who answers permission questions,
/// and the cancellation to watch.
#[derive(Clone)]
pub struct ChatIo {
    /// Where events go.
    pub events: Arc<dyn EventSink>,
    /// Who answers permission questions.
    pub permissions: Arc<dyn PermissionHandler>,
    /// Cancel it to cancel the chat.
    pub cancel: CancellationToken,
    /// Who answers the model's questions to the user; without one, tools that need a person
    /// are not offered.
    pub questions: Option<Arc<dyn QuestionHandler>>,
}

impl ChatIo {
    /// Events to `events`, nobody to answer permission questions (each is rejected, see
    /// [`RejectWhenAsked`](crate::permission::RejectWhenAsked)), and a fresh cancellation token.
    pub fn new(events: impl EventSink + 'static) -> Self {
        Self {
            events: Arc::new(events),
            permissions: Arc::new(crate::permission::RejectWhenAsked),
            cancel: CancellationToken::new(),
            questions: None,
        }
    }

    /// Lets `handler` answer the model's questions to the user.
    pub fn with_questions(mut self, handler: Arc<dyn QuestionHandler>) -> Self {
        self.questions = Some(handler);
        self
    }

    /// Lets `handler` answer permission questions.
    pub fn with_permissions(mut self, handler: Arc<dyn PermissionHandler>) -> Self {
        self.permissions = handler;
        self
    }
}

/// Options for one chat.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    /// When set, the answer must be JSON satisfying this JSON Schema; the model is asked to fix
    /// an answer that does not, up to [`AgentConfig::output_schema_retries`](super::AgentConfig::output_schema_retries) times.
    pub output_schema: Option<Value>,
}

impl ChatOptions {
    /// Options asking for an answer that is a `T` (its JSON Schema, from `schemars`), which
    /// [`ChatSummary::output`](crate::event::ChatSummary::output) then reads back.
    pub fn output_of<T: schemars::JsonSchema>() -> Self {
        Self {
            output_schema: Some(schemars::schema_for!(T).to_value()),
        }
    }
}
