//! [`ToolHarness`]: runs tools through the real [`Executor`] without a model, for tool authors'
//! tests — statuses, content, locations and permissions as any front-end would see them.
//!
//! ```
//! use agentry::testing::ToolHarness;
//! use agentry::provider::SimpleProvider;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let harness = ToolHarness::new(&SimpleProvider::new("none", ""), std::env::temp_dir()).unwrap();
//! let outcome = harness.call("Missing", serde_json::json!({})).await;
//! assert!(outcome.result.is_error);
//! # }
//! ```

pub mod stores;

use crate::event::{AgentEvent, EventSink, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate};
use crate::executor::{CallResult, CallScope, Executor};
use crate::model::ToolResult;
use crate::model::{ToolArguments, ToolCallRequest};
use crate::permission::{PermissionHandler, PermissionMode, PermissionPolicy, RejectWhenAsked};
use crate::provider::{Provider, RegistryError, SimpleProvider, ToolRegistry};
use crate::sync::lock;
use crate::tool::ContentBlock;
use crate::tool::{ClientServices, SessionState, ToolContent};
use agentry_plugin::paths::canonical_path;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One session's worth of tool calls through the executor.
pub struct ToolHarness {
    executor: Executor,
    scope: CallScope,
    events: Arc<Mutex<Vec<AgentEvent>>>,
    calls: AtomicU64,
    /// Calls under way; changed only with `events` locked, which is emptied when none is left
    /// (so a long-lived harness does not grow).
    in_flight: AtomicUsize,
}

struct Collect(Arc<Mutex<Vec<AgentEvent>>>);

impl EventSink for Collect {
    fn emit(&self, event: AgentEvent) {
        lock(&self.0).push(event);
    }
}

/// A provider's tools as a model is shown them, one JSON object a tool (`name`, `kind`,
/// `description`, `input_schema`), by name: for snapshot tests of what models see.
pub fn tool_definitions(
    provider: Arc<dyn Provider>,
) -> Result<Vec<(String, Value)>, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry.register(provider)?;
    Ok(registry
        .definitions()
        .into_iter()
        .map(|definition| {
            let kind = registry
                .get(&definition.name)
                .map(|tool| tool.tool.kind().as_str());
            let shown = serde_json::json!({
                "name": definition.name,
                "kind": kind,
                "description": definition.description,
                "input_schema": definition.input_schema,
            });
            (definition.name, shown)
        })
        .collect())
}

