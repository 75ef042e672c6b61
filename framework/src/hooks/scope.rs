//! [`ScopeHooks`]: the agent's hooks as a chat's calls and tools run them — with the session
//! as they see it, their notices passed to the user and a `continue: false` left for the chat.

use super::{AgentHooks, HookEvent, HookReply, HookSession, StopRequest};
use crate::event::EventSink;
use std::sync::Arc;

/// The hooks a chat's calls run with, the session as they see it, and where a hook's
/// `continue: false` is left for the chat to heed.
#[derive(Clone)]
pub struct ScopeHooks {
    /// The agent's hooks.
    pub hooks: Arc<dyn AgentHooks>,
    /// The session, as hooks see it.
    pub session: HookSession,
    /// Where a hook asks the chat to stop.
    pub stop: Arc<StopRequest>,
}

impl ScopeHooks {
    /// Runs the hooks of `event` (when any takes it) and passes their notices and messages on
    /// to the user (through `events`), and a stop to the chat.
    pub async fn fire(&self, event: HookEvent, events: &dyn EventSink) -> HookReply {
        let mut reply = super::fire(Some(&self.hooks), || self.session.clone(), event)
            .await
            .unwrap_or_default();
        reply.deliver(events, &self.stop);
        reply
    }
}
