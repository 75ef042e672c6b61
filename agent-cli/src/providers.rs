//! The tool providers this binary links (one cargo feature each), the configuration's choice
//! among them, and `agentry providers` / `agentry tools`.

use crate::cli::ProvidersArgs;
use crate::exit::{CliError, Exit};
use agentry::commands::CommandSource;
use agentry::config::{Config, ToolSelection};
use agentry::plugins::PluginProvider;
use agentry::provider::{Provider, ProviderOrigin, ToolRegistry};
use agentry::settings::{Recipe, Settings};
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

/// The plugin libraries to load: `--plugin` flags, `plugins` in configuration, and every
/// library in `~/.config/agentry/plugins/` and `.agentry/plugins/` of the project.
pub fn plugin_paths(config: &Config, flags: &[PathBuf], project: &Path) -> Vec<PluginPath> {
    let folders = crate::assemble::user_config_folder()
        .map(|dir| dir.join("plugins"))
        .into_iter()
        .chain([project.join(".agentry").join("plugins")]);
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

/// Every provider of this run, with the MCP servers among them again as sources of prompts
/// (which front-ends offer as slash commands).
pub struct Available {
    /// The providers: linked, plugins, MCP servers.
    pub providers: Vec<Arc<dyn Provider>>,
    /// The MCP servers that started, as sources of slash commands (the other providers'
    /// commands come with them: [`Provider::commands`]).
    pub command_sources: Vec<Arc<dyn CommandSource>>,
    /// The MCP servers that did not start, with why.
    pub failed_servers: Vec<(String, String)>,
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

/// Every provider of this run: the linked ones, the plugins that load, then the MCP servers.
/// A plugin or server that fails is reported on stderr, and the agent goes on without it.
pub async fn available(
    config: &Config,
    plugins: &[PluginPath],
    project: &Path,
    start: ServerStart,
) -> Available {
    let mut providers = linked(config, project).await;
    let mut read_sections: Vec<String> = recipes()
        .iter()
        .flat_map(|recipe| recipe.sections.iter().map(|name| (*name).to_owned()))
        .collect();
    let mut failed_plugins = Vec::new();
    // The providers `--plugin` gave, by name: the same provider found in a plugins folder (an
    // older build, typically) gives way to them.
    let mut named: Vec<(String, &Path)> = Vec::new();
    for plugin in plugins {
        let loaded = agentry::plugins::load(&plugin.path).and_then(|loaded| {
            read_sections.extend(loaded.sections().into_iter().flatten().cloned());
            configured_plugin(loaded, config, project)
        });
        match loaded {
            // Configured to offer nothing (HTTP tools with no `[[http_tools]]`), as linked.
            Ok(loaded) if loaded.sections().is_some() && offers_nothing(&loaded) => {}
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
                    eprintln!("agentry: plugin not loaded: {error}");
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
    let servers = mcp_servers(config, project, start).await;
    providers.extend(servers.providers);
    Available {
        providers,
        command_sources: servers.command_sources,
        failed_servers: servers.failed,
        failed_plugins,
        unknown_key,
    }
}

/// The MCP provider's options with the configuration's `[mcp]` timeouts (checked when the
/// configuration was loaded).
#[cfg(feature = "mcp")]
pub fn mcp_options(config: &Config) -> agentry_mcp::McpOptions {
    agentry_mcp::McpOptions::from_section(config.sections.get(agentry_mcp::SECTION))
        .unwrap_or_default()
}

/// The MCP servers of the project's `.mcp.json` and of the configuration (which wins on a
/// name both have). The configuration's were checked when it was loaded.
#[cfg(feature = "mcp")]
pub fn configured_mcp_servers(
    config: &Config,
    project: &Path,
) -> std::collections::BTreeMap<String, agentry_mcp::McpServerConfig> {
    let mut servers =
        agentry_mcp::read_mcp_json(&project.join(".mcp.json")).unwrap_or_else(|error| {
            eprintln!("agentry: {error}");
            Default::default()
        });
    match agentry_mcp::servers_from_section(config.sections.get(agentry_mcp::SERVERS_SECTION)) {
        Ok(tables) => servers.extend(tables),
        Err(error) => eprintln!("agentry: {error}"),
    }
    servers
}

/// The configured MCP servers, as providers and as prompt sources, and those that failed.
#[derive(Default)]
struct McpServers {
    providers: Vec<Arc<dyn Provider>>,
    command_sources: Vec<Arc<dyn CommandSource>>,
    failed: Vec<(String, String)>,
}

#[cfg(feature = "mcp")]
impl McpServers {
    /// A server that started: its tools and its prompts.
    fn add(&mut self, server: Arc<agentry_mcp::McpProvider>) {
        self.command_sources.push(server.clone());
        self.providers.push(server);
    }
}

/// The configured MCP servers, started at once.
#[cfg(feature = "mcp")]
async fn mcp_servers(config: &Config, project: &Path, start: ServerStart) -> McpServers {
    let servers = configured_mcp_servers(config, project);
    let options = mcp_options(config);
    let mut started = McpServers::default();
    if start == ServerStart::Background {
        for (name, server) in &servers {
            let provider = agentry_mcp::connect_in_background(name, server, project, &options);
            started.add(Arc::new(provider));
        }
        return started;
    }
    for (name, result) in agentry_mcp::connect_all(&servers, project, &options).await {
        match result {
            Ok(provider) => started.add(Arc::new(provider)),
            Err(error) => {
                eprintln!("agentry: {error}");
                started.failed.push((name, error.to_string()));
            }
        }
    }
    started
}

/// This build has no MCP provider: configured servers are reported, not silently dropped.
#[cfg(not(feature = "mcp"))]
async fn mcp_servers(config: &Config, _project: &Path, _start: ServerStart) -> McpServers {
    if config.sections.get("mcp_servers").is_some() {
        eprintln!("agentry: this agentry was built without MCP support; [mcp_servers] is ignored");
    }
    McpServers::default()
}

/// How each provider linked into this binary is made (one cargo feature each).
fn recipes() -> Vec<Recipe> {
    vec![
        #[cfg(feature = "file-ops")]
        agentry_file_ops::RECIPE,
        #[cfg(feature = "bash")]
        agentry_bash::RECIPE,
        #[cfg(feature = "builtin")]
        agentry_builtin::RECIPE,
        #[cfg(feature = "webfetch")]
        agentry_webfetch::RECIPE,
        #[cfg(feature = "search")]
        agentry_search::RECIPE,
        #[cfg(feature = "http-tools")]
        agentry_http_tools::RECIPE,
        #[cfg(feature = "fork")]
        agentry_fork::RECIPE,
        #[cfg(feature = "skill")]
        agentry_skill::RECIPE,
    ]
}

/// What a provider reading the configuration's sections `names` is made from, for `project`.
fn settings<'a>(
    config: &Config,
    names: impl IntoIterator<Item = &'a str>,
    project: &Path,
) -> Settings {
    Settings::of(
        names,
        |name| config.sections.get(name).cloned(),
        project.to_path_buf(),
        crate::assemble::user_config_folder(),
    )
}

/// Reports what in a provider's settings could not be used.
fn report(problems: &[String]) {
    for problem in problems {
        eprintln!("agentry: {problem}");
    }
}

/// A loaded plugin made from its settings, when it reads any (its problems reported).
fn configured_plugin(
    mut plugin: PluginProvider,
    config: &Config,
    project: &Path,
) -> Result<PluginProvider, agentry::plugins::PluginError> {
    let Some(names) = plugin.sections() else {
        return Ok(plugin);
    };
    let settings = settings(config, names.iter().map(String::as_str), project);
    let problems = plugin.configure(&settings)?;
    report(&problems);
    Ok(plugin)
}

/// Whether a provider offers neither tools nor slash commands (HTTP tools with no
/// `[[http_tools]]`): it is left out.
fn offers_nothing(provider: &dyn Provider) -> bool {
    provider.tools().is_empty() && provider.commands().is_none()
}

/// Every provider linked into this binary, made from the configuration for `project`; one
/// whose settings leave nothing usable is reported and left out, as is one that offers nothing.
pub async fn linked(config: &Config, project: &Path) -> Vec<Arc<dyn Provider>> {
    let mut linked: Vec<Arc<dyn Provider>> = Vec::new();
    for recipe in recipes() {
        let making = (recipe.make)(settings(config, recipe.sections.iter().copied(), project));
        match making.finish().await {
            Ok(made) => {
                report(&made.problems);
                if !offers_nothing(made.provider.as_ref()) {
                    linked.push(Arc::from(made.provider));
                }
            }
            Err(error) => eprintln!("agentry: provider `{}` not offered: {error}", recipe.name),
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
        .find(|name| !tool_names.contains(name) && !of_mcp_server(all, name))
    {
        return Err(CliError::usage(anyhow!(
            "[tools] disabled names `{unknown}`, which is not a tool of this build (it has: {})",
            tool_names.join(", ")
        )));
    }
    Ok(())
}

/// Whether `name` is a tool of one of the MCP servers among `all`, named as the MCP provider
/// names them: its tools may not be known yet (it is starting, or will announce more).
#[cfg(feature = "mcp")]
fn of_mcp_server(all: &[Arc<dyn Provider>], name: &str) -> bool {
    all.iter()
        .filter(|p| matches!(p.origin(), ProviderOrigin::McpServer { .. }))
        .any(|p| name.starts_with(&agentry_mcp::tool_prefix(p.name())))
}

/// This build has no MCP provider, so no tool is an MCP server's.
#[cfg(not(feature = "mcp"))]
fn of_mcp_server(_all: &[Arc<dyn Provider>], _name: &str) -> bool {
    false
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
    let config = crate::assemble::load_config(&cwd)?;
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
        rows.push(json!({
            "name": provider.name(),
            "origin": provider.origin(),
            "origin_text": provider.origin().to_string(),
            "description": provider.description(),
            "status": "ready",
            "enabled": provider_enabled,
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
    for (server, problem) in available.failed_servers {
        let origin = ProviderOrigin::McpServer {
            server: server.clone(),
        };
        rows.push(json!({
            "name": server,
            "origin_text": origin.to_string(),
            "origin": origin,
            "description": problem,
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
