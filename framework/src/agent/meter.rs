//! [`Meter`]: what a chat and its sub-agents spend, counted as they go and held against the
//! session's budget before each request.

use crate::cost::Spending;
use crate::cost::Usage;
use crate::error::AgentError;
use crate::model::Model;
use crate::sync::lock;
use std::sync::Mutex;

/// The spending of one chat of the main loop and of its sub-agents' chats (which share it),
/// with what the session spent before it, against the session's budget.
pub(crate) struct Meter {
    /// What the session's earlier requests cost, when any was priced.
    before_usd: Option<f64>,
    /// This chat's spending, its sub-agents' included.
    spent: Mutex<Spending>,
    /// The most the session may spend, in US dollars.
    budget_usd: Option<f64>,
}

impl Meter {
    /// A meter for a chat of a session that has spent `before`, under `budget_usd`.
    pub(crate) fn new(before: &Spending, budget_usd: Option<f64>) -> Self {
        Self {
            before_usd: before.cost_usd(),
            spent: Mutex::default(),
            budget_usd,
        }
    }

    /// Counts a request to `model`.
    pub(crate) fn count_request(&self, model: &str) {
        lock(&self.spent).count_request(model);
    }

    /// Counts what a response of `model` used; returns what it cost and what the session has
    /// cost so far (each `None` while unpriced).
    pub(crate) fn record(&self, model: &dyn Model, usage: Usage) -> (Option<f64>, Option<f64>) {
        let cost = model.price().map(|price| price.cost_of(&usage));
        let mut spent = lock(&self.spent);
        spent.add(&model.name(), usage, cost);
        let session = match (self.before_usd, spent.cost_usd()) {
            (Some(before), Some(now)) => Some(before + now),
            (before, now) => before.or(now),
        };
        (cost, session)
    }

    /// This chat's spending so far, its sub-agents' included.
    pub(crate) fn spending(&self) -> Spending {
        lock(&self.spent).clone()
    }

    /// Whether a request of `model` with a prompt of about `prompt_tokens` may be made: `Ok(None)`
    /// when it may, `Ok(Some(why))` when it would take the session past its budget, an error
    /// when the session has a budget and the model no price to keep it with.
    pub(crate) fn refuses(
        &self,
        model: &dyn Model,
        prompt_tokens: u64,
    ) -> Result<Option<String>, AgentError> {
        let Some(budget) = self.budget_usd else {
            return Ok(None);
        };
        let price = model.price().ok_or_else(|| AgentError::Unpriced {
            model: model.name(),
            budget_usd: budget,
        })?;
        let spent = self.before_usd.unwrap_or(0.0) + lock(&self.spent).cost_usd().unwrap_or(0.0);
        let next = price.prompt_cost(prompt_tokens);
        Ok((spent + next > budget).then(|| {
            format!(
                "Stopped at the budget: the session has spent ${spent:.4} of its ${budget:.2}, and the next request \
                 (a prompt of about {prompt_tokens} tokens, at least ${next:.4}) would go past it."
            )
        }))
    }
}

/// A session's side questions (WebFetch's, say) cost money too: they are held to the budget and
/// counted with the chat's requests.
impl crate::model::side::SpendGuard for Meter {
    fn refuses(&self, model: &dyn Model, prompt_tokens: u64) -> Option<String> {
        match Meter::refuses(self, model, prompt_tokens) {
            Ok(why) => why,
            Err(unpriced) => Some(unpriced.to_string()),
        }
    }

    fn spent(&self, model: &dyn Model, usage: Usage) {
        self.count_request(&model.name());
        self.record(model, usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::Price;
    use crate::model::{ModelError, ModelRequest, ModelStream};

    struct PricedModel(Option<Price>);

    #[async_trait::async_trait]
    impl Model for PricedModel {
        fn name(&self) -> String {
            "test/priced".to_owned()
        }
        fn price(&self) -> Option<Price> {
            self.0
        }
        async fn stream(&self, _: ModelRequest) -> Result<ModelStream, ModelError> {
            Err(ModelError::Protocol("not streamed in this test".to_owned()))
        }
    }

    fn input(tokens: u64) -> Usage {
        Usage {
            input_tokens: tokens,
            ..Usage::default()
        }
    }

    #[test]
    fn the_next_request_is_refused_when_it_would_go_past_the_budget() {
        let model = PricedModel(Some(Price::new(10.0, 30.0)));
        let mut before = Spending::default();
        before.add("test/priced", input(50_000), Some(0.5));
        let meter = Meter::new(&before, Some(1.0));
        // 0.5 spent; 40,000 tokens at $10 a million is 0.4: within.
        assert_eq!(meter.refuses(&model, 40_000).unwrap(), None);
        let (cost, session) = meter.record(&model, input(20_000));
        assert_eq!(cost, Some(0.2));
        assert_eq!(session, Some(0.7));
        // 0.7 spent; 40,000 tokens more would make 1.1.
        let why = meter.refuses(&model, 40_000).unwrap().unwrap();
        assert!(why.contains("$0.7000 of its $1.00"), "{why}");
        assert_eq!(meter.refuses(&model, 30_000).unwrap(), None);
    }

    #[test]
    fn a_budget_with_an_unpriced_model_fails_closed_and_no_budget_lets_it_run() {
        let model = PricedModel(None);
        let meter = Meter::new(&Spending::default(), Some(5.0));
        let error = meter.refuses(&model, 10).unwrap_err();
        assert!(error.to_string().contains("test/priced"), "{error}");
        let unbounded = Meter::new(&Spending::default(), None);
        assert_eq!(unbounded.refuses(&model, 10).unwrap(), None);
        assert_eq!(unbounded.record(&model, input(10)), (None, None));
        assert_eq!(unbounded.spending().unpriced_models(), ["test/priced"]);
    }
}
