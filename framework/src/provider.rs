//! Providers (named families of tools) and the [`ToolRegistry`] that resolves tool names.

use crate::model::ToolDefinition;
use crate::tool::DynTool;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub use agentry_plugin::provider::{
    Login, Provider, ProviderOrigin, ProviderStatus, SimpleProvider,
};

/// Why a provider or tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two tools share a name.
    #[error(
        "tool `{tool}` from provider `{provider}` clashes with the tool of that name from provider `{existing}`"
    )]
    DuplicateTool {
        /// The tool's name.
        tool: String,
        /// The provider being registered.
        provider: String,
        /// The provider that registered the name first.
        existing: String,
    },
}

/// Why an input could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputProblem {
    /// The input does not match the schema: every problem, with where it is.
    Mismatch(String),
    /// The tool's own schema is not a valid JSON Schema (the tool's fault, not the input's).
    BrokenSchema(String),
}

/// A tool in the registry. Its schema is read when the model first needs the tool definitions,
/// and its validator compiled on its first call, not when it is registered: compiling a JSON
/// Schema validator first loads the meta-schemas (about 10 ms and 13 MiB), which an agent that
/// starts and waits (an editor's, before its first prompt) should not pay for. A plugin's tool
/// has its schema checked against its meta-schema at that first reading too (milliseconds a
/// tool, the most of a thin agentry's start-up were it done at load): one that fails is kept
/// from the model and its calls are refused with the reason.
pub struct RegisteredTool {
    /// The tool.
    pub tool: Arc<dyn DynTool>,
    /// The provider it came from.
    pub provider: String,
    /// Whether its schema is checked before the model sees it (it comes from a plugin).
    checked: bool,
    schema: OnceLock<Value>,
    schema_problem: OnceLock<Option<String>>,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl RegisteredTool {
    fn new(tool: Arc<dyn DynTool>, provider: String, checked: bool) -> Self {
        RegisteredTool {
            tool,
            provider,
            checked,
            schema: OnceLock::new(),
            schema_problem: OnceLock::new(),
            validator: OnceLock::new(),
        }
    }

    /// Its input schema.
    pub fn schema(&self) -> &Value {
        self.schema.get_or_init(|| self.tool.input_schema())
    }

    /// Why its schema cannot be used: its `$ref`s loop on the same value (which a validator
    /// would follow without end), or, for a checked tool, it fails its meta-schema (said once in
    /// the log, when first found).
    pub fn schema_problem(&self) -> Option<&str> {
        self.schema_problem
            .get_or_init(|| {
                let problem = match crate::schema::runaway_references(self.schema()) {
                    Some(runaway) => runaway,
                    None if !self.checked => return None,
                    None => match jsonschema::meta::try_validate(self.schema()) {
                        Ok(Ok(())) => return None,
                        Ok(Err(invalid)) => invalid.to_string(),
                        Err(unknown_draft) => unknown_draft.to_string(),
                    },
                };
                tracing::warn!(
                    "tool `{}` from `{}` is left out: its input schema is not a valid JSON Schema: {problem}",
                    self.tool.name(),
                    self.provider
                );
                Some(problem)
            })
            .as_deref()
    }

    /// Checks an input against the tool's schema.
    pub fn validate(&self, input: &Value) -> Result<(), InputProblem> {
        if let Some(problem) = self.schema_problem() {
            return Err(InputProblem::BrokenSchema(problem.to_owned()));
        }
        let validator = self
            .validator
            .get_or_init(|| jsonschema::validator_for(self.schema()).map_err(|e| e.to_string()));
        match validator {
            Ok(validator) => crate::schema::check(validator, input).map_err(InputProblem::Mismatch),
            Err(problem) => Err(InputProblem::BrokenSchema(problem.clone())),
        }
    }
}

/// Summary of a registered provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderInfo {
    /// The provider's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Where it comes from.
    pub origin: ProviderOrigin,
    /// Its tools' names, in registration order.
    pub tools: Vec<String>,
    /// Whether its tools may wait until the model finds them with `ToolSearch` (an MCP
    /// server's, or a provider's that [defers its tools](Provider::defers_tools)).
    pub deferrable: bool,
}

/// A registered provider: what it offered when last read, and how to read it again.
#[derive(Clone)]
struct ProviderEntry {
    info: ProviderInfo,
    provider: Arc<dyn Provider>,
    /// The provider's revision when its tools were read.
    revision: u64,
    disabled: Vec<String>,
    /// Folders the model may read without asking (canonical).
    readable_roots: Vec<PathBuf>,
}

