//! How a provider is made from the configuration: the sections it reads, the project it runs for,
//! and the [`Recipe`] that makes it. A stock provider has one recipe, which the binary follows
//! when it links the provider and the plugin follows when the host configures it (ABI 1.1's
//! `configure` query), so a provider behaves the same whichever way it is loaded.

use crate::provider::Provider;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// What a provider is made from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The configuration sections the provider reads that the configuration has, by name, each
    /// as written (a TOML table or value, read as JSON).
    #[serde(default)]
    pub sections: Map<String, Value>,
    /// The project the agent runs for (the folder holding `.agentry/`); empty before the host
    /// configures a plugin.
    #[serde(default)]
    pub project: PathBuf,
    /// The user's configuration folder (`~/.config/agentry`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_folder: Option<PathBuf>,
    /// Whether the front-end waits for what the provider starts (its servers) to answer before
    /// the agent begins: a headless run and the listings do; an editor's agent answers at once
    /// and lets slow parts join when they are ready.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wait: bool,
    /// Whether the user trusts the project's own settings: a provider starts what the project's
    /// files name (the servers of its `.mcp.json`) only then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub project_trusted: bool,
    /// The host's data folder, where a provider keeps what lasts from one run to the next (an
    /// MCP server's login tokens); `None` when the host keeps nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_folder: Option<PathBuf>,
    /// The Claude Code plugins the agent has enabled, for the providers that take up their
    /// parts (sub-agents, skills).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bundles: Vec<PluginBundle>,
}

/// A Claude Code plugin the agent has enabled: the parts of it tool providers take up, its
/// sub-agents and skills named `NAME:…` after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginBundle {
    /// Its name.
    pub name: String,
    /// Its folder.
    pub root: PathBuf,
    /// Its sub-agents' files.
    #[serde(default)]
    pub agents: Vec<PathBuf>,
    /// Its skills' folders (each holding a `SKILL.md`).
    #[serde(default)]
    pub skills: Vec<PathBuf>,
}

impl Settings {
    /// The settings for `project` with those of the sections `names` that `lookup` finds (in
    /// the configuration).
    pub fn of<'a>(
        names: impl IntoIterator<Item = &'a str>,
        lookup: impl Fn(&str) -> Option<Value>,
        project: PathBuf,
        user_folder: Option<PathBuf>,
    ) -> Self {
        let sections = names
            .into_iter()
            .filter_map(|name| Some((name.to_owned(), lookup(name)?)))
            .collect();
        Self {
            sections,
            project,
            user_folder,
            wait: false,
            project_trusted: false,
            data_folder: None,
            bundles: Vec::new(),
        }
    }

    /// The same settings, with the enabled Claude Code plugins.
    pub fn with_bundles(mut self, bundles: Vec<PluginBundle>) -> Self {
        self.bundles = bundles;
        self
    }

    /// The same settings, with the host's data folder.
    pub fn keeping_data_in(mut self, folder: PathBuf) -> Self {
        self.data_folder = Some(folder);
        self
    }

    /// The same settings, the project's own files trusted (or not).
    pub fn trusting_project(mut self, trusted: bool) -> Self {
        self.project_trusted = trusted;
        self
    }

    /// The same settings, with the front-end waiting (or not) for what the provider starts.
    pub fn waiting(mut self, wait: bool) -> Self {
        self.wait = wait;
        self
    }

    /// A section as written, when the configuration has it.
    pub fn section(&self, name: &str) -> Option<&Value> {
        self.sections.get(name)
    }
}

/// A provider made from its settings, with what in them could not be used: each problem is
/// reported to the user and the rest of the provider works (a search back-end that is not
/// usable leaves a WebSearch that says what to configure).
pub struct Configured {
    /// The provider.
    pub provider: Box<dyn Provider>,
    /// What in the settings could not be used, for the user.
    pub problems: Vec<String>,
}

impl Configured {
    /// `provider`, with nothing to report.
    pub fn new(provider: impl Provider + 'static) -> Self {
        Self {
            provider: Box::new(provider),
            problems: Vec::new(),
        }
    }

