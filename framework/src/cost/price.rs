//! [`Price`]: what a model's tokens cost, in US dollars per million tokens.

use super::Usage;
use serde::{Deserialize, Serialize};

/// What a model's tokens cost, in US dollars per million tokens: prompt tokens read anew,
/// output tokens, prompt tokens read from the provider's cache and written to it (each of the
/// last two the input price when not given), and a dearer tier for long prompts where the
/// provider has one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million prompt tokens read anew.
    pub input: f64,
    /// Per million output tokens (reasoning included).
    pub output: f64,
    /// Per million prompt tokens read from the cache (the input price when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Per million prompt tokens written to the cache (the input price when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// The prices of a request whose prompt is longer than a threshold, where they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context: Option<LongContextPrice>,
}

/// The prices of a request whose prompt (every prompt token: read anew, from the cache and
/// written to it) is longer than `above_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongContextPrice {
    /// The prompt length past which these prices apply.
    pub above_tokens: u64,
    /// Per million prompt tokens read anew.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million prompt tokens read from the cache (this tier's input price when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Per million prompt tokens written to the cache (this tier's input price when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// Why a price cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the price's `{field}` is {value}: a price is a finite number of dollars, 0 or more")]
pub struct PriceError {
    /// The field at fault (`input`, `long_context.output`, …).
    pub field: String,
    /// Its value.
    pub value: f64,
}

/// The four rates one request is billed at.
struct Rates {
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
}

impl Price {
    /// A price of `input` and `output` dollars per million tokens, cached tokens at the input
    /// price.
    pub fn new(input: f64, output: f64) -> Self {
        Self {
            input,
            output,
            cache_read: None,
            cache_write: None,
            long_context: None,
        }
    }

    /// With cache reads and writes at these prices.
    pub fn with_cache(mut self, read: f64, write: f64) -> Self {
        self.cache_read = Some(read);
        self.cache_write = Some(write);
        self
    }

    /// With this tier for long prompts.
    pub fn with_long_context(mut self, tier: LongContextPrice) -> Self {
        self.long_context = Some(tier);
        self
    }

    /// Whether every figure is a finite number of dollars, 0 or more; an error names the first
    /// that is not.
    pub fn check(&self) -> Result<(), PriceError> {
        let mut fields = vec![
            ("input".to_owned(), Some(self.input)),
            ("output".to_owned(), Some(self.output)),
            ("cache_read".to_owned(), self.cache_read),
            ("cache_write".to_owned(), self.cache_write),
        ];
        if let Some(tier) = &self.long_context {
            fields.extend([
                ("long_context.input".to_owned(), Some(tier.input)),
                ("long_context.output".to_owned(), Some(tier.output)),
                ("long_context.cache_read".to_owned(), tier.cache_read),
                ("long_context.cache_write".to_owned(), tier.cache_write),
            ]);
        }
        match fields.into_iter().find_map(|(field, value)| {
            value
                .filter(|v| !v.is_finite() || *v < 0.0)
                .map(|v| (field, v))
        }) {
            Some((field, value)) => Err(PriceError { field, value }),
            None => Ok(()),
        }
    }

    /// What a request that used `usage` costs, in US dollars.
    pub fn cost_of(&self, usage: &Usage) -> f64 {
        let rates = self.rates_for(usage.prompt_tokens());
        (usage.input_tokens as f64 * rates.input
            + usage.output_tokens as f64 * rates.output
            + usage.cache_read_tokens as f64 * rates.cache_read
            + usage.cache_write_tokens as f64 * rates.cache_write)
            / 1_000_000.0
    }

    /// What a prompt of `tokens` read anew costs, in US dollars: the least a request sending
    /// it costs when nothing of it is cached.
    pub fn prompt_cost(&self, tokens: u64) -> f64 {
        self.cost_of(&Usage {
            input_tokens: tokens,
            ..Usage::default()
        })
    }

    fn rates_for(&self, prompt_tokens: u64) -> Rates {
        match &self.long_context {
            Some(tier) if prompt_tokens > tier.above_tokens => Rates {
                input: tier.input,
                output: tier.output,
                cache_read: tier.cache_read.unwrap_or(tier.input),
                cache_write: tier.cache_write.unwrap_or(tier.input),
            },
            _ => Rates {
                input: self.input,
                output: self.output,
                cache_read: self.cache_read.unwrap_or(self.input),
                cache_write: self.cache_write.unwrap_or(self.input),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }

    #[test]
    fn each_kind_of_token_is_billed_at_its_own_rate() {
        let price = Price::new(3.0, 15.0).with_cache(0.30, 3.75);
        let cost = price.cost_of(&usage(1_000, 500, 20_000, 4_000));
        // 1,000 × 3 + 500 × 15 + 20,000 × 0.30 + 4,000 × 3.75, per million.
        let expected = (3_000.0 + 7_500.0 + 6_000.0 + 15_000.0) / 1e6;
        assert!((cost - expected).abs() < 1e-12, "{cost} against {expected}");
    }

    #[test]
    fn cached_tokens_cost_the_input_price_when_the_cache_has_none() {
        let price = Price::new(2.0, 8.0);
        assert!((price.cost_of(&usage(0, 0, 1_000_000, 0)) - 2.0).abs() < 1e-12);
        assert!((price.cost_of(&usage(0, 0, 0, 1_000_000)) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_prompt_past_the_long_context_threshold_is_billed_at_the_dearer_tier() {
        let price = Price::new(1.25, 10.0).with_long_context(LongContextPrice {
            above_tokens: 200_000,
            input: 2.5,
            output: 15.0,
            cache_read: None,
            cache_write: None,
        });
        let at_threshold = price.cost_of(&usage(200_000, 1_000, 0, 0));
        assert!((at_threshold - (0.25 + 0.01)).abs() < 1e-12);
        // The threshold counts every prompt token, cached ones too.
        let past = price.cost_of(&usage(100_000, 1_000, 100_001, 0));
        let expected = (100_000.0 * 2.5 + 1_000.0 * 15.0 + 100_001.0 * 2.5) / 1e6;
        assert!((past - expected).abs() < 1e-12);
    }

    #[test]
    fn a_negative_or_not_finite_figure_is_refused_by_name() {
        assert_eq!(Price::new(1.0, 2.0).check(), Ok(()));
        let error = Price::new(-1.0, 2.0).check().unwrap_err();
        assert_eq!(error.field, "input");
        let mut price = Price::new(1.0, 2.0);
        price.cache_write = Some(f64::NAN);
        assert_eq!(price.check().unwrap_err().field, "cache_write");
        let tiered = Price::new(1.0, 2.0).with_long_context(LongContextPrice {
            above_tokens: 10,
            input: 1.0,
            output: f64::INFINITY,
            cache_read: None,
            cache_write: None,
        });
        assert_eq!(tiered.check().unwrap_err().field, "long_context.output");
    }

    #[test]
    fn configuration_spells_unknown_fields_as_errors() {
        let parsed: Result<Price, _> = serde_json::from_value(
            serde_json::json!({"input": 1.0, "output": 2.0, "cache_reads": 0.1}),
        );
        assert!(parsed.is_err());
    }
}
