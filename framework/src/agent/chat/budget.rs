//! Holding a chat to the session's budget: before each request, what it would cost at least.

use super::Chat;
use crate::agent::compaction::estimate_tokens;
use crate::error::AgentError;

impl Chat<'_> {
    /// Why the next request may not be made (it would take the session past its budget), if
    /// so; an error when the session has a budget and the model no price.
    pub(super) fn over_budget(&self) -> Result<Option<String>, AgentError> {
        if self.session.agent.inner.config.max_budget_usd.is_none() {
            return Ok(None);
        }
        let prompt = estimate_tokens(
            &self.request.system,
            &self.session.history,
            &self.request.tools,
        ) + estimate_tokens(&self.request.environment, &self.new_messages, &[]);
        self.meter.refuses(self.session.model.as_ref(), prompt)
    }
}
