//! Keeping a chat within the model's context window: the history is compacted (see
//! [`compaction`](crate::agent::compaction)) when the next request would pass the threshold,
//! or the turn ends with a clear error when compaction is off and it would not fit at all.

use super::Chat;
use crate::agent::compaction::{
    CompactionTrigger, RequestShape, compact_with_hooks, estimate_tokens, needs_compaction,
};
use crate::error::AgentError;
use crate::event::{AgentEvent, Usage};
use crate::model::Message;

impl Chat<'_> {
    /// Compacts the history when the next request would pass the threshold of the model's
    /// context window; with compaction off, fails when it would not fit the window.
    pub(super) async fn fit_context(&mut self) -> Result<(), AgentError> {
        let model = self.session.model.clone();
        let Some(window) = model.context_window() else {
            return Ok(());
        };
        let settings = self.session.agent.inner.config.compaction;
        // Estimated in two parts, so the history is only copied when it must be compacted.
        let tokens = estimate_tokens(
            &self.request.system,
            &self.session.history,
            &self.request.tools,
        ) + estimate_tokens("", &self.new_messages, &[]);
        if !settings.enabled {
            return match tokens > window {
                true => Err(AgentError::ContextFull { tokens, window }),
                false => Ok(()),
            };
        }
        if !needs_compaction(tokens, window, settings.threshold) {
            return Ok(());
        }
        let all: Vec<Message> = self
            .session
            .history
            .iter()
            .chain(&self.new_messages)
            .cloned()
            .collect();
        let request = RequestShape {
            model: model.as_ref(),
            system: &self.request.system,
            tools: &self.request.tools,
        };
        let mut used = Usage::default();
        let hooks = self.session.agent.hooks();
        let compacting = compact_with_hooks(
            hooks,
            self.session.hook_session(),
            &request,
            &all,
            &settings,
            CompactionTrigger::Auto,
            None,
            &mut used,
        );
        let compacted = tokio::select! {
            compacted = compacting => compacted,
            () = self.io.cancel.cancelled() => return Ok(()),
        };
        if used != Usage::default() {
            self.usage += used;
            self.meter.count_request(&model.name());
            self.meter.record(model.as_ref(), used);
        }
        let compacted = compacted?;
        for message in compacted.notices {
            self.emit(AgentEvent::Notice { message });
        }
        if let Some(reason) = compacted.blocked {
            self.emit(AgentEvent::Notice {
                message: format!("a PreCompact hook stopped the compaction: {reason}"),
            });
        }
        let Some(compacted) = compacted.compacted else {
            return Ok(());
        };
        let from_history = self.session.history.len();
        if compacted.split <= from_history {
            let kept = self.session.history.split_off(compacted.split);
            self.session.history = compacted.head.into_iter().chain(kept).collect();
        } else {
            self.session.history = compacted.head;
            self.new_messages.drain(..compacted.split - from_history);
        }
        self.record.compacted = true;
        self.emit(AgentEvent::Compacted(compacted.report));
        Ok(())
    }
}
