//! `agentry models`: the model providers, where each is reached, and whether its credentials
//! are found.

use crate::cli::ModelsArgs;
use crate::exit::{CliError, Exit};
use agentry_models::catalog::CredentialsFound;

/// Lists the model providers, as text or JSON.
pub fn list(args: &ModelsArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let providers = config.model_providers();
    if args.json {
        let json = serde_json::to_string_pretty(&providers).map_err(CliError::internal)?;
        println!("{json}");
        return Ok(Exit::EndTurn);
    }
    let width = providers.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for provider in &providers {
        let credentials = match &provider.credentials {
            CredentialsFound::NotNeeded => "no credentials needed".to_owned(),
            CredentialsFound::Found { from } => format!("credentials from {from}"),
            CredentialsFound::Missing { looked_for } => format!("no credentials: {looked_for}"),
        };
        println!(
            "{:width$}  {:16}  {}\n{:width$}  {:16}  {credentials}",
            provider.name, provider.api, provider.endpoint, "", ""
        );
    }
    Ok(Exit::EndTurn)
}
