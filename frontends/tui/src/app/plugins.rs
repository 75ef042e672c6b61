//! `/plugin`: Claude Code plugins from the terminal, as `agentry plugin` does them — list,
//! install (what the plugin brings shown first; one that runs code installed only with
//! `--yes` after it was shown), uninstall, enable, disable, and the marketplaces (add, list,
//! update, remove). Changes count from the next session (`/clear`).

use super::App;
use agentry_stock::claude_plugins::{PluginContents, PluginStore, StoreError};

/// How `/plugin` is used.
const USAGE: &str = "/plugin [list] · /plugin install NAME@MARKETPLACE [--yes] · /plugin uninstall|enable|disable NAME@MARKETPLACE · /plugin marketplace add SOURCE|list|update [NAME]|remove NAME";

impl App {
    /// Runs `/plugin REST` (the store's work, which may clone repositories, off the screen's
    /// thread) and shows what it says.
    pub(super) async fn plugin(&mut self, rest: &str) {
        let store = PluginStore::new(&self.settings.data_folder);
        let words: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
        match tokio::task::spawn_blocking(move || run(&store, &words)).await {
            Ok(Ok(lines)) => {
                for line in lines {
                    self.note_dim(&line);
                }
            }
            Ok(Err(message)) => self.note_error(&message),
            Err(error) => self.note_error(&error.to_string()),
        }
    }
}

/// Does `/plugin WORDS`: the lines to show, or what went wrong.
fn run(store: &PluginStore, words: &[String]) -> Result<Vec<String>, String> {
    let word = |at: usize| words.get(at).map(String::as_str);
    let said = |result: Result<Vec<String>, StoreError>| result.map_err(|e| e.to_string());
    match (word(0), word(1)) {
        (None | Some("list"), _) => said(installed(store)),
        (Some("install"), Some(id)) => said(install(store, id, words.iter().any(|w| w == "--yes"))),
        (Some("uninstall" | "remove"), Some(id)) => said(
            store
                .uninstall(id)
                .map(|p| vec![format!("Uninstalled {}", p.id())]),
        ),
        (Some("enable"), Some(id)) => said(store.set_enabled(id, true).map(|p| {
            vec![format!(
                "Enabled {}: it counts from the next session (/clear)",
                p.id()
            )]
        })),
        (Some("disable"), Some(id)) => said(store.set_enabled(id, false).map(|p| {
            vec![format!(
                "Disabled {}: from the next session (/clear)",
                p.id()
            )]
        })),
        (Some("marketplace"), action) => said(marketplace(store, action, word(2))),
        _ => Err(format!("usage: {USAGE}")),
    }
}

/// The installed plugins, a line each.
fn installed(store: &PluginStore) -> Result<Vec<String>, StoreError> {
    let plugins = store.plugins()?;
    if plugins.is_empty() {
        return Ok(vec!["No plugins installed: /plugin marketplace add SOURCE, then /plugin install NAME@MARKETPLACE".to_owned()]);
    }
    Ok(plugins
        .into_values()
        .map(|plugin| {
            let state = if plugin.enabled { "on" } else { "off" };
            format!("{} {} · {state}", plugin.id(), plugin.version)
        })
        .collect())
}

/// Installs `id` when it runs no code, or when `yes` says the user saw what it brings.
fn install(store: &PluginStore, id: &str, yes: bool) -> Result<Vec<String>, StoreError> {
    let staged = store.stage(id)?;
    let mut lines = inventory(id, &staged.contents);
    if staged.contents.runs_code() && !yes {
        lines.push(format!(
            "It runs code: /plugin install {id} --yes installs it."
        ));
        return Ok(lines);
    }
    let plugin = store.install(staged)?;
    lines.push(format!(
        "Installed {} {}: it counts from the next session (/clear)",
        plugin.id(),
        plugin.version
    ));
    Ok(lines)
}

/// What a plugin brings.
fn inventory(id: &str, contents: &PluginContents) -> Vec<String> {
    std::iter::once(id.to_owned())
        .chain(
            contents
                .inventory()
                .into_iter()
                .map(|line| format!("  {line}")),
        )
        .collect()
}

/// `/plugin marketplace ACTION NAME`.
fn marketplace(
    store: &PluginStore,
    action: Option<&str>,
    name: Option<&str>,
) -> Result<Vec<String>, StoreError> {
    match (action, name) {
        (Some("add"), Some(source)) => {
            let added = store.add_marketplace(source)?;
            Ok(vec![format!(
                "Added the marketplace {} ({} plugins)",
                added.name,
                added.plugins.len()
            )])
        }
        (Some("remove" | "rm"), Some(name)) => {
            let uninstalled = store.remove_marketplace(name)?;
            Ok(std::iter::once(format!("Removed the marketplace {name}"))
                .chain(
                    uninstalled
                        .into_iter()
                        .map(|id| format!("Uninstalled {id}")),
                )
                .collect())
        }
        (Some("update"), name) => {
            let names: Vec<String> = match name {
                Some(name) => vec![name.to_owned()],
                None => store.marketplaces()?.into_keys().collect(),
            };
            names
                .iter()
                .map(|name| {
                    store.update_marketplace(name).map(|catalog| {
                        format!(
                            "Updated {} ({} plugins)",
                            catalog.name,
                            catalog.plugins.len()
                        )
                    })
                })
                .collect()
        }
        (None | Some("list"), _) => {
            let mut lines = Vec::new();
            for name in store.marketplaces()?.into_keys() {
                let catalog = store.marketplace(&name)?;
                lines.push(name);
                lines.extend(catalog.plugins.iter().map(|plugin| {
                    format!(
                        "  {}  {}",
                        plugin.name,
                        plugin.description.clone().unwrap_or_default()
                    )
                }));
            }
            if lines.is_empty() {
                lines.push("No marketplaces: /plugin marketplace add SOURCE".to_owned());
            }
            Ok(lines)
        }
        _ => Err(StoreError::Refused(format!("usage: {USAGE}"))),
    }
}
