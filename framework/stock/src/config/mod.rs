//! The configuration the stock agent reads, as a library: the permissions and hooks of Claude
//! Code's settings files (`~/.claude/settings.json`, `.claude/settings.json`,
//! `.claude/settings.local.json`), then `~/.config/agentry/config.toml`, then
//! `.agentry/config.toml` in the project (later layers override single values and extend
//! lists), and what it decides: the model ([`Config::open_model`]), the permission policy
//! ([`Config::policy`]), the session database ([`Config::database_path`]).
//!
//! ```no_run
//! use agentry_stock::config::Config;
//!
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let project = std::env::current_dir()?;
//! // The keys the tool providers read: `[webfetch]`, say.
//! let config = Config::load(&project, &["webfetch"])?;
//! let webfetch = config.sections.get("webfetch");
//! let model = config.open_model(None)?;
//! let policy = config.policy(&project, None, &[], &[])?;
//! # let _ = (model, policy, webfetch);
//! # Ok(()) }
//! ```

use crate::hooks::HookSettings;
use agentry::agent::compaction::{CompactionSettings, CompactionStrategy, KeepRecent};
use agentry::agent::tool_search::{ToolSearchMode, ToolSearchSettings};
use agentry::model::{Model, ModelError};
use agentry::permission::{PermissionError, PermissionMode, PermissionPolicy, RuleOrigin};
use agentry_models::catalog::{ModelCatalog, OfferedModels, ProviderConfig, ProviderSurvey};
use agentry_models::http::HttpOptions;
use agentry_otlp::TelemetrySettings;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod checkpoints;
mod claude;
mod rules;
mod sections;
pub mod trust;

pub use checkpoints::CheckpointConfig;
pub use rules::{PermissionRules, WrittenRule, rule_root};
pub use sections::ProviderSections;

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file is not valid configuration (bad TOML, an unknown key, a wrong type).
    #[error("invalid configuration in {path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
}

/// One configuration file (every key optional). The framework reads its own keys; the rest
/// are the tool providers' [`sections`](Config::sections).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Config {
    /// The model (`PROVIDER/MODEL` or `scripted:PATH`).
    pub model: Option<String>,
    /// The permission mode.
    pub permission_mode: Option<String>,
    /// The most model requests per turn.
    pub max_turn_requests: Option<u32>,
    /// How deep sub-agents may nest (2 by default).
    pub max_fork_depth: Option<u32>,
    /// The most tool calls one model answer may make (100 by default); the rest are refused.
    pub max_calls_per_answer: Option<usize>,
    /// Where the session database lives.
    pub data_dir: Option<PathBuf>,
    /// Limits on what a session spends (`[limits]`).
    #[serde(default)]
    pub limits: LimitSettings,
    /// When MCP servers' tools wait to be found with `ToolSearch` (`[tool_search]`).
    #[serde(default)]
    pub tool_search: ToolSearchConfig,
    /// When and how the conversation is compacted (`[compaction]`).
    #[serde(default)]
    pub compaction: CompactionConfig,
    /// Permission rules.
    #[serde(default)]
    pub permissions: PermissionRules,
    /// Model providers of one's own, or overrides of the built-in ones, by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Which tool providers and tools the agent gets.
    #[serde(default)]
    pub tools: ToolSelection,
    /// Plugin libraries to load.
    #[serde(default)]
    pub plugins: Vec<PathBuf>,
    /// Models an editor may switch a session to (`PROVIDER/MODEL`), besides the default one.
    #[serde(default)]
    pub models: Vec<String>,
    /// Hooks (`[[hooks.PreToolUse]]`, `[[hooks.SessionStart]]`, …), in Claude Code's shape (see [`crate::hooks`]).
    #[serde(default)]
    pub hooks: HookSettings,
    /// Turns every hook off — the settings files', agentry's configuration's and enabled
    /// plugins' (Claude Code's `disableAllHooks`); the last layer that says decides.
    #[serde(default, alias = "disableAllHooks")]
    pub disable_all_hooks: Option<bool>,
    /// Claude Code plugins turned on or off by these settings, by `NAME@MARKETPLACE`
    /// (Claude Code's `enabledPlugins`; agentry's `[enabled_plugins]`), over what `agentry
    /// plugin enable`/`disable` recorded.
    #[serde(default, alias = "enabledPlugins")]
    pub enabled_plugins: BTreeMap<String, bool>,
    /// Marketplaces these settings ask for, by name, each `{"source": {…}}` as Claude Code's
    /// `extraKnownMarketplaces` writes it: `agentry plugin install NAME@MARKETPLACE` adds one
    /// it has not yet.
    #[serde(default, alias = "extraKnownMarketplaces")]
    pub extra_marketplaces: BTreeMap<String, serde_json::Value>,
    /// What recordings of model traffic leave out (`[record]`).
    #[serde(default)]
    pub record: RecordSettings,
    /// Timeouts and retries of requests to hosted models (`[model_requests]`).
    #[serde(default)]
    pub model_requests: ModelRequestSettings,
    /// What `agentry serve` instances share (`[serve]`).
    #[serde(default)]
    pub serve: ServeSettings,
    /// Where traces go (`[telemetry]`).
    #[serde(default)]
    pub telemetry: TelemetrySettings,
    /// Checkpoints of the workspace, for rewinds (`[checkpoints]`).
    #[serde(default)]
    pub checkpoints: CheckpointConfig,
    /// Folders whose own settings count without asking (each with the folders inside it;
    /// `~/` is the home folder): read from the user's own configuration only (see [`trust`]).
    #[serde(default)]
    pub trusted_folders: Vec<PathBuf>,
    /// The enabled Claude Code plugins' parts the tool providers take up (their sub-agents and
    /// skills): set by [`EnabledPlugins::applied_to`](crate::claude_plugins::EnabledPlugins::applied_to).
    #[serde(skip)]
    pub plugin_bundles: Vec<agentry_plugin::settings::PluginBundle>,
    /// Whether the project's own settings were trusted when this was loaded (see [`trust`]):
    /// providers read the project's files that start programs (`.mcp.json`, plugins) only then.
    #[serde(skip)]
    pub project_trusted: bool,
    /// Every other key: the tool providers' sections, as written, for each provider to read
    /// its own (`[webfetch]`, `[mcp_servers.NAME]`, `[[http_tools]]`, `sandbox`, …).
    #[serde(flatten)]
    pub sections: ProviderSections,
}

