//! `agentry models`: the model providers, where each is reached, and whether its credentials
//! are found; with `--prices`, what their models cost.

use crate::cli::ModelsArgs;
use crate::exit::{CliError, Exit};
use agentry::cost::Price;
use agentry_models::catalog::{CredentialsFound, PRICES};
use agentry_stock::config::Config;

/// Lists the model providers, as text or JSON.
pub fn list(args: &ModelsArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    if args.prices {
        return prices(&config, args.json);
    }
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

/// One price as `agentry models --prices` shows it.
#[derive(agentry::serde::Serialize)]
#[serde(crate = "agentry::serde")]
struct PriceRow {
    /// `PROVIDER/MODEL` for a configured price, the model id for the table's.
    model: String,
    price: Price,
    /// `configuration`, or the page the table's entry was read from.
    source: String,
    /// When the table's entry was read (none for a configured price).
    #[serde(skip_serializing_if = "Option::is_none")]
    as_of: Option<&'static str>,
}

/// Lists the configured prices, then the table's.
fn prices(config: &Config, json: bool) -> Result<Exit, CliError> {
    let mut rows: Vec<PriceRow> = Vec::new();
    for (provider, settings) in &config.providers {
        for (model, model_settings) in &settings.models {
            if let Some(price) = model_settings.price {
                rows.push(PriceRow {
                    model: format!("{provider}/{model}"),
                    price,
                    source: "configuration".to_owned(),
                    as_of: None,
                });
            }
        }
    }
    rows.extend(PRICES.iter().map(|listed| PriceRow {
        model: listed.model.to_owned(),
        price: listed.price,
        source: listed.source.to_owned(),
        as_of: Some(listed.as_of),
    }));
    if json {
        let json = serde_json::to_string_pretty(&rows).map_err(CliError::internal)?;
        println!("{json}");
        return Ok(Exit::EndTurn);
    }
    println!(
        "US dollars per million tokens: input, output, cache read, cache write. The table's \
         prices are those of the models' makers (and of the clouds that list the same); \
         set your own with [providers.NAME.models.\"MODEL\"] price = {{ input = …, output = … }}."
    );
    let width = rows.iter().map(|row| row.model.len()).max().unwrap_or(0);
    for row in &rows {
        let price = &row.price;
        let mut line = format!(
            "{:width$}  {}",
            row.model,
            rates(
                price.input,
                price.output,
                price.cache_read,
                price.cache_write
            )
        );
        if let Some(tier) = &price.long_context {
            line.push_str(&format!(
                "  (prompts over {} tokens: {})",
                tier.above_tokens,
                rates(tier.input, tier.output, tier.cache_read, tier.cache_write)
            ));
        }
        line.push_str(&format!("  {}", row.source));
        if let Some(as_of) = row.as_of {
            line.push_str(&format!(", {as_of}"));
        }
        println!("{line}");
    }
    Ok(Exit::EndTurn)
}

/// Input, output, cache-read and cache-write prices (cached tokens at the input price when
/// not given), each per million tokens to a hundredth of a cent (Amazon's smallest are given
/// so).
fn rates(input: f64, output: f64, cache_read: Option<f64>, cache_write: Option<f64>) -> String {
    [
        input,
        output,
        cache_read.unwrap_or(input),
        cache_write.unwrap_or(input),
    ]
    .map(|dollars| format!("{dollars:>9.4}"))
    .join("  ")
}
