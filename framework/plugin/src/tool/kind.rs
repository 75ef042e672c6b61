//! [`ToolKind`]: the category of a tool, with exactly the values of ACP's `ToolKind`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What kind of thing a tool does. Front-ends pick icons from it; the executor derives the default
/// permission and the concurrency of a call from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolKind {
    /// Reads files or data.
    Read,
    /// Modifies files or content.
    Edit,
    /// Removes files or data.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches for information.
    Search,
    /// Runs commands or code.
    Execute,
    /// Internal reasoning or planning.
    Think,
    /// Retrieves external data.
    Fetch,
    /// Switches the session's mode.
    SwitchMode,
    /// Anything else.
    Other,
}

impl ToolKind {
    /// Every kind, in ACP's order.
    pub const ALL: [ToolKind; 10] = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Delete,
        ToolKind::Move,
        ToolKind::Search,
        ToolKind::Execute,
        ToolKind::Think,
        ToolKind::Fetch,
        ToolKind::SwitchMode,
        ToolKind::Other,
    ];

    /// Whether calls of this kind only observe the world. Read-only calls are the only ones
    /// allowed in plan mode and may run concurrently with each other; all but fetch calls need
    /// no permission by default ([`runs_unasked`](Self::runs_unasked)).
    pub fn is_read_only(self) -> bool {
        matches!(
            self,
            ToolKind::Read | ToolKind::Search | ToolKind::Think | ToolKind::Fetch
        )
    }

    /// Whether calls of this kind run without asking in the default mode: those that only
    /// observe this machine. Fetch calls are read-only but send requests out (a URL can carry
    /// data away), so they are asked about unless a rule allows them (`WebFetch(domain:…)`).
    pub fn runs_unasked(self) -> bool {
        self.is_read_only() && self != ToolKind::Fetch
    }

    /// Whether calls of this kind change files (what `accept_edits` mode allows without asking).
    pub fn is_file_edit(self) -> bool {
        matches!(self, ToolKind::Edit | ToolKind::Delete | ToolKind::Move)
    }

    /// The wire name (`"switch_mode"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::SwitchMode => "switch_mode",
            ToolKind::Other => "other",
        }
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a string that names no [`ToolKind`].
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown tool kind `{0}` (expected one of read, edit, delete, move, search, execute, think, fetch, switch_mode, other)"
)]
pub struct UnknownToolKind(pub String);

impl FromStr for ToolKind {
    type Err = UnknownToolKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownToolKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip_through_serde_and_from_str() {
        for kind in ToolKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.as_str().to_owned()));
            assert_eq!(kind.as_str().parse::<ToolKind>().unwrap(), kind);
        }
        assert!("write".parse::<ToolKind>().is_err());
    }

    #[test]
    fn only_observing_kinds_are_read_only() {
        let read_only: Vec<_> = ToolKind::ALL
            .into_iter()
            .filter(|k| k.is_read_only())
            .collect();
        assert_eq!(
            read_only,
            [
                ToolKind::Read,
                ToolKind::Search,
                ToolKind::Think,
                ToolKind::Fetch
            ]
        );
    }
}
