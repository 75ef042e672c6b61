//! Hooks: code that runs at the agent's points, with Claude Code's events and their fields
//! ([`HookEvent`], [`HookInput`]) and Claude Code's hook output ([`HookReply`]). Before a
//! call a hook may allow it without asking, deny it with a reason the model reads, make the
//! user be asked, or rewrite its input; after it, give the model feedback; a prompt it may
//! block or add context to; a stop it may refuse (the agent goes on, told why); a session's
//! start it may give context to; a compaction it may stop or add instructions to; a task it
//! may refuse; an MCP server's question it may answer. `continue: false` stops the agent.
//!
//! Teams assembling their own agent implement [`AgentHooks`] in Rust
//! ([`AgentBuilder::hooks`](crate::agent::AgentBuilder::hooks)); the stock agent's
//! Claude-compatible hooks (commands, HTTP, prompts) are `agentry-stock`'s `SettingsHooks`.

mod event;
mod reply;
mod scope;
mod stack;
mod tool_events;

pub use event::{
    HOOK_EVENTS, HookEvent, HookInput, HookSession, HookTask, HookToolUse, SessionEndReason,
    SessionSource,
};
pub use reply::{HookDecision, HookReply};
pub use scope::ScopeHooks;
pub(crate) use stack::HookStack;
pub(crate) use tool_events::ToolEventHooks;

use crate::event::{AgentEvent, EventSink};
use std::sync::Arc;

/// Hooks at the agent's points — a session's start and end, a prompt, each call and its
/// permission, notifications, the stop, sub-agents, compaction, tasks, MCP servers' questions —
/// with Claude Code's events ([`HookEvent`]) and its hook output ([`HookReply`]).
#[async_trait::async_trait]
pub trait AgentHooks: Send + Sync {
    /// Whether these hooks take the event named `event` (the agent builds no input for an
    /// event no hook takes). Every event, unless implemented.
    fn takes(&self, _event: &str) -> bool {
        true
    }

    /// The permission rules (`Bash(git *)`, `Edit(src/**)`) some of these hooks run only for
    /// calls matching: Claude Code's `if`. The agent judges each call of a tool event against
    /// them as it judges permission rules (each command of a command line, a path by its
    /// canonical spelling) and gives the ones it matches in
    /// [`HookToolUse::matched_filters`]. A filter that is not a rule, or a call part of which
    /// a rule cannot see, counts as matched. None, unless implemented.
    fn call_filters(&self) -> Vec<String> {
        Vec::new()
    }

    /// Runs the hooks of one event and says what they decided.
    async fn on_event(&self, input: &HookInput) -> HookReply;
}

/// Shared hooks are the hooks they share.
#[async_trait::async_trait]
impl<H: AgentHooks + ?Sized> AgentHooks for Arc<H> {
    fn takes(&self, event: &str) -> bool {
        (**self).takes(event)
    }
    fn call_filters(&self) -> Vec<String> {
        (**self).call_filters()
    }
    async fn on_event(&self, input: &HookInput) -> HookReply {
        (**self).on_event(input).await
    }
}

/// Runs `hooks` (when there are any that take the event) for `event` in the session `session`
/// gives (asked only then).
pub(crate) async fn fire(
    hooks: Option<&Arc<dyn AgentHooks>>,
    session: impl FnOnce() -> HookSession,
    event: HookEvent,
) -> Option<HookReply> {
    let hooks = hooks.filter(|hooks| hooks.takes(event.name()))?;
    let session = session();
    Some(hooks.on_event(&HookInput { session, event }).await)
}

/// Where a hook's `continue: false` waits for the chat to heed it: the chat stops at its next
/// step, telling the user the hook's reason.
#[derive(Debug, Default)]
pub struct StopRequest(std::sync::Mutex<Option<String>>);

impl StopRequest {
    /// Asks the chat to stop, for `reason` (the first reason asked stands).
    pub fn request(&self, reason: String) {
        let mut asked = crate::sync::lock(&self.0);
        if asked.is_none() {
            *asked = Some(reason);
        }
    }

    /// The reason the chat was asked to stop for, if it was.
    pub fn asked(&self) -> Option<String> {
        crate::sync::lock(&self.0).clone()
    }
}

impl HookReply {
    /// What the user is to be told: the hooks' notices, then their system message.
    pub fn for_the_user(&mut self) -> Vec<String> {
        let mut told = std::mem::take(&mut self.notices);
        if let Some(message) = self.system_message.take() {
            told.push(message);
        }
        told
    }

    /// Passes the reply on: its messages for the user to `events` as notices, and a
    /// `continue: false` to `stop`, for the chat to heed.
    pub fn deliver(&mut self, events: &dyn EventSink, stop: &StopRequest) {
        for message in self.for_the_user() {
            events.emit(AgentEvent::Notice { message });
        }
        if let Some(reason) = self.stop.take() {
            stop.request(reason);
        }
    }
}

/// A call of `ls` in Bash, as tests of hooks give it.
#[cfg(test)]
pub(crate) fn sample_call() -> HookInput {
    HookInput {
        session: HookSession {
            session_id: "s".into(),
            transcript_path: None,
            cwd: "/work".into(),
            permission_mode: "default".into(),
            agent_id: None,
            agent_type: None,
            env_file: None,
        },
        event: HookEvent::PreToolUse(HookToolUse {
            tool_name: "Bash".into(),
            kind: crate::tool::ToolKind::Execute,
            tool_input: serde_json::json!({"command": "ls"}),
            tool_use_id: Some("c".into()),
            matched_filters: Vec::new(),
        }),
    }
}