/// Warns, once per process and name, of each name in `disabled` under `provider`'s tool prefix
/// (an MCP server's `mcp__SERVER__`) that the provider, now ready, does not offer: a typo the
/// configuration could not catch before the server answered.
fn warn_of_names_not_offered(
    provider: &dyn Provider,
    offered: &[Arc<dyn DynTool>],
    disabled: &[String],
) {
    static WARNED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let Some(prefix) = provider.tool_prefix() else {
        return;
    };
    if !matches!(provider.status(), ProviderStatus::Ready) {
        return;
    }
    let names: Vec<&str> = offered.iter().map(|tool| tool.name()).collect();
    let missing = disabled
        .iter()
        .filter(|name| name.starts_with(&prefix) && !names.contains(&name.as_str()));
    for name in missing {
        if crate::sync::lock(&WARNED).insert(name.clone()) {
            tracing::warn!(
                "the tool `{name}` is disabled, but `{}` offers no tool of that name (it has: {})",
                provider.name(),
                names.join(", ")
            );
        }
    }
}

/// Every tool an agent can call, by name. Cloning is cheap (the tools are shared).
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    /// Other names tools accept, each with the tool's own name.
    aliases: BTreeMap<String, String>,
    /// When set, the only tools kept (a sub-agent's).
    only: Option<Vec<String>>,
    providers: Vec<ProviderEntry>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a provider and all its tools; nothing is registered if any tool is rejected.
    pub fn register(&mut self, provider: Arc<dyn Provider>) -> Result<(), RegistryError> {
        self.register_except(provider, &[])
    }

    /// Registers a provider without the tools named in `disabled`.
    pub fn register_except(
        &mut self,
        provider: Arc<dyn Provider>,
        disabled: &[String],
    ) -> Result<(), RegistryError> {
        let revision = provider.revision();
        let provider_name = provider.name().to_owned();
        let checked = matches!(provider.origin(), ProviderOrigin::Plugin { .. });
        // An MCP server names its own tools: one that collides with a tool already there is
        // left out, and the agent starts.
        let lenient = matches!(provider.origin(), ProviderOrigin::McpServer { .. });
        let mut staged = Vec::new();
        let offered = provider.tools();
        warn_of_names_not_offered(provider.as_ref(), &offered, disabled);
        let tools = offered
            .into_iter()
            .filter(|tool| !disabled.iter().any(|name| name == tool.name()));
        for tool in tools {
            let name = tool.name().to_owned();
            let existing = self
                .tools
                .get(&name)
                .map(|t| t.provider.clone())
                .or_else(|| {
                    staged
                        .iter()
                        .any(|t: &RegisteredTool| t.tool.name() == name)
                        .then(|| provider_name.clone())
                });
            if let Some(existing) = existing {
                if lenient {
                    tracing::warn!(
                        "`{name}` of the MCP server `{provider_name}` is left out: `{existing}` has a tool of that name"
                    );
                    continue;
                }
                return Err(RegistryError::DuplicateTool {
                    tool: name,
                    provider: provider_name,
                    existing,
                });
            }
            staged.push(RegisteredTool::new(tool, provider_name.clone(), checked));
        }
        self.providers.push(ProviderEntry {
            info: ProviderInfo {
                name: provider_name,
                description: provider.description(),
                origin: provider.origin(),
                tools: staged.iter().map(|t| t.tool.name().to_owned()).collect(),
                deferrable: lenient || provider.defers_tools(),
            },
            readable_roots: provider
                .readable_roots()
                .iter()
                .map(|root| agentry_plugin::paths::canonical_path(root))
                .collect(),
            provider,
            revision,
            disabled: disabled.to_vec(),
        });
        for tool in staged {
            for alias in tool.tool.aliases() {
                self.aliases.insert(alias, tool.tool.name().to_owned());
            }
            self.tools
                .insert(tool.tool.name().to_owned(), Arc::new(tool));
        }
        Ok(())
    }

    /// The registry with only the tools named in `names` (also when its providers' tools are
    /// read again).
    pub fn only(&self, names: &[String]) -> ToolRegistry {
        let mut narrowed = self.clone();
        narrowed.only = Some(names.to_vec());
        narrowed.narrow();
        narrowed
    }

    /// Leaves out what `only` does not name.
    fn narrow(&mut self) {
        let Some(names) = &self.only else {
            return;
        };
        let keep = |name: &str| names.iter().any(|kept| kept == name);
        self.tools.retain(|name, _| keep(name));
        self.aliases.retain(|_, name| keep(name));
        for entry in &mut self.providers {
            entry.info.tools.retain(|name| keep(name));
        }
    }

    /// Folders the providers let the model read without asking (canonical).
    pub fn readable_roots(&self) -> impl Iterator<Item = &Path> {
        self.providers
            .iter()
            .flat_map(|entry| entry.readable_roots.iter().map(PathBuf::as_path))
    }

    /// The tool of that name, or else the tool that accepts it as an alias.
    pub fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools
            .get(name)
            .or_else(|| self.tools.get(self.aliases.get(name)?))
            .cloned()
    }

    /// Every tool's name, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// Every tool, by name.
    pub fn tools(&self) -> impl Iterator<Item = &dyn DynTool> + Clone {
        self.tools
            .values()
            .map(|registered| registered.tool.as_ref())
    }

    /// The notices for the model that providers keep outside the session's state (see
    /// [`Provider::take_notices`]), taken.
    pub fn take_notices(&self, session_id: &crate::ids::SessionId) -> Vec<String> {
        self.providers
            .iter()
            .flat_map(|entry| entry.provider.take_notices(session_id))
            .collect()
    }

    /// Tells every provider that the session `session_id` ended (see
    /// [`Provider::end_session`]).
    pub fn end_session(&self, session_id: &crate::ids::SessionId) {
        for entry in &self.providers {
            entry.provider.end_session(session_id);
        }
    }

    /// The registered providers, in registration order.
    pub fn providers(&self) -> Vec<&ProviderInfo> {
        self.providers.iter().map(|entry| &entry.info).collect()
    }

    /// Each provider's summary with how it is doing now ([`Provider::status`]): an MCP server
    /// that is down or needs login offers no tools, and says why.
    pub fn provider_statuses(&self) -> Vec<(&ProviderInfo, ProviderStatus)> {
        self.providers
            .iter()
            .map(|entry| (&entry.info, entry.provider.status()))
            .collect()
    }

    /// The registry read again from its providers when one of them changed its tools since
    /// (see [`Provider::revision`]); `None` when nothing changed. A provider whose new tools
    /// are rejected (a name clash) is left out, and the reason logged.
    pub fn refreshed(&self) -> Option<ToolRegistry> {
        let changed = self
            .providers
            .iter()
            .any(|entry| entry.provider.revision() != entry.revision);
        if !changed {
            return None;
        }
        let mut fresh = ToolRegistry::new();
        for entry in &self.providers {
            if let Err(problem) = fresh.register_except(entry.provider.clone(), &entry.disabled) {
                tracing::warn!(
                    "the new tools of `{}` are left out: {problem}",
                    entry.info.name
                );
            }
        }
        fresh.only = self.only.clone();
        fresh.narrow();
        Some(fresh)
    }

    /// The tools that may wait until the model finds them with `ToolSearch`, by the group the
    /// model is told of: an MCP server's name, or the provider's.
    pub fn deferrable_groups(&self) -> Vec<(String, Vec<String>)> {
        self.providers
            .iter()
            .filter(|entry| entry.info.deferrable)
            .map(|entry| {
                let group = match &entry.info.origin {
                    ProviderOrigin::McpServer { server } => server.clone(),
                    _ => entry.info.name.clone(),
                };
                let tools = entry
                    .info
                    .tools
                    .iter()
                    .filter(|name| self.tools.contains_key(*name))
                    .cloned()
                    .collect();
                (group, tools)
            })
            .filter(|(_, tools): &(String, Vec<String>)| !tools.is_empty())
            .collect()
    }

    /// The definitions sent to the model, sorted by name.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.definitions_offered(true)
    }

    /// The definitions sent to the model in a chat where someone can (or cannot) answer
    /// questions: tools that need a person are left out when nobody can.
    pub fn definitions_offered(&self, someone_answers: bool) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .filter(|t| someone_answers || !t.tool.needs_user())
            .filter(|t| t.schema_problem().is_none())
            .map(|t| ToolDefinition {
                name: t.tool.name().to_owned(),
                description: t.tool.description(),
                input_schema: crate::coerce::for_model(t.schema()),
            })
            .collect()
    }
}
