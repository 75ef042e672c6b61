//! `agentry plugins`: native tool plugins — install from a crate, a folder, a library or a URL;
//! list, update and remove them; write a new one. The work is `agentry_stock::tool_plugins`'.

use crate::cli::{PluginsArgs, PluginsCommand};
use crate::exit::{CliError, Exit};
use agentry_plugin::terminal_text::visible;
use agentry_stock::tool_plugins::{
    InstallError, InstallOptions, Installed, InstalledPlugin, Requested, ToolPlugins, Updated,
    template,
};
use serde_json::{Value, json};
use std::path::PathBuf;

/// Runs an `agentry plugins` subcommand.
pub async fn plugins(args: PluginsArgs) -> Result<Exit, CliError> {
    let project = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&project)?;
    let store = ToolPlugins::new(&config.data_folder());
    match args.command {
        PluginsCommand::Install {
            source,
            version,
            sha256,
            debug,
            locked,
        } => {
            let requested = Requested::parse(&source, version.as_deref(), sha256.as_deref())
                .map_err(refused)?;
            let installed = store
                .install(requested, InstallOptions { debug, locked })
                .await
                .map_err(refused)?;
            say_installed(&installed);
        }
        PluginsCommand::List { json } => list(&store, json)?,
        PluginsCommand::Update { names } => update(&store, names).await?,
        PluginsCommand::Remove { name } => {
            let removed = store.remove(&name).map_err(refused)?;
            println!(
                "Removed {} {}",
                visible(&removed.name),
                visible(&removed.version)
            );
        }
        PluginsCommand::New { name, path } => {
            let folder = path.unwrap_or_else(|| PathBuf::from(&name));
            template::write(&folder, &name).map_err(refused)?;
            println!(
                "Wrote the plugin crate {name} in {}: `cargo test` tests its tool, `agentry plugins install {}` installs it",
                folder.display(),
                path_argument(&folder)
            );
        }
    }
    Ok(Exit::EndTurn)
}

/// An install error as a usage error (the message says what to do).
fn refused(error: InstallError) -> CliError {
    CliError::usage(anyhow::Error::new(error))
}

/// `folder` as `plugins install` reads it as a path (a bare name would be a crate's).
fn path_argument(folder: &std::path::Path) -> String {
    let shown = folder.display().to_string();
    if folder.is_absolute() || shown.starts_with('.') {
        shown
    } else {
        format!("./{shown}")
    }
}

fn say_installed(installed: &Installed) {
    let plugin = &installed.plugin;
    let replaced = match &installed.replaced {
        Some(old) if old.source == plugin.source && old.sha256 == plugin.sha256 => {
            ", again".to_owned()
        }
        Some(old) if old.version != plugin.version => {
            format!(", in place of {}", visible(&old.version))
        }
        Some(old) => format!(
            ", in place of the build from {}",
            visible(&old.source.to_string())
        ),
        None => String::new(),
    };
    println!(
        "Installed {} {} (plugin ABI {}, for agentry {}) from {}{replaced}: its tools are offered from the next start (`agentry providers` lists them)",
        visible(&plugin.name),
        visible(&plugin.version),
        plugin.abi,
        visible(&plugin.agentry),
        visible(&plugin.source.to_string())
    );
}

/// Whether the installed file is still the one installed.
fn intact(plugin: &InstalledPlugin) -> bool {
    agentry_stock::tool_plugins::file_sha256(&plugin.file).is_ok_and(|sha| sha == plugin.sha256)
}

fn list(store: &ToolPlugins, as_json: bool) -> Result<(), CliError> {
    let installed = store.installed().map_err(refused)?;
    if as_json {
        let rows: Vec<Value> = installed
            .iter()
            .map(|plugin| {
                let mut row = serde_json::to_value(plugin).unwrap_or(Value::Null);
                row["intact"] = json!(intact(plugin));
                row
            })
            .collect();
        println!("{}", Value::Array(rows));
        return Ok(());
    }
    if installed.is_empty() {
        println!(
            "No tool plugin is installed: `agentry plugins install SOURCE` installs one (a crate, a folder, a library or an https URL)"
        );
    }
    for plugin in &installed {
        let changed = if intact(plugin) {
            ""
        } else {
            "  (the file changed since it was installed: install it again)"
        };
        println!(
            "{} {}  ABI {}  {}{changed}",
            visible(&plugin.name),
            visible(&plugin.version),
            plugin.abi,
            visible(&plugin.source.to_string())
        );
    }
    Ok(())
}

async fn update(store: &ToolPlugins, names: Vec<String>) -> Result<(), CliError> {
    let names = if names.is_empty() {
        let installed = store.installed().map_err(refused)?;
        installed.into_iter().map(|plugin| plugin.name).collect()
    } else {
        names
    };
    let mut failed = 0;
    for name in names {
        match store.update(&name, InstallOptions::default()).await {
            Ok(Updated::UpToDate(plugin)) => {
                println!(
                    "{} {} is up to date",
                    visible(&plugin.name),
                    visible(&plugin.version)
                );
            }
            Ok(Updated::Installed(installed)) => say_installed(&installed),
            Err(error) => {
                eprintln!(
                    "agentry: {} was not updated: {}",
                    visible(&name),
                    visible(&error.to_string())
                );
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "{failed} plugin(s) could not be updated (see above)"
        )));
    }
    Ok(())
}