/// `[limits]`: what a session may spend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// The most a session may spend on model requests, in US dollars (its sub-agents' and
    /// earlier chats' requests included); none by default. Its models need prices.
    pub max_budget_usd: Option<f64>,
}

/// `[tool_search]`: when the tools of MCP servers (and of providers that defer theirs) are left
/// out of requests until the model finds them with `ToolSearch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchConfig {
    /// `auto` (the default: when their definitions pass `threshold` of the model's context
    /// window), `always` or `never`.
    pub enabled: Option<ToolSearchMode>,
    /// The share of the context window (0.1 by default) past which `auto` holds them back.
    pub threshold: Option<f64>,
}

impl ToolSearchConfig {
    /// The agent's settings: the defaults with these keys over them; a threshold that is not
    /// a share of the window (above 0, at most 1) is an error.
    pub fn settings(&self) -> Result<ToolSearchSettings, String> {
        let mut settings = ToolSearchSettings::default();
        if let Some(mode) = self.enabled {
            settings.mode = mode;
        }
        if let Some(threshold) = self.threshold {
            if !(threshold > 0.0 && threshold <= 1.0) {
                return Err(format!(
                    "[tool_search] threshold = {threshold}: it is a share of the context window, above 0 and at most 1"
                ));
            }
            settings.threshold = threshold;
        }
        Ok(settings)
    }
}

/// `[compaction]`: when and how a conversation nearing the model's context window is
/// compacted; each key left out keeps its default (see [`CompactionSettings`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionConfig {
    /// `false`: never compacted; a request that would not fit ends the turn with an error.
    pub enabled: Option<bool>,
    /// The share of the window a request may fill first (0.75).
    pub threshold: Option<f64>,
    /// What is kept verbatim: `{ turns = N }`, `{ tokens = N }` or `{ share = 0.25 }`.
    pub keep_recent: Option<KeepRecent>,
    /// `summarise` (the default) or `prune_tool_outputs`.
    pub strategy: Option<CompactionStrategy>,
    /// The most characters one tool result brings into the conversation (50,000).
    pub max_tool_result_chars: Option<usize>,
}

