//! `agentry commands`: the slash commands a prompt can start with — the prompt templates, the
//! enabled plugins' commands, the skills and the prompts of the configured MCP servers.

use crate::cli::CommandsArgs;
use crate::exit::{CliError, Exit};
use crate::providers::ServerStart;
use agentry::commands::SlashCommands;
use serde_json::json;

/// Lists the slash commands, as text or JSON.
pub async fn list(args: &CommandsArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let (config, enabled) = crate::enabled_plugins::with_plugins(&config);
    let plugins = crate::providers::plugin_paths(&config, &args.plugin, &project);
    let available =
        crate::providers::available(&config, &plugins, &project, ServerStart::Wait).await;
    available.check_sections()?;
    available.check_named_plugins()?;
    let sources: Vec<_> = [
        crate::assemble::prompt_templates(&project),
        crate::enabled_plugins::plugin_commands(&enabled),
    ]
    .into_iter()
    .chain(available.providers.iter().filter_map(|p| p.commands()))
    .collect();
    let commands = SlashCommands::from_sources(&sources);
    let rows: Vec<serde_json::Value> = commands
        .iter()
        .map(|(name, command)| {
            let origin = match (command.kind_label(), command.origin()) {
                (Some(kind), _) => kind.to_owned(),
                (None, Some(server)) => format!("MCP server {server}"),
                (None, None) => "prompt template".to_owned(),
            };
            json!({
                "name": name,
                "description": command.description(),
                "arguments": command.arguments().iter()
                    .map(|a| json!({"name": a.name, "required": a.required}))
                    .collect::<Vec<_>>(),
                "hint": SlashCommands::hint(command),
                "origin": origin,
            })
        })
        .collect();
    if args.json {
        println!("{}", serde_json::Value::Array(rows));
        return Ok(Exit::EndTurn);
    }
    if rows.is_empty() {
        println!(
            "No slash commands: add prompt templates to .agentry/prompts/ or MCP servers with prompts."
        );
    }
    for row in &rows {
        let usage = match row["hint"].as_str() {
            Some(hint) => format!("/{} {hint}", row["name"].as_str().unwrap_or_default()),
            None => format!("/{}", row["name"].as_str().unwrap_or_default()),
        };
        println!(
            "{usage:<30} {} ({})",
            row["description"].as_str().unwrap_or_default(),
            row["origin"].as_str().unwrap_or_default()
        );
    }
    Ok(Exit::EndTurn)
}
