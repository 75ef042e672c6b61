//! Sub-agents: a tool call that runs a nested agent loop — its own history, system prompt, tools
//! and model — inside the chat that made the call (the `fork` provider's `Agent` tool).
//!
//! The chat offers every tool call a [`SubAgents`] runner, as its
//! [`HostServices::sub_agents`](crate::tool::HostServices::sub_agents) (which a plugin's tool
//! reaches across the ABI) and in its [`Extensions`](crate::tool::Extensions). A sub-agent's events flow into the chat's one event
//! stream (and its transcript, so they are stored with the session): its turns carry
//! `parent_fork_tool_call_id` (the call that started it) and their own `loop_id` (the root loop's
//! is [`ROOT_LOOP`](crate::event::ROOT_LOOP)); a sub-agent's own sub-agents chain the same way. It asks its permission
//! questions through the chat's handler, stops when the chat is cancelled, and may not nest
//! deeper than [`AgentConfig::max_fork_depth`](crate::agent::AgentConfig::max_fork_depth).
//!
//! ```
//! use agentry::subagent::{SubAgentSpec, SubAgents};
//! use agentry::tool::{ToolContext, ToolError};
//!
//! async fn delegate(ctx: &ToolContext, task: String) -> Result<String, ToolError> {
//!     let runner = SubAgents::of(ctx)
//!         .ok_or_else(|| ToolError::failed("sub-agents are not available here"))?;
//!     let spec = SubAgentSpec::new("You review code. Answer briefly.");
//!     let outcome = runner.run(ctx, spec, task).await?;
//!     Ok(outcome.answer)
//! }
//! ```

use crate::agent::chat::Start;
use crate::agent::{Agent, ChatIo, Session, SessionOptions};
use crate::event::{AgentEvent, EventSink, StopReason, Usage};
use crate::ids::ToolCallId;
use crate::model::Model;
use crate::pause::ChatPauses;
use crate::permission::{PermissionHandler, PermissionMode, RememberedAnswers};
use crate::provider::ToolRegistry;
use crate::question::QuestionHandler;
use crate::tool::ContentBlock;
use crate::tool::{SubAgentReport, SubAgentRunner, SubAgentTask, ToolContext, ToolError};
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};

/// Where a sub-agent's loop sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkOrigin {
    /// The tool call that started it.
    pub parent_tool_call_id: ToolCallId,
    /// Its loop's id.
    pub loop_id: String,
    /// How deep it is (1 for a sub-agent of the main loop).
    pub depth: u32,
}

/// What a sub-agent is.
#[derive(Clone)]
pub struct SubAgentSpec {
    /// Its system prompt (in place of the agent's base prompt).
    pub system_prompt: String,
    /// The tools it may call, by name; `None` for all of the calling loop's.
    pub tools: Option<Vec<String>>,
    /// Its model; `None` for the calling loop's.
    pub model: Option<Arc<dyn Model>>,
    /// The most model requests it may make; `None` for the agent's limit.
    pub max_requests: Option<u32>,
    /// Its permission mode; `None` for the calling loop's.
    pub permission_mode: Option<PermissionMode>,
    /// Its type, as hooks see it (its definition's name; `general-purpose` when `None`).
    pub agent_type: Option<String>,
}

impl SubAgentSpec {
    /// A sub-agent with this system prompt and everything else inherited.
    pub fn new(system_prompt: impl Into<String>) -> Self {
        Self {
            system_prompt: system_prompt.into(),
            tools: None,
            model: None,
            max_requests: None,
            permission_mode: None,
            agent_type: None,
        }
    }
}

impl std::fmt::Debug for SubAgentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgentSpec")
            .field("tools", &self.tools)
            .field("model", &self.model.as_ref().map(|m| m.name()))
            .field("max_requests", &self.max_requests)
            .field("permission_mode", &self.permission_mode)
            .finish_non_exhaustive()
    }
}

/// How a sub-agent's run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgentOutcome {
    /// Its final answer.
    pub answer: String,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// The tokens it used.
    pub usage: Usage,
    /// How many model requests it made.
    pub model_requests: u32,
    /// Its loop's id.
    pub loop_id: String,
}

/// Why a sub-agent could not run.
#[derive(Debug, thiserror::Error)]
pub enum SubAgentError {
    /// It would nest deeper than allowed.
    #[error(
        "sub-agents may nest {max} deep and this one would be {depth} deep: do the work here, or \
         hand it to a sub-agent from a shallower level"
    )]
    TooDeep {
        /// The depth it would have.
        depth: u32,
        /// The limit.
        max: u32,
    },
    /// A tool it names does not exist.
    #[error("the sub-agent names tools that do not exist: {0}")]
    UnknownTools(String),
    /// Its loop failed.
    #[error("the sub-agent failed: {0}")]
    Failed(#[from] crate::AgentError),
    /// The call was cancelled, and the sub-agent with it.
    #[error("the sub-agent was cancelled")]
    Cancelled,
    /// The sub-agent waits for the user's answer to a question: the chat pauses.
    #[error("the sub-agent waits for the user's answer")]
    AwaitingAnswer,
}

