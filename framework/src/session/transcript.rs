//! [`Transcript`]: the events of a chat, condensed for storage and replay.

use crate::event::AgentEvent;

/// Collects a chat's events, merging consecutive text (and thinking) deltas of the same turn, so
/// a 50,000-chunk answer is stored as one event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    events: Vec<AgentEvent>,
}

impl Transcript {
    /// Adds an event: a copy of it, unless it is a delta that extends the last event's text
    /// (the copy is then its text alone: a streamed answer costs no copy of each chunk).
    pub fn push(&mut self, event: &AgentEvent) {
        match (self.events.last_mut(), event) {
            (
                Some(AgentEvent::TextDelta { turn_id, text }),
                AgentEvent::TextDelta {
                    turn_id: next_turn,
                    text: more,
                },
            )
            | (
                Some(AgentEvent::ThinkingDelta { turn_id, text }),
                AgentEvent::ThinkingDelta {
                    turn_id: next_turn,
                    text: more,
                },
            ) if turn_id == next_turn => text.push_str(more),
            (_, event) => self.events.push(event.clone()),
        }
    }

    /// The condensed events.
    pub fn events(&self) -> &[AgentEvent] {
        &self.events
    }

    /// Drops the first `count` events (those recorded already).
    pub fn discard_first(&mut self, count: usize) {
        self.events.drain(..count.min(self.events.len()));
    }

    /// Takes the condensed events out.
    pub fn into_events(self) -> Vec<AgentEvent> {
        self.events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_consecutive_deltas_of_one_turn_only() {
        let mut t = Transcript::default();
        let text = |turn: &str, s: &str| AgentEvent::TextDelta {
            turn_id: turn.into(),
            text: s.into(),
        };
        t.push(&text("a", "Hel"));
        t.push(&text("a", "lo"));
        t.push(&AgentEvent::ThinkingDelta {
            turn_id: "a".into(),
            text: "x".into(),
        });
        t.push(&text("a", "!"));
        t.push(&text("b", "new"));
        assert_eq!(
            t.events(),
            [
                text("a", "Hello"),
                AgentEvent::ThinkingDelta {
                    turn_id: "a".into(),
                    text: "x".into()
                },
                text("a", "!"),
                text("b", "new")
            ]
        );
    }
}
