//! The agent every front-end serves, assembled from configuration and flags: its model, its
//! tool providers (linked, plugins, MCP servers), its session store and its permission policy.

use crate::cli::AgentArgs;
use crate::config::{Config, database_path};
use crate::exit::CliError;
use crate::providers::ServerStart;
use agentry::agent::{Agent, AgentConfig};
use agentry::commands::{SlashCommand, SlashCommands};
use agentry::model::catalog::{ModelCatalog, ProviderConfig};
use agentry::model::{Model, ModelError};
use agentry::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleAction};
use agentry::session::SqliteStore;
use agentry::templates::{PromptTemplate, load_templates};
use agentry_acp::{ModelChoices, PromptServer};
use std::collections::BTreeMap;
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

/// The agent for `project` (the folder whose `.agentry/`, `.mcp.json` and plugins count),
/// with its MCP servers as sources of slash commands.
pub async fn agent(
    config: &Config,
    args: &AgentArgs,
    project: &Path,
    model: Arc<dyn Model>,
    start: ServerStart,
) -> Result<(Agent, Vec<PromptServer>), CliError> {
    let store = SqliteStore::open(database_path(config)).map_err(CliError::internal)?;
    let mut agent_config = AgentConfig::default();
    if let Some(max) = args.max_turn_requests.or(config.max_turn_requests) {
        agent_config.max_turn_requests = max;
    }
    let plugins = crate::providers::plugin_paths(config, &args.plugin, project);
    let available = crate::providers::available(config, &plugins, project, start).await;
    let selected = crate::providers::configured(&config.tools, available.providers)?;
    let agent = selected
        .providers
        .into_iter()
        .fold(Agent::builder(), |builder, provider| {
            builder.shared_provider(provider)
        })
        .disable_tools(selected.disabled_tools)
        .model(model)
        .store(Arc::new(store))
        .config(agent_config)
        .build()?;
    Ok((agent, available.prompt_servers))
}

/// The models the configuration offers to switch to (`models = [...]`, after the default),
/// opened through the same catalog as the default.
pub struct OfferedModels {
    providers: BTreeMap<String, ProviderConfig>,
    offered: Vec<String>,
}

impl OfferedModels {
    /// The default model's spec, then the configuration's `models`.
    pub fn new(config: &Config, default: String) -> Self {
        let mut offered = vec![default];
        for spec in &config.models {
            if !offered.contains(spec) {
                offered.push(spec.clone());
            }
        }
        Self {
            providers: config.providers.clone(),
            offered,
        }
    }
}

impl ModelChoices for OfferedModels {
    fn offered(&self) -> Vec<String> {
        self.offered.clone()
    }

    fn open(&self, spec: &str) -> Result<Arc<dyn Model>, String> {
        let env = |name: &str| std::env::var(name).ok();
        ModelCatalog::new(&self.providers, &env)
            .open(spec)
            .map_err(|e| e.to_string())
    }
}

/// The prompt templates (slash commands): `~/.config/agentry/prompts/*.md`, then the project's
/// `.agentry/prompts/*.md`, which win on a shared name. Unusable files are reported on stderr.
pub fn prompt_templates(project: &Path) -> Vec<PromptTemplate> {
    let (templates, errors) = load_templates(&prompt_folders(project));
    for error in errors {
        eprintln!("agentry: prompt template not loaded: {error}");
    }
    templates
}

/// The slash commands of `project`: the prompt templates and the prompts of `servers`.
pub fn slash_commands(project: &Path, servers: &[PromptServer]) -> SlashCommands {
    let commands = prompt_templates(project)
        .into_iter()
        .map(|template| Arc::new(template) as Arc<dyn SlashCommand>)
        .chain(servers.iter().flat_map(PromptServer::prompts))
        .collect();
    SlashCommands::new(commands)
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
