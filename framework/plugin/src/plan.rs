//! The agent's plan, as ACP's `plan` update carries it (a planning tool reports one).

use serde::{Deserialize, Serialize};

/// One entry of the agent's plan, as ACP's `PlanEntry`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanEntry {
    /// What the step is.
    pub content: String,
    /// How much it matters.
    pub priority: PlanPriority,
    /// Where it stands.
    pub status: PlanStatus,
}

/// A plan entry's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    /// High.
    High,
    /// Medium.
    Medium,
    /// Low.
    Low,
}

/// A plan entry's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}
