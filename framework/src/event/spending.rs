//! What a session's recorded events spent: the [`Spending`] of its [`AgentEvent::Usage`]s.

use super::AgentEvent;
use crate::cost::Spending;

impl Spending {
    /// Counts a usage event (a request to its model, with what it used and cost); other
    /// events change nothing.
    pub fn add_event(&mut self, event: &AgentEvent) {
        if let AgentEvent::Usage {
            usage,
            model,
            cost_usd,
            ..
        } = event
        {
            self.count_request(model);
            self.add(model, *usage, *cost_usd);
        }
    }

    /// What the recorded `events` of a session spent, each request at the price it was
    /// counted at then.
    pub fn of_events<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> Self {
        let mut spending = Self::default();
        for event in events {
            spending.add_event(event);
        }
        spending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::Usage;

    #[test]
    fn recorded_usage_events_add_up_by_model() {
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 1,
            ..Usage::default()
        };
        let priced = |turn: &str, session: f64| AgentEvent::Usage {
            turn_id: turn.into(),
            usage,
            model: "m".into(),
            cost_usd: Some(0.5),
            session_cost_usd: Some(session),
        };
        let events = [
            priced("t1", 0.5),
            AgentEvent::Notice {
                message: "x".into(),
            },
            priced("t2", 1.0),
        ];
        let spending = Spending::of_events(&events);
        assert_eq!(spending.by_model()["m"].requests, 2);
        assert_eq!(spending.cost_usd(), Some(1.0));
        assert_eq!(spending.usage().input_tokens, 20);
    }
}
