//! The [`CallTracker`]: a tool call's status machine. Every status change of a call goes through
//! it, and only the transitions the lifecycle allows reach the event stream.

use super::{AgentEvent, EventSink, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate};
use crate::ids::ToolCallId;
use crate::tool::ToolCallLocation;
use std::sync::Arc;
use std::time::Instant;

/// A status change that the tool-call lifecycle does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool call {id}: illegal status change {from:?} -> {to:?}")]
pub struct IllegalTransition {
    /// The call.
    pub id: ToolCallId,
    /// Its status.
    pub from: ToolCallStatus,
    /// The status asked for.
    pub to: ToolCallStatus,
}

/// Emits a call's updates and guards its status: only legal transitions reach the event stream.
pub struct CallTracker {
    /// The call as announced, with its status kept current.
    snapshot: ToolCallSnapshot,
    events: Arc<dyn EventSink>,
    started: Option<Instant>,
}

impl CallTracker {
    /// Tracks a call announced before that waited for the user's answer (status
    /// `awaiting_answer`), without announcing it again.
    pub fn awaiting_answer(snapshot: ToolCallSnapshot, events: Arc<dyn EventSink>) -> Self {
        let snapshot = ToolCallSnapshot {
            status: ToolCallStatus::AwaitingAnswer,
            ..snapshot
        };
        Self {
            snapshot,
            events,
            started: None,
        }
    }

    /// Announces a call (status `pending`) and tracks it from there.
    pub fn announce(snapshot: ToolCallSnapshot, events: Arc<dyn EventSink>) -> Self {
        let snapshot = ToolCallSnapshot {
            status: ToolCallStatus::Pending,
            ..snapshot
        };
        events.emit(AgentEvent::ToolCall(snapshot.clone()));
        Self {
            snapshot,
            events,
            started: None,
        }
    }

    /// The call as announced, with its current status.
    pub fn snapshot(&self) -> &ToolCallSnapshot {
        &self.snapshot
    }

    /// The call's status.
    pub fn status(&self) -> ToolCallStatus {
        self.snapshot.status
    }

    /// Emits an update that does not change the status (progress).
    pub fn progress(&self, mut update: ToolCallUpdate) {
        update.tool_call_id = self.snapshot.tool_call_id.clone();
        update.status = None;
        self.events.emit(AgentEvent::ToolCallUpdate(update));
    }

    /// The call's input was rewritten (by a hook): its title and locations are now these, and
    /// its permission is judged by them.
    pub fn rewritten(&mut self, title: String, locations: Vec<ToolCallLocation>) {
        self.snapshot.title = title.clone();
        self.snapshot.locations = locations.clone();
        self.progress(ToolCallUpdate {
            title: Some(title),
            locations: Some(locations),
            ..ToolCallUpdate::default()
        });
    }

    /// Moves to `to`, emitting `update` with it; refuses (and emits nothing) when illegal.
    pub fn transition(
        &mut self,
        to: ToolCallStatus,
        mut update: ToolCallUpdate,
    ) -> Result<(), IllegalTransition> {
        if !self.status().can_become(to) {
            return Err(IllegalTransition {
                id: self.snapshot.tool_call_id.clone(),
                from: self.status(),
                to,
            });
        }
        match to {
            ToolCallStatus::InProgress => self.started = Some(Instant::now()),
            _ if to.is_final() => {
                update.duration_ms = self.started.map(|s| s.elapsed().as_millis() as u64);
            }
            _ => {}
        }
        self.snapshot.status = to;
        update.tool_call_id = self.snapshot.tool_call_id.clone();
        update.status = Some(to);
        self.events.emit(AgentEvent::ToolCallUpdate(update));
        Ok(())
    }
}
