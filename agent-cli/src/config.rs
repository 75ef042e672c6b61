//! Configuration: `~/.config/agentry/config.toml`, then `.agentry/config.toml` in the project,
//! then flags. Later layers override single values and extend lists.

use agentry::model::catalog::ProviderConfig;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One configuration file (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The model (`PROVIDER/MODEL` or `scripted:PATH`).
    pub model: Option<String>,
    /// The permission mode.
    pub permission_mode: Option<String>,
    /// The most model requests per turn.
    pub max_turn_requests: Option<u32>,
    /// Where the session database lives.
    pub data_dir: Option<PathBuf>,
    /// Permission rules.
    #[serde(default)]
    pub permissions: PermissionRules,
    /// Model providers of one's own, or overrides of the built-in ones, by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Which tool providers and tools the agent gets.
    #[serde(default)]
    pub tools: ToolSelection,
    /// Plugin libraries to load.
    #[serde(default)]
    pub plugins: Vec<PathBuf>,
    /// Models an editor may switch a session to (`PROVIDER/MODEL`), besides the default one.
    #[serde(default)]
    pub models: Vec<String>,
    /// MCP servers whose tools the agent gets, by name (the project's `.mcp.json` adds more).
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
    /// How agentry treats MCP servers (`[mcp]`).
    #[serde(default)]
    pub mcp: McpSettings,
}

/// `[mcp]`: timeouts for MCP servers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSettings {
    /// Seconds a server has to start and list its tools (30 by default).
    pub startup_timeout_secs: Option<u64>,
    /// Seconds a tool call may go without an answer or a progress notification (120 by
    /// default).
    pub tool_timeout_secs: Option<u64>,
}

impl McpSettings {
    /// The MCP provider's options with these settings.
    #[cfg(feature = "mcp")]
    pub fn options(&self) -> agentry_mcp::McpOptions {
        let defaults = agentry_mcp::McpOptions::default();
        let seconds = std::time::Duration::from_secs;
        agentry_mcp::McpOptions {
            startup_timeout: self
                .startup_timeout_secs
                .map_or(defaults.startup_timeout, seconds),
            tool_timeout: self
                .tool_timeout_secs
                .map_or(defaults.tool_timeout, seconds),
            ..defaults
        }
    }
}

/// One `[mcp_servers.NAME]` table.
#[cfg(feature = "mcp")]
pub type McpServerEntry = agentry_mcp::McpServerConfig;
/// One `[mcp_servers.NAME]` table (kept unread: this build has no MCP provider).
#[cfg(not(feature = "mcp"))]
pub type McpServerEntry = toml::Value;

/// The `[tools]` table: tool providers and tools to leave out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSelection {
    /// Providers left out (`bash`, `file_ops`, …).
    #[serde(default)]
    pub disabled_providers: Vec<String>,
    /// Tools left out, by name (`Write`, `Bash`, …).
    #[serde(default)]
    pub disabled: Vec<String>,
}

/// Permission rules as written in configuration.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionRules {
    /// Rules that allow.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules that deny.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Rules that ask.
    #[serde(default)]
    pub ask: Vec<String>,
}

impl Config {
    /// Lays `other` over `self`.
    pub fn merge(mut self, other: Config) -> Config {
        self.model = other.model.or(self.model);
        self.permission_mode = other.permission_mode.or(self.permission_mode);
        self.max_turn_requests = other.max_turn_requests.or(self.max_turn_requests);
        self.data_dir = other.data_dir.or(self.data_dir);
        self.permissions.allow.extend(other.permissions.allow);
        self.permissions.deny.extend(other.permissions.deny);
        self.permissions.ask.extend(other.permissions.ask);
        self.providers.extend(other.providers);
        self.tools
            .disabled_providers
            .extend(other.tools.disabled_providers);
        self.tools.disabled.extend(other.tools.disabled);
        self.plugins.extend(other.plugins);
        self.models.extend(other.models);
        self.mcp_servers.extend(other.mcp_servers);
        self.mcp.startup_timeout_secs = other
            .mcp
            .startup_timeout_secs
            .or(self.mcp.startup_timeout_secs);
        self.mcp.tool_timeout_secs = other.mcp.tool_timeout_secs.or(self.mcp.tool_timeout_secs);
        self
    }

    /// The user's and the project's configuration, merged.
    pub fn load(project_dir: &Path) -> Result<Config> {
        let user = dirs::config_dir().map(|dir| dir.join("agentry").join("config.toml"));
        let project = project_dir.join(".agentry").join("config.toml");
        let mut config = Config::default();
        for path in user.into_iter().chain([project]) {
            if let Some(layer) = Self::read(&path)? {
                config = config.merge(layer);
            }
        }
        Ok(config)
    }

    fn read(path: &Path) -> Result<Option<Config>> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        toml::from_str(&text)
            .map(Some)
            .with_context(|| format!("invalid configuration in {}", path.display()))
    }
}

/// Where the session database lives: the configured data directory, else the default.
pub fn database_path(config: &Config) -> PathBuf {
    match &config.data_dir {
        Some(dir) => dir.join("sessions.db"),
        None => agentry::session::default_database_path(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_layers_override_values_and_extend_lists() {
        let user: Config = toml::from_str(
            "model = \"a\"\nmax_turn_requests = 5\n[permissions]\nallow = [\"Read\"]",
        )
        .unwrap();
        let project: Config =
            toml::from_str("model = \"b\"\n[permissions]\nallow = [\"Write\"]\ndeny = [\"Bash\"]")
                .unwrap();
        let merged = user.merge(project);
        assert_eq!(merged.model.as_deref(), Some("b"));
        assert_eq!(merged.max_turn_requests, Some(5));
        assert_eq!(merged.permissions.allow, ["Read", "Write"]);
        assert_eq!(merged.permissions.deny, ["Bash"]);
    }

    #[cfg(feature = "mcp")]
    #[test]
    fn mcp_timeouts_layer_and_fill_the_options() {
        let user: Config = toml::from_str(
            "[mcp]
startup_timeout_secs = 5
tool_timeout_secs = 600",
        )
        .unwrap();
        let project: Config = toml::from_str(
            "[mcp]
tool_timeout_secs = 30",
        )
        .unwrap();
        let options = user.merge(project).mcp.options();
        assert_eq!(options.startup_timeout, std::time::Duration::from_secs(5));
        assert_eq!(options.tool_timeout, std::time::Duration::from_secs(30));
        let defaults = Config::default().mcp.options();
        assert_eq!(defaults.tool_timeout, std::time::Duration::from_secs(120));
    }

    #[test]
    fn unknown_keys_are_errors_that_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agentry")).unwrap();
        std::fs::write(dir.path().join(".agentry/config.toml"), "modle = \"x\"").unwrap();
        let error = format!(
            "{:#}",
            Config::read(&dir.path().join(".agentry/config.toml")).unwrap_err()
        );
        assert!(error.contains(".agentry/config.toml"), "{error}");
        assert!(error.contains("modle"), "{error}");
    }
}
