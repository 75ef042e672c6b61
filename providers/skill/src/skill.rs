//! Skills in the Agent Skills format: a folder holding `SKILL.md` — YAML front matter (`name`,
//! `description`, optional `license`, `compatibility`, `metadata`, `allowed-tools`) and the
//! instructions — and any files the instructions refer to.

use agentry_front_matter as front_matter;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The longest description.
const MAX_DESCRIPTION: usize = 1024;
/// The most bundled files a skill lists.
const MAX_LISTED_FILES: usize = 100;

/// A skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (1–64 of `a-z`, `0-9`, `-`; its folder's name).
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// Its licence, if it says.
    pub license: Option<String>,
    /// What it needs to work, if it says.
    pub compatibility: Option<String>,
    /// Other properties it declares.
    pub metadata: BTreeMap<String, String>,
    /// Tools it expects to use (as written: space-separated).
    pub allowed_tools: Option<String>,
    /// Its folder.
    pub folder: PathBuf,
    /// Its instructions (the body of `SKILL.md`).
    pub instructions: String,
}

/// A `SKILL.md` that cannot be used: which file, which line, what is wrong.
pub type SkillError = front_matter::DocumentError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    license: Option<String>,
    compatibility: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    allowed_tools: Option<String>,
}

impl Skill {
    /// Reads the skill in `folder` from the text of its `SKILL.md`.
    pub fn parse(folder: &Path, text: &str) -> Result<Self, SkillError> {
        let path = folder.join("SKILL.md");
        let invalid = |line, message: String| SkillError::new(&path, line, message);
        let (front, body): (FrontMatter, &str) = front_matter::read_document(&path, text)?;
        let name = front
            .name
            .ok_or_else(|| invalid(Some(1), "a skill needs a `name`".to_owned()))?;
        let name_line = front_matter::line_of(text, "name:");
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(invalid(
                name_line,
                format!("`{name}` is not a skill name: 1–64 lowercase letters, digits and hyphens"),
            ));
        }
        let folder_name = folder.file_name().map(|n| n.to_string_lossy().into_owned());
        if folder_name.as_deref() != Some(name.as_str()) {
            return Err(invalid(
                name_line,
                format!(
                    "the skill `{name}` must be in a folder of that name, not `{}`",
                    folder_name.unwrap_or_default()
                ),
            ));
        }
        let description = front
            .description
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| invalid(Some(1), format!("the skill `{name}` needs a `description`")))?;
        if description.chars().count() > MAX_DESCRIPTION {
            return Err(invalid(
                front_matter::line_of(text, "description:"),
                format!("the description is over {MAX_DESCRIPTION} characters"),
            ));
        }
        Ok(Self {
            name,
            description,
            license: front.license,
            compatibility: front.compatibility,
            metadata: front.metadata,
            allowed_tools: front.allowed_tools,
            folder: folder.to_path_buf(),
            instructions: body.trim().to_owned(),
        })
    }

    /// The files bundled with it (not `SKILL.md`), sorted, at most 100.
    pub fn bundled_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let mut folders = vec![self.folder.clone()];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                match entry.file_type() {
                    Ok(kind) if kind.is_dir() => folders.push(path),
                    Ok(_) if path != self.folder.join("SKILL.md") => files.push(path),
                    _ => {}
                }
            }
        }
        files.sort();
        files.truncate(MAX_LISTED_FILES);
        files
    }

    /// What the model reads when it loads the skill.
    pub fn loaded_text(&self, arguments: Option<&str>) -> String {
        let mut text = format!(
            "# Skill: {}\nBase directory: {}\n\n{}\n",
            self.name,
            self.folder.display(),
            self.instructions
        );
        let files = self.bundled_files();
        if !files.is_empty() {
            text.push_str("\nFiles of this skill (read them with Read when the instructions call for them):\n");
            for file in files {
                text.push_str(&format!("- {}\n", file.display()));
            }
        }
        if let Some(arguments) = arguments.filter(|a| !a.trim().is_empty()) {
            text.push_str(&format!("\nARGUMENTS: {}\n", arguments.trim()));
        }
        text
    }
}

/// The skills of `roots` (each a folder of skill folders), by name; a later root's skill
/// replaces an earlier one of the same name. Unusable ones come back as errors.
pub fn load(roots: &[PathBuf]) -> (Vec<Skill>, Vec<SkillError>) {
    let files = roots.iter().flat_map(|root| {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("SKILL.md"))
            .filter(|file| file.is_file())
            .collect();
        files.sort();
        files
    });
    let parse = |file: &Path, text: &str| Skill::parse(file.parent().unwrap_or(file), text);
    let (found, errors) = front_matter::load_named(files, parse, |skill| skill.name.as_str());
    (found.into_values().collect(), errors)
}

/// Where skills are read from, lowest precedence first: the user's
/// (`~/.config/agentry/skills/`), then the project's `.agents/skills/` (the folder other clients
/// read too) and `.agentry/skills/`.
pub fn roots(project: &Path, user_config: Option<&Path>) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = user_config
        .map(|dir| dir.join("skills"))
        .into_iter()
        .collect();
    roots.push(project.join(".agents/skills"));
    roots.push(project.join(".agentry/skills"));
    roots
}
