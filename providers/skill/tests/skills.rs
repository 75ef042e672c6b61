//! Skills from disk: the three folders, progressive disclosure through the Skill tool, slash
//! commands, and bad `SKILL.md` files reported and skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::commands::{CommandSource, SlashCommands};
use agentry::testing::ToolHarness;
use agentry::tool::ContentBlock;
use agentry_skill::Skills;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn skill(root: &Path, name: &str, description: &str, body: &str) {
    let folder = root.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
    )
    .unwrap();
}

struct Setup {
    project: tempfile::TempDir,
    user: tempfile::TempDir,
}

fn setup() -> Setup {
    let project = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    skill(
        &user.path().join("skills"),
        "commit-messages",
        "Writes commit messages.",
        "Use the imperative mood.",
    );
    skill(
        &user.path().join("skills"),
        "pdf-forms",
        "Fills PDF forms (the user's version).",
        "User body.",
    );
    skill(
        &project.path().join(".agents/skills"),
        "pdf-forms",
        "Fills PDF forms.",
        "Run scripts/fill.py with the form.",
    );
    std::fs::create_dir_all(project.path().join(".agents/skills/pdf-forms/scripts")).unwrap();
    std::fs::write(
        project
            .path()
            .join(".agents/skills/pdf-forms/scripts/fill.py"),
        "print('fill')\n",
    )
    .unwrap();
    skill(
        &project.path().join(".agentry/skills"),
        "release-notes",
        "Drafts release notes.",
        "Group changes by kind.",
    );
    Setup { project, user }
}

#[tokio::test]
async fn skills_from_all_three_folders_are_offered_by_name_and_loaded_on_demand() {
    let s = setup();
    let (skills, problems) = Skills::load(s.project.path(), Some(s.user.path()));
    assert!(problems.is_empty(), "{problems:?}");
    let names: Vec<&str> = skills.skills().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["commit-messages", "pdf-forms", "release-notes"]);
    let (_, shown) = agentry::testing::tool_definitions(Arc::new(skills.clone()))
        .unwrap()
        .remove(0);
    let description = shown["description"].as_str().unwrap();
    // Progressive disclosure: names and descriptions only; the project's pdf-forms wins.
    assert!(
        description.contains("- pdf-forms: Fills PDF forms."),
        "{description}"
    );
    assert!(description.contains("- release-notes: Drafts release notes."));
    assert!(
        !description.contains("Run scripts/fill.py"),
        "{description}"
    );
    assert!(!description.contains("user's version"), "{description}");

    let harness = ToolHarness::new(&skills, s.project.path()).unwrap();
    let loaded = harness
        .call("Skill", json!({"skill": "pdf-forms", "args": "the W-9"}))
        .await;
    assert!(!loaded.result.is_error, "{}", loaded.text());
    let folder = s.project.path().join(".agents/skills/pdf-forms");
    assert_eq!(
        loaded.text(),
        format!(
            "# Skill: pdf-forms\nBase directory: {}\n\nRun scripts/fill.py with the form.\n\nFiles of this skill (read them with Read when the instructions call for them):\n- {}\n\nARGUMENTS: the W-9\n",
            folder.display(),
            folder.join("scripts/fill.py").display()
        )
    );
    let unknown = harness.call("Skill", json!({"skill": "tax-returns"})).await;
    assert!(unknown.result.is_error);
    assert!(
        unknown.text().contains(
            "there is no skill `tax-returns`; there are: commit-messages, pdf-forms, release-notes"
        ),
        "{}",
        unknown.text()
    );
}

#[tokio::test]
async fn every_skill_is_a_slash_command() {
    let s = setup();
    let (skills, _) = Skills::load(s.project.path(), Some(s.user.path()));
    let source: Arc<dyn CommandSource> = Arc::new(skills);
    let commands = SlashCommands::from_sources(&[source]);
    let names: Vec<&str> = commands.iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["commit-messages", "pdf-forms", "release-notes"]);
    let expanded = commands
        .expand("/release-notes for 1.2")
        .await
        .expect("a known command")
        .unwrap();
    let content: Vec<&ContentBlock> = expanded.content().collect();
    assert_eq!(
        content.len(),
        expanded.parts.len(),
        "no calls: {expanded:?}"
    );
    let [ContentBlock::Text { text }] = content.as_slice() else {
        panic!("{expanded:?}");
    };
    assert!(text.starts_with("# Skill: release-notes\n"), "{text}");
    assert!(text.contains("Group changes by kind."), "{text}");
    assert!(text.ends_with("ARGUMENTS: for 1.2\n"), "{text}");
}