impl CompactionConfig {
    /// `other`'s keys over these.
    fn merged(self, other: CompactionConfig) -> CompactionConfig {
        CompactionConfig {
            enabled: other.enabled.or(self.enabled),
            threshold: other.threshold.or(self.threshold),
            keep_recent: other.keep_recent.or(self.keep_recent),
            strategy: other.strategy.or(self.strategy),
            max_tool_result_chars: other.max_tool_result_chars.or(self.max_tool_result_chars),
        }
    }

    /// The agent's settings: the defaults with these keys over them, checked.
    pub fn settings(&self) -> Result<CompactionSettings, String> {
        let default = CompactionSettings::default();
        let settings = CompactionSettings {
            enabled: self.enabled.unwrap_or(default.enabled),
            threshold: self.threshold.unwrap_or(default.threshold),
            keep_recent: self.keep_recent.unwrap_or(default.keep_recent),
            strategy: self.strategy.unwrap_or(default.strategy),
            max_tool_result_chars: self
                .max_tool_result_chars
                .unwrap_or(default.max_tool_result_chars),
        };
        settings
            .check()
            .map(|()| settings)
            .map_err(|problem| format!("[compaction] {problem}"))
    }
}

/// `[model_requests]`: timeouts and retries of requests to hosted models; each key left out
/// keeps its default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRequestSettings {
    /// Seconds connecting may take (15 by default).
    pub connect_timeout_secs: Option<u64>,
    /// Seconds a response may send nothing before it counts as stalled (120 by default).
    pub idle_timeout_secs: Option<u64>,
    /// How many times a 429, 5xx, overloaded answer or failed connection is retried (4 by
    /// default).
    pub max_retries: Option<u32>,
    /// Milliseconds before the first retry; the wait doubles with each (1000 by default).
    pub initial_backoff_ms: Option<u64>,
    /// The longest wait between retries in milliseconds, unless the server's `retry-after`
    /// asks for more (30000 by default).
    pub max_backoff_ms: Option<u64>,
}

impl ModelRequestSettings {
    /// `other`'s keys over these.
    fn merged(self, other: ModelRequestSettings) -> ModelRequestSettings {
        ModelRequestSettings {
            connect_timeout_secs: other.connect_timeout_secs.or(self.connect_timeout_secs),
            idle_timeout_secs: other.idle_timeout_secs.or(self.idle_timeout_secs),
            max_retries: other.max_retries.or(self.max_retries),
            initial_backoff_ms: other.initial_backoff_ms.or(self.initial_backoff_ms),
            max_backoff_ms: other.max_backoff_ms.or(self.max_backoff_ms),
        }
    }

    /// The model clients' options: the defaults, with these keys over them.
    pub fn http_options(&self) -> HttpOptions {
        use std::time::Duration;
        let default = HttpOptions::default();
        HttpOptions {
            connect_timeout: self
                .connect_timeout_secs
                .map_or(default.connect_timeout, Duration::from_secs),
            idle_timeout: self
                .idle_timeout_secs
                .map_or(default.idle_timeout, Duration::from_secs),
            max_retries: self.max_retries.unwrap_or(default.max_retries),
            initial_backoff: self
                .initial_backoff_ms
                .map_or(default.initial_backoff, Duration::from_millis),
            max_backoff: self
                .max_backoff_ms
                .map_or(default.max_backoff, Duration::from_millis),
        }
    }
}

/// `[serve]`: what several `agentry serve` instances share.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSettings {
    /// Where sessions are kept: a PostgreSQL URL that every instance is given (or an SQLite
    /// file, for one instance). `--store` and `AGENTRY_STORE` take its place.
    pub store: Option<String>,
    /// The Redis server (`redis://host:port`) through which instances sharing a PostgreSQL
    /// store share live events and control. `--broker` and `AGENTRY_BROKER` take its place.
    pub broker: Option<String>,
    /// How many seconds a chat's claim on its session holds without renewal (10 by default):
    /// how long a session waits for another instance after its instance died or was cut off.
    pub lease_secs: Option<u64>,
}

/// `[record]`: what recordings of model traffic (`--record`) leave out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSettings {
    /// Regular expressions whose matches are replaced by `[REDACTED]` (the values of the
    /// environment's keys, tokens and passwords always are).
    #[serde(default)]
    pub redact: Vec<String>,
}

