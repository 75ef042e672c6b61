//! Providers (named families of tools) and the [`ToolRegistry`] that resolves tool names.

use crate::model::ToolDefinition;
use crate::tool::DynTool;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use agentry_plugin::provider::{Provider, ProviderOrigin, SimpleProvider};

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
    /// A tool's input schema is not a valid JSON Schema.
    #[error("tool `{tool}` from provider `{provider}` has an invalid input schema: {message}")]
    InvalidSchema {
        /// The tool's name.
        tool: String,
        /// Its provider.
        provider: String,
        /// What the schema validator said.
        message: String,
    },
}

/// A tool in the registry, with its compiled input validator.
pub struct RegisteredTool {
    /// The tool.
    pub tool: Arc<dyn DynTool>,
    /// The provider it came from.
    pub provider: String,
    /// Its input schema.
    pub schema: Value,
    validator: jsonschema::Validator,
}

impl RegisteredTool {
    /// Checks an input against the tool's schema; the error lists every problem, with where it is.
    pub fn validate(&self, input: &Value) -> Result<(), String> {
        crate::schema::check(&self.validator, input)
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
}

/// A registered provider: what it offered when last read, and how to read it again.
#[derive(Clone)]
struct ProviderEntry {
    info: ProviderInfo,
    provider: Arc<dyn Provider>,
    /// The provider's revision when its tools were read.
    revision: u64,
    disabled: Vec<String>,
}

/// Every tool an agent can call, by name. Cloning is cheap (the tools are shared).
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
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
        let mut staged = Vec::new();
        let tools = provider
            .tools()
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
                return Err(RegistryError::DuplicateTool {
                    tool: name,
                    provider: provider_name,
                    existing,
                });
            }
            let schema = tool.input_schema();
            let validator =
                jsonschema::validator_for(&schema).map_err(|e| RegistryError::InvalidSchema {
                    tool: name.clone(),
                    provider: provider_name.clone(),
                    message: e.to_string(),
                })?;
            staged.push(RegisteredTool {
                tool,
                provider: provider_name.clone(),
                schema,
                validator,
            });
        }
        self.providers.push(ProviderEntry {
            info: ProviderInfo {
                name: provider_name,
                description: provider.description(),
                origin: provider.origin(),
                tools: staged.iter().map(|t| t.tool.name().to_owned()).collect(),
            },
            provider,
            revision,
            disabled: disabled.to_vec(),
        });
        for tool in staged {
            self.tools
                .insert(tool.tool.name().to_owned(), Arc::new(tool));
        }
        Ok(())
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools.get(name).cloned()
    }

    /// Every tool's name, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// The registered providers, in registration order.
    pub fn providers(&self) -> Vec<&ProviderInfo> {
        self.providers.iter().map(|entry| &entry.info).collect()
    }

    /// The registry read again from its providers when one of them changed its tools since
    /// (see [`Provider::revision`]); `None` when nothing changed. A provider whose new tools
    /// are rejected (a name clash, an invalid schema) is left out, and the reason logged.
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
        Some(fresh)
    }

    /// The definitions sent to the model, sorted by name.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .values()
            .map(|t| ToolDefinition {
                name: t.tool.name().to_owned(),
                description: t.tool.description(),
                input_schema: t.schema.clone(),
            })
            .collect()
    }
}