impl From<SubAgentError> for crate::tool::ToolError {
    /// A sub-agent that could not run fails its call, with the reason for the model.
    fn from(error: SubAgentError) -> Self {
        match error {
            SubAgentError::Cancelled => crate::tool::ToolError::Cancelled,
            SubAgentError::AwaitingAnswer => crate::tool::ToolError::AwaitingAnswer,
            other => crate::tool::ToolError::failed(other.to_string()),
        }
    }
}

/// Runs sub-agents for the tool calls of one chat. Found with [`SubAgents::of`].
#[derive(Clone)]
pub struct SubAgents {
    pub(crate) agent: Agent,
    pub(crate) options: SessionOptions,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) remembered: Arc<Mutex<RememberedAnswers>>,
    pub(crate) events: Arc<dyn EventSink>,
    pub(crate) permissions: Arc<dyn PermissionHandler>,
    pub(crate) questions: Option<Arc<dyn QuestionHandler>>,
    /// The calling chat's pauses (a sub-agent's question pauses the whole chat).
    pub(crate) pauses: Arc<ChatPauses>,
    /// What runs before each call that may change the workspace (the calling chat's
    /// checkpoint covers its sub-agents' changes too).
    pub(crate) before_change: Option<Arc<dyn crate::executor::BeforeChange>>,
    /// The depth of the loop whose calls this runner serves (0 for the main loop).
    pub(crate) depth: u32,
    /// What the calling chat spends: its sub-agents' requests count toward it and its budget.
    pub(crate) meter: Arc<crate::agent::meter::Meter>,
}

impl SubAgents {
    /// The runner the chat offers a tool call, if any.
    pub fn of(ctx: &ToolContext) -> Option<Arc<SubAgents>> {
        ctx.extensions.get::<SubAgents>()
    }

    /// How deep the calling loop is (0 for the main loop).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// How deep sub-agents may nest.
    pub fn max_depth(&self) -> u32 {
        self.agent.config().max_fork_depth
    }

    /// The model `name` names (as the configuration names models, or an alias the agent's
    /// [`NamedModels`](crate::model::named::NamedModels) know), for a sub-agent of its own.
    pub fn open_model(&self, name: &str) -> Result<Arc<dyn Model>, String> {
        let named = self
            .agent
            .named_models()
            .ok_or_else(|| format!("this agent opens no model by name, so not `{name}`"))?;
        named.open(name).map_err(|e| e.to_string())
    }

    /// Runs a sub-agent on `prompt` for the call `ctx` belongs to, and waits for its answer.
    /// Cancelling the call cancels it. When the chat resumes after a pause, the call's sub-agent
    /// takes up where it stopped instead (the call runs again with the same input).
    pub async fn run(
        &self,
        ctx: &ToolContext,
        spec: SubAgentSpec,
        prompt: String,
    ) -> Result<SubAgentOutcome, SubAgentError> {
        let depth = self.depth + 1;
        let max = self.max_depth();
        if depth > max {
            return Err(SubAgentError::TooDeep { depth, max });
        }
        let registry = match &spec.tools {
            Some(names) => {
                let unknown: Vec<&str> = names
                    .iter()
                    .map(String::as_str)
                    .filter(|name| self.registry.get(name).is_none())
                    .collect();
                if !unknown.is_empty() {
                    return Err(SubAgentError::UnknownTools(unknown.join(", ")));
                }
                Arc::new(self.registry.only(names))
            }
            None => self.registry.clone(),
        };
        let origin = ForkOrigin {
            parent_tool_call_id: ctx.tool_call_id.clone(),
            loop_id: format!("loop_{}", ctx.tool_call_id),
            depth,
        };
        let mut options = self.options.clone();
        // A sub-agent may narrow its session's mode, never widen it.
        if let Some(mode) = spec.permission_mode {
            options.policy.mode = options.policy.mode.at_most(mode);
        }
        let resumed = self.pauses.take_loop(&origin.loop_id);
        let mut session = Session::forked(
            &self.agent,
            options,
            registry,
            spec.model.unwrap_or_else(|| self.model.clone()),
            self.remembered.clone(),
            resumed
                .as_ref()
                .map(|p| p.history.clone())
                .unwrap_or_default(),
            Fork {
                origin: origin.clone(),
                system_prompt: spec.system_prompt,
                max_requests: spec.max_requests,
                agent_type: spec
                    .agent_type
                    .unwrap_or_else(|| "general-purpose".to_owned()),
            },
        );
        if let Some(folder) = &self.agent.inner.transcripts {
            let file = format!("agent-{}.jsonl", origin.loop_id);
            let path = folder.join(ctx.session_id.to_string()).join("subagents");
            session.keep_transcript(path.join(file));
        }
        let io = ChatIo {
            events: Arc::new(ChatBoundariesDropped(self.events.clone())),
            permissions: self.permissions.clone(),
            cancel: ctx.cancel.child_token(),
            questions: self.questions.clone(),
        };
        let start = match resumed {
            Some(paused) => Start::Resume {
                paused,
                answer: None,
            },
            None => {
                let mut content = vec![ContentBlock::Text { text: prompt }];
                content.extend(session.subagent_start(&self.events).await);
                Start::Prompt(content.into())
            }
        };
        let summary = session
            .run_sub_chat(
                start,
                &io,
                self.pauses.clone(),
                self.before_change.clone(),
                self.meter.clone(),
            )
            .await?;
        match summary.stop_reason {
            StopReason::Cancelled => return Err(SubAgentError::Cancelled),
            StopReason::Paused => return Err(SubAgentError::AwaitingAnswer),
            _ => {}
        }
        let answer = match summary.result {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        };
        Ok(SubAgentOutcome {
            answer,
            stop_reason: summary.stop_reason,
            usage: summary.usage,
            model_requests: summary.model_requests,
            loop_id: origin.loop_id,
        })
    }
}

