//! What the plugin offers the host: its own provider (handle 0), as last made, and the
//! providers it hosts by handle (the servers of an MCP client, configured or handed to a
//! session), each described, and its tools and commands found, by handle.

use crate::wire::{Description, ProviderState, ToolDescription};
use agentry_plugin::commands::{CommandSource, SlashCommand};
use agentry_plugin::provider::{Login, Provider, ProviderOrigin};
use agentry_plugin::session_servers::SessionServers;
use agentry_plugin::sync::lock;
use agentry_plugin::tool::DynTool;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The plugin's providers.
pub(super) struct Providers {
    /// The plugin's own provider, as last made (anew by each `configure`).
    own: RwLock<Arc<Own>>,
    /// The providers it hosts.
    hosted: Registry,
}

/// The hosted providers, by handle.
#[derive(Default)]
struct Registry {
    providers: Mutex<HashMap<u64, Hosted>>,
    next_handle: AtomicU64,
}

/// The plugin's own provider, what it offers, and the handles of those it hosts.
pub(super) struct Own {
    provider: Arc<dyn Provider>,
    pub(super) description: Description,
    tools: HashMap<String, Arc<dyn DynTool>>,
    session_servers: Option<Arc<dyn SessionServers>>,
}

/// A hosted provider, and whether it came with the own provider (dropped when that is made
/// anew) or from a session ([`Providers::connect`], dropped when the host releases it).
struct Hosted {
    provider: Arc<dyn Provider>,
    configured: bool,
}

/// The description of `provider` as it is now.
pub(super) fn describe(provider: &dyn Provider) -> Description {
    describe_with(provider, &provider.tools())
}

/// The description of `provider`, whose tools are `tools`.
fn describe_with(provider: &dyn Provider, tools: &[Arc<dyn DynTool>]) -> Description {
    let origin = match provider.origin() {
        ProviderOrigin::BuiltIn | ProviderOrigin::Plugin { .. } => None,
        other => Some(other),
    };
    let commands = provider.commands();
    let tool_prefix = provider.tool_prefix();
    Description {
        name: provider.name().to_owned(),
        description: provider.description(),
        tools: tools
            .iter()
            .map(|tool| describe_tool(tool.as_ref()))
            .collect(),
        sections: None,
        readable_roots: provider.readable_roots(),
        commands: commands.is_some(),
        changing: provider.revision() != 0
            || tool_prefix.is_some()
            || commands.is_some_and(|source| source.changes().is_some()),
        origin,
        tool_prefix,
        hosted: Vec::new(),
        session_servers: None,
        login: provider.login().is_some(),
    }
}

fn describe_tool(tool: &dyn DynTool) -> ToolDescription {
    ToolDescription {
        name: tool.name().to_owned(),
        description: tool.description(),
        kind: tool.kind(),
        input_schema: tool.input_schema(),
        aliases: tool.aliases(),
        rule_patterns: Some(tool.rule_patterns()),
        needs_user: tool.needs_user(),
    }
}

impl Registry {
    /// Hosts `provider`: returns its handle (from 1).
    fn host(&self, provider: Arc<dyn Provider>, configured: bool) -> u64 {
        let handle = self.next_handle.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&self.providers).insert(
            handle,
            Hosted {
                provider,
                configured,
            },
        );
        handle
    }

    /// `provider` as the plugin's own (made with a recipe reading `sections`, or none), with
    /// the providers it hosts in place of an earlier own provider's.
    fn own(&self, provider: Arc<dyn Provider>, sections: Option<Vec<String>>) -> Own {
        let earlier: Vec<Hosted> = lock(&self.providers)
            .extract_if(|_, hosted| hosted.configured)
            .map(|(_, hosted)| hosted)
            .collect();
        // The earlier servers stop outside the lock.
        drop(earlier);
        let tools = provider.tools();
        let mut description = describe_with(provider.as_ref(), &tools);
        description.hosted = provider
            .hosted()
            .into_iter()
            .map(|hosted| self.host(hosted, true))
            .collect();
        let session_servers = provider.session_servers();
        description.sections = sections;
        description.session_servers = session_servers.as_ref().map(|hook| hook.transports());
        let tools = tools
            .into_iter()
            .map(|tool| (tool.name().to_owned(), tool))
            .collect();
        Own {
            provider,
            description,
            tools,
            session_servers,
        }
    }
}

