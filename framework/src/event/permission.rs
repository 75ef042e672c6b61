//! The answers to a permission question, as data: the kinds of option offered and the
//! outcome the transcript records.

use serde::{Deserialize, Serialize};

/// The kinds of answer a permission request offers, as ACP's `PermissionOptionKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    /// Allow this call.
    AllowOnce,
    /// Allow this call and every later call of the tool in this session.
    AllowAlways,
    /// Reject this call.
    RejectOnce,
    /// Reject this call and every later call of the tool in this session.
    RejectAlways,
}

impl PermissionOptionKind {
    /// Whether the answer lets the call run.
    pub fn allows(self) -> bool {
        matches!(
            self,
            PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
        )
    }

    /// The wire name, also used as the option's id.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionOptionKind::AllowOnce => "allow_once",
            PermissionOptionKind::AllowAlways => "allow_always",
            PermissionOptionKind::RejectOnce => "reject_once",
            PermissionOptionKind::RejectAlways => "reject_always",
        }
    }
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// The user picked an option.
    Selected {
        /// The option's kind.
        kind: PermissionOptionKind,
    },
    /// The turn was cancelled while asking.
    Cancelled,
    /// Nobody could be asked (a headless run): the call does not run, and nothing is
    /// remembered.
    Unanswered,
}
