//! [`ModelChoices`]: the models a front-end offers to switch a session to.

use super::{Model, ModelError};
use std::sync::Arc;

/// The models a front-end's user may switch a session to.
pub trait ModelChoices: Send + Sync {
    /// The models offered, as users write them (`anthropic/claude-sonnet-4-5`, …).
    fn offered(&self) -> Vec<String>;
    /// Opens one of them.
    fn open(&self, spec: &str) -> Result<Arc<dyn Model>, ModelError>;
}
