//! What a session's model requests use and cost: their [`Usage`] in tokens, a model's
//! [`Price`], and the [`Spending`] of a chat or a session by model. The budget a session may
//! not go past is the agent's
//! ([`AgentConfig::max_budget_usd`](crate::agent::AgentConfig::max_budget_usd)).
//!
//! A model tells its price with [`Model::price`](crate::model::Model::price); one without a
//! price is counted in tokens and said to be unpriced, never priced at zero.

mod price;
mod spending;
mod usage;

pub use price::{LongContextPrice, Price, PriceError};
pub use spending::{ModelSpending, Spending};
pub use usage::Usage;
