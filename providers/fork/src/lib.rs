//! # agentry-fork
//!
//! Sub-agents: the **Agent** tool hands a task to a sub-agent, which runs as a nested agent loop
//! (the host's [`SubAgentRunner`](agentry::tool::SubAgentRunner) service, so it works linked
//! and as a plugin) with its own system prompt, tools and model, and answers once. Its turns join the session's event stream tagged with
//! the Agent call's id (`parent_fork_tool_call_id`) and their own `loop_id`.
//!
//! Sub-agents are defined in Markdown files with YAML front matter, in the format Claude Code
//! users already have, read from `~/.config/agentry/agents/`, the project's `.claude/agents/`
//! and its `.agentry/agents/` (the later wins on a shared name). A general-purpose sub-agent
//! always exists.
//!
//! ```
//! use agentry::prelude::*;
//! use agentry_fork::Forks;
//!
//! let (forks, problems) = Forks::load(std::path::Path::new("."), None);
//! assert!(problems.is_empty());
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(forks);
//! # let _ = builder;
//! ```
//!
//! A team's own sub-agent types, defined in code:
//!
//! ```
//! use agentry::permission::PermissionMode;
//! use agentry::prelude::*;
//! use agentry_fork::{Forks, SubAgentDefinition};
//!
//! let auditor = SubAgentDefinition {
//!     name: "dependency-auditor".into(),
//!     description: "Checks a crate's dependencies for known problems.".into(),
//!     tools: Some(vec!["Read".into(), "Grep".into()]),
//!     model: None,
//!     max_turns: Some(20),
//!     permission_mode: Some(PermissionMode::Plan),
//!     system_prompt: "You audit Cargo.toml files. Report each problem with its line.".into(),
//!     path: None,
//! };
//! let forks = Forks::new(vec![SubAgentDefinition::general_purpose(), auditor]);
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(forks);
//! # let _ = builder;
//! ```
//!
//! For sub-agents that are not Markdown-defined at all, a tool of one's own can run them with
//! [`SubAgents`](agentry::subagent::SubAgents), which every tool call is offered.

mod agent_tool;
mod definition;

pub use agent_tool::{AgentInput, AgentTool};
pub use definition::{DefinitionError, GENERAL_PURPOSE, SubAgentDefinition, folders, load};

use agentry::provider::Provider;
use agentry::settings::{Configured, Making, Recipe, Settings, made};
use agentry::tool::{DynTool, erase};
use std::path::Path;
use std::sync::Arc;

/// The `fork` provider: the Agent tool over a set of sub-agent definitions.
#[derive(Clone)]
pub struct Forks {
    definitions: Arc<Vec<SubAgentDefinition>>,
}

impl Forks {
    /// The provider over these definitions (add the general-purpose one yourself, or use
    /// [`Forks::load`]).
    pub fn new(definitions: Vec<SubAgentDefinition>) -> Self {
        Self {
            definitions: Arc::new(definitions),
        }
    }

    /// The general-purpose sub-agent and those defined for `project` (and the user, when
    /// `user_config` is their agentry configuration folder), with the files that could not be
    /// used.
    pub fn load(project: &Path, user_config: Option<&Path>) -> (Self, Vec<DefinitionError>) {
        let (definitions, errors) = load(&folders(project, user_config));
        (Self::new(definitions), errors)
    }

    /// The sub-agents offered.
    pub fn definitions(&self) -> &[SubAgentDefinition] {
        &self.definitions
    }
}

/// How the sub-agents are made, linked or as a plugin: the general-purpose one and those
/// defined for the user and the project (definitions that cannot be used are reported and left
/// out).
pub const RECIPE: Recipe = Recipe {
    name: "fork",
    sections: &[],
    make,
};

fn make(settings: Settings) -> Making {
    let (mut definitions, mut problems) =
        load(&folders(&settings.project, settings.user_folder.as_deref()));
    // The enabled Claude Code plugins' sub-agents, named `PLUGIN:NAME`.
    let (bundled, failed) = agentry_front_matter::load_bundled(
        &settings.bundles,
        |bundle| bundle.agents.clone(),
        SubAgentDefinition::parse,
        |definition| definition.name.as_str(),
        |definition, name| definition.name = name,
    );
    definitions.extend(bundled);
    problems.extend(failed);
    let mut problems: Vec<String> = problems
        .into_iter()
        .map(|problem| format!("sub-agent not loaded: {problem}"))
        .collect();
    if !settings.project_trusted {
        problems.extend(drop_project_models(&mut definitions, &settings.project));
    }
    made(Ok(
        Configured::new(Forks::new(definitions)).with_problems(problems)
    ))
}

/// Leaves the caller's model to the sub-agents a folder not trusted defines: their `model` could
/// send the conversation (and the user's key for that provider) somewhere the user never chose.
/// One notice per model left out.
fn drop_project_models(definitions: &mut [SubAgentDefinition], project: &Path) -> Vec<String> {
    let project_folders = folders(project, None);
    definitions
        .iter_mut()
        .filter(|definition| {
            definition.path.as_deref().is_some_and(|path| {
                project_folders
                    .iter()
                    .any(|folder| path.starts_with(folder))
            })
        })
        .filter_map(|definition| {
            let model = definition.model.take()?;
            Some(format!(
                "the sub-agent `{}` runs on the session's model, not `{model}`: this folder is not trusted (`agentry trust`)",
                definition.name
            ))
        })
        .collect()
}

impl Provider for Forks {
    fn name(&self) -> &str {
        "fork"
    }

    fn description(&self) -> String {
        "Sub-agents that work on a task in their own loop.".to_owned()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        vec![erase(AgentTool::new(self.definitions.clone()))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_not_trusted_cannot_choose_its_sub_agents_models() {
        let project = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        let write = |folder: &Path, text: &str| {
            std::fs::create_dir_all(folder).unwrap();
            std::fs::write(folder.join("a.md"), text).unwrap();
        };
        write(
            &project.path().join(".claude/agents"),
            "---\nname: helper\ndescription: Helps.\nmodel: llamacpp/evil\n---\nHelp.\n",
        );
        write(
            &user.path().join("agents"),
            "---\nname: mine\ndescription: Mine.\nmodel: openai/gpt-4.1\n---\nDo.\n",
        );
        let mut definitions = load(&folders(project.path(), Some(user.path()))).0;
        let notices = drop_project_models(&mut definitions, project.path());
        let model_of = |name: &str| {
            definitions
                .iter()
                .find(|definition| definition.name == name)
                .unwrap()
                .model
                .clone()
        };
        assert_eq!(model_of("helper"), None);
        assert_eq!(model_of("mine").as_deref(), Some("openai/gpt-4.1"));
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("`llamacpp/evil`"), "{}", notices[0]);
    }
}