    /// With `problems` to report.
    pub fn with_problems(mut self, problems: impl IntoIterator<Item = String>) -> Self {
        self.problems.extend(problems);
        self
    }
}

/// A provider being made from its settings: at once, or after waiting (HTTP tools fetch their
/// schemas). A plugin starts its runtime's threads only for a provider made later, or at its
/// first call.
pub enum Making {
    /// Made already.
    Now(Result<Configured, String>),
    /// Made when this future ends (on a tokio runtime).
    Later(BoxFuture<'static, Result<Configured, String>>),
}

impl Making {
    /// A provider made when `making` ends.
    pub fn later(
        making: impl std::future::Future<Output = Result<Configured, String>> + Send + 'static,
    ) -> Self {
        Making::Later(Box::pin(making))
    }

    /// Waits for the provider.
    pub async fn finish(self) -> Result<Configured, String> {
        match self {
            Making::Now(made) => made,
            Making::Later(making) => making.await,
        }
    }
}

/// A provider made at once (for a recipe that needs no waiting).
pub fn made(result: Result<Configured, String>) -> Making {
    Making::Now(result)
}

/// How a provider is made: the configuration sections it reads and the function that makes it
/// from them. An error means the settings leave nothing usable: the provider is left out and
/// the error reported.
#[derive(Clone, Copy)]
pub struct Recipe {
    /// The provider's name (for messages about it before it is made).
    pub name: &'static str,
    /// The configuration sections the provider reads.
    pub sections: &'static [&'static str],
    /// Makes the provider (it may wait: HTTP tools fetch their schemas).
    pub make: fn(Settings) -> Making,
}

impl std::fmt::Debug for Recipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recipe")
            .field("name", &self.name)
            .field("sections", &self.sections)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::SimpleProvider;
    use serde_json::json;

    fn make(settings: Settings) -> Making {
        let name = settings
            .section("named")
            .and_then(|value| value["name"].as_str())
            .ok_or_else(|| "named: no name".to_owned());
        made(name.map(|name| Configured::new(SimpleProvider::new(name, "Named."))))
    }

    const RECIPE: Recipe = Recipe {
        name: "named",
        sections: &["named"],
        make,
    };

    #[test]
    fn settings_hold_only_the_named_sections_and_a_recipe_makes_its_provider_from_them() {
        let config = json!({"named": {"name": "chosen"}, "other": {"secret": 1}});
        let settings = Settings::of(
            RECIPE.sections.iter().copied(),
            |name| config.get(name).cloned(),
            PathBuf::from("/project"),
            None,
        );
        assert_eq!(settings.sections.len(), 1);
        assert!(settings.section("other").is_none());
        let made = futures::executor::block_on((RECIPE.make)(settings).finish()).unwrap();
        assert_eq!(made.provider.name(), "chosen");
        let missing = Settings::of(["named"], |_| None, PathBuf::from("/project"), None);
        let refused = futures::executor::block_on((RECIPE.make)(missing).finish());
        assert_eq!(refused.err().as_deref(), Some("named: no name"));
    }

    #[test]
    fn settings_cross_the_boundary_as_json_and_an_older_hosts_lack_of_them_reads_as_defaults() {
        let settings = Settings {
            sections: Map::from_iter([("named".to_owned(), json!({"name": "x"}))]),
            project: PathBuf::from("/p"),
            user_folder: Some(PathBuf::from("/home/u/.config/agentry")),
            wait: true,
            project_trusted: true,
            data_folder: Some(PathBuf::from("/home/u/.local/share/agentry")),
            bundles: vec![PluginBundle {
                name: "guard".to_owned(),
                root: PathBuf::from("/d/guard"),
                agents: vec![PathBuf::from("/d/guard/agents/reviewer.md")],
                skills: vec![PathBuf::from("/d/guard/skills/lint")],
            }],
        };
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(serde_json::from_value::<Settings>(json).unwrap(), settings);
        assert_eq!(
            serde_json::from_value::<Settings>(json!({})).unwrap(),
            Settings::default()
        );
    }
}
