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

/// Every tool an agent can call, by name. Cloning is cheap (the tools are shared).
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    providers: Vec<ProviderInfo>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a provider and all its tools; nothing is registered if any tool is rejected.
    pub fn register(&mut self, provider: &dyn Provider) -> Result<(), RegistryError> {
        self.register_except(provider, &[])
    }

    /// Registers a provider without the tools named in `disabled`.
    pub fn register_except(
        &mut self,
        provider: &dyn Provider,
        disabled: &[String],
    ) -> Result<(), RegistryError> {
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
        self.providers.push(ProviderInfo {
            name: provider_name,
            description: provider.description(),
            origin: provider.origin(),
            tools: staged.iter().map(|t| t.tool.name().to_owned()).collect(),
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
    pub fn providers(&self) -> &[ProviderInfo] {
        &self.providers
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
