//! [`ToolEventHooks`]: the session's hooks as tools reach them (the SDK's
//! [`ToolHooks`](crate::tool::ToolHooks)), for the events inside a call — a task created or
//! completed, an MCP server's question and its answer (and, while the user is asked it, a
//! `Notification`: `elicitation_dialog`, or `elicitation_url_dialog` for a page to open).

use super::{HookEvent, HookReply, ScopeHooks};
use crate::event::EventSink;
use crate::tool::{
    ElicitationAnswer, HookElicitation, ToolContext, ToolHookEvent, ToolHookReply, ToolHooks,
};
use futures::future::BoxFuture;
use std::sync::Arc;

/// The session's hooks for a chat's tools, their notices going to the chat's events.
pub(crate) struct ToolEventHooks {
    /// The hooks and the session as they see it.
    pub(crate) hooks: ScopeHooks,
    /// Where notices go.
    pub(crate) events: Arc<dyn EventSink>,
}

impl ToolHooks for ToolEventHooks {
    fn report(
        &self,
        _call: &ToolContext,
        event: ToolHookEvent,
    ) -> BoxFuture<'static, ToolHookReply> {
        let (hooks, events) = (self.hooks.clone(), self.events.clone());
        Box::pin(async move {
            let asks = matches!(
                event,
                ToolHookEvent::Elicitation(_) | ToolHookEvent::ElicitationResult(_)
            );
            let dialog = match &event {
                ToolHookEvent::Elicitation(asked) => Some(dialog_of(asked)),
                _ => None,
            };
            let event = match event {
                ToolHookEvent::TaskCreated(task) => HookEvent::TaskCreated(task),
                ToolHookEvent::TaskCompleted(task) => HookEvent::TaskCompleted(task),
                ToolHookEvent::Elicitation(asked) => HookEvent::Elicitation(asked),
                ToolHookEvent::ElicitationResult(answered) => {
                    HookEvent::ElicitationResult(answered)
                }
            };
            let reply = hooks.fire(event, events.as_ref()).await;
            // No hook answered: the user is asked now.
            if let Some(dialog) = dialog.filter(|_| !reply.blocks() && reply.elicitation.is_none())
            {
                hooks.fire(dialog, events.as_ref()).await;
            }
            tool_reply(reply, asks)
        })
    }
}

/// The `Notification` that an MCP server's question is put to the user.
fn dialog_of(asked: &HookElicitation) -> HookEvent {
    let notification_type = match asked.mode.as_str() {
        "url" => "elicitation_url_dialog",
        _ => "elicitation_dialog",
    };
    HookEvent::Notification {
        message: format!("{} asks: {}", asked.mcp_server_name, asked.message),
        title: "MCP server question".to_owned(),
        notification_type: notification_type.to_owned(),
    }
}

/// What the hooks said, as the tool heeds it: a block refuses (for a question: declines it),
/// an answer stands in for the user's.
fn tool_reply(reply: HookReply, asks: bool) -> ToolHookReply {
    if reply.blocks() {
        return ToolHookReply {
            blocked: Some(reply.block_reason()),
            answer: asks.then(|| ElicitationAnswer {
                action: "decline".to_owned(),
                content: None,
            }),
        };
    }
    ToolHookReply {
        blocked: None,
        answer: reply.elicitation.filter(|_| asks),
    }
}