impl ToolHarness {
    /// A harness for a provider's tools, in `cwd`, in `bypass` mode (no questions asked).
    pub fn new(provider: &dyn Provider, cwd: impl Into<PathBuf>) -> Result<Self, RegistryError> {
        // The harness runs the provider's tools as they are now.
        let snapshot = provider
            .tools()
            .into_iter()
            .fold(
                SimpleProvider::new(provider.name(), provider.description()),
                SimpleProvider::with_dyn_tool,
            )
            .with_readable_roots(provider.readable_roots());
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(snapshot))?;
        let cwd = canonical_path(&cwd.into());
        let events = Arc::new(Mutex::new(Vec::new()));
        Ok(Self {
            executor: Executor::new(Arc::new(registry)),
            scope: CallScope {
                session_id: "sess_harness".into(),
                turn_id: "turn_harness".into(),
                workspace_roots: vec![cwd.clone()],
                cwd,
                client: ClientServices::default(),
                host: Default::default(),
                state: SessionState::default(),
                policy: PermissionPolicy::new(PermissionMode::Bypass, Vec::new()),
                remembered: Arc::default(),
                events: Arc::new(Collect(events.clone())),
                permissions: Arc::new(RejectWhenAsked),
                cancel: CancellationToken::new(),
                extensions: Default::default(),
                hooks: None,
                before_change: None,
            },
            events,
            calls: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
        })
    }

    /// Uses this permission policy.
    pub fn with_policy(mut self, policy: PermissionPolicy) -> Self {
        self.scope.policy = policy;
        self
    }

    /// Gives tools the front-end client's services (an editor's files, say).
    pub fn with_client(mut self, client: ClientServices) -> Self {
        self.scope.client = client;
        self
    }

    /// Lets `handler` answer permission questions (by default each is rejected).
    pub fn with_permissions(mut self, handler: Arc<dyn PermissionHandler>) -> Self {
        self.scope.permissions = handler;
        self
    }

    /// Offers calls `model` as the session's model, as a chat does
    /// ([`SessionModel`](crate::model::side::SessionModel)).
    pub fn with_session_model(self, model: Arc<dyn crate::model::Model>) -> Self {
        self.with_side_questions(Arc::new(crate::model::side::SessionModel::new(model)))
    }

    /// Offers calls `service` for their side questions (a session's model with the agent's
    /// named models, say).
    pub fn with_side_questions(mut self, service: Arc<dyn crate::tool::SideQuestions>) -> Self {
        self.scope.host.side_questions = Some(service);
        self
    }

    /// Offers calls `asker` to put questions to the user (a front-end's question flow).
    pub fn with_ask_user(mut self, asker: Arc<dyn crate::tool::AskUser>) -> Self {
        self.scope.host.ask_user = Some(asker);
        self
    }

    /// The session's provider state (dropping the harness drops it, ending the session).
    pub fn state(&self) -> &SessionState {
        &self.scope.state
    }

    /// Calls a tool and waits for its final status.
    pub async fn call(&self, tool: &str, input: Value) -> CallOutcome {
        self.call_with(tool, input, CancellationToken::new()).await
    }

    /// Calls a tool that `cancel` can cancel.
    pub async fn call_with(
        &self,
        tool: &str,
        input: Value,
        cancel: CancellationToken,
    ) -> CallOutcome {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let id = format!("call_{number}");
        let before = {
            let events = self.lock_events();
            self.in_flight.fetch_add(1, Ordering::SeqCst);
            events.len()
        };
        let mut scope = self.scope.clone();
        scope.cancel = cancel;
        let request = ToolCallRequest {
            id: id.as_str().into(),
            name: tool.to_owned(),
            arguments: ToolArguments::Json(input),
        };
        let pending = self.executor.announce(request, &scope);
        // The harness has no chat to pause: a call that waits for an answer reads as an error.
        let result = match self.executor.run(pending, &scope).await {
            CallResult::Done(result) => result,
            CallResult::AwaitingAnswer(tool_call_id) => ToolResult {
                tool_call_id,
                content: vec![ContentBlock::text("the call waits for the user's answer")],
                is_error: true,
            },
        };
        let events = {
            let mut events = self.lock_events();
            let mine = events[before..].to_vec();
            if self.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
                events.clear();
            }
            mine
        };
        CallOutcome { result, events }
    }

    fn lock_events(&self) -> std::sync::MutexGuard<'_, Vec<AgentEvent>> {
        lock(&self.events)
    }
}

/// What one call did.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// What the model reads.
    pub result: ToolResult,
    /// The call's events, in order.
    pub events: Vec<AgentEvent>,
}

impl CallOutcome {
    /// The text the model reads.
    pub fn text(&self) -> String {
        self.result.text()
    }

    /// The call as announced.
    pub fn announced(&self) -> Option<&ToolCallSnapshot> {
        self.events.iter().find_map(|e| match e {
            AgentEvent::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The statuses the call went through.
    pub fn statuses(&self) -> Vec<ToolCallStatus> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCall(call) => Some(call.status),
                AgentEvent::ToolCallUpdate(update) => update.status,
                _ => None,
            })
            .collect()
    }

    /// The updates without a status change (progress).
    pub fn progress(&self) -> Vec<&ToolCallUpdate> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCallUpdate(update) if update.status.is_none() => Some(update),
                _ => None,
            })
            .collect()
    }

    /// The update that ended the call.
    pub fn final_update(&self) -> Option<&ToolCallUpdate> {
        self.events.iter().rev().find_map(|e| match e {
            AgentEvent::ToolCallUpdate(update)
                if update.status.is_some_and(ToolCallStatus::is_final) =>
            {
                Some(update)
            }
            _ => None,
        })
    }

    /// The final content.
    pub fn content(&self) -> Vec<ToolContent> {
        self.final_update()
            .and_then(|u| u.content.clone())
            .unwrap_or_default()
    }
}
