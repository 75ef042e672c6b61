//! [`CheckedPaths`]: the paths a call's permission was judged for, canonical. A tool that opens
//! files checks that the path it is about to use is one of them, so that a link swapped in
//! after the check cannot lead it elsewhere. They travel to plugins as JSON.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The canonical paths (links and `..` resolved) the call's permission was judged for: its
/// locations as the executor announced them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckedPaths(pub Vec<PathBuf>);

impl CheckedPaths {
    /// The paths offered to the running call, when the host judged it by path.
    pub fn of(ctx: &crate::tool::ToolContext) -> Option<std::sync::Arc<CheckedPaths>> {
        ctx.extensions.get::<CheckedPaths>()
    }

    /// Whether `path` (canonical) is one of those judged.
    pub fn contains(&self, path: &Path) -> bool {
        self.0.iter().any(|checked| checked == path)
    }
}