/// The `[tools]` table: tool providers and tools to leave out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSelection {
    /// Providers left out (`bash`, `file_ops`, …).
    #[serde(default)]
    pub disabled_providers: Vec<String>,
    /// Tools left out, by name (`Write`, `Bash`, …).
    #[serde(default)]
    pub disabled: Vec<String>,
}

impl Config {
    /// The hooks that run: none when `disable_all_hooks` turns them off.
    pub fn hooks_in_force(&self) -> HookSettings {
        if self.disable_all_hooks == Some(true) {
            HookSettings::default()
        } else {
            self.hooks.clone()
        }
    }

    /// Lays `other` over `self`.
    pub fn merge(mut self, other: Config) -> Config {
        self.model = other.model.or(self.model);
        self.permission_mode = other.permission_mode.or(self.permission_mode);
        self.max_turn_requests = other.max_turn_requests.or(self.max_turn_requests);
        self.max_fork_depth = other.max_fork_depth.or(self.max_fork_depth);
        self.max_calls_per_answer = other.max_calls_per_answer.or(self.max_calls_per_answer);
        self.data_dir = other.data_dir.or(self.data_dir);
        self.limits.max_budget_usd = other.limits.max_budget_usd.or(self.limits.max_budget_usd);
        self.tool_search.enabled = other.tool_search.enabled.or(self.tool_search.enabled);
        self.tool_search.threshold = other.tool_search.threshold.or(self.tool_search.threshold);
        self.compaction = self.compaction.merged(other.compaction);
        self.permissions = self.permissions.merged(other.permissions);
        self.providers.extend(other.providers);
        self.tools
            .disabled_providers
            .extend(other.tools.disabled_providers);
        self.tools.disabled.extend(other.tools.disabled);
        self.plugins.extend(other.plugins);
        self.models.extend(other.models);
        self.hooks = self.hooks.merged(other.hooks);
        self.disable_all_hooks = other.disable_all_hooks.or(self.disable_all_hooks);
        self.enabled_plugins.extend(other.enabled_plugins);
        self.extra_marketplaces.extend(other.extra_marketplaces);
        self.record.redact.extend(other.record.redact);
        self.model_requests = self.model_requests.merged(other.model_requests);
        self.serve.store = other.serve.store.or(self.serve.store);
        self.serve.broker = other.serve.broker.or(self.serve.broker);
        self.serve.lease_secs = other.serve.lease_secs.or(self.serve.lease_secs);
        self.telemetry.endpoint = other.telemetry.endpoint.or(self.telemetry.endpoint);
        self.telemetry.service_name = other.telemetry.service_name.or(self.telemetry.service_name);
        self.telemetry.include_content = other
            .telemetry
            .include_content
            .or(self.telemetry.include_content);
        self.checkpoints = self.checkpoints.merged(other.checkpoints);
        self.trusted_folders.extend(other.trusted_folders);
        self.sections = self.sections.merged(other.sections);
        self
    }

    /// Claude Code's settings files, then the user's and the project's configuration, merged.
    /// `sections` names the top-level keys the agent's tool providers read: any other key that
    /// is not the framework's is an error naming its file.
    pub fn load(project_dir: &Path, sections: &[&str]) -> Result<Config, ConfigError> {
        let config = Self::load_unchecked(project_dir)?;
        config.check_sections(sections)?;
        Ok(config)
    }

    /// [`load`](Self::load) without the check of the providers' keys, for an agent that learns
    /// which keys its providers read only when it loads them (plugins say so): check them then
    /// with [`check_sections`](Self::check_sections). The project's own files are trusted (see
    /// [`load_trusting`](Self::load_trusting) for a folder that may not be).
    pub fn load_unchecked(project_dir: &Path) -> Result<Config, ConfigError> {
        Ok(Self::load_trusting(project_dir, true)?.0)
    }

    /// The user's configuration (Claude Code's `~/.claude/settings.json`, then
    /// `~/.config/agentry/config.toml`), without any project's.
    pub fn load_user() -> Result<Config, ConfigError> {
        Ok(Self::user_layers()?
            .into_iter()
            .fold(Config::default(), |config, (_, layer)| config.merge(layer)))
    }

