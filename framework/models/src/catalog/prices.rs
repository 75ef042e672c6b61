//! The price table: what the models the catalog knows cost on their makers' own APIs, in US
//! dollars per million tokens, each entry with the page it was read from and when. A
//! configuration's `[providers.NAME.models."MODEL"] price` takes the place of an entry or
//! adds one; a model in neither is unpriced (counted in tokens, never at zero dollars).
//!
//! The clouds that resell these models (Bedrock, Vertex AI, Azure) list the same prices for
//! their global endpoints; a regional endpoint or a negotiated rate that differs is for the
//! configuration to say.

use agentry::cost::{LongContextPrice, Price};
use serde::Serialize;

/// One entry of the price table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ListedPrice {
    /// The model id it is for, as its maker names it (`claude-sonnet-4-5`); its dated and
    /// versioned ids (`claude-sonnet-4-5-20250929`, `…@20250929`, `…-v1:0`) too.
    pub model: &'static str,
    /// The price.
    pub price: Price,
    /// Where it was read.
    pub source: &'static str,
    /// When: the date the source gives, or the day it was read.
    pub as_of: &'static str,
}

const ANTHROPIC: &str = "https://platform.claude.com/docs/en/about-claude/pricing";
const ANTHROPIC_READ: &str = "read 2026-11-28";
const OPENAI: &str = "https://platform.openai.com/docs/pricing";
const OPENAI_MODELS: &str = "https://developers.openai.com/api/docs/models";
const GEMINI: &str = "https://ai.google.dev/gemini-api/docs/pricing";
const DEEPSEEK: &str = "https://api-docs.deepseek.com/quick_start/pricing";
const XAI: &str = "https://docs.x.ai/docs/models";
const NOVA: &str =
    "https://aws.amazon.com/bedrock/pricing/ (AWS Price List API, us-east-1, on demand)";

/// Anthropic's price: a 5-minute cache write costs 1.25 times the input, a cache read a tenth.
const fn anthropic(model: &'static str, input: f64, output: f64) -> ListedPrice {
    ListedPrice {
        model,
        price: Price {
            input,
            output,
            cache_read: Some(input / 10.0),
            cache_write: Some(input * 1.25),
            long_context: None,
        },
        source: ANTHROPIC,
        as_of: ANTHROPIC_READ,
    }
}

/// Sonnet 4 and 4.5 with the 1M-token window: a prompt over 200,000 tokens costs 6 and 22.50
/// (the cache's multipliers applied to the dearer input).
const fn sonnet_4(model: &'static str) -> ListedPrice {
    let mut listed = anthropic(model, 3.0, 15.0);
    listed.price.long_context = Some(LongContextPrice {
        above_tokens: 200_000,
        input: 6.0,
        output: 22.5,
        cache_read: Some(0.6),
        cache_write: Some(7.5),
    });
    listed
}

/// A price whose cached input has a price of its own and whose cache writes cost nothing
/// apart (OpenAI's, Google's, DeepSeek's, xAI's, Amazon's).
const fn cached(
    model: &'static str,
    input: f64,
    cache_read: f64,
    output: f64,
    source: &'static str,
    as_of: &'static str,
) -> ListedPrice {
    ListedPrice {
        model,
        price: Price {
            input,
            output,
            cache_read: Some(cache_read),
            cache_write: Some(input),
            long_context: None,
        },
        source,
        as_of,
    }
}

/// The table. A model id finds the entry whose `model` is the longest that it is, or that it
/// starts with followed by a date or version only.
#[rustfmt::skip]
pub const PRICES: &[ListedPrice] = &[
    anthropic("claude-opus-4-5", 5.0, 25.0),
    anthropic("claude-opus-4-1", 15.0, 75.0),
    anthropic("claude-opus-4", 15.0, 75.0),
    sonnet_4("claude-sonnet-4-5"),
    sonnet_4("claude-sonnet-4"),
    anthropic("claude-3-7-sonnet", 3.0, 15.0),
    anthropic("claude-haiku-4-5", 1.0, 5.0),
    anthropic("claude-3-5-haiku", 0.8, 4.0),
    anthropic("claude-3-haiku", 0.25, 1.25),
    cached("gpt-5", 1.25, 0.125, 10.0, OPENAI, "2025-08-07"),
    cached("gpt-5-mini", 0.25, 0.025, 2.0, OPENAI_MODELS, "read 2026-11-28"),
    cached("gpt-5-nano", 0.05, 0.005, 0.4, OPENAI_MODELS, "read 2026-11-28"),
    cached("gpt-4.1", 2.0, 0.5, 8.0, OPENAI, "2025-08-07"),
    cached("gpt-4.1-mini", 0.4, 0.1, 1.6, OPENAI, "2025-08-07"),
    cached("gpt-4.1-nano", 0.1, 0.025, 0.4, OPENAI_MODELS, "read 2026-11-28"),
    cached("gpt-4o", 2.5, 1.25, 10.0, OPENAI, "2025-08-07"),
    cached("gpt-4o-mini", 0.15, 0.075, 0.6, OPENAI, "2025-08-07"),
    cached("o3", 2.0, 0.5, 8.0, OPENAI, "2025-08-07"),
    cached("o4-mini", 1.1, 0.275, 4.4, OPENAI, "2025-08-07"),
    ListedPrice {
        model: "gemini-2.5-pro",
        price: Price {
            input: 1.25,
            output: 10.0,
            cache_read: Some(0.31),
            cache_write: Some(1.25),
            long_context: Some(LongContextPrice {
                above_tokens: 200_000,
                input: 2.5,
                output: 15.0,
                cache_read: Some(0.625),
                cache_write: Some(2.5),
            }),
        },
        source: GEMINI,
        as_of: "2025-06 (general availability)",
    },
    cached("gemini-2.5-flash", 0.3, 0.075, 2.5, GEMINI, "2025-06 (general availability)"),
    cached("gemini-2.5-flash-lite", 0.1, 0.025, 0.4, GEMINI, "2025-06 (general availability)"),
    cached("deepseek-chat", 0.56, 0.07, 1.68, DEEPSEEK, "2025-09-05"),
    cached("deepseek-reasoner", 0.56, 0.07, 1.68, DEEPSEEK, "2025-09-05"),
    cached("grok-4", 3.0, 0.75, 15.0, XAI, "read 2026-11-28"),
    cached("grok-3", 3.0, 0.75, 15.0, XAI, "2025-06-02"),
    cached("grok-3-mini", 0.3, 0.075, 0.5, XAI, "2025-06-02"),
    cached("nova-micro", 0.035, 0.00875, 0.14, NOVA, "2026-09-01"),
    cached("nova-lite", 0.06, 0.015, 0.24, NOVA, "2026-09-01"),
    cached("nova-pro", 0.8, 0.2, 3.2, NOVA, "2026-09-01"),
    cached("nova-premier", 2.5, 0.625, 12.5, NOVA, "2026-09-01"),
];

