//! The plugins that count for a configuration: those installed and turned on (the settings
//! files' `enabledPlugins` over what `agentry plugin enable`/`disable` recorded), read from
//! their copies; and what they bring — their hooks after the settings' own, their MCP servers
//! beside the configured ones (named `plugin_PLUGIN_SERVER`, so their tools are
//! `mcp__plugin_PLUGIN_SERVER__TOOL`, as in Claude Code), their sub-agents and skills for the
//! providers (named `PLUGIN:NAME`), their slash commands.

use super::commands::PluginCommand;
use super::{InstalledPlugin, PluginContents, PluginStore};
use crate::config::Config;
use agentry::commands::SlashCommand;
use agentry_plugin::settings::PluginBundle;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The enabled plugins of a configuration.
#[derive(Debug, Default)]
pub struct EnabledPlugins {
    /// Each plugin, with what it brings.
    pub plugins: Vec<(InstalledPlugin, PluginContents)>,
    /// What the user should know: a plugin that could not be read, one the settings ask for
    /// that is not installed.
    pub notices: Vec<String>,
}

impl EnabledPlugins {
    /// The plugins `config` turns on, from the store in its data folder.
    pub fn of(config: &Config) -> Self {
        let store = PluginStore::new(&config.data_folder());
        let mut enabled = Self::default();
        let installed = match store.plugins() {
            Ok(installed) => installed,
            Err(error) => {
                enabled
                    .notices
                    .push(format!("the installed plugins cannot be read: {error}"));
                return enabled;
            }
        };
        for (id, on) in &config.enabled_plugins {
            if *on && !installed.contains_key(id) {
                enabled.notices.push(format!(
                    "the settings turn on the plugin `{id}`, which is not installed: install it with `agentry plugin install {id}`"
                ));
            }
        }
        for (id, plugin) in installed {
            let on = config
                .enabled_plugins
                .get(&id)
                .copied()
                .unwrap_or(plugin.enabled);
            if !on {
                continue;
            }
            match PluginContents::read(&plugin.path, &plugin.name) {
                Ok(contents) => enabled.plugins.push((plugin, contents)),
                Err(error) => enabled
                    .notices
                    .push(format!("the plugin `{id}` is left out: {error}")),
            }
        }
        enabled
    }

    /// `config` with what the plugins bring: their hooks, their MCP servers.
    pub fn applied_to(&self, config: &Config) -> Config {
        let mut config = config.clone();
        let mut servers: Map<String, Value> = match config.sections.get(MCP_SERVERS) {
            Some(Value::Object(servers)) => servers.clone(),
            _ => Map::new(),
        };
        for (plugin, contents) in &self.plugins {
            config.hooks = config.hooks.clone().merged(contents.hooks.clone());
            for (name, server) in &contents.mcp_servers {
                servers.insert(format!("plugin_{}_{name}", plugin.name), server.clone());
            }
        }
        if !servers.is_empty() {
            config.sections.set(MCP_SERVERS, Value::Object(servers));
        }
        config.plugin_bundles = self
            .plugins
            .iter()
            .map(|(plugin, contents)| PluginBundle {
                name: plugin.name.clone(),
                root: contents.root.clone(),
                agents: contents.agents.clone(),
                skills: contents.skills.clone(),
            })
            .collect();
        config
    }

    /// The plugins' slash commands (named after the plugin where two share a name), with the
    /// files that could not be read.
    pub fn commands(&self) -> (Vec<Arc<dyn SlashCommand>>, Vec<String>) {
        let mut commands: Vec<Arc<dyn SlashCommand>> = Vec::new();
        let mut problems = Vec::new();
        for (plugin, contents) in &self.plugins {
            for file in &contents.commands {
                match PluginCommand::read(file, &plugin.name) {
                    Ok(command) => {
                        for problem in command.problems() {
                            problems.push(format!(
                                "the plugin command `{}:{}`: {problem}",
                                plugin.name,
                                command.name()
                            ));
                        }
                        commands.push(Arc::new(command));
                    }
                    Err(error) => problems.push(format!("plugin command not loaded: {error}")),
                }
            }
        }
        (commands, problems)
    }
}

/// The configuration's section of MCP servers.
const MCP_SERVERS: &str = "mcp_servers";