    /// The user's configuration, then the project's: all of it when `trusted`, else only what
    /// narrows (see [`trust`]), with what the project's files would have enabled.
    pub fn load_trusting(
        project_dir: &Path,
        trusted: bool,
    ) -> Result<(Config, Vec<trust::Withheld>), ConfigError> {
        let mut config = Config::default();
        let mut withheld = Vec::new();
        let user = Self::user_layers()?;
        let users_own = user.iter().fold(Config::default(), |config, (_, layer)| {
            config.merge(layer.clone())
        });
        let project = Self::project_layers(project_dir)?;
        let (claude_user, agentry_user): (Vec<_>, Vec<_>) = user
            .into_iter()
            .partition(|(file, _)| file.extension().is_some_and(|ext| ext == "json"));
        let (claude_project, agentry_project): (Vec<_>, Vec<_>) = project
            .into_iter()
            .partition(|(file, _)| file.extension().is_some_and(|ext| ext == "json"));
        // Claude Code's files first, then agentry's; the user's before the project's in each.
        let layers = claude_user
            .into_iter()
            .map(|layer| (layer, true))
            .chain(claude_project.into_iter().map(|layer| (layer, false)))
            .chain(agentry_user.into_iter().map(|layer| (layer, true)))
            .chain(agentry_project.into_iter().map(|layer| (layer, false)));
        for ((file, layer), users) in layers {
            let layer = if users || trusted {
                layer
            } else {
                let (kept, left_out) = trust::narrowed(layer, &file, &users_own);
                withheld.extend(left_out);
                kept
            };
            config = config.merge(layer);
        }
        config.project_trusted = trusted;
        Ok((config, withheld))
    }

    /// The user's configuration files that exist, each read: Claude Code's, then agentry's.
    fn user_layers() -> Result<Vec<(PathBuf, Config)>, ConfigError> {
        let claude = claude::user_settings_file();
        let agentry = dirs::config_dir().map(|dir| dir.join("agentry").join("config.toml"));
        let mut layers = Vec::new();
        if let Some(path) = claude
            && let Some(layer) = claude::read(&path)?
        {
            layers.push((path, layer));
        }
        if let Some(path) = agentry
            && let Some(layer) = Self::read_layer(&path)?
        {
            layers.push((path, layer));
        }
        Ok(layers)
    }

    /// The project's own configuration files that exist, each read: Claude Code's
    /// `.claude/settings.json` and `settings.local.json`, then `.agentry/config.toml`.
    pub(crate) fn project_layers(
        project_dir: &Path,
    ) -> Result<Vec<(PathBuf, Config)>, ConfigError> {
        let mut layers = Vec::new();
        for path in claude::project_settings_files(project_dir) {
            if let Some(layer) = claude::read(&path)? {
                layers.push((path, layer));
            }
        }
        let path = project_dir.join(".agentry").join("config.toml");
        if let Some(layer) = Self::read_layer(&path)? {
            layers.push((path, layer));
        }
        Ok(layers)
    }

    /// Whether the user's `trusted_folders` cover `project` (a folder covers those inside it).
    pub fn trusts_folder(&self, project: &Path) -> bool {
        let project = agentry_plugin::paths::canonical_path(project);
        let home = dirs::home_dir();
        self.trusted_folders.iter().any(|folder| {
            let folder = match (folder.strip_prefix("~"), &home) {
                (Ok(rest), Some(home)) => home.join(rest),
                _ => folder.clone(),
            };
            project.starts_with(agentry_plugin::paths::canonical_path(&folder))
        })
    }

    /// Fails on a top-level key that is neither the framework's nor one of `sections` (the keys
    /// the agent's tool providers read), naming the file it is in: a misspelt key is not to
    /// pass unnoticed.
    pub fn check_sections(&self, sections: &[&str]) -> Result<(), ConfigError> {
        self.sections.check_known(sections)
    }

    /// One file's configuration, its rules and sections marked as coming from it; `None` when
    /// there is no such file. A key that is neither the framework's nor one of `sections` (the
    /// keys the agent's tool providers read) is an error.
    pub fn read(path: &Path, sections: &[&str]) -> Result<Option<Config>, ConfigError> {
        let config = Self::read_layer(path)?;
        if let Some(config) = &config {
            config.check_sections(sections)?;
        }
        Ok(config)
    }

