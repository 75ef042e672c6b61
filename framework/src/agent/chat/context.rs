//! Keeping a chat within the model's context window: the history is compacted into a summary
//! when the next request would not fit.

use super::Chat;
use crate::agent::compaction::{estimate_tokens, needs_compaction, split_point, summarise};
use crate::error::AgentError;
use crate::event::{AgentEvent, Usage};
use crate::model::Message;

impl Chat<'_> {
    /// Compacts the history when the next request would not fit the model's context window.
    pub(super) async fn fit_context(&mut self) -> Result<(), AgentError> {
        let model = self.session.model.clone();
        let Some(window) = model.context_window() else {
            return Ok(());
        };
        // Estimated in two parts, so the history is only copied when it must be compacted.
        let tokens = estimate_tokens(
            &self.request.system,
            &self.session.history,
            &self.request.tools,
        ) + estimate_tokens("", &self.new_messages, &[]);
        if !needs_compaction(tokens, window) {
            return Ok(());
        }
        let all: Vec<Message> = self
            .session
            .history
            .iter()
            .chain(&self.new_messages)
            .cloned()
            .collect();
        let Some(split) = split_point(&all, window) else {
            return Ok(());
        };
        let mut used = Usage::default();
        let summary = tokio::select! {
            summary = summarise(model.as_ref(), &self.request.system, &all[..split], &self.request.tools, &mut used) => summary,
            () = self.io.cancel.cancelled() => return Ok(()),
        };
        self.usage += used;
        self.meter.count_request(&model.name());
        self.meter.record(model.as_ref(), used);
        let summary = summary?;
        let from_history = self.session.history.len();
        if split <= from_history {
            let kept = self.session.history.split_off(split);
            self.session.history = std::iter::once(summary).chain(kept).collect();
        } else {
            self.session.history = vec![summary];
            self.new_messages.drain(..split - from_history);
        }
        self.record.compacted = true;
        self.emit(AgentEvent::Notice {
            message: format!(
                "the conversation (about {tokens} tokens) was nearing the model's context window of {window}: \
                 {split} earlier messages were replaced by a summary"
            ),
        });
        Ok(())
    }
}
