//! The agent every front-end serves, assembled from configuration and flags: its model, its
//! tool providers (linked, plugins, MCP servers), its session store and its permission policy.

use crate::cli::AgentArgs;
use crate::exit::CliError;
use crate::providers::ServerStart;
use agentry::agent::{Agent, AgentConfig};
use agentry::commands::CommandSource;
use agentry::model::named::NamedModels;
use agentry::model::{Model, ModelError};
use agentry::permission::PermissionPolicy;
use agentry::permission::lint::check_rules;
use agentry::session::{LazyStore, SessionStore};
use agentry_checkpoint::Checkpoints;
use agentry_postgres::PostgresStore;
use agentry_sqlite::SqliteStore;
use agentry_stock::BASE_PROMPT;
use agentry_stock::config::Config;
use agentry_stock::hooks::{ModelOpener, SettingsHooks};
use agentry_stock::memory::InstructionFiles;
use agentry_stock::templates::TemplateFolder;
use agentry_stock::templates::TemplateFolders;
use std::path::Path;
use std::sync::Arc;

/// The model: `--model`, else the configuration's, else the default for the keys set.
pub fn model(config: &Config, args: &AgentArgs) -> Result<Arc<dyn Model>, ModelError> {
    config.open_model(args.model.as_deref())
}

/// The models the agent opens by name (WebFetch's `[webfetch] model`, a sub-agent's
/// `model`) through the configuration, Claude Code's `sonnet`, `opus` and `haiku` as
/// Anthropic's models.
pub fn named_models(config: &Config) -> NamedModels {
    let config = config.clone();
    NamedModels::new(move |name: &str| {
        let spec = match name {
            "sonnet" => "anthropic/claude-sonnet-4-5",
            "opus" => "anthropic/claude-opus-4-1",
            "haiku" => "anthropic/claude-haiku-4-5",
            other => other,
        };
        config.open_model(Some(spec))
    })
}

/// The session budget `--max-budget-usd` or `[limits] max_budget_usd` sets, checked: a number
/// of dollars, and a model with a price to keep it with (refused before any request, not at
/// the first).
fn budget(args: &AgentArgs, config: &Config, model: &dyn Model) -> Result<Option<f64>, CliError> {
    let Some(budget) = args.max_budget_usd.or(config.limits.max_budget_usd) else {
        return Ok(None);
    };
    if !budget.is_finite() || budget < 0.0 {
        return Err(CliError::usage(anyhow::anyhow!(
            "the budget must be a number of US dollars, 0 or more, not {budget}"
        )));
    }
    if model.price().is_none() {
        return Err(CliError::usage(agentry::AgentError::Unpriced {
            model: model.name(),
            budget_usd: budget,
        }));
    }
    Ok(Some(budget))
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
    record_dir: Option<&Path>,
) -> Result<Agent, CliError> {
    let config = &crate::sandbox::with_flag(config, args.sandbox.as_deref());
    let (config, claude_plugins) = crate::enabled_plugins::with_plugins(config);
    let config = &config;
    let store: Arc<dyn SessionStore> = match args.store.location.as_deref() {
        // A server's database is reached at once: a wrong address fails the start, not the
        // first chat.
        Some(url) if is_postgres_url(url) => {
            Arc::new(PostgresStore::open(url).map_err(CliError::usage)?)
        }
        // A file is opened by the first session: an editor's agent answers `initialize`
        // without it.
        location => Arc::new(LazyStore::new({
            let (config, location) = (config.clone(), location.map(str::to_owned));
            move || open_store(&config, location.as_deref())
        })),
    };
    // The stock agent's own: its base prompt and the instruction files users keep.
    let mut agent_config = AgentConfig {
        base_prompt: BASE_PROMPT.to_owned(),
        ..AgentConfig::default()
    };
    if let Some(max) = args.max_turn_requests.or(config.max_turn_requests) {
        agent_config.max_chat_requests = max;
    }
    agent_config.max_budget_usd = budget(args, config, model.as_ref())?;
    agent_config.tool_search = config
        .tool_search
        .settings()
        .map_err(|problem| CliError::usage(anyhow::anyhow!(problem)))?;
    agent_config.compaction = config
        .compaction
        .settings()
        .map_err(|problem| CliError::usage(anyhow::anyhow!(problem)))?;
    if let Some(depth) = config.max_fork_depth {
        agent_config.max_fork_depth = depth;
    }
    if let Some(max) = config.max_calls_per_answer {
        agent_config.max_calls_per_answer = max;
    }
    let plugins = crate::providers::plugin_paths(config, &args.plugin, project);
    let available = crate::providers::available(config, &plugins, project, start).await;
    available.check_sections()?;
    available.check_named_plugins()?;
    let selected = crate::providers::configured(&config.tools, available.providers)?;
    let judge = model.clone();
    let builder = selected
        .providers
        .into_iter()
        .fold(Agent::builder(model), |builder, provider| {
            builder.provider(provider)
        })
        .disable_tools(selected.disabled_tools)
        .named_models(named_models(config))
        .store(store)
        .config(agent_config)
        .instructions(InstructionFiles);
    let builder = builder
        .command_source(prompt_templates(project))
        .command_source(crate::enabled_plugins::plugin_commands(&claude_plugins));
    let builder = match config.checkpoints.settings(&config.data_folder()) {
        Some(settings) => builder.checkpoints(Checkpoints::new(settings)),
        None => builder,
    };
    let builder = match available.session_servers {
        Some(servers) => builder.session_servers(servers),
        None => builder,
    };
    // The hooks of Claude Code's settings files and agentry's own; what of them agentry
    // does not know is said at start-up.
    let hooks = config.hooks_in_force();
    for warning in &hooks.warnings {
        eprintln!(
            "agentry: warning: {}",
            agentry_plugin::terminal_text::visible(warning)
        );
    }
    let builder = if hooks.is_empty() {
        builder
    } else {
        let opener: ModelOpener = {
            let config = config.clone();
            Arc::new(move |name: &str| config.open_model(Some(name)).ok())
        };
        builder.hooks(SettingsHooks::new(hooks).with_models(judge, opener))
    };
    let builder = builder.transcripts(config.data_folder().join("transcripts"));
    let builder = match record_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                CliError::usage(anyhow::anyhow!("cannot record in {}: {e}", dir.display()))
            })?;
            builder.record_sessions(dir, crate::record::redactor(config)?)
        }
        None => builder,
    };
    Ok(builder.build()?)
}

