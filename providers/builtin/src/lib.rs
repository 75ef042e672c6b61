//! # agentry-builtin
//!
//! Tools that need nothing outside the agent. **TodoWrite** keeps the agent's task list (the
//! same shape Claude Code's has): each call replaces the whole list, and front-ends show it as
//! the plan (ACP's `plan` update, the WebSocket protocol's plan patch).
//!
//! ```
//! use agentry::prelude::*;
//! use agentry_builtin::Builtin;
//!
//! let builder = Agent::builder().provider(Builtin);
//! # let _ = builder;
//! ```

mod todo;

pub use todo::{Todo, TodoStatus, TodoWrite, TodoWriteInput};

use agentry::provider::Provider;
use agentry::tool::{DynTool, erase};
use std::sync::Arc;

/// The `builtin` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct Builtin;

impl Provider for Builtin {
    fn name(&self) -> &str {
        "builtin"
    }

    fn description(&self) -> String {
        "The agent's own tools: its task list.".to_owned()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        vec![erase(TodoWrite)]
    }
}
