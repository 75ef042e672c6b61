//! [`ReadDenials`]: what the session's deny rules keep a search through folders from reading.

use crate::permission::path_pattern::PathPattern;
use std::path::Path;

/// The paths a search must leave out: those the session's deny rules keep from being read.
/// The executor offers it to each call of a tool that reads files (in its context's
/// extensions), so that Grep and Glob skip what `Read(…)` deny rules cover.
#[derive(Debug, Clone, Default)]
pub struct ReadDenials {
    pub(super) patterns: Vec<PathPattern>,
}

impl ReadDenials {
    /// The denials offered to the running call, if any.
    pub fn of(ctx: &crate::tool::ToolContext) -> Option<std::sync::Arc<ReadDenials>> {
        ctx.extensions
            .get::<ReadDenials>()
            .filter(|denials| !denials.is_empty())
    }

    /// Whether there is nothing to leave out.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether a deny rule covers `path` (canonical).
    pub fn covers(&self, path: &Path) -> bool {
        self.patterns.iter().any(|pattern| pattern.matches(path))
    }
}
