//! [`CompactionSettings`]: when a conversation is compacted, what is kept, and how.

use crate::event::CompactionStrategy;
use serde::{Deserialize, Serialize};

/// When and how a conversation nearing the model's context window is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompactionSettings {
    /// Whether it is compacted at all. Off, a request that would not fit the window ends the
    /// turn with [`AgentError::ContextFull`](crate::AgentError::ContextFull), never a silent
    /// cut; a compaction the user asks for still runs.
    pub enabled: bool,
    /// The share of the window a request may fill before compaction (0.75).
    pub threshold: f64,
    /// What is kept verbatim at the end of the conversation.
    pub keep_recent: KeepRecent,
    /// How the older part is made smaller.
    pub strategy: CompactionStrategy,
    /// The most characters of text one tool result brings into the conversation: a longer
    /// one keeps its start and end with a note between, its whole text kept in the session's
    /// temporary folder for the model to read in parts (50,000).
    pub max_tool_result_chars: usize,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 0.75,
            keep_recent: KeepRecent::Share(0.25),
            strategy: CompactionStrategy::Summarise,
            max_tool_result_chars: 50_000,
        }
    }
}

impl CompactionSettings {
    /// Why these settings cannot be used, if they cannot: a threshold or share that is not a
    /// share of the window (above 0, at most 1), or nothing to keep.
    pub fn check(&self) -> Result<(), String> {
        let share = |name: &str, value: f64| {
            if value > 0.0 && value <= 1.0 {
                Ok(())
            } else {
                Err(format!(
                    "{name} = {value}: it is a share of the context window, above 0 and at most 1"
                ))
            }
        };
        share("threshold", self.threshold)?;
        if self.max_tool_result_chars < 1_000 {
            return Err(format!(
                "max_tool_result_chars = {}: a result needs room for its start, its end and the note (1,000 at the least)",
                self.max_tool_result_chars
            ));
        }
        match self.keep_recent {
            KeepRecent::Share(value) => share("keep_recent.share", value),
            KeepRecent::Turns(0) | KeepRecent::Tokens(0) => {
                Err("keep_recent keeps nothing: give at least one turn or token".to_owned())
            }
            KeepRecent::Turns(_) | KeepRecent::Tokens(_) => Ok(()),
        }
    }
}

/// What a compaction keeps verbatim at the end of the conversation (from a user's message on,
/// so that tool calls stay with their results).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum KeepRecent {
    /// As many turns as fit this share of the window (`{ share = 0.25 }`, the default).
    Share(f64),
    /// The last N of the user's turns (`{ turns = 3 }`).
    Turns(u32),
    /// As many turns as fit this many tokens (`{ tokens = 20000 }`).
    Tokens(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_configuration_writes_them_and_are_checked() {
        let settings: CompactionSettings = serde_json::from_value(serde_json::json!({
            "threshold": 0.6, "keep_recent": {"turns": 3}, "strategy": "prune_tool_outputs"
        }))
        .unwrap();
        assert!(settings.enabled);
        assert_eq!(settings.keep_recent, KeepRecent::Turns(3));
        assert_eq!(settings.strategy, CompactionStrategy::PruneToolOutputs);
        assert_eq!(settings.check(), Ok(()));
        let american: CompactionSettings =
            serde_json::from_value(serde_json::json!({"strategy": "summarize"})).unwrap();
        assert_eq!(american.strategy, CompactionStrategy::Summarise);
        let bad = CompactionSettings {
            threshold: 1.5,
            ..CompactionSettings::default()
        };
        assert!(bad.check().unwrap_err().contains("threshold = 1.5"));
        let nothing = CompactionSettings {
            keep_recent: KeepRecent::Turns(0),
            ..CompactionSettings::default()
        };
        assert!(nothing.check().is_err());
        assert!(
            serde_json::from_value::<CompactionSettings>(serde_json::json!({"treshold": 0.5}))
                .is_err()
        );
    }
}
