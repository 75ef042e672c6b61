//! The Bash sandbox's settings: the configuration's `sandbox` (a mode's name or a table), with
//! the `--sandbox` flag's mode over it.

use crate::cli::AgentArgs;
use crate::exit::CliError;
use agentry::config::Config;
use agentry::tool::SandboxMode;

/// The configuration with `--sandbox MODE` (if given) as its sandbox mode, the table's other
/// settings kept.
pub fn with_flag(config: &Config, mode: Option<&str>) -> Config {
    let mut config = config.clone();
    if let Some(mode) = mode {
        config.sandbox = Some(match config.sandbox.take() {
            Some(serde_json::Value::Object(mut table)) => {
                table.insert("mode".to_owned(), mode.into());
                table.into()
            }
            _ => mode.into(),
        });
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

/// Fails on a `sandbox` setting the bash provider cannot read: a sandbox is not to be
/// weakened by a typing mistake.
#[cfg(feature = "bash")]
pub fn check(config: &Config) -> Result<(), CliError> {
    settings(config)
        .map(drop)
        .map_err(|e| CliError::usage(anyhow::anyhow!(e)))
}

/// This build has no Bash: the setting is not read.
#[cfg(not(feature = "bash"))]
pub fn check(_config: &Config) -> Result<(), CliError> {
    Ok(())
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
    match &config.sandbox {
        Some(value) => agentry_bash::SandboxSettings::from_value(value.clone()),
        None => Ok(agentry_bash::SandboxSettings::default()),
    }
}
