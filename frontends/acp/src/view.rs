//! What a session's front-end knows of its chats so far, and where each update goes.
//!
//! The [`ToolCallBook`] keeps every call (its title, which sub-agent made it). For a client
//! that advertises ACP's subagent sessions (`clientCapabilities.subagents`), each sub-agent is a
//! child session: announced with `subagent_update` on its parent's session (the main session,
//! or the sub-agent that started it) before any of its own traffic, its turns streamed to it as
//! a session's are, and set idle when its Agent call ends. Other clients see sub-agents inline
//! (see [`convert`](crate::convert)).

use crate::convert::{SubAgentView, replayed_updates, session_update};
use agent_client_protocol::v1::schema as acp;
use agentry::event::{AgentEvent, ToolCallBook};
use agentry::ids::{ToolCallId, TurnId};
use std::collections::HashMap;

/// A session's calls and sub-agents, and the sessions their updates go to.
pub struct ChatView {
    /// The calls so far.
    pub book: ToolCallBook,
    /// The session itself.
    session_id: acp::SessionId,
    /// The child session of each Agent call whose sub-agent is one; `None` when sub-agents are
    /// shown inline.
    children: Option<HashMap<ToolCallId, acp::SessionId>>,
}

impl ChatView {
    /// The view of `session_id`, its sub-agents as child sessions or inline.
    pub fn new(session_id: acp::SessionId, view: SubAgentView) -> Self {
        Self {
            book: ToolCallBook::new(),
            session_id,
            children: (view == SubAgentView::ChildSessions).then(HashMap::new),
        }
    }

    /// How sub-agents are shown.
    pub fn sub_agents(&self) -> SubAgentView {
        match self.children {
            Some(_) => SubAgentView::ChildSessions,
            None => SubAgentView::Inline,
        }
    }

    /// Takes in a live event: the updates to send, each with its session.
    pub fn updates(
        &mut self,
        event: &AgentEvent,
        context_window: Option<u64>,
    ) -> Vec<(acp::SessionId, acp::SessionUpdate)> {
        self.route(event, |event, book, view| {
            session_update(event, context_window, book, view)
                .into_iter()
                .collect()
        })
    }

    /// Takes in a stored event: the updates that replay it in `session/load`.
    pub fn replayed(&mut self, event: &AgentEvent) -> Vec<(acp::SessionId, acp::SessionUpdate)> {
        self.route(event, replayed_updates)
    }

    /// The session a call belongs to: its sub-agent's, when that is a child session.
    pub fn session_of_call(&self, id: &ToolCallId) -> acp::SessionId {
        self.session_of(self.book.fork_of_call(id))
    }

    fn session_of_turn(&self, id: &TurnId) -> acp::SessionId {
        self.session_of(self.book.fork_of_turn(id))
    }

    /// The session of the sub-agent started by `fork` (the main session's without one).
    fn session_of(&self, fork: Option<&ToolCallId>) -> acp::SessionId {
        fork.and_then(|fork| self.children.as_ref()?.get(fork))
            .cloned()
            .unwrap_or_else(|| self.session_id.clone())
    }

    /// Takes `event` into the book and returns what `project` makes of it, sent to the right
    /// session, with the child-session announcements around it.
    fn route(
        &mut self,
        event: &AgentEvent,
        project: impl Fn(&AgentEvent, &ToolCallBook, SubAgentView) -> Vec<acp::SessionUpdate>,
    ) -> Vec<(acp::SessionId, acp::SessionUpdate)> {
        self.book.apply(event);
        let view = self.sub_agents();
        let mut routed = Vec::new();
        if view == SubAgentView::ChildSessions {
            routed.extend(self.announce_child(event));
        }
        let target = match event {
            AgentEvent::TextDelta { turn_id, .. }
            | AgentEvent::ThinkingDelta { turn_id, .. }
            | AgentEvent::Usage { turn_id, .. } => self.session_of_turn(turn_id),
            AgentEvent::ToolCall(call) => self.session_of_call(&call.tool_call_id),
            AgentEvent::ToolCallUpdate(update) => self.session_of_call(&update.tool_call_id),
            _ => self.session_id.clone(),
        };
        routed.extend(
            project(event, &self.book, view)
                .into_iter()
                .map(|update| (target.clone(), update)),
        );
        if view == SubAgentView::ChildSessions {
            routed.extend(self.child_done(event));
        }
        routed
    }

    /// The first turn of a sub-agent announces its child session on its parent's session.
    fn announce_child(
        &mut self,
        event: &AgentEvent,
    ) -> Option<(acp::SessionId, acp::SessionUpdate)> {
        let AgentEvent::TurnStarted {
            parent_fork_tool_call_id: Some(parent),
            loop_id,
            ..
        } = event
        else {
            return None;
        };
        if self.children.as_ref()?.contains_key(parent) {
            return None;
        }
        let child = acp::SessionId::new(format!("{}~{loop_id}", self.session_id));
        let title = self.book.get(parent).map(|call| call.title.clone());
        let announcement = acp::SubagentUpdate::new(child.clone())
            .title(title)
            .state(acp::StateUpdate::Running(acp::RunningStateUpdate::new()));
        let on = self.session_of_call(parent);
        self.children.as_mut()?.insert(parent.clone(), child);
        Some((on, acp::SessionUpdate::SubagentUpdate(announcement)))
    }

