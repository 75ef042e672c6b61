//! What a recording of model traffic leaves out: the configuration's `[record] redact`
//! patterns, the values of the environment's secrets (API keys, tokens, passwords), and the
//! system prompt's lines that change with the machine and the day.

use crate::exit::CliError;
use agentry::config::Config;
use agentry::model::record::Redactor;

/// Words in an environment variable's name that mark its value as a secret.
const SECRET_NAMES: [&str; 5] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];

/// The redactor for this configuration and environment.
pub fn redactor(config: &Config) -> Result<Redactor, CliError> {
    let secrets = std::env::vars()
        .filter(|(name, _)| {
            let name = name.to_uppercase();
            SECRET_NAMES.iter().any(|word| name.contains(word))
        })
        .map(|(_, value)| value);
    Ok(Redactor::new(&config.record.redact)
        .map_err(|e| CliError::usage(anyhow::anyhow!("[record] {e}")))?
        .with_secrets(secrets)
        .blank_environment())
}
