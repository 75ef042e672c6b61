//! `agentry plugin`: Claude Code's marketplaces and plugins — add, list, update and remove
//! marketplaces; install (showing what a plugin brings, asking before one that runs code),
//! uninstall, enable, disable and list plugins. The work is `agentry_stock::claude_plugins`'.

use crate::cli::{MarketplaceCommand, PluginArgs, PluginCommand};
use crate::exit::{CliError, Exit};
use agentry_plugin::terminal_text::visible;
use agentry_stock::claude_plugins::{EnabledPlugins, PluginContents, PluginStore, StoreError};
use agentry_stock::config::Config;
use serde_json::{Value, json};
use std::io::{BufRead, IsTerminal, Write};

/// Runs an `agentry plugin` subcommand.
pub fn plugin(args: PluginArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let store = PluginStore::new(&config.data_folder());
    match args.command {
        PluginCommand::Marketplace { command } => marketplace(&store, command),
        PluginCommand::Install { plugin, yes } => install(&store, &config, &plugin, yes),
        PluginCommand::Uninstall { plugin } => {
            let removed = store.uninstall(&plugin).map_err(refused)?;
            println!("Uninstalled {}", removed.id());
            Ok(Exit::EndTurn)
        }
        PluginCommand::Enable { plugin } => switch(&store, &plugin, true),
        PluginCommand::Disable { plugin } => switch(&store, &plugin, false),
        PluginCommand::List { json } => list(&store, &config, json),
    }
}

/// A store error as a usage error (the message says what to do).
fn refused(error: StoreError) -> CliError {
    CliError::usage(anyhow::Error::new(error))
}

fn marketplace(store: &PluginStore, command: MarketplaceCommand) -> Result<Exit, CliError> {
    match command {
        MarketplaceCommand::Add { source } => {
            let added = store.add_marketplace(&source).map_err(refused)?;
            println!(
                "Added the marketplace {} ({} plugins): install one with `agentry plugin install NAME@{}`",
                added.name,
                added.plugins.len(),
                added.name
            );
        }
        MarketplaceCommand::List { json } => {
            let known = store.marketplaces().map_err(refused)?;
            let mut listed = Vec::new();
            for (name, marketplace) in known {
                let plugins: Vec<Value> = match store.marketplace(&name) {
                    Ok(catalog) => catalog
                        .plugins
                        .iter()
                        .map(|p| json!({"name": p.name, "description": p.description, "version": p.version}))
                        .collect(),
                    Err(_) => Vec::new(),
                };
                listed.push(json!({"name": name, "source": marketplace.source,
                    "location": marketplace.root, "plugins": plugins}));
            }
            if json {
                println!("{}", Value::Array(listed));
            } else if listed.is_empty() {
                println!("no marketplaces (add one with `agentry plugin marketplace add SOURCE`)");
            } else {
                for marketplace in listed {
                    println!(
                        "{}  ({})",
                        marketplace["name"].as_str().unwrap_or_default(),
                        marketplace["source"].as_str().unwrap_or_default()
                    );
                    for plugin in marketplace["plugins"].as_array().into_iter().flatten() {
                        println!(
                            "  {}  {}",
                            plugin["name"].as_str().unwrap_or_default(),
                            plugin["description"].as_str().unwrap_or_default()
                        );
                    }
                }
            }
        }
        MarketplaceCommand::Update { name } => {
            let names: Vec<String> = match name {
                Some(name) => vec![name],
                None => store.marketplaces().map_err(refused)?.into_keys().collect(),
            };
            for name in names {
                let catalog = store.update_marketplace(&name).map_err(refused)?;
                println!(
                    "Updated {} ({} plugins)",
                    catalog.name,
                    catalog.plugins.len()
                );
            }
        }
        MarketplaceCommand::Remove { name } => {
            let uninstalled = store.remove_marketplace(&name).map_err(refused)?;
            println!("Removed the marketplace {name}");
            for id in uninstalled {
                println!("Uninstalled {id}");
            }
        }
    }
    Ok(Exit::EndTurn)
}