    /// One file's configuration, its rules and sections marked as coming from it, its keys
    /// unchecked; `None` when there is no such file.
    fn read_layer(path: &Path) -> Result<Option<Config>, ConfigError> {
        let Some(text) = read_text(path)? else {
            return Ok(None);
        };
        let mut config: Config = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        config.permissions = config.permissions.from_file(path);
        config.sections = config.sections.written_in(path);
        config.hooks = config.hooks.located(path, None);
        Ok(Some(config))
    }

    /// The data folder: the configured one, else the default ([`crate::data_folder`]).
    pub fn data_folder(&self) -> PathBuf {
        self.data_dir.clone().unwrap_or_else(crate::data_folder)
    }

    /// Where the session database lives: `sessions.db` in the [`data_folder`](Self::data_folder).
    pub fn database_path(&self) -> PathBuf {
        self.data_folder().join("sessions.db")
    }

    /// The model: `spec` (a flag, say), else the configuration's `model`, else the default for
    /// the API keys set; opened with the configured providers and the process's environment.
    pub fn open_model(&self, spec: Option<&str>) -> Result<Arc<dyn Model>, ModelError> {
        let env = |name: &str| std::env::var(name).ok();
        let catalog = ModelCatalog::new(&self.providers, &env);
        let catalog = catalog.with_http(self.model_requests.http_options());
        let spec = match spec.map(str::to_owned).or_else(|| self.model.clone()) {
            Some(spec) => spec,
            None => catalog.default_model()?,
        };
        catalog.open(&spec)
    }

    /// Each model provider (built in and configured), and whether its credentials are found
    /// in the process's environment and AWS's files.
    pub fn model_providers(&self) -> Vec<ProviderSurvey> {
        let env = |name: &str| std::env::var(name).ok();
        ModelCatalog::new(&self.providers, &env).survey()
    }

    /// The models a front-end may switch a session to: `default`, then the configuration's
    /// `models`, opened through the same catalog.
    pub fn offered_models(&self, default: String) -> OfferedModels {
        OfferedModels::new(
            self.providers.clone(),
            std::iter::once(default).chain(self.models.iter().cloned()),
        )
        .with_http(self.model_requests.http_options())
    }

    /// The permission policy: `mode` (a flag, say), else the configuration's, else `default`;
    /// the configuration's rules, with `allow` and `deny` (flags given in `project`, where
    /// their `/path` patterns start) added.
    pub fn policy(
        &self,
        project: &Path,
        mode: Option<&str>,
        allow: &[String],
        deny: &[String],
    ) -> Result<PermissionPolicy, PermissionError> {
        let mode = match mode.or(self.permission_mode.as_deref()) {
            Some(mode) => mode.parse()?,
            None => PermissionMode::Default,
        };
        let flags = |texts: &[String]| -> Vec<WrittenRule> {
            texts
                .iter()
                .map(|text| WrittenRule {
                    text: text.clone(),
                    origin: RuleOrigin::command_line(project),
                })
                .collect()
        };
        let rules = self.permissions.clone().merged(PermissionRules {
            allow: flags(allow),
            deny: flags(deny),
            ..PermissionRules::default()
        });
        let rules = rules
            .rules()
            .map(|(action, rule)| rule.parse(action))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PermissionPolicy {
            mode,
            rules,
            additional_directories: self.permissions.additional_directories.clone(),
            relative_to: None,
            protected_paths: std::iter::once(self.data_folder())
                .chain(
                    self.project_trusted
                        .then(|| trust::files_settings_run(project))
                        .into_iter()
                        .flatten(),
                )
                .collect(),
        })
    }
}

