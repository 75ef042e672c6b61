//! The tool providers this binary links (one cargo feature each), the configuration's choice
//! among them, and `agentry providers` / `agentry tools`.

use crate::cli::ProvidersArgs;
use crate::exit::{CliError, Exit};
use agentry::provider::{Provider, ProviderOrigin, ProviderStatus, ToolRegistry};
use agentry::session_servers::SessionServers;
use agentry::settings::Settings;
use agentry_plugin::terminal_text::visible;
use agentry_plugin_host::PluginProvider;
use agentry_stock::config::{Config, ToolSelection};
use agentry_stock::tool_plugins::ToolPlugins;
use anyhow::anyhow;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A plugin library to load.
#[derive(Debug, Clone)]
pub struct PluginPath {
    /// The library.
    pub path: PathBuf,
    /// Whether the user named it with `--plugin` (then failing to load it is an error, not a
    /// warning).
    pub named: bool,
}

/// The plugin libraries to load: `--plugin` flags, `plugins` in configuration, every library in
/// `~/.config/agentry/plugins/` and `.agentry/plugins/` of the project, and the tool plugins
/// installed with `agentry plugins install`.
pub fn plugin_paths(config: &Config, flags: &[PathBuf], project: &Path) -> Vec<PluginPath> {
    // A project's own plugins load only in a folder the user trusts.
    let project_plugins = config
        .project_trusted
        .then(|| project.join(".agentry").join("plugins"));
    let folders = crate::config::user_config_folder()
        .map(|dir| dir.join("plugins"))
        .into_iter()
        .chain(project_plugins);
    let named = flags.iter().map(|path| PluginPath {
        path: path.clone(),
        named: true,
    });
    let mut paths: Vec<PluginPath> = named.collect();
    let mut found_anywhere: Vec<PathBuf> = config.plugins.clone();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|ext| ext == "so" || ext == "dylib")
            })
            .collect();
        found.sort();
        found_anywhere.extend(found);
    }
    match ToolPlugins::new(&config.data_folder()).installed() {
        Ok(installed) => found_anywhere.extend(installed.into_iter().map(|plugin| plugin.file)),
        Err(error) => eprintln!("agentry: the installed tool plugins are not loaded: {error}"),
    }
    // A plugin named on the command line and found in a folder too loads once.
    let same = |a: &Path, b: &Path| a == b || a.canonicalize().ok() == b.canonicalize().ok();
    let found_anywhere: Vec<PathBuf> = found_anywhere
        .into_iter()
        .filter(|found| !paths.iter().any(|named| same(&named.path, found)))
        .collect();
    paths.extend(
        found_anywhere
            .into_iter()
            .map(|path| PluginPath { path, named: false }),
    );
    paths
}

/// A plugin that did not load.
pub struct FailedPlugin {
    /// Where it was looked for.
    pub plugin: PluginPath,
    /// Why it did not load.
    pub error: String,
}

/// Every provider of this run, and the hook connecting the tool servers a front-end's client
/// hands to a session.
pub struct Available {
    /// The providers: linked, from plugins, and those they host (an MCP server each).
    pub providers: Vec<Arc<dyn Provider>>,
    /// The hook connecting a session's own tool servers, when a provider family offers one
    /// (the MCP client).
    pub session_servers: Option<Arc<dyn SessionServers>>,
    /// The plugins that did not load.
    pub failed_plugins: Vec<FailedPlugin>,
    /// Why the configuration cannot be used, when it has a key neither agentry nor any of
    /// these providers reads (a misspelt section).
    pub unknown_key: Option<String>,
}

impl Available {
    /// Fails when the configuration has a key no provider of this run reads.
    pub fn check_sections(&self) -> Result<(), CliError> {
        match &self.unknown_key {
            Some(problem) => Err(CliError::usage(anyhow!("{problem}"))),
            None => Ok(()),
        }
    }

    /// Fails when a plugin named with `--plugin` did not load: the user asked for it by name.
    pub fn check_named_plugins(&self) -> Result<(), CliError> {
        match self
            .failed_plugins
            .iter()
            .find(|failed| failed.plugin.named)
        {
            Some(failed) => Err(CliError::usage(anyhow!(
                "the plugin named with --plugin did not load: {}",
                failed.error
            ))),
            None => Ok(()),
        }
    }
}

/// Whether the configured MCP servers are waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerStart {
    /// Every server has its startup timeout to answer before the agent is built: a headless
    /// run and the listings want the servers' tools from the start.
    Wait,
    /// The servers start in the background and their tools and prompts join when they answer:
    /// an editor's agent answers `initialize` at once, whatever its servers do.
    Background,
}

