//! How far a session's commands are confined: a session's choice that a sandboxing tool (Bash)
//! reads from its call's [`Extensions`](super::Extensions), over its own configured mode.

use serde::{Deserialize, Serialize};

/// How a sandboxing tool confines what it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Writes only in the session's workspace roots and the temporary folders.
    #[default]
    WorkspaceWrite,
    /// No writes but to the session's own temporary folder.
    ReadOnly,
    /// No sandbox.
    Off,
}

impl SandboxMode {
    /// Every mode, strictest last but one (as a menu shows them).
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::WorkspaceWrite,
        SandboxMode::ReadOnly,
        SandboxMode::Off,
    ];

    /// The name settings use (`workspace-write`, `read-only`, `off`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::Off => "off",
        }
    }

    /// What the mode allows, for a menu.
    pub fn description(self) -> &'static str {
        match self {
            SandboxMode::WorkspaceWrite => {
                "Commands write only in the workspace and the temporary folder, without network"
            }
            SandboxMode::ReadOnly => "Commands write nothing and have no network",
            SandboxMode::Off => "Commands run unconfined",
        }
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SandboxMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        SandboxMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
            .ok_or_else(|| {
                format!("`{text}` is not a sandbox mode (workspace-write, read-only or off)")
            })
    }
}