/// The most bytes a configuration file may hold.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A configuration file's text; `None` when there is no such file. Only a regular file (or a
/// link to one) of at most a megabyte is read ([`agentry_plugin::paths::read_regular_file`]).
pub(crate) fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    agentry_plugin::paths::read_regular_file(path, MAX_CONFIG_BYTES).map_err(|source| {
        if source.kind() == std::io::ErrorKind::InvalidData {
            ConfigError::Invalid {
                path: path.to_path_buf(),
                message: source.to_string(),
            }
        } else {
            ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_layers_override_values_and_extend_lists() {
        let user: Config = toml::from_str(
            "model = \"a\"\nmax_turn_requests = 5\nmax_fork_depth = 1\n[permissions]\nallow = [\"Read\"]\n[tools]\ndisabled = [\"Bash\"]",
        )
        .unwrap();
        let project: Config =
            toml::from_str("model = \"b\"\n[permissions]\nallow = [\"Write\"]\ndeny = [\"Bash\"]")
                .unwrap();
        let merged = user.merge(project);
        assert_eq!(merged.model.as_deref(), Some("b"));
        assert_eq!(merged.max_turn_requests, Some(5));
        assert_eq!(merged.max_fork_depth, Some(1));
        assert_eq!(merged.tools.disabled, ["Bash"]);
        let texts = |rules: &[WrittenRule]| -> Vec<String> {
            rules.iter().map(|rule| rule.text.clone()).collect()
        };
        assert_eq!(texts(&merged.permissions.allow), ["Read", "Write"]);
        assert_eq!(texts(&merged.permissions.deny), ["Bash"]);
    }

    #[test]
    fn the_policy_takes_the_flags_mode_and_adds_their_rules() {
        let config: Config = toml::from_str(
            "permission_mode = \"plan\"\n[permissions]\nallow = [\"Read\"]\ndeny = [\"Bash\"]",
        )
        .unwrap();
        let project = Path::new("/p");
        let policy = config.policy(project, None, &[], &[]).unwrap();
        assert_eq!(policy.mode, PermissionMode::Plan);
        assert_eq!(policy.rules.len(), 2);
        let flagged = config
            .policy(project, Some("bypass"), &["Write(/src/**)".to_owned()], &[])
            .unwrap();
        assert_eq!(flagged.mode, PermissionMode::Bypass);
        assert_eq!(flagged.rules.len(), 3);
        let flag = &flagged.rules[2];
        assert_eq!(flag.origin.to_string(), "the command line");
        assert_eq!(flag.origin.root.as_deref(), Some(project));
        assert!(config.policy(project, Some("sometimes"), &[], &[]).is_err());
    }

    #[test]
    fn the_model_comes_from_the_spec_then_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s.json");
        std::fs::write(&script, r#"{"responses": []}"#).unwrap();
        let config = Config {
            model: Some(format!("scripted:{}", script.display())),
            ..Config::default()
        };
        assert_eq!(config.open_model(None).unwrap().name(), "scripted");
        let unknown = config.open_model(Some("nowhere/model")).err().unwrap();
        assert!(
            unknown.to_string().contains("unknown provider `nowhere`"),
            "{unknown}"
        );
    }

    #[test]
    fn an_untrusted_projects_files_add_only_what_narrows() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agentry")).unwrap();
        std::fs::write(
            dir.path().join(".agentry/config.toml"),
            "permission_mode = \"bypass\"\n[permissions]\nallow = [\"Bash\"]\ndeny = [\"Read(.env)\"]\n",
        )
        .unwrap();
        let (config, withheld) = Config::load_trusting(dir.path(), false).unwrap();
        assert_eq!(config.permission_mode, None);
        assert!(!config.project_trusted);
        assert!(
            config
                .permissions
                .deny
                .iter()
                .any(|rule| rule.text == "Read(.env)")
        );
        assert!(
            !config
                .permissions
                .allow
                .iter()
                .any(|rule| rule.text == "Bash")
        );
        assert_eq!(withheld.len(), 2, "{withheld:?}");
        let (trusted, nothing) = Config::load_trusting(dir.path(), true).unwrap();
        assert_eq!(trusted.permission_mode.as_deref(), Some("bypass"));
        assert!(trusted.project_trusted);
        assert!(nothing.is_empty());
    }

    #[test]
    fn trusted_folders_cover_the_folders_inside_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("inner")).unwrap();
        let config = Config {
            trusted_folders: vec![dir.path().to_path_buf()],
            ..Config::default()
        };
        assert!(config.trusts_folder(dir.path()));
        assert!(config.trusts_folder(&dir.path().join("inner")));
        assert!(!config.trusts_folder(dir.path().parent().unwrap()));
    }

    #[test]
    fn unknown_keys_are_errors_that_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agentry")).unwrap();
        std::fs::write(dir.path().join(".agentry/config.toml"), "modle = \"x\"").unwrap();
        let error = Config::read(&dir.path().join(".agentry/config.toml"), &[])
            .unwrap_err()
            .to_string();
        assert!(error.contains(".agentry/config.toml"), "{error}");
        assert!(error.contains("modle"), "{error}");
    }
}
