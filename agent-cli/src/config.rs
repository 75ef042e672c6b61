//! The configuration a command runs with.

use crate::exit::CliError;
use agentry_stock::config::Config;
use std::path::Path;

/// The configuration of `project` (the user's, then the project's as far as the folder is
/// trusted: [`crate::trust`]), the stock providers' sections checked; keys no provider reads
/// are found when the providers are loaded (a plugin may read them:
/// [`crate::providers::Available::check_sections`]).
pub fn load_config(project: &Path) -> Result<Config, CliError> {
    let config = crate::trust::load(project)?;
    crate::sections::check(&config)?;
    Ok(config)
}

/// The user's agentry configuration folder (`~/.config/agentry`), where their prompts,
/// plugins, sub-agents and skills live.
pub fn user_config_folder() -> Option<std::path::PathBuf> {
    dirs::config_dir().map(|dir| dir.join("agentry"))
}