/// The runner as the [`SubAgentRunner`] host service (what the Agent tool uses, linked or from a
/// plugin): tools the agent lacks and a model it cannot open are left out with a warning, since
/// definitions written for another agent may name them.
impl SubAgentRunner for SubAgents {
    fn run(
        &self,
        call: &ToolContext,
        task: SubAgentTask,
    ) -> BoxFuture<'static, Result<SubAgentReport, ToolError>> {
        let runner = self.clone();
        let call = call.clone();
        Box::pin(async move {
            let spec = runner.spec_of(&task)?;
            let outcome = SubAgents::run(&runner, &call, spec, task.prompt).await?;
            Ok(SubAgentReport {
                answer: outcome.answer,
                stop_reason: outcome.stop_reason.as_str().to_owned(),
                usage: serde_json::to_value(outcome.usage).unwrap_or_default(),
                model_requests: outcome.model_requests,
                loop_id: outcome.loop_id,
            })
        })
    }
}

impl SubAgents {
    /// What runs for `task`.
    fn spec_of(&self, task: &SubAgentTask) -> Result<SubAgentSpec, ToolError> {
        let mut spec = SubAgentSpec::new(task.system_prompt.clone());
        spec.max_requests = task.max_requests;
        spec.agent_type = task.agent_type.clone();
        spec.permission_mode =
            match &task.permission_mode {
                Some(mode) => Some(mode.parse().map_err(
                    |e: crate::permission::PermissionError| ToolError::failed(e.to_string()),
                )?),
                None => None,
            };
        spec.tools = task.tools.as_ref().map(|wanted| {
            let (kept, missing): (Vec<String>, Vec<String>) = wanted
                .iter()
                .cloned()
                .partition(|name| self.registry.get(name).is_some());
            if !missing.is_empty() {
                tracing::warn!(
                    "a sub-agent names tools this agent does not have: {}",
                    missing.join(", ")
                );
            }
            kept
        });
        spec.model = task.model.as_ref().and_then(|name| {
            self.open_model(name)
                .map_err(|problem| {
                    tracing::warn!(
                        "a sub-agent uses the calling model: its model `{name}` cannot be opened: {problem}"
                    );
                })
                .ok()
        });
        Ok(spec)
    }
}

/// What makes a session a sub-agent's.
#[derive(Debug, Clone)]
pub(crate) struct Fork {
    /// Where it sits.
    pub origin: ForkOrigin,
    /// Its system prompt.
    pub system_prompt: String,
    /// Its request limit, if not the agent's.
    pub max_requests: Option<u32>,
    /// Its type, as hooks see it.
    pub agent_type: String,
}

/// A sub-agent's events for the calling chat's stream: its chat boundaries are its own business
/// (the chat that called it is still running).
struct ChatBoundariesDropped(Arc<dyn EventSink>);

impl EventSink for ChatBoundariesDropped {
    fn emit(&self, event: AgentEvent) {
        if !matches!(
            event,
            AgentEvent::ChatStarted { .. }
                | AgentEvent::ChatEnded(_)
                | AgentEvent::ChatFailed { .. }
        ) {
            self.0.emit(event);
        }
    }
}
