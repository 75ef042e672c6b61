//! The turns of a chat as events: each one's start and end (with its loop, its sub-agent and
//! its duration), and the user's turns.

use super::Chat;
use crate::event::ROOT_LOOP;
use crate::event::{AgentEvent, Role, TurnStatus};
use crate::ids::{ToolCallId, TurnId};
use crate::model::Message;
use crate::sync::lock;
use crate::tool::ContentBlock;
use std::time::Instant;

impl Chat<'_> {
    /// The call whose sub-agent this chat is, if it is one.
    pub(super) fn parent_fork_tool_call_id(&self) -> Option<ToolCallId> {
        let fork = self.session.fork.as_ref()?;
        Some(fork.origin.parent_tool_call_id.clone())
    }

    /// The id of this chat's loop.
    pub(super) fn loop_id(&self) -> String {
        self.session
            .fork
            .as_ref()
            .map_or_else(|| ROOT_LOOP.to_owned(), |fork| fork.origin.loop_id.clone())
    }

    pub(super) fn user_turn(&mut self, content: Vec<ContentBlock>) {
        let turn_id = TurnId::generate();
        self.start_turn(&turn_id, Role::User, TurnStatus::Completed);
        self.emit(AgentEvent::UserMessage {
            turn_id: turn_id.clone(),
            content: content.clone(),
        });
        self.end_turn_of(turn_id, Role::User, TurnStatus::Completed);
        self.new_messages.push(Message::User { content });
    }

    pub(super) fn start_turn(&self, turn_id: &TurnId, role: Role, status: TurnStatus) {
        lock(&self.turn_clocks).insert(turn_id.clone(), Instant::now());
        self.emit(AgentEvent::TurnStarted {
            turn_id: turn_id.clone(),
            role,
            status,
            parent_fork_tool_call_id: self.parent_fork_tool_call_id(),
            loop_id: self.loop_id(),
            started_at: Some(crate::session::now_rfc3339()),
        });
    }

    pub(super) fn end_turn_of(&self, turn_id: TurnId, role: Role, status: TurnStatus) {
        let started = lock(&self.turn_clocks).remove(&turn_id);
        self.emit(AgentEvent::TurnEnded {
            turn_id,
            role,
            status,
            parent_fork_tool_call_id: self.parent_fork_tool_call_id(),
            loop_id: self.loop_id(),
            duration_ms: started.map(|at| at.elapsed().as_millis() as u64),
        });
    }

    pub(super) fn end_turn(&self, turn_id: TurnId, status: TurnStatus) {
        self.end_turn_of(turn_id, Role::Assistant, status);
    }
}
