//! The enabled Claude Code plugins as every command that builds an agent, or lists its parts,
//! takes them up: the configuration with what they bring, and their slash commands; what of
//! them could not be loaded is said on standard error.

use agentry::commands::{CommandList, CommandSource};
use agentry_stock::claude_plugins::EnabledPlugins;
use agentry_stock::config::Config;
use std::sync::Arc;

/// The configuration with what the enabled Claude Code plugins bring (their hooks, MCP servers,
/// sub-agents and skills), and the plugins; what of them could not be loaded is said on
/// standard error.
pub fn with_plugins(config: &Config) -> (Config, EnabledPlugins) {
    let plugins = EnabledPlugins::of(config);
    for notice in &plugins.notices {
        eprintln!(
            "agentry: warning: {}",
            agentry_plugin::terminal_text::visible(notice)
        );
    }
    (plugins.applied_to(config), plugins)
}

/// The enabled plugins' slash commands (the files that could not be read said on standard
/// error).
pub fn plugin_commands(plugins: &EnabledPlugins) -> Arc<dyn CommandSource> {
    let (commands, problems) = plugins.commands();
    for problem in problems {
        eprintln!(
            "agentry: warning: {}",
            agentry_plugin::terminal_text::visible(&problem)
        );
    }
    Arc::new(CommandList::new(commands))
}
