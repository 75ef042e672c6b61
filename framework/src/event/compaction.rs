//! What a compaction of the conversation did, as [`AgentEvent::Compacted`](super::AgentEvent::Compacted)
//! reports it (see [`compaction`](crate::agent::compaction)).

use serde::{Deserialize, Serialize};

/// How the older part of a conversation is made smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStrategy {
    /// The model summarises it, and the summary takes its place.
    #[serde(alias = "summarize")]
    Summarise,
    /// Its tool results are replaced by a one-line note first; it is summarised only when that
    /// is not enough.
    PruneToolOutputs,
}

/// What set a compaction off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The next request would have passed the threshold.
    Auto,
    /// The user asked (`/compact`).
    Manual,
}

impl CompactionTrigger {
    /// The wire name (`auto`, `manual`).
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionTrigger::Auto => "auto",
            CompactionTrigger::Manual => "manual",
        }
    }
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// What set it off.
    pub trigger: CompactionTrigger,
    /// What was done last: a summary, or only the pruning of tool results.
    pub strategy: CompactionStrategy,
    /// The conversation's estimated tokens before, and after.
    pub tokens_before: u64,
    /// See `tokens_before`.
    pub tokens_after: u64,
    /// How many messages a summary replaced (0 when none was written).
    pub messages_summarised: usize,
    /// How many tool results were replaced by a note.
    pub tool_outputs_pruned: usize,
    /// How many messages were kept verbatim after it.
    pub messages_kept: usize,
}

impl Compaction {
    /// The tokens it saved.
    pub fn tokens_saved(&self) -> u64 {
        self.tokens_before.saturating_sub(self.tokens_after)
    }

    /// One line for a person: what was kept and how many tokens it saved.
    pub fn describe(&self) -> String {
        let done = match (self.messages_summarised, self.tool_outputs_pruned) {
            (0, pruned) => format!("{pruned} older tool results were replaced by a note"),
            (summarised, 0) => format!("{summarised} earlier messages were summarised"),
            (summarised, pruned) => format!(
                "{pruned} older tool results were pruned and {summarised} earlier messages summarised"
            ),
        };
        format!(
            "The conversation was compacted{}: {done}, {} kept as they were; about {} tokens → {} (saved {}).",
            if self.trigger == CompactionTrigger::Manual {
                " as asked"
            } else {
                ""
            },
            match self.messages_kept {
                1 => "1 message".to_owned(),
                n => format!("{n} messages"),
            },
            self.tokens_before,
            self.tokens_after,
            self.tokens_saved()
        )
    }
}
