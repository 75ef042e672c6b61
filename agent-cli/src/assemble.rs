//! The agent every front-end serves, assembled from configuration and flags: its model, its
//! tool providers (linked, plugins, MCP servers), its session store and its permission policy.

use crate::cli::AgentArgs;
use crate::config::{Config, database_path};
use crate::exit::CliError;
use crate::providers::ServerStart;
use agentry::agent::{Agent, AgentConfig};
use agentry::model::catalog::{ModelCatalog, OfferedModels};
use agentry::model::{Model, ModelError};
use agentry::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleAction};
use agentry::session::SqliteStore;
use agentry::templates::TemplateFolders;
use std::path::Path;
use std::sync::Arc;

/// The model: `--model`, else the configuration's, else the default for the keys set.
pub fn model(config: &Config, args: &AgentArgs) -> Result<Arc<dyn Model>, ModelError> {
    let env = |name: &str| std::env::var(name).ok();
    let catalog = ModelCatalog::new(&config.providers, &env);
    let model_spec = match args.model.clone().or_else(|| config.model.clone()) {
        Some(spec) => spec,
        None => catalog.default_model()?,
    };
    catalog.open(&model_spec)
}

/// The agent for `project` (the folder whose `.agentry/`, `.mcp.json` and plugins count):
/// its slash commands are the prompt templates and its MCP servers' prompts, and the MCP
/// servers a front-end's client passes are connected with the configuration's `[mcp]`.
pub async fn agent(
    config: &Config,
    args: &AgentArgs,
    project: &Path,
    model: Arc<dyn Model>,
    start: ServerStart,
) -> Result<Agent, CliError> {
    let store = SqliteStore::open(database_path(config)).map_err(CliError::internal)?;
    let mut agent_config = AgentConfig::default();
    if let Some(max) = args.max_turn_requests.or(config.max_turn_requests) {
        agent_config.max_chat_requests = max;
    }
    let plugins = crate::providers::plugin_paths(config, &args.plugin, project);
    let available = crate::providers::available(config, &plugins, project, start).await;
    available.check_named_plugins()?;
    let selected = crate::providers::configured(&config.tools, available.providers)?;
    let builder = selected
        .providers
        .into_iter()
        .fold(Agent::builder(), |builder, provider| {
            builder.shared_provider(provider)
        })
        .disable_tools(selected.disabled_tools)
        .model(model)
        .store(Arc::new(store))
        .config(agent_config)
        .command_source(Arc::new(TemplateFolders::new(prompt_folders(project))));
    let builder = available
        .command_sources
        .into_iter()
        .fold(builder, |builder, source| builder.command_source(source));
    #[cfg(feature = "mcp")]
    let builder = builder.session_servers(Arc::new(agentry_mcp::McpSessionServers::new(
        config.mcp.options(),
    )));
    Ok(builder.build()?)
}

/// The models a front-end may switch a session to: the default model, then the
/// configuration's `models`, opened through the same catalog as the default.
pub fn offered_models(config: &Config, default: String) -> OfferedModels {
    OfferedModels::new(
        config.providers.clone(),
        std::iter::once(default).chain(config.models.iter().cloned()),
    )
}

/// The folders of the prompt templates, the user's before the project's.
pub fn prompt_folders(project: &Path) -> Vec<std::path::PathBuf> {
    dirs::config_dir()
        .map(|dir| dir.join("agentry").join("prompts"))
        .into_iter()
        .chain([project.join(".agentry").join("prompts")])
        .collect()
}

/// The permission policy: the mode (flag, else configuration, else `default`) and the rules
/// of the configuration and the flags.
pub fn policy(config: &Config, args: &AgentArgs) -> Result<PermissionPolicy, CliError> {
    let mode = match args
        .permission_mode
        .as_deref()
        .or(config.permission_mode.as_deref())
    {
        Some(mode) => mode.parse().map_err(CliError::usage)?,
        None => PermissionMode::Default,
    };
    let rules = [
        (RuleAction::Deny, &config.permissions.deny, &args.deny),
        (RuleAction::Ask, &config.permissions.ask, &Vec::new()),
        (RuleAction::Allow, &config.permissions.allow, &args.allow),
    ]
    .into_iter()
    .flat_map(|(action, from_config, from_flags)| {
        from_config
            .iter()
            .chain(from_flags)
            .map(move |target| PermissionRule::parse(action, target))
    })
    .collect::<Result<Vec<_>, _>>()
    .map_err(CliError::usage)?;
    Ok(PermissionPolicy { mode, rules })
}