/// Every provider of this run: the linked ones, then the plugins that load, each followed by
/// the providers it hosts. A plugin that fails is reported on stderr, and the agent goes on
/// without it.
pub async fn available(
    config: &Config,
    plugins: &[PluginPath],
    project: &Path,
    start: ServerStart,
) -> Available {
    let wait = start == ServerStart::Wait;
    let mut providers = linked(config, project, wait).await;
    let mut read_sections: Vec<String> = crate::linked::recipes()
        .iter()
        .flat_map(|recipe| recipe.sections.iter().map(|name| (*name).to_owned()))
        .collect();
    let mut failed_plugins = Vec::new();
    // The providers `--plugin` gave, by name: the same provider found in a plugins folder (an
    // older build, typically) gives way to them.
    let mut named: Vec<(String, &Path)> = Vec::new();
    for plugin in plugins {
        let loaded = agentry_plugin_host::load(&plugin.path).and_then(|loaded| {
            read_sections.extend(loaded.sections().into_iter().flatten());
            configured_plugin(loaded, config, project, wait)
        });
        match loaded {
            Ok(loaded) => {
                let name = loaded.name().to_owned();
                if let Some((_, by)) = named.iter().find(|(n, _)| *n == name) {
                    eprintln!(
                        "agentry: {} is left out: --plugin {} gives provider `{name}`",
                        plugin.path.display(),
                        by.display()
                    );
                    continue;
                }
                if plugin.named {
                    named.push((name.clone(), &plugin.path));
                }
                // A plugin of a stock provider (a newer build, or the same source built as a
                // plugin) takes the linked one's place: never two tools of one name.
                let linked = providers
                    .iter()
                    .position(|p| p.name() == name && p.origin() == ProviderOrigin::BuiltIn);
                if let Some(index) = linked {
                    eprintln!(
                        "agentry: provider `{name}` from {} replaces the built-in one",
                        plugin.path.display()
                    );
                    providers.remove(index);
                }
                providers.push(Arc::new(loaded));
            }
            Err(error) => {
                // A plugin named with --plugin fails the run with this error
                // (`check_named_plugins`): said once, there.
                if !plugin.named {
                    eprintln!(
                        "agentry: plugin not loaded: {}",
                        visible(&error.to_string())
                    );
                }
                failed_plugins.push(FailedPlugin {
                    plugin: plugin.clone(),
                    error: error.to_string(),
                });
            }
        }
    }
    report(&unread_sections(config, &read_sections));
    let known: Vec<&str> = crate::sections::STOCK
        .iter()
        .copied()
        .chain(read_sections.iter().map(String::as_str))
        .collect();
    let unknown_key = config.check_sections(&known).err().map(|e| e.to_string());
    Available {
        session_servers: providers.iter().find_map(|p| p.session_servers()),
        providers: spread(providers),
        failed_plugins,
        unknown_key,
    }
}

/// Each provider followed by those it hosts, less those that offer nothing (HTTP tools with no
/// `[[http_tools]]`, the MCP client itself).
fn spread(providers: Vec<Arc<dyn Provider>>) -> Vec<Arc<dyn Provider>> {
    providers
        .into_iter()
        .flat_map(|provider| {
            let hosted = provider.hosted();
            std::iter::once(provider).chain(hosted)
        })
        .filter(|provider| !offers_nothing(provider.as_ref()))
        .collect()
}

/// What a provider reading the configuration's sections `names` is made from, for `project`
/// (`wait`: the front-end waits for the servers it starts).
fn settings<'a>(
    config: &Config,
    names: impl IntoIterator<Item = &'a str>,
    project: &Path,
    wait: bool,
) -> Settings {
    Settings::of(
        names,
        |name| config.sections.get(name).cloned(),
        project.to_path_buf(),
        crate::config::user_config_folder(),
    )
    .waiting(wait)
    .trusting_project(config.project_trusted)
    .keeping_data_in(config.data_folder())
    .with_bundles(config.plugin_bundles.clone())
}

/// Reports what in a provider's settings could not be used.
/// What a provider or a server says is shown, not obeyed ([`visible`]).
fn report(problems: &[String]) {
    for problem in problems {
        eprintln!("agentry: {}", visible(problem));
    }
}

/// A loaded plugin made from its settings, when it reads any (its problems reported).
fn configured_plugin(
    mut plugin: PluginProvider,
    config: &Config,
    project: &Path,
    wait: bool,
) -> Result<PluginProvider, agentry_plugin_host::PluginError> {
    let Some(names) = plugin.sections() else {
        return Ok(plugin);
    };
    let settings = settings(config, names.iter().map(String::as_str), project, wait);
    let problems = plugin.configure(&settings)?;
    report(&problems);
    Ok(plugin)
}

