//! [`Usage`]: the tokens of model requests, counted the same way for every provider.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Token counts, the same way for every provider. The prompt's tokens are split in three that
/// do not overlap: `input_tokens` (read anew), `cache_read_tokens` (read from the provider's
/// prompt cache) and `cache_write_tokens` (written to it, where the provider bills that apart);
/// the whole prompt is their sum ([`prompt_tokens`](Self::prompt_tokens)). Anthropic reports
/// them so; OpenAI-compatible servers report the whole prompt with the cached part inside it,
/// which the model clients subtract.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens read anew: not counting those read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Every token of the prompt: read anew, read from the cache and written to it.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}