    /// When an Agent call ends, its child session goes idle.
    fn child_done(&self, event: &AgentEvent) -> Option<(acp::SessionId, acp::SessionUpdate)> {
        let AgentEvent::ToolCallUpdate(update) = event else {
            return None;
        };
        if !update.status.is_some_and(|status| status.is_final()) {
            return None;
        }
        let child = self.children.as_ref()?.get(&update.tool_call_id)?;
        let idle = acp::SubagentUpdate::new(child.clone())
            .state(acp::StateUpdate::Idle(acp::IdleStateUpdate::new()));
        Some((
            self.session_of_call(&update.tool_call_id),
            acp::SessionUpdate::SubagentUpdate(idle),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::event::{Role, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate, TurnStatus};
    use agentry::tool::ToolKind;

    fn agent_call(id: &str, turn: &str, title: &str) -> AgentEvent {
        AgentEvent::ToolCall(ToolCallSnapshot {
            tool_call_id: id.into(),
            turn_id: turn.into(),
            tool_name: "Agent".into(),
            title: title.into(),
            kind: ToolKind::Think,
            status: ToolCallStatus::Pending,
            raw_input: serde_json::json!({}),
            locations: Vec::new(),
        })
    }

    fn sub_agent_turn(turn: &str, parent: &str) -> AgentEvent {
        AgentEvent::TurnStarted {
            turn_id: turn.into(),
            role: Role::Assistant,
            status: TurnStatus::Streaming,
            parent_fork_tool_call_id: Some(parent.into()),
            loop_id: format!("loop_{parent}"),
            started_at: None,
        }
    }

    /// Each update as `(session, JSON)`.
    fn sent(
        updates: Vec<(acp::SessionId, acp::SessionUpdate)>,
    ) -> Vec<(String, serde_json::Value)> {
        updates
            .into_iter()
            .map(|(session, update)| (session.to_string(), serde_json::to_value(update).unwrap()))
            .collect()
    }

    #[test]
    fn a_nested_sub_agent_is_announced_on_its_parents_child_session() {
        let mut view = ChatView::new("s".into(), SubAgentView::ChildSessions);
        view.updates(&agent_call("a", "t0", "Research"), None);
        let child = sent(view.updates(&sub_agent_turn("t1", "a"), None));
        assert_eq!(child.len(), 1, "{child:?}");
        assert_eq!(child[0].0, "s");
        assert_eq!(child[0].1["sessionId"], "s~loop_a");
        assert_eq!(child[0].1["title"], "Research");
        assert_eq!(child[0].1["state"]["state"], "running");
        // A second turn of the same sub-agent announces nothing.
        view.updates(
            &AgentEvent::TurnEnded {
                turn_id: "t1".into(),
                role: Role::Assistant,
                status: TurnStatus::Completed,
                parent_fork_tool_call_id: Some("a".into()),
                loop_id: "loop_a".into(),
                duration_ms: None,
            },
            None,
        );
        assert!(view.updates(&sub_agent_turn("t2", "a"), None).is_empty());
        // Its own Agent call belongs to its session; the grandchild is announced there.
        let call = sent(view.updates(&agent_call("b", "t2", "Dig deeper"), None));
        assert_eq!(call[0].0, "s~loop_a");
        assert_eq!(call[0].1["title"], "Dig deeper");
        let grandchild = sent(view.updates(&sub_agent_turn("t3", "b"), None));
        assert_eq!(grandchild[0].0, "s~loop_a");
        assert_eq!(grandchild[0].1["sessionId"], "s~loop_b");
        let text = sent(view.updates(
            &AgentEvent::TextDelta {
                turn_id: "t3".into(),
                text: "found".into(),
            },
            None,
        ));
        assert_eq!(text[0].0, "s~loop_b");
        assert_eq!(text[0].1["sessionUpdate"], "agent_message_chunk");
        // The grandchild's Agent call ends in the child session: the grandchild goes idle there.
        let done = sent(view.updates(
            &AgentEvent::ToolCallUpdate(ToolCallUpdate {
                tool_call_id: "b".into(),
                status: Some(ToolCallStatus::Completed),
                ..ToolCallUpdate::default()
            }),
            None,
        ));
        assert_eq!(done.len(), 2, "{done:?}");
        assert_eq!(
            (done[0].0.as_str(), &done[0].1["status"]),
            ("s~loop_a", &serde_json::json!("completed"))
        );
        assert_eq!(done[1].0, "s~loop_a");
        assert_eq!(done[1].1["sessionId"], "s~loop_b");
        assert_eq!(done[1].1["state"]["state"], "idle");
    }

    #[test]
    fn inline_sub_agents_stay_in_the_session() {
        let mut view = ChatView::new("s".into(), SubAgentView::Inline);
        view.updates(&agent_call("a", "t0", "Research"), None);
        assert!(view.updates(&sub_agent_turn("t1", "a"), None).is_empty());
        let text = view.updates(
            &AgentEvent::TextDelta {
                turn_id: "t1".into(),
                text: "inside".into(),
            },
            None,
        );
        assert!(text.is_empty(), "a sub-agent's text stays inside it");
        let call = sent(view.updates(&agent_call("b", "t1", "Dig deeper"), None));
        assert_eq!(call[0].0, "s");
        assert_eq!(call[0].1["title"], "Research \u{203a} Dig deeper");
    }
}