/// Whether `location` names a PostgreSQL database rather than an SQLite file.
fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// The session store at `location` (a PostgreSQL URL or an SQLite file), else the SQLite
/// database in the data folder, which is the user's alone (made so when an earlier version
/// left it open to others).
pub fn open_store(
    config: &Config,
    location: Option<&str>,
) -> Result<Arc<dyn SessionStore>, agentry::session::StoreError> {
    match location {
        Some(url) if is_postgres_url(url) => Ok(Arc::new(PostgresStore::open(url)?)),
        Some(file) => Ok(Arc::new(SqliteStore::open(file)?)),
        None => {
            let folder = config.data_folder();
            if let Err(error) = agentry_plugin::private::folder(&folder) {
                tracing::warn!("cannot make {} private: {error}", folder.display());
            }
            Ok(Arc::new(SqliteStore::open(config.database_path())?))
        }
    }
}

/// The prompt templates of `project` and the user's, as slash commands (the providers' own
/// commands come with them: [`Provider::commands`](agentry::provider::Provider::commands)).
pub fn prompt_templates(project: &Path) -> Arc<dyn CommandSource> {
    Arc::new(TemplateFolders::new(prompt_folders(project)))
}

/// The folders of the prompt templates, the user's before the project's. The user's own
/// templates embed any file; a project's (which a cloned repository wrote) only the project's.
pub fn prompt_folders(project: &Path) -> Vec<TemplateFolder> {
    let users = crate::config::user_config_folder().map(|dir| TemplateFolder {
        path: dir.join("prompts"),
        embeds_within: std::path::PathBuf::from("/"),
    });
    users
        .into_iter()
        .chain([TemplateFolder {
            path: project.join(".agentry").join("prompts"),
            embeds_within: project.to_path_buf(),
        }])
        .collect()
}

/// Warns on standard error of each permission rule that can never match the agent's tools
/// (sessions tell their front-ends too, at their first chat).
pub fn warn_about_rules(agent: &Agent, policy: &PermissionPolicy, project: &Path) {
    for warning in check_rules(policy, agent.registry().tools(), project) {
        eprintln!(
            "agentry: warning: {}",
            agentry_plugin::terminal_text::visible(&warning.to_string())
        );
    }
}

/// The permission policy: the mode (flag, else configuration, else `default`) and the rules
/// of the configuration and the flags (given in `project`).
pub fn policy(
    config: &Config,
    args: &AgentArgs,
    project: &Path,
) -> Result<PermissionPolicy, CliError> {
    config
        .policy(
            project,
            args.permission_mode.as_deref(),
            &args.allow,
            &args.deny,
        )
        .map_err(CliError::usage)
}