impl Providers {
    /// The providers of `provider`, made with a recipe reading `sections` (or none).
    pub(super) fn new(provider: Arc<dyn Provider>, sections: Option<Vec<String>>) -> Self {
        let hosted = Registry::default();
        let own = hosted.own(provider, sections);
        Self {
            own: RwLock::new(Arc::new(own)),
            hosted,
        }
    }

    /// Takes `provider` as the plugin's own (made anew from settings), with the providers it
    /// hosts in place of the earlier one's; returns its description.
    pub(super) fn replace(
        &self,
        provider: Arc<dyn Provider>,
        sections: Option<Vec<String>>,
    ) -> Description {
        let own = self.hosted.own(provider, sections);
        let description = own.description.clone();
        *self
            .own
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(own);
        description
    }

    /// The plugin's own provider and what it offers.
    pub(super) fn own(&self) -> Arc<Own> {
        self.own
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The provider of handle `handle` (0: the plugin's own).
    pub(super) fn provider(&self, handle: u64) -> Result<Arc<dyn Provider>, String> {
        if handle == 0 {
            return Ok(self.own().provider.clone());
        }
        lock(&self.hosted.providers)
            .get(&handle)
            .map(|hosted| hosted.provider.clone())
            .ok_or_else(|| format!("the plugin holds no provider {handle}"))
    }

    /// The description of the provider `handle` as it is now.
    pub(super) fn describe(&self, handle: u64) -> Result<Description, String> {
        if handle == 0 {
            return Ok(self.own().description.clone());
        }
        Ok(describe(self.provider(handle)?.as_ref()))
    }

    /// How the provider `handle` stands now.
    pub(super) fn state(&self, handle: u64) -> Result<ProviderState, String> {
        let provider = self.provider(handle)?;
        let commands_revision = provider
            .commands()
            .and_then(|source| source.changes())
            .map_or(0, |changes| *changes.borrow());
        Ok(ProviderState {
            revision: provider.revision(),
            commands_revision,
            status: provider.status(),
        })
    }

    /// The tool `name` of the provider `handle`.
    pub(super) fn tool(&self, handle: u64, name: &str) -> Result<Arc<dyn DynTool>, String> {
        let found = if handle == 0 {
            self.own().tools.get(name).cloned()
        } else {
            let tools = self.provider(handle)?.tools();
            tools.into_iter().find(|tool| tool.name() == name)
        };
        found.ok_or_else(|| format!("the plugin has no tool `{name}`"))
    }

    /// The slash commands of the provider `handle`.
    pub(super) fn commands(&self, handle: u64) -> Result<Option<Arc<dyn CommandSource>>, String> {
        Ok(self.provider(handle)?.commands())
    }

    /// The login of the provider `handle`.
    pub(super) fn login(&self, handle: u64) -> Result<Arc<dyn Login>, String> {
        self.provider(handle)?
            .login()
            .ok_or_else(|| format!("the plugin's provider {handle} has no login"))
    }

    /// The slash command `name` (of `origin`) of the provider `handle`.
    pub(super) fn command(
        &self,
        handle: u64,
        name: &str,
        origin: Option<&str>,
    ) -> Result<Arc<dyn SlashCommand>, String> {
        self.commands(handle)?
            .iter()
            .flat_map(|source| source.commands())
            .find(|command| command.name() == name && command.origin() == origin)
            .ok_or_else(|| format!("the plugin has no slash command `{name}`"))
    }

    /// Hosts `provider`, handed over for a session: returns its handle.
    pub(super) fn connect(&self, provider: Arc<dyn Provider>) -> u64 {
        self.hosted.host(provider, false)
    }

    /// The hook connecting the servers a client hands to a session, when the own provider
    /// offers one.
    pub(super) fn session_servers(&self) -> Result<Arc<dyn SessionServers>, String> {
        self.own()
            .session_servers
            .clone()
            .ok_or_else(|| "the plugin connects no session servers".to_owned())
    }

    /// Drops the session's provider `handle` (stopping its server), outside the lock.
    pub(super) fn release(&self, handle: u64) {
        let released = lock(&self.hosted.providers).remove(&handle);
        drop(released);
    }
}