/// Whether a provider offers neither tools nor slash commands (HTTP tools with no
/// `[[http_tools]]`, the MCP client, whose servers are providers of their own): it is left out.
fn offers_nothing(provider: &dyn Provider) -> bool {
    provider.tools().is_empty() && provider.commands().is_none()
}

/// Every provider linked into this binary, made from the configuration for `project` (`wait`:
/// the front-end waits for the servers they start); one whose settings leave nothing usable is
/// reported and left out.
pub async fn linked(config: &Config, project: &Path, wait: bool) -> Vec<Arc<dyn Provider>> {
    let mut linked: Vec<Arc<dyn Provider>> = Vec::new();
    for recipe in crate::linked::recipes() {
        let settings = settings(config, recipe.sections.iter().copied(), project, wait);
        match (recipe.make)(settings).finish().await {
            Ok(made) => {
                report(&made.problems);
                linked.push(Arc::from(made.provider));
            }
            Err(error) => eprintln!(
                "agentry: provider `{}` not offered: {}",
                recipe.name,
                visible(&error.to_string())
            ),
        }
    }
    linked
}

/// The stock sections the configuration has that no provider of this run reads (`read`: the
/// sections of the linked providers and of the plugins): they are ignored, and said to be.
fn unread_sections(config: &Config, read: &[String]) -> Vec<String> {
    [
        ("webfetch", "WebFetch", "[webfetch]"),
        ("web_search", "WebSearch", "[web_search]"),
        ("http_tools", "HTTP tools", "[[http_tools]]"),
    ]
    .into_iter()
    .filter(|(section, _, _)| {
        config.sections.get(section).is_some() && !read.iter().any(|name| name == section)
    })
    .map(|(_, what, written)| {
        format!(
            "this agentry was built without {what}, and no plugin offers it; {written} is ignored"
        )
    })
    .collect()
}

/// What the configuration selects: the providers kept and the tools left out.
pub struct Selected {
    /// The providers kept.
    pub providers: Vec<Arc<dyn Provider>>,
    /// Tools left out, by name.
    pub disabled_tools: Vec<String>,
}

/// Fails on names in the selection that no provider has (a typo would otherwise silently keep
/// a tool the user meant to remove).
fn check_names(selection: &ToolSelection, all: &[Arc<dyn Provider>]) -> Result<(), CliError> {
    let provider_names: Vec<&str> = all.iter().map(|p| p.name()).collect();
    if let Some(unknown) = selection
        .disabled_providers
        .iter()
        .find(|name| !provider_names.contains(&name.as_str()))
    {
        return Err(CliError::usage(anyhow!(
            "[tools] disabled_providers names `{unknown}`, which is not a provider of this build (it has: {})",
            provider_names.join(", ")
        )));
    }
    let tool_names: Vec<String> = all
        .iter()
        .flat_map(|p| p.tools())
        .map(|t| t.name().to_owned())
        .collect();
    if let Some(unknown) = selection
        .disabled
        .iter()
        .find(|name| !tool_names.contains(name) && !offered_later(all, name))
    {
        return Err(CliError::usage(anyhow!(
            "[tools] disabled names `{unknown}`, which is not a tool of this build (it has: {})",
            tool_names.join(", ")
        )));
    }
    Ok(())
}

/// Whether `name` is a tool one of `all` may offer later though it does not now (an MCP server
/// that is starting, or will announce more): it starts with that provider's tool prefix.
fn offered_later(all: &[Arc<dyn Provider>], name: &str) -> bool {
    all.iter()
        .filter_map(|provider| provider.tool_prefix())
        .any(|prefix| name.starts_with(&prefix))
}

/// The providers the configuration keeps, and the tools it leaves out.
pub fn configured(
    selection: &ToolSelection,
    all: Vec<Arc<dyn Provider>>,
) -> Result<Selected, CliError> {
    check_names(selection, &all)?;
    let kept = all
        .into_iter()
        .filter(|p| {
            !selection
                .disabled_providers
                .iter()
                .any(|name| name == p.name())
        })
        .collect();
    Ok(Selected {
        providers: kept,
        disabled_tools: selection.disabled.clone(),
    })
}

/// The first sentence of a description.
fn summary(description: &str) -> &str {
    let line = description.lines().next().unwrap_or_default();
    match line.find(". ") {
        Some(end) => &line[..=end],
        None => line,
    }
}