#[test]
fn bad_skill_files_are_reported_with_file_and_line_and_skipped() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path().join(".agentry/skills");
    skill(&root, "good", "Works.", "Body.");
    let write = |folder: &str, text: &str| {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        std::fs::write(root.join(folder).join("SKILL.md"), text).unwrap();
    };
    write(
        "misplaced",
        "---\nname: elsewhere\ndescription: x\n---\nBody\n",
    );
    write(
        "broken",
        "---\nname: broken\ndescription: x\nmetadata: [1\n---\nBody\n",
    );
    write("Upper", "---\nname: Upper\ndescription: x\n---\nBody\n");
    write(
        "long",
        &format!(
            "---\nname: long\ndescription: {}\n---\nBody\n",
            "x".repeat(1025)
        ),
    );
    let (skills, problems) = Skills::load(project.path(), None);
    let names: Vec<&str> = skills.skills().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 4, "{shown:?}");
    let of = |folder: &str| {
        let path = root.join(folder).join("SKILL.md").display().to_string();
        shown
            .iter()
            .find(|p| p.starts_with(&path))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        of("misplaced").contains(":2: the skill `elsewhere` must be in a folder of that name"),
        "{shown:?}"
    );
    assert!(
        of("Upper").contains(":2: `Upper` is not a skill name"),
        "{shown:?}"
    );
    assert!(
        of("long").contains(":3: the description is over 1024 characters"),
        "{shown:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.path.ends_with("broken/SKILL.md") && p.line.is_some_and(|l| l >= 4)),
        "{shown:?}"
    );
}

#[test]
fn the_skill_tool_as_the_model_sees_it() {
    let s = setup();
    let (skills, _) = Skills::load(s.project.path(), None);
    for (name, shown) in agentry::testing::tool_definitions(Arc::new(skills)).unwrap() {
        insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!(name, shown);
        });
    }
}

/// A read-only tool that touches the path it is given (as Read does).
struct Peek;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PeekInput {
    /// The file.
    path: String,
}

impl agentry::tool::Tool for Peek {
    type Input = PeekInput;
    type Output = String;

    fn name(&self) -> &str {
        "Peek"
    }
    fn description(&self) -> String {
        "Reads a file.".to_owned()
    }
    fn kind(&self) -> agentry::tool::ToolKind {
        agentry::tool::ToolKind::Read
    }
    fn locations(&self, input: &PeekInput, cwd: &Path) -> Vec<agentry::tool::ToolCallLocation> {
        vec![agentry::tool::ToolCallLocation::path(cwd.join(&input.path))]
    }
    async fn call(
        &self,
        input: PeekInput,
        _: agentry::tool::ToolContext,
    ) -> Result<String, agentry::tool::ToolError> {
        std::fs::read_to_string(&input.path)
            .map_err(|e| agentry::tool::ToolError::failed(e.to_string()))
    }
}

#[tokio::test]
async fn a_skills_files_are_read_without_asking_wherever_the_skill_lives() {
    use agentry::permission::PermissionPolicy;
    use agentry::provider::Provider;
    let s = setup();
    let (skills, _) = Skills::load(s.project.path(), Some(s.user.path()));
    let provider = agentry::provider::SimpleProvider::new("both", "")
        .with_tool(Peek)
        .with_readable_roots(skills.readable_roots());
    let workspace = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&provider, workspace.path())
        .unwrap()
        .with_policy(PermissionPolicy::default());
    let skill_file = s.user.path().join("skills/commit-messages/SKILL.md");
    let read = harness
        .call("Peek", json!({"path": skill_file.display().to_string()}))
        .await;
    assert!(!read.result.is_error, "{}", read.text());
    assert!(read.text().contains("imperative mood"));
    // Elsewhere outside the workspace, reading still asks (and nobody answers yes here).
    let elsewhere = s.user.path().join("notes.txt");
    std::fs::write(&elsewhere, "private\n").unwrap();
    let refused = harness
        .call("Peek", json!({"path": elsewhere.display().to_string()}))
        .await;
    assert!(refused.result.is_error);
}
