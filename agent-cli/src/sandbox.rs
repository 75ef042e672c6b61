//! The Bash sandbox's settings: the configuration's `sandbox` (a mode's name or a table), with
//! the `--sandbox` flag's mode over it.

use crate::cli::AgentArgs;
use agentry::agent::Agent;
use agentry::tool::{SandboxMode, ToolKind};
use agentry_stock::config::Config;

/// The configuration section of the sandbox (the bash provider's: linked or not, `--sandbox`
/// writes it).
const SECTION: &str = "sandbox";

/// The configuration with `--sandbox MODE` (if given) as its sandbox mode, the table's other
/// settings kept.
pub fn with_flag(config: &Config, mode: Option<&str>) -> Config {
    let mut config = config.clone();
    if let Some(mode) = mode {
        let section = match config.sections.get(SECTION) {
            Some(serde_json::Value::Object(table)) => {
                let mut table = table.clone();
                table.insert("mode".to_owned(), mode.into());
                table.into()
            }
            _ => mode.into(),
        };
        config.sections.set(SECTION, section);
    }
    config
}

/// The sandbox mode sessions start in, which a front-end may let its user change per session;
/// `None` when the agent runs no commands to sandbox (no tool of the `execute` kind, linked or
/// from a plugin).
pub fn session_mode(config: &Config, args: &AgentArgs, agent: &Agent) -> Option<SandboxMode> {
    let runs_commands = agent
        .registry()
        .tools()
        .any(|tool| tool.kind() == ToolKind::Execute);
    let config = with_flag(config, args.sandbox.as_deref());
    runs_commands
        .then(|| SandboxMode::from_setting(config.sections.get(SECTION)).unwrap_or_default())
}