/// `agentry providers`: every linked provider with its origin and tools, marking what the
/// configuration leaves out.
/// The tools the agent of `project` gets (its linked providers, plugins and MCP servers, less
/// what the configuration leaves out), without a model: for the listings.
pub async fn tool_registry(
    config: &Config,
    plugin_flags: &[PathBuf],
    project: &Path,
) -> Result<ToolRegistry, CliError> {
    let plugins = plugin_paths(config, plugin_flags, project);
    let available = available(config, &plugins, project, ServerStart::Wait).await;
    available.check_sections()?;
    let selected = configured(&config.tools, available.providers)?;
    let mut registry = ToolRegistry::new();
    for provider in selected.providers {
        registry
            .register_except(provider, &selected.disabled_tools)
            .map_err(CliError::usage)?;
    }
    Ok(registry)
}

pub async fn list(args: &ProvidersArgs) -> Result<Exit, CliError> {
    let cwd = std::env::current_dir().map_err(CliError::internal)?;
    let config = crate::config::load_config(&cwd)?;
    // The enabled Claude Code plugins' MCP servers (`plugin_PLUGIN_SERVER`), sub-agents and
    // skills are listed with the providers that take them up.
    let (config, _) = crate::enabled_plugins::with_plugins(&config);
    let plugins = plugin_paths(&config, &args.plugin, &cwd);
    let available = available(&config, &plugins, &cwd, ServerStart::Wait).await;
    available.check_sections()?;
    // Listed like the others, then the command fails: the user named it.
    let named_plugins = available.check_named_plugins();
    let all = available.providers;
    check_names(&config.tools, &all)?;
    let selection = &config.tools;
    let mut rows = Vec::new();
    for provider in &all {
        let mut registry = ToolRegistry::new();
        registry
            .register(provider.clone())
            .map_err(CliError::internal)?;
        let provider_enabled = !selection
            .disabled_providers
            .iter()
            .any(|n| n == provider.name());
        let tools: Vec<_> = registry.providers()[0]
            .tools
            .iter()
            .filter_map(|name| registry.get(name))
            .map(|t| {
                json!({
                    "name": t.tool.name(),
                    "kind": t.tool.kind(),
                    "description": summary(&t.tool.description()),
                    "enabled": provider_enabled && !selection.disabled.iter().any(|n| n == t.tool.name()),
                })
            })
            .collect();
        // A server that did not start is listed with why, as a plugin that did not load is.
        let (status, description) = match provider.status() {
            ProviderStatus::Failed { reason } => ("failed".to_owned(), reason),
            status => (status.to_string(), provider.description()),
        };
        rows.push(json!({
            "name": provider.name(),
            "origin": provider.origin(),
            "origin_text": provider.origin().to_string(),
            "description": description,
            "status": status,
            "enabled": provider_enabled && status != "failed",
            "tools": tools,
        }));
    }
    for failed in &available.failed_plugins {
        let origin = ProviderOrigin::Plugin {
            path: failed.plugin.path.clone(),
        };
        rows.push(json!({
            "name": failed.plugin.path.file_stem().map(|stem| stem.to_string_lossy()),
            "origin_text": origin.to_string(),
            "origin": origin,
            "description": failed.error,
            "status": "failed",
            "enabled": false,
            "tools": [],
        }));
    }
    if args.json {
        println!("{}", serde_json::Value::Array(rows));
        return named_plugins.map(|()| Exit::EndTurn);
    }
    let width = rows
        .iter()
        .flat_map(|row| row["tools"].as_array().into_iter().flatten())
        .filter_map(|tool| tool["name"].as_str())
        .map(str::len)
        .max()
        .unwrap_or_default();
    for row in &rows {
        let disabled = match (row["status"].as_str(), row["enabled"] == true) {
            (Some("failed"), _) => ", failed",
            (_, true) => "",
            (_, false) => ", disabled",
        };
        println!(
            "{} ({}{disabled}): {}",
            row["name"].as_str().unwrap_or_default(),
            row["origin_text"].as_str().unwrap_or_default(),
            row["description"].as_str().unwrap_or_default()
        );
        for tool in row["tools"].as_array().into_iter().flatten() {
            println!(
                "  {:<width$} {:<8} {}{}",
                tool["name"].as_str().unwrap_or_default(),
                tool["kind"].as_str().unwrap_or_default(),
                tool["description"].as_str().unwrap_or_default(),
                if tool["enabled"] == true {
                    ""
                } else {
                    " (disabled)"
                }
            );
        }
    }
    named_plugins.map(|()| Exit::EndTurn)
}
