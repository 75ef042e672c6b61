//! The Bash sandbox's settings: the configuration's `sandbox` (a mode's name or a table), with
//! the `--sandbox` flag's mode over it.

use crate::cli::AgentArgs;
use agentry::config::Config;
use agentry::tool::SandboxMode;

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
/// `None` when this build has no Bash to sandbox.
pub fn session_mode(config: &Config, args: &AgentArgs) -> Option<SandboxMode> {
    #[cfg(feature = "bash")]
    {
        Some(
            settings(&with_flag(config, args.sandbox.as_deref()))
                .unwrap_or_default()
                .mode,
        )
    }
    #[cfg(not(feature = "bash"))]
    {
        let _ = (config, args);
        None
    }
}

/// The shell tools' configuration: their default limits and the configured sandbox (checked
/// when the configuration was loaded).
#[cfg(feature = "bash")]
pub fn shell_config(config: &Config) -> agentry_bash::ShellConfig {
    agentry_bash::ShellConfig {
        sandbox: settings(config).unwrap_or_default(),
        ..agentry_bash::ShellConfig::default()
    }
}

#[cfg(feature = "bash")]
fn settings(config: &Config) -> Result<agentry_bash::SandboxSettings, String> {
    agentry_bash::SandboxSettings::from_section(config.sections.get(SECTION))
}
