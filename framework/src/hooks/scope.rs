//! [`ScopeHooks`]: the agent's hooks as a chat's calls and tools run them — with the session
//! as they see it, their notices passed to the user and a `continue: false` left for the chat.

use super::{AgentHooks, HookEvent, HookInput, HookReply, HookSession, StopRequest};
use crate::event::{AgentEvent, EventSink};
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
        if !self.hooks.takes(event.name()) {
            return HookReply::default();
        }
        let input = HookInput {
            session: self.session.clone(),
            event,
        };
        let mut reply = self.hooks.on_event(&input).await;
        for message in reply.for_the_user() {
            events.emit(AgentEvent::Notice { message });
        }
        if let Some(reason) = reply.stop.take() {
            self.stop.request(reason);
        }
        reply
    }
}