/// The table's entry for a model id (`claude-sonnet-4-5-20250929`, Bedrock's
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, Vertex AI's `claude-sonnet-4-5@20250929`,
/// `openai/gpt-4.1` as OpenRouter writes it), if it has one.
pub fn listed_price(model: &str) -> Option<&'static ListedPrice> {
    let id = super::limits::bare_id(model);
    PRICES
        .iter()
        .filter(|listed| id.strip_prefix(listed.model).is_some_and(is_version_tail))
        .max_by_key(|listed| listed.model.len())
}

/// Whether what follows a model's name only dates or versions it: nothing, `-latest`, a date
/// (`-20250929`, `-2025-04-14`, `-0709`), `@…` (Vertex AI), `:…` or `-v1:0` (Bedrock) — not a
/// variant of its own (`-mini`, `-4-6`, `-lite`), which has a price of its own.
fn is_version_tail(tail: &str) -> bool {
    if tail.is_empty() || tail == "-latest" || tail.starts_with(['@', ':']) {
        return true;
    }
    let Some(rest) = tail.strip_prefix('-') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let after = &rest[digits..];
    if digits >= 4 {
        return after.is_empty() || after.starts_with(['-', '@', ':']);
    }
    rest.strip_prefix('v')
        .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced(model: &str) -> Option<(f64, f64)> {
        listed_price(model).map(|listed| (listed.price.input, listed.price.output))
    }

    #[test]
    fn dated_and_versioned_ids_find_their_model_and_variants_do_not_borrow_its_price() {
        assert_eq!(priced("claude-sonnet-4-5"), Some((3.0, 15.0)));
        assert_eq!(priced("claude-sonnet-4-5-20250929"), Some((3.0, 15.0)));
        assert_eq!(priced("claude-sonnet-4-5@20250929"), Some((3.0, 15.0)));
        assert_eq!(
            priced("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some((3.0, 15.0))
        );
        assert_eq!(priced("amazon.nova-pro-v1:0"), Some((0.8, 3.2)));
        assert_eq!(priced("claude-3-5-haiku-latest"), Some((0.8, 4.0)));
        assert_eq!(priced("gpt-4.1-2025-04-14"), Some((2.0, 8.0)));
        assert_eq!(priced("gpt-4.1-mini"), Some((0.4, 1.6)));
        assert_eq!(priced("openai/gpt-4o-mini"), Some((0.15, 0.6)));
        assert_eq!(priced("grok-4-0709"), Some((3.0, 15.0)));
        assert_eq!(priced("claude-opus-4-1-20250805"), Some((15.0, 75.0)));
        assert_eq!(priced("claude-opus-4-5"), Some((5.0, 25.0)));
        // A later model of the same family, a variant, a model nobody priced: none.
        assert_eq!(priced("claude-opus-4-6"), None);
        assert_eq!(priced("gpt-4.1-turbo"), None);
        assert_eq!(priced("gemini-2.5-flash-preview-09-2025"), None);
        assert_eq!(priced("qwen3"), None);
        assert_eq!(priced("gpt-5-chat"), None);
    }

    #[test]
    fn every_entry_is_a_price_with_its_source_and_date() {
        for listed in PRICES {
            assert_eq!(listed.price.check(), Ok(()), "{}", listed.model);
            assert!(listed.source.starts_with("https://"), "{}", listed.model);
            assert!(!listed.as_of.is_empty(), "{}", listed.model);
            assert_eq!(
                listed_price(listed.model).map(|found| found.model),
                Some(listed.model),
                "each entry is found by its own id"
            );
        }
    }
}
