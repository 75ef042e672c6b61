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

impl SandboxMode {
    /// The mode a configuration's `sandbox` setting chooses: a mode's name, or a table's
    /// `mode` (the default when absent).
    pub fn from_setting(setting: Option<&serde_json::Value>) -> Result<Self, String> {
        let named = match setting {
            None => None,
            Some(serde_json::Value::Object(table)) => table.get("mode"),
            Some(other) => Some(other),
        };
        match named {
            None => Ok(Self::default()),
            Some(serde_json::Value::String(name)) => name.parse(),
            Some(other) => Err(format!("sandbox: {other} is not a mode's name")),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_setting_names_a_mode_alone_or_in_a_table_and_a_wrong_one_says_so() {
        let mode = |setting: serde_json::Value| SandboxMode::from_setting(Some(&setting));
        assert_eq!(
            SandboxMode::from_setting(None),
            Ok(SandboxMode::WorkspaceWrite)
        );
        assert_eq!(mode(json!("read-only")), Ok(SandboxMode::ReadOnly));
        assert_eq!(
            mode(json!({"mode": "off", "network": true})),
            Ok(SandboxMode::Off)
        );
        assert_eq!(
            mode(json!({"network": true})),
            Ok(SandboxMode::WorkspaceWrite)
        );
        assert!(
            mode(json!("loose"))
                .unwrap_err()
                .contains("`loose` is not a sandbox mode")
        );
        assert!(
            mode(json!({"mode": 3}))
                .unwrap_err()
                .contains("not a mode's name")
        );
    }
}
