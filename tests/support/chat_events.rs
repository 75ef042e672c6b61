//! Chat-flow events (`agentry serve`'s `[{event, data}]`) made comparable across runs for
//! snapshots: what differs from run to run (ids, times, the sequence's starting point) is
//! replaced, everything else is kept as sent.

use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

/// Normalises a list of events: turn ids become `turn_1`, `turn_2`, … and session ids `sess_1`, …
/// in order of appearance; each `sequence` becomes its rank among the sequences seen (1, 2, …),
/// so their order stays visible; `started_at` and `duration_ms` become placeholders.
pub fn normalise(mut events: Value) -> Value {
    let mut sequences = BTreeSet::new();
    collect_sequences(&events, &mut sequences);
    let mut renamer = Renamer {
        names: HashMap::new(),
        ranks: sequences.into_iter().zip(1u64..).collect(),
    };
    renamer.walk(&mut events);
    events
}

fn collect_sequences(value: &Value, into: &mut BTreeSet<u64>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item.as_u64()) {
                    ("sequence", Some(sequence)) => {
                        into.insert(sequence);
                    }
                    _ => collect_sequences(item, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_sequences(i, into)),
        _ => {}
    }
}

/// Replaces run-specific values while walking the events in order.
struct Renamer {
    /// An id as sent → its stable name (`turn_N`, `sess_N`).
    names: HashMap<String, String>,
    /// A sequence as sent → its rank.
    ranks: HashMap<u64, u64>,
}

impl Renamer {
    fn walk(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    match (key.as_str(), &*item) {
                        ("started_at", Value::String(_)) => *item = json!("<time>"),
                        ("duration_ms", Value::Number(_)) => *item = json!("<ms>"),
                        ("sequence", Value::Number(n)) => {
                            let sequence = n.as_u64().unwrap_or_default();
                            *item = json!(self.ranks.get(&sequence).copied().unwrap_or_default());
                        }
                        (_, Value::String(id)) if id.starts_with("turn_") => {
                            *item = json!(self.name(id, "turn"));
                        }
                        ("session_id", Value::String(id)) => *item = json!(self.name(id, "sess")),
                        _ => self.walk(item),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.walk(i)),
            _ => {}
        }
    }

    /// The stable name of `id`: `PREFIX_N`, numbered per prefix in order of appearance.
    fn name(&mut self, id: &str, prefix: &str) -> String {
        let taken = self
            .names
            .values()
            .filter(|n| n.starts_with(&format!("{prefix}_")))
            .count();
        self.names
            .entry(id.to_owned())
            .or_insert_with(|| format!("{prefix}_{}", taken + 1))
            .clone()
    }
}
