//! Providers (named families of tools) and the [`ToolRegistry`] that resolves tool names.

use crate::model::ToolDefinition;
use crate::tool::DynTool;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A named family of tools with its configuration (file_ops, bash, an MCP server, a plugin, …).
pub trait Provider: Send + Sync {
    /// The provider's name (`file_ops`, `bash`, …).
    fn name(&self) -> &str;
    /// A one-line description.
    fn description(&self) -> String;
    /// The tools it offers.
    fn tools(&self) -> Vec<Arc<dyn DynTool>>;
    /// Where it comes from (linked into the binary unless it says otherwise).
    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::BuiltIn
    }
}

/// Where a provider comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProviderOrigin {
    /// Linked into the binary.
    BuiltIn,
    /// Loaded from a plugin library.
    Plugin {
        /// The library file.
        path: std::path::PathBuf,
    },
    /// Served by an MCP server.
    McpServer {
        /// The server's name in the configuration.
        server: String,
    },
}

impl std::fmt::Display for ProviderOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderOrigin::BuiltIn => f.write_str("built in"),
            ProviderOrigin::Plugin { path } => write!(f, "plugin {}", path.display()),
            ProviderOrigin::McpServer { server } => write!(f, "MCP server {server}"),
        }
    }
}

/// A provider made from a list of tools: the quickest way to group tools of your own.
pub struct SimpleProvider {
    name: String,
    description: String,
    tools: Vec<Arc<dyn DynTool>>,
}

impl SimpleProvider {
    /// An empty provider.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            tools: Vec::new(),
        }
    }

    /// Adds a tool.
    pub fn with_tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.tools.push(tool);
        self
    }
}

impl Provider for SimpleProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.tools.clone()
    }
}

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

/// Every tool an agent can call, by name.
#[derive(Default)]
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
