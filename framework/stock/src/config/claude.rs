//! Claude Code's settings files (`~/.claude/settings.json`, `.claude/settings.json`,
//! `.claude/settings.local.json`): their permissions, hooks, `enabledPlugins` and
//! `extraKnownMarketplaces` count in agentry unchanged.

use crate::config::rules::{PermissionRules, WrittenRule};
use crate::config::{Config, ConfigError};
use crate::hooks::HookSettings;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The parts of a settings file agentry reads; the rest (`env`, `model`, …) is Claude Code's.
#[derive(Debug, Default, Deserialize)]
struct Settings {
    #[serde(default)]
    permissions: Permissions,
    #[serde(default)]
    hooks: HookSettings,
    #[serde(default, rename = "disableAllHooks")]
    disable_all_hooks: Option<bool>,
    #[serde(default, rename = "enabledPlugins")]
    enabled_plugins: std::collections::BTreeMap<String, bool>,
    #[serde(default, rename = "extraKnownMarketplaces")]
    extra_marketplaces: std::collections::BTreeMap<String, serde_json::Value>,
}

/// A settings file's `permissions`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Permissions {
    #[serde(default)]
    allow: Vec<WrittenRule>,
    #[serde(default)]
    deny: Vec<WrittenRule>,
    #[serde(default)]
    ask: Vec<WrittenRule>,
    default_mode: Option<String>,
    #[serde(default)]
    additional_directories: Vec<PathBuf>,
}

/// The user's settings file, `~/.claude/settings.json`.
pub fn user_settings_file() -> Option<PathBuf> {
    dirs::home_dir().map(|home| home.join(".claude").join("settings.json"))
}

/// The project's settings files, in the order they are laid over each other: the shared one,
/// then the local one.
pub fn project_settings_files(project_dir: &Path) -> [PathBuf; 2] {
    let project = project_dir.join(".claude");
    [
        project.join("settings.json"),
        project.join("settings.local.json"),
    ]
}

/// One settings file as a configuration layer (its permission mode, rules and hooks); `None`
/// when there is no such file.
pub fn read(path: &Path) -> Result<Option<Config>, ConfigError> {
    let Some(text) = super::read_text(path)? else {
        return Ok(None);
    };
    let settings: Settings = serde_json::from_str(&text).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let Permissions {
        allow,
        deny,
        ask,
        default_mode,
        additional_directories,
    } = settings.permissions;
    let permissions = PermissionRules {
        allow,
        deny,
        ask,
        additional_directories,
    };
    Ok(Some(Config {
        permission_mode: default_mode,
        permissions: permissions.from_file(path),
        hooks: settings.hooks.located(path, None),
        disable_all_hooks: settings.disable_all_hooks,
        enabled_plugins: settings.enabled_plugins,
        extra_marketplaces: settings.extra_marketplaces,
        ..Config::default()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::permission::{PermissionMode, RuleAction};

    #[test]
    fn a_settings_file_gives_its_permissions_and_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude/settings.json");
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        std::fs::write(
            &file,
            r#"{"model": "opus", "env": {"A": "b"},
                "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"],
                    "ask": ["WebFetch"], "defaultMode": "acceptEdits",
                    "additionalDirectories": ["../docs"]},
                "hooks": {"PreToolUse": [{"matcher": "Bash",
                    "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}]}]}}"#,
        )
        .unwrap();
        let config = read(&file).unwrap().unwrap();
        let policy = config.policy(dir.path(), None, &[], &[]).unwrap();
        assert_eq!(policy.mode, PermissionMode::AcceptEdits);
        let written: Vec<_> = policy
            .rules
            .iter()
            .map(|rule| (rule.action, rule.target.to_string()))
            .collect();
        assert_eq!(
            written,
            [
                (RuleAction::Deny, "Read(./.env)".to_owned()),
                (RuleAction::Ask, "WebFetch".to_owned()),
                (RuleAction::Allow, "Bash(npm test:*)".to_owned()),
            ]
        );
        assert_eq!(policy.rules[0].origin.file.as_deref(), Some(file.as_path()));
        assert_eq!(policy.rules[0].origin.root.as_deref(), Some(dir.path()));
        assert_eq!(policy.additional_directories, [dir.path().join("../docs")]);
        assert_eq!(
            config.hooks.groups("PreToolUse")[0].hooks[0].timeout(),
            Some(5)
        );
        assert!(read(&dir.path().join("missing.json")).unwrap().is_none());
        std::fs::write(&file, "{not json").unwrap();
        let error = read(&file).unwrap_err().to_string();
        assert!(error.contains("settings.json"), "{error}");
    }
}
