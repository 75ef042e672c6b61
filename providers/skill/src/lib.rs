//! # agentry-skill
//!
//! Skills in the Agent Skills format, disclosed progressively: the model sees only each skill's
//! name and description (in the **Skill** tool's description); calling `Skill` loads one
//! skill's instructions and lists its bundled files, which the model then reads with Read —
//! without a permission question, wherever the skill lives (its folder is a readable root).
//! Every skill is also a slash command (`/NAME what to do`) in every front-end.
//!
//! Skills are folders holding a `SKILL.md`, read from `~/.config/agentry/skills/`, then the
//! project's `.agents/skills/` and `.agentry/skills/` (the later wins on a shared name).
//!
//! ```
//! use agentry::prelude::*;
//! use agentry_skill::Skills;
//!
//! let (skills, problems) = Skills::load(std::path::Path::new("."), None);
//! assert!(problems.is_empty());
//! // The agent offers the provider's slash commands beside its own.
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(skills);
//! # let _ = builder;
//! ```

mod skill;

pub use skill::{Skill, SkillError, load, roots};

use agentry_plugin::commands::{CommandArgument, CommandSource, SlashCommand};
use agentry_plugin::provider::Provider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings, made};
use agentry_plugin::tool::ContentBlock;
use agentry_plugin::tool::{DynTool, Tool, ToolContext, ToolError, ToolKind, ToolOutput, erase};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// The `skill` provider: the Skill tool over a set of skills, which are slash commands too.
#[derive(Debug, Clone, Default)]
pub struct Skills {
    skills: Arc<Vec<Skill>>,
}

impl Skills {
    /// The provider over these skills.
    pub fn new(skills: Vec<Skill>) -> Self {
        Self {
            skills: Arc::new(skills),
        }
    }

    /// The skills of `project` (and of the user, when `user_config` is their agentry
    /// configuration folder), with the `SKILL.md` files that could not be used.
    pub fn load(project: &Path, user_config: Option<&Path>) -> (Self, Vec<SkillError>) {
        let (skills, errors) = load(&roots(project, user_config));
        (Self::new(skills), errors)
    }

    /// The skills, by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }
}

impl Provider for Skills {
    fn name(&self) -> &str {
        "skill"
    }

    fn description(&self) -> String {
        "Skills: instructions and files for particular tasks, loaded when needed.".to_owned()
    }

    /// The skills' folders: the model reads their bundled files without asking.
    fn readable_roots(&self) -> Vec<std::path::PathBuf> {
        self.skills
            .iter()
            .map(|skill| skill.folder.clone())
            .collect()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        if self.skills.is_empty() {
            return Vec::new();
        }
        vec![erase(SkillTool {
            skills: self.skills.clone(),
        })]
    }

    /// A slash command per skill.
    fn commands(&self) -> Option<Arc<dyn CommandSource>> {
        Some(Arc::new(self.clone()))
    }
}

/// How the skills are made, linked or as a plugin: those of the user and the project (a
/// `SKILL.md` that cannot be used is reported and left out).
pub const RECIPE: Recipe = Recipe {
    name: "skill",
    sections: &[],
    make,
};

fn make(settings: Settings) -> Making {
    let (mut skills, mut problems) =
        load(&roots(&settings.project, settings.user_folder.as_deref()));
    // The enabled Claude Code plugins' skills, named `PLUGIN:NAME`.
    let (bundled, failed) = agentry_front_matter::load_bundled(
        &settings.bundles,
        |bundle| {
            bundle
                .skills
                .iter()
                .map(|folder| folder.join("SKILL.md"))
                .collect()
        },
        |file, text| Skill::parse(file.parent().unwrap_or(file), text),
        |skill| skill.name.as_str(),
        |skill, name| skill.name = name,
    );
    skills.extend(bundled);
    problems.extend(failed);
    let skills = Skills::new(skills);
    let problems = problems
        .into_iter()
        .map(|problem| format!("skill not loaded: {problem}"));
    made(Ok(Configured::new(skills).with_problems(problems)))
}

impl CommandSource for Skills {
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>> {
        self.skills
            .iter()
            .map(|skill| {
                Arc::new(SkillCommand {
                    skill: skill.clone(),
                    arguments: vec![CommandArgument {
                        name: "task".to_owned(),
                        description: Some("What to do with the skill".to_owned()),
                        required: false,
                    }],
                }) as Arc<dyn SlashCommand>
            })
            .collect()
    }
}

/// A skill as a slash command: its instructions, with what the user typed after it.
struct SkillCommand {
    skill: Skill,
    arguments: Vec<CommandArgument>,
}

impl SlashCommand for SkillCommand {
    fn name(&self) -> &str {
        &self.skill.name
    }

    fn origin(&self) -> Option<&str> {
        None
    }

    fn kind_label(&self) -> Option<&str> {
        Some("skill")
    }

    fn description(&self) -> Option<String> {
        Some(self.skill.description.clone())
    }

    fn arguments(&self) -> &[CommandArgument] {
        &self.arguments
    }

    fn content(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<Vec<ContentBlock>, String>> {
        let text = self
            .skill
            .loaded_text(arguments.get("task").map(String::as_str));
        Box::pin(async move { Ok(vec![ContentBlock::Text { text }]) })
    }
}

/// Loads a skill.
#[derive(Debug, Clone)]
pub struct SkillTool {
    skills: Arc<Vec<Skill>>,
}

/// Skill's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill's name.
    pub skill: String,
    /// What to do with it, if the user said.
    pub args: Option<String>,
}

impl Tool for SkillTool {
    type Input = SkillInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Skill"
    }

    fn description(&self) -> String {
        let mut text = "Loads a skill: instructions (and files) for a particular kind of task. \
                        When a task matches a skill's description, load the skill first and \
                        follow it.\n\nSkills:"
            .to_owned();
        for skill in self.skills.iter() {
            let _ = write!(text, "\n- {}: {}", skill.name, skill.description);
        }
        text
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn title(&self, input: &SkillInput) -> String {
        format!("Skill {}", input.skill)
    }

    async fn call(&self, input: SkillInput, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let skill = self
            .skills
            .iter()
            .find(|s| s.name == input.skill.trim_start_matches('/'))
            .ok_or_else(|| {
                let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
                ToolError::InvalidInput(format!(
                    "there is no skill `{}`; there are: {}",
                    input.skill,
                    known.join(", ")
                ))
            })?;
        Ok(ToolOutput::text(skill.loaded_text(input.args.as_deref()))
            .with_raw_output(serde_json::json!({"skill": skill.name, "folder": skill.folder})))
    }
}
