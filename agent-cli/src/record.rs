//! What a recording of model traffic leaves out: the configuration's `[record] redact`
//! patterns, the values of the environment's secrets (API keys, tokens, passwords), and the
//! system prompt's lines that change with the machine and the day.

use crate::exit::CliError;
use agentry::model::record::Redactor;
use agentry_stock::config::Config;

/// Words in an environment variable's name that mark its value as a secret (a name holding
/// one is redacted whole: `PGPASSWORD`, `MY_AUTH`, `SESSION_COOKIE`).
const SECRET_WORDS: [&str; 15] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "SIGNATURE",
    "CERT",
    "DSN",
    "WEBHOOK",
    "CONNECTION_STRING",
    "DATABASE_URL",
];

/// Whether the environment variable `name` holds a secret by its name: a secret word in it, or
/// `SK` as a word of it (`AWS_SK`, `SK_LIVE`).
fn is_secret_name(name: &str) -> bool {
    let name = name.to_uppercase();
    SECRET_WORDS.iter().any(|word| name.contains(word)) || name.split('_').any(|word| word == "SK")
}

/// The redactor for this configuration and environment.
pub fn redactor(config: &Config) -> Result<Redactor, CliError> {
    let secrets = std::env::vars()
        .filter(|(name, _)| is_secret_name(name))
        .map(|(_, value)| value);
    Ok(Redactor::new(&config.record.redact)
        .map_err(|e| CliError::usage(anyhow::anyhow!("[record] {e}")))?
        .with_secrets(secrets)
        .blank_environment())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_found_in_their_common_spellings() {
        for secret in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "PASSWD",
            "PGPASSWORD",
            "DB_PASS",
            "AUTH",
            "BASIC_AUTH",
            "STRIPE_SK",
            "SK_LIVE",
            "aws_secret_access_key",
            "SENTRY_DSN",
            "DATABASE_URL",
            "SESSION_COOKIE",
            "SSH_PRIVATE",
        ] {
            assert!(is_secret_name(secret), "{secret}");
        }
        for plain in ["PWD", "OLDPWD", "HOME", "PATH", "LANG", "TASK", "DESK_SIZE"] {
            assert!(!is_secret_name(plain), "{plain}");
        }
    }
}
