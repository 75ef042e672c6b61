//! What the catalog knows of models' limits: the context window and output limit of known
//! models, and a model's limits as its provider's configuration and that table give them.

use super::ProviderConfig;

/// Context window and output limit of known models, by id prefix (after any `vendor/`, and
/// after Bedrock's `geo.vendor.` prefix).
const KNOWN_MODELS: &[(&str, u64, u32)] = &[
    ("claude-opus-4", 200_000, 32_000),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-haiku-4", 200_000, 64_000),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-3-5", 200_000, 8_192),
    ("claude", 200_000, 8_192),
    ("gpt-4.1", 1_047_576, 32_768),
    ("gpt-5", 400_000, 128_000),
    ("gpt-4o", 128_000, 16_384),
    ("o3", 200_000, 100_000),
    ("o4-mini", 200_000, 100_000),
    ("gpt-oss", 131_072, 32_768),
    ("deepseek", 128_000, 8_192),
    ("grok-4", 256_000, 32_768),
    ("grok-3", 131_072, 32_768),
    ("qwen3", 40_960, 8_192),
    ("llama3", 128_000, 8_192),
    ("llama-3", 128_000, 8_192),
    ("gemini-1.5-pro", 2_097_152, 8_192),
    ("gemini-2.0", 1_048_576, 8_192),
    ("gemini", 1_048_576, 65_536),
    // Bedrock's own and hosted models (ids after their `vendor.` prefix).
    ("nova-premier", 1_000_000, 10_000),
    ("nova-pro", 300_000, 10_000),
    ("nova-lite", 300_000, 10_000),
    ("nova-2-lite", 1_000_000, 65_535),
    ("nova-micro", 128_000, 10_000),
    ("r1", 128_000, 32_768),
    ("mistral-large", 128_000, 8_192),
];

/// The context window and output limit of a model id, when it is a known model.
pub fn known_limits(model: &str) -> Option<(u64, u32)> {
    let id = bare_id(model);
    KNOWN_MODELS
        .iter()
        .find(|(prefix, _, _)| id.starts_with(prefix))
        .map(|&(_, window, output)| (window, output))
}

/// A model's id without what leads it: a `vendor/` path (OpenRouter's), Bedrock's vendor
/// (`amazon.`) and an inference profile's geography (`us.anthropic.`) — words of letters
/// alone, each ended by a dot.
pub(super) fn bare_id(model: &str) -> &str {
    let mut id = model.rsplit('/').next().unwrap_or(model);
    while let Some((word, rest)) = id.split_once('.')
        && !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_lowercase())
    {
        id = rest;
    }
    id
}

/// What a model's client takes from its provider's configuration and the built-in table.
#[derive(Debug, Clone, Copy)]
pub(super) struct ModelLimits {
    /// The context window: configured, else the model's known one.
    pub(super) context_window: Option<u64>,
    /// Whether it takes images (yes unless configured otherwise).
    pub(super) images: bool,
    /// The configured output limit (the API's own when `None`).
    pub(super) max_output_tokens: Option<u32>,
    /// The output limit for APIs that require one: configured, else the model's known one,
    /// else 8,192.
    pub(super) required_output: u32,
    /// Whether it reasons, when configured.
    pub(super) reasoning: Option<bool>,
}

impl ModelLimits {
    /// The limits of `model` as `config` and the built-in table give them.
    pub(super) fn of(config: &ProviderConfig, model: &str) -> Self {
        let known = known_limits(model);
        Self {
            context_window: config.context_window.or(known.map(|k| k.0)),
            images: config.images.unwrap_or(true),
            max_output_tokens: config.max_output_tokens,
            required_output: config
                .max_output_tokens
                .or(known.map(|k| k.1))
                .unwrap_or(8_192),
            reasoning: config.reasoning,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_limits_match_by_prefix_after_the_vendor() {
        assert_eq!(
            known_limits("claude-sonnet-4-5-20250929"),
            Some((200_000, 64_000))
        );
        assert_eq!(
            known_limits("anthropic/claude-sonnet-4.5"),
            Some((200_000, 64_000))
        );
        assert_eq!(known_limits("my-own-model"), None);
    }
}
