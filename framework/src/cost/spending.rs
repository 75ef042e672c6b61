//! [`Spending`]: the tokens and dollars of a chat's or a session's model requests, by model.

use super::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one model's requests used and cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelSpending {
    /// The tokens of its requests.
    #[serde(flatten)]
    pub usage: Usage,
    /// How many requests went to it.
    pub requests: u32,
    /// What they cost, in US dollars; `None` when the model has no price (its tokens are
    /// counted, their cost is not known).
    pub cost_usd: Option<f64>,
}

/// The tokens and dollars of model requests, by model name (`anthropic/claude-sonnet-4-5`).
/// Serialized as a map from the model's name to its [`ModelSpending`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Spending {
    by_model: BTreeMap<String, ModelSpending>,
}

impl Spending {
    /// Counts one request to `model`.
    pub fn count_request(&mut self, model: &str) {
        self.entry(model).requests += 1;
    }

    /// Adds what a response of `model` used, and what it cost (`None`: unpriced).
    pub fn add(&mut self, model: &str, usage: Usage, cost_usd: Option<f64>) {
        let entry = self.entry(model);
        entry.usage += usage;
        entry.cost_usd = match (entry.cost_usd, cost_usd) {
            (Some(spent), Some(cost)) => Some(spent + cost),
            (spent, cost) => spent.or(cost),
        };
    }

    /// Adds all of `other`.
    pub fn merge(&mut self, other: &Spending) {
        for (model, spent) in &other.by_model {
            let entry = self.entry(model);
            entry.requests += spent.requests;
            entry.usage += spent.usage;
            entry.cost_usd = match (entry.cost_usd, spent.cost_usd) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
    }

    /// Each model's spending, by name.
    pub fn by_model(&self) -> &BTreeMap<String, ModelSpending> {
        &self.by_model
    }

    /// Every token, whatever the model.
    pub fn usage(&self) -> Usage {
        let mut total = Usage::default();
        for spent in self.by_model.values() {
            total += spent.usage;
        }
        total
    }

    /// What the priced requests cost, in US dollars; `None` when none was priced.
    pub fn cost_usd(&self) -> Option<f64> {
        self.by_model
            .values()
            .filter_map(|spent| spent.cost_usd)
            .reduce(|a, b| a + b)
    }

    /// The models that answered without a price: their tokens are counted, their cost is not.
    pub fn unpriced_models(&self) -> Vec<&str> {
        self.by_model
            .iter()
            .filter(|(_, spent)| spent.cost_usd.is_none())
            .map(|(model, _)| model.as_str())
            .collect()
    }

    /// Whether no request was counted.
    pub fn is_empty(&self) -> bool {
        self.by_model.is_empty()
    }

    fn entry(&mut self, model: &str) -> &mut ModelSpending {
        self.by_model.entry(model.to_owned()).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn an_unpriced_model_is_counted_in_tokens_and_never_at_zero_dollars() {
        let mut spending = Spending::default();
        spending.count_request("local/qwen3");
        spending.add("local/qwen3", tokens(100, 10), None);
        assert_eq!(spending.cost_usd(), None);
        assert_eq!(spending.unpriced_models(), ["local/qwen3"]);
        spending.count_request("anthropic/claude-sonnet-4");
        spending.add(
            "anthropic/claude-sonnet-4",
            tokens(1_000, 100),
            Some(0.0045),
        );
        assert_eq!(spending.cost_usd(), Some(0.0045));
        assert_eq!(spending.unpriced_models(), ["local/qwen3"]);
        assert_eq!(spending.usage(), tokens(1_100, 110));
        let json = serde_json::to_value(&spending).unwrap();
        assert_eq!(json["local/qwen3"]["cost_usd"], serde_json::Value::Null);
        assert_eq!(json["local/qwen3"]["input_tokens"], 100);
        assert_eq!(json["anthropic/claude-sonnet-4"]["requests"], 1);
        assert_eq!(serde_json::from_value::<Spending>(json).unwrap(), spending);
    }

    #[test]
    fn merged_spending_adds_up() {
        let mut chat = Spending::default();
        chat.count_request("m");
        chat.add("m", tokens(10, 1), Some(0.5));
        let mut session = chat.clone();
        session.merge(&chat);
        assert_eq!(session.by_model()["m"].requests, 2);
        assert_eq!(session.cost_usd(), Some(1.0));
        assert_eq!(session.usage(), tokens(20, 2));
    }
}
