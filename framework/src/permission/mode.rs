//! [`PermissionMode`]: how much the agent may do without asking.

use crate::permission::PermissionError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    /// Read-only tools run; everything else asks.
    #[default]
    Default,
    /// File edits run too; commands and other tools ask.
    AcceptEdits,
    /// Only read-only tools run (planning, no changes).
    Plan,
    /// Everything runs without asking (deny rules still apply).
    Bypass,
}

impl PermissionMode {
    /// Every mode.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Bypass,
    ];

    /// The narrower of this mode and `asked`: what a sub-agent that asks for `asked` gets in a
    /// session of this mode, which it never goes past.
    pub fn at_most(self, asked: PermissionMode) -> PermissionMode {
        if asked.reach() <= self.reach() {
            asked
        } else {
            self
        }
    }

    /// How much the mode runs unasked, least first.
    fn reach(self) -> u8 {
        match self {
            PermissionMode::Plan => 0,
            PermissionMode::Default => 1,
            PermissionMode::AcceptEdits => 2,
            PermissionMode::Bypass => 3,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept_edits",
            PermissionMode::Plan => "plan",
            PermissionMode::Bypass => "bypass",
        }
    }

    /// Its name as Claude Code writes it (`default`, `acceptEdits`, `plan`,
    /// `bypassPermissions`): what hooks are given.
    pub fn claude_name(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::Bypass => "bypassPermissions",
        }
    }

    /// Its name for people (a front-end's mode picker).
    pub fn title(self) -> &'static str {
        match self {
            PermissionMode::Default => "Default",
            PermissionMode::AcceptEdits => "Accept edits",
            PermissionMode::Plan => "Plan",
            PermissionMode::Bypass => "Bypass permissions",
        }
    }

    /// What it lets tools do, in a sentence.
    pub fn description(self) -> &'static str {
        match self {
            PermissionMode::Default => "Read-only tools run; edits and commands ask first",
            PermissionMode::AcceptEdits => {
                "File edits in the workspace run without asking; commands still ask"
            }
            PermissionMode::Plan => "Read-only: the agent looks and plans, and changes nothing",
            PermissionMode::Bypass => "Every tool runs without asking",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = PermissionError;

    /// A mode by its name, with `-` for `_`, or by its name in Claude Code's settings
    /// (`acceptEdits`, `bypassPermissions`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let claude = match s {
            "acceptEdits" => Some(PermissionMode::AcceptEdits),
            "bypassPermissions" => Some(PermissionMode::Bypass),
            _ => None,
        };
        claude
            .or_else(|| {
                PermissionMode::ALL
                    .into_iter()
                    .find(|m| m.as_str() == s || m.as_str().replace('_', "-") == s)
            })
            .ok_or_else(|| {
                PermissionError::new(format!(
                    "unknown permission mode `{s}` (expected default, accept_edits, plan or bypass)"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_agentrys_and_claude_codes_spellings() {
        assert_eq!(
            "accept-edits".parse::<PermissionMode>().unwrap(),
            PermissionMode::AcceptEdits
        );
        assert_eq!(
            "acceptEdits".parse::<PermissionMode>().unwrap(),
            PermissionMode::AcceptEdits
        );
        assert_eq!(
            "bypassPermissions".parse::<PermissionMode>().unwrap(),
            PermissionMode::Bypass
        );
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