/// Installs `id`: adds its marketplace first when only the settings name it, shows what it
/// brings, and asks before one that runs code (`--yes` answers for a run without a terminal).
fn install(store: &PluginStore, config: &Config, id: &str, yes: bool) -> Result<Exit, CliError> {
    if let Some((_, marketplace)) = id.split_once('@')
        && !store
            .marketplaces()
            .map_err(refused)?
            .contains_key(marketplace)
        && let Some(declared) = config.extra_marketplaces.get(marketplace)
    {
        let source = declared_source(declared).ok_or_else(|| {
            CliError::usage(anyhow::anyhow!(
                "the settings name the marketplace `{marketplace}` with a source agentry cannot add: {declared}"
            ))
        })?;
        store.add_marketplace(&source).map_err(refused)?;
    }
    let staged = store.stage(id).map_err(refused)?;
    print_inventory(id, &staged.contents);
    if staged.contents.runs_code() && !yes && !agreed()? {
        return Err(CliError::usage(anyhow::anyhow!(
            "{id} runs code (hooks, MCP servers, or commands' shell lines and the tools they allow) and was not installed: answer yes when asked, or pass --yes"
        )));
    }
    let installed = store.install(staged).map_err(refused)?;
    println!(
        "Installed {} {}{}",
        installed.id(),
        installed.version,
        installed
            .commit
            .as_ref()
            .map(|commit| format!(" (commit {commit})"))
            .unwrap_or_default()
    );
    Ok(Exit::EndTurn)
}

/// What a plugin brings, for the user to see before it is installed.
fn print_inventory(id: &str, contents: &PluginContents) {
    println!(
        "{id}{}",
        contents
            .description
            .as_ref()
            .map(|d| format!(": {}", visible(d)))
            .unwrap_or_default()
    );
    for line in contents.inventory() {
        println!("  {line}");
    }
}

/// Whether the user, asked at the terminal, agrees to install a plugin that runs code; no
/// without a terminal.
fn agreed() -> Result<bool, CliError> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    print!("It runs code on this machine. Install it? [y/N] ");
    std::io::stdout().flush().map_err(CliError::internal)?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(CliError::internal)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// What `marketplace add` is given for a marketplace the settings declare
/// (`{"source": {"source": "github", "repo"}}`, `git`/`url` with `url`, `directory` with `path`).
fn declared_source(declared: &Value) -> Option<String> {
    let source = declared.get("source")?;
    let text = |key: &str| source.get(key).and_then(Value::as_str);
    let reference = text("ref").map(|r| format!("#{r}")).unwrap_or_default();
    match text("source")? {
        "github" => Some(format!(
            "https://github.com/{}.git{reference}",
            text("repo")?
        )),
        "git" | "url" => Some(format!("{}{reference}", text("url")?)),
        "directory" => text("path").map(str::to_owned),
        _ => None,
    }
}

fn switch(store: &PluginStore, id: &str, on: bool) -> Result<Exit, CliError> {
    let plugin = store.set_enabled(id, on).map_err(refused)?;
    println!(
        "{} {}",
        if on { "Enabled" } else { "Disabled" },
        plugin.id()
    );
    Ok(Exit::EndTurn)
}

/// The installed plugins, whether each is on here, and what it brings.
fn list(store: &PluginStore, config: &Config, json: bool) -> Result<Exit, CliError> {
    let enabled = EnabledPlugins::of(config);
    let on: Vec<String> = enabled
        .plugins
        .iter()
        .map(|(plugin, _)| plugin.id())
        .collect();
    let mut listed = Vec::new();
    for (id, plugin) in store.plugins().map_err(refused)? {
        let contents = PluginContents::read(&plugin.path, &plugin.name).ok();
        listed.push(json!({
            "id": id, "version": plugin.version, "commit": plugin.commit, "path": plugin.path,
            "enabled": on.contains(&id),
            "contents": contents.map(|c| c.inventory()).unwrap_or_default(),
        }));
    }
    if json {
        println!("{}", json!({"plugins": listed, "notices": enabled.notices}));
        return Ok(Exit::EndTurn);
    }
    if listed.is_empty() {
        println!("no plugins installed");
    }
    for plugin in &listed {
        println!(
            "{} {}  {}",
            plugin["id"].as_str().unwrap_or_default(),
            plugin["version"].as_str().unwrap_or_default(),
            if plugin["enabled"] == true {
                "on"
            } else {
                "off"
            }
        );
        for line in plugin["contents"].as_array().into_iter().flatten() {
            println!("  {}", line.as_str().unwrap_or_default());
        }
    }
    for notice in enabled.notices {
        println!("note: {notice}");
    }
    Ok(Exit::EndTurn)
}
