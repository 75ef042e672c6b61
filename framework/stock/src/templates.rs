//! Prompt templates: Markdown files a team keeps in `.agentry/prompts/` (and a user in
//! `~/.config/agentry/prompts/`) that front-ends offer as slash commands (`/review src`).
//!
//! ```markdown
//! ---
//! name: review
//! description: Review a part of the code
//! arguments:
//!   - name: target
//!     description: What to review
//!     required: true
//! ---
//! Review {{target}} for bugs and unclear names.
//! ```
//!
//! The front matter is YAML and every key is optional: the name defaults to the file's stem.
//! `{{argument}}` placeholders take the arguments' values; an optional argument that was not
//! given becomes empty text.
//!
//! A template may embed files ([`PromptTemplate::render_content`]): a line that is only
//! `@path` embeds a text file as a resource, and a line that is only `![description](path)`
//! an image (PNG, JPEG, GIF or WebP). Paths are taken from the template's folder, and an
//! embedded file must be inside the folder its [`TemplateFolder`] names (links resolved): a
//! project's templates embed the project's files, never `~/.ssh` or `/etc`.

use agentry::commands::{CommandArgument, CommandSource, SlashCommand};
use agentry::tool::ContentBlock;
use agentry::tool::image_mime_type;
use base64::Engine;
use futures::future::BoxFuture;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The file could not be read or its front matter is not valid.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A required argument has no value.
    #[error("`{template}` needs its `{argument}` argument")]
    MissingArgument {
        /// The template.
        template: String,
        /// The argument.
        argument: String,
    },
    /// A file the template embeds could not be read.
    #[error("`{template}` embeds {path}, which cannot be read: {message}")]
    Unreadable {
        /// The template.
        template: String,
        /// The embedded file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// An argument the template does not have.
    #[error("`{template}` has no argument `{argument}`")]
    UnknownArgument {
        /// The template.
        template: String,
        /// The argument.
        argument: String,
    },
}

/// The front matter, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    arguments: Vec<CommandArgument>,
}

/// A prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// Its name (the slash command).
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its arguments, in order.
    pub arguments: Vec<CommandArgument>,
    /// The file it came from.
    pub path: PathBuf,
    body: String,
    /// The folder files it embeds must be inside.
    embeds_within: PathBuf,
}

/// A folder of templates, and the folder the files they embed must be inside (the project, for
/// a project's `.agentry/prompts/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateFolder {
    /// Where the templates are.
    pub path: PathBuf,
    /// The folder their embedded files must be inside.
    pub embeds_within: PathBuf,
}

/// The largest template read.
const MAX_TEMPLATE_BYTES: u64 = 1024 * 1024;

/// The largest file a template embeds.
const MAX_EMBEDDED_BYTES: u64 = 20 * 1024 * 1024;

/// The longest description taken from a template's text, in characters.
const SUMMARY_CHARS: usize = 100;

/// What a template without a `description` says it does: its first line of text, cut at
/// [`SUMMARY_CHARS`] (as editors and MCP clients list a command with a description).
fn summary(body: &str) -> Option<String> {
    let line = body.lines().map(str::trim).find(|line| !line.is_empty())?;
    Some(match line.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_owned(),
    })
}

impl PromptTemplate {
    /// Reads a template from the text of `path`; it embeds files of its own folder.
    pub fn parse(path: &Path, text: &str) -> Result<Self, TemplateError> {
        let invalid = |message: String| TemplateError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let (front, body): (FrontMatter, &str) = agentry_front_matter::read(text)
            .map_err(|e| invalid(format!("invalid front matter: {e}")))?;
        let name = match front.name {
            Some(name) => name,
            None => path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .ok_or_else(|| invalid("a template needs a name".to_owned()))?,
        };
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(invalid(format!(
                "`{name}` is not a usable command name (no spaces, not empty)"
            )));
        }
        Ok(Self {
            name,
            description: front.description.or_else(|| summary(body)),
            arguments: front.arguments,
            path: path.to_path_buf(),
            embeds_within: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            body: body.to_owned(),
        })
    }

    /// The prompt with the arguments' values in place.
    pub fn render(&self, values: &BTreeMap<String, String>) -> Result<String, TemplateError> {
        self.fill(&self.body, values)
    }

    /// `text` (a part of the body) with the arguments' values in place.
    fn fill(&self, text: &str, values: &BTreeMap<String, String>) -> Result<String, TemplateError> {
        if let Some(unknown) = values
            .keys()
            .find(|key| !self.arguments.iter().any(|a| &a.name == *key))
        {
            return Err(TemplateError::UnknownArgument {
                template: self.name.clone(),
                argument: unknown.clone(),
            });
        }
        let mut text = text.to_owned();
        for argument in &self.arguments {
            let value = match values.get(&argument.name) {
                Some(value) => value.as_str(),
                None if argument.required => {
                    return Err(TemplateError::MissingArgument {
                        template: self.name.clone(),
                        argument: argument.name.clone(),
                    });
                }
                None => "",
            };
            text = text.replace(&format!("{{{{{}}}}}", argument.name), value);
        }
        Ok(text)
    }

    /// Reads the template in the file `path` (a regular file of at most a megabyte).
    pub fn read(path: &Path) -> Result<Self, TemplateError> {
        let text = agentry_plugin::paths::read_regular_file(path, MAX_TEMPLATE_BYTES)
            .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
            .map_err(|e| TemplateError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        Self::parse(path, &text)
    }

    /// The template read again from its file (it may have changed since), embedding files of
    /// the same folder.
    pub fn reload(&self) -> Result<Self, TemplateError> {
        Ok(Self::read(&self.path)?.embedding_within(&self.embeds_within))
    }

    /// The template, embedding files of `folder` (and the folders inside it) instead.
    pub fn embedding_within(mut self, folder: &Path) -> Self {
        self.embeds_within = folder.to_path_buf();
        self
    }

    /// The prompt as content: the rendered text, with the files it embeds (`@path` lines as
    /// text resources, `![description](path)` lines as images) read in their place. Only the
    /// template's own lines embed files: an argument's value is text wherever it goes (a value
    /// `x⏎@/etc/passwd` embeds nothing), and a line whose path an argument would fill is text.
    pub fn render_content(
        &self,
        values: &BTreeMap<String, String>,
    ) -> Result<Vec<ContentBlock>, TemplateError> {
        // Arguments are checked once, over the whole body.
        self.render(values)?;
        let folder = self.path.parent().unwrap_or(Path::new("."));
        let mut blocks = Vec::new();
        let mut pending = String::new();
        for line in self.body.split_inclusive('\n') {
            let Some(embedded) = embedded(line.trim()).filter(|_| !line.contains("{{")) else {
                pending.push_str(&self.fill(line, values)?);
                continue;
            };
            if !pending.trim().is_empty() {
                blocks.push(ContentBlock::text(std::mem::take(&mut pending)));
            }
            pending.clear();
            blocks.push(self.read_embedded(embedded, folder)?);
        }
        if !pending.trim().is_empty() || blocks.is_empty() {
            blocks.push(ContentBlock::text(pending));
        }
        Ok(blocks)
    }

    /// Reads one embedded file.
    fn read_embedded(
        &self,
        embedded: Embedded<'_>,
        folder: &Path,
    ) -> Result<ContentBlock, TemplateError> {
        let relative = match embedded {
            Embedded::Resource(path) | Embedded::Image(path) => path,
        };
        let path = folder.join(relative);
        let unreadable = |message: String| TemplateError::Unreadable {
            template: self.name.clone(),
            path: path.clone(),
            message,
        };
        let real = path.canonicalize().map_err(|e| unreadable(e.to_string()))?;
        let within = agentry_plugin::paths::canonical_path(&self.embeds_within);
        if !real.starts_with(&within) {
            return Err(unreadable(format!(
                "it is outside {}, where this template's files must be",
                within.display()
            )));
        }
        let bytes = agentry_plugin::paths::read_regular_bytes(&real, MAX_EMBEDDED_BYTES)
            .map_err(|e| unreadable(e.to_string()))?
            .ok_or_else(|| unreadable("there is no such file".to_owned()))?;
        match embedded {
            Embedded::Image(_) => {
                let mime_type = image_mime_type(&path)
                    .ok_or_else(|| unreadable("not a PNG, JPEG, GIF or WebP image".to_owned()))?;
                Ok(ContentBlock::Image {
                    data: base64::engine::general_purpose::STANDARD.encode(bytes),
                    mime_type: mime_type.to_owned(),
                })
            }
            Embedded::Resource(_) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| unreadable("only text files can be embedded with @".to_owned()))?;
                let absolute = std::path::absolute(&path).unwrap_or(path.clone());
                Ok(ContentBlock::Resource {
                    uri: format!("file://{}", absolute.display()),
                    mime_type: Some("text/plain".to_owned()),
                    text: Some(text),
                })
            }
        }
    }
}

/// A file a template line embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Embedded<'a> {
    /// `@path`: a text file as a resource.
    Resource(&'a str),
    /// `![description](path)`: an image.
    Image(&'a str),
}

/// The file a (trimmed) line embeds, if the line is only an embedding.
fn embedded(line: &str) -> Option<Embedded<'_>> {
    if let Some(path) = line.strip_prefix('@') {
        return (!path.is_empty() && !path.contains(char::is_whitespace))
            .then_some(Embedded::Resource(path));
    }
    let rest = line.strip_prefix("![")?;
    let (_, target) = rest.split_once("](")?;
    let path = target.strip_suffix(')')?;
    (!path.is_empty() && !path.contains(char::is_whitespace)).then_some(Embedded::Image(path))
}

impl SlashCommand for PromptTemplate {
    fn name(&self) -> &str {
        &self.name
    }

    fn origin(&self) -> Option<&str> {
        None
    }

    fn description(&self) -> Option<String> {
        self.description.clone()
    }

    fn arguments(&self) -> &[CommandArgument] {
        &self.arguments
    }

    fn content(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<Vec<ContentBlock>, String>> {
        Box::pin(async move { self.render_content(&arguments).map_err(|e| e.to_string()) })
    }
}

/// The prompt templates of some folders as slash commands, read the first time they are
/// asked for (so an agent that never offers a command never reads them); unusable files are
/// logged as warnings then.
pub struct TemplateFolders {
    folders: Vec<TemplateFolder>,
    loaded: std::sync::OnceLock<Vec<Arc<dyn SlashCommand>>>,
}

impl TemplateFolders {
    /// The templates of `folders`, as [`load_templates`] reads them.
    pub fn new(folders: Vec<TemplateFolder>) -> Self {
        Self {
            folders,
            loaded: std::sync::OnceLock::new(),
        }
    }
}

impl CommandSource for TemplateFolders {
    fn commands(&self) -> Vec<Arc<dyn SlashCommand>> {
        self.loaded
            .get_or_init(|| {
                let (templates, errors) = load_templates(&self.folders);
                for error in errors {
                    tracing::warn!("prompt template not loaded: {error}");
                }
                templates
                    .into_iter()
                    .map(|template| Arc::new(template) as Arc<dyn SlashCommand>)
                    .collect()
            })
            .clone()
    }
}

/// The templates of `folders` (`*.md`, sorted by name); a later folder's template replaces an
/// earlier one of the same name (the project's over the user's). Unusable files are returned
/// as errors beside the templates that load.
pub fn load_templates(folders: &[TemplateFolder]) -> (Vec<PromptTemplate>, Vec<TemplateError>) {
    let mut templates: BTreeMap<String, PromptTemplate> = BTreeMap::new();
    let mut errors = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(&folder.path) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|ext| ext == "md"))
            .collect();
        files.sort();
        for file in files {
            let loaded = PromptTemplate::read(&file)
                .map(|template| template.embedding_within(&folder.embeds_within));
            match loaded {
                Ok(template) => {
                    templates.insert(template.name.clone(), template);
                }
                Err(error) => errors.push(error),
            }
        }
    }
    (templates.into_values().collect(), errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry::commands::{argument_hint, arguments_from_text};

    const REVIEW: &str = "---\nname: review\ndescription: Review code\narguments:\n  - name: target\n    required: true\n  - name: focus\n---\nReview {{target}}, looking at {{focus}}.\n";

    fn review() -> PromptTemplate {
        PromptTemplate::parse(Path::new("/p/review.md"), REVIEW).unwrap()
    }

    #[test]
    fn front_matter_names_the_command_and_its_arguments() {
        let template = review();
        assert_eq!(template.name, "review");
        assert_eq!(template.description.as_deref(), Some("Review code"));
        assert_eq!(template.arguments.len(), 2);
        assert!(template.arguments[0].required && !template.arguments[1].required);
        assert_eq!(
            argument_hint(&template.arguments).as_deref(),
            Some("<target> [focus]")
        );
    }

    #[test]
    fn a_template_without_a_description_is_described_by_its_first_line() {
        let plain = PromptTemplate::parse(
            Path::new("/p/fix.md"),
            "\n  Fix the failing test.\nThen run it.\n",
        );
        assert_eq!(
            plain.unwrap().description.as_deref(),
            Some("Fix the failing test.")
        );
        let long = format!("{}\n", "word ".repeat(40));
        let cut = PromptTemplate::parse(Path::new("/p/long.md"), &long).unwrap();
        let description = cut.description.unwrap();
        assert!(description.ends_with('…') && description.chars().count() <= SUMMARY_CHARS + 1);
        let empty = PromptTemplate::parse(Path::new("/p/empty.md"), "---\nname: empty\n---\n");
        assert_eq!(empty.unwrap().description, None);
    }

    #[test]
    fn rendering_fills_placeholders_and_checks_arguments() {
        let template = review();
        let values =
            arguments_from_text(&template.arguments, "src/main.rs error handling and names");
        assert_eq!(values["target"], "src/main.rs");
        assert_eq!(values["focus"], "error handling and names");
        assert_eq!(
            template.render(&values).unwrap(),
            "Review src/main.rs, looking at error handling and names.\n"
        );
        let only_target = arguments_from_text(&template.arguments, "lib.rs");
        assert_eq!(
            template.render(&only_target).unwrap(),
            "Review lib.rs, looking at .\n"
        );
        assert_eq!(
            template.render(&BTreeMap::new()),
            Err(TemplateError::MissingArgument {
                template: "review".into(),
                argument: "target".into()
            })
        );
        let unknown = BTreeMap::from([("colour".to_owned(), "red".to_owned())]);
        assert!(matches!(
            template.render(&unknown),
            Err(TemplateError::UnknownArgument { .. })
        ));
    }

    #[test]
    fn a_file_without_front_matter_is_named_after_itself() {
        let template = PromptTemplate::parse(Path::new("/p/explain.md"), "Explain this.").unwrap();
        assert_eq!(template.name, "explain");
        assert_eq!(template.render(&BTreeMap::new()).unwrap(), "Explain this.");
        let broken =
            PromptTemplate::parse(Path::new("/p/bad.md"), "---\narguments: 5\n---\nx").unwrap_err();
        assert!(broken.to_string().contains("bad.md"), "{broken}");
    }

    #[test]
    fn the_projects_templates_replace_the_users_of_the_same_name() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(user.path().join("review.md"), "user review").unwrap();
        std::fs::write(user.path().join("tidy.md"), "tidy up").unwrap();
        std::fs::write(project.path().join("review.md"), REVIEW).unwrap();
        std::fs::write(project.path().join("broken.md"), "---\nname: [\n---\n").unwrap();
        std::fs::write(project.path().join("notes.txt"), "not a template").unwrap();
        let folder = |dir: &tempfile::TempDir| TemplateFolder {
            path: dir.path().to_path_buf(),
            embeds_within: dir.path().to_path_buf(),
        };
        let (templates, errors) = load_templates(&[folder(&user), folder(&project)]);
        let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["review", "tidy"]);
        assert_eq!(templates[0].description.as_deref(), Some("Review code"));
        assert_eq!(errors.len(), 1);
    }

    #[test]
    fn embedded_files_become_resources_and_images() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "the notes").unwrap();
        std::fs::write(dir.path().join("shot.png"), [0x89, b'P', b'N', b'G']).unwrap();
        std::fs::write(dir.path().join("blob.bin"), [0xff, 0xfe, 0x00]).unwrap();
        let path = dir.path().join("look.md");
        let text = "Look at {{what}}:\n@notes.txt\n![the screen](shot.png)\nThen say.\n";
        let template = PromptTemplate::parse(
            &path,
            &format!("---\narguments:\n  - name: what\n---\n{text}"),
        )
        .unwrap();
        let values = BTreeMap::from([("what".to_owned(), "this".to_owned())]);
        let content = template.render_content(&values).unwrap();
        assert_eq!(content.len(), 4, "{content:?}");
        assert_eq!(content[0], ContentBlock::text("Look at this:\n"));
        let ContentBlock::Resource { uri, text, .. } = &content[1] else {
            panic!("{content:?}")
        };
        assert!(
            uri.starts_with("file://") && uri.ends_with("/notes.txt"),
            "{uri}"
        );
        assert_eq!(text.as_deref(), Some("the notes"));
        assert_eq!(
            content[2],
            ContentBlock::Image {
                data: "iVBORw==".to_owned(),
                mime_type: "image/png".to_owned()
            }
        );
        assert_eq!(content[3], ContentBlock::text("Then say.\n"));

        for (line, problem) in [
            ("@missing.txt", "cannot be read"),
            ("@blob.bin", "only text files"),
            ("![x](notes.txt)", "not a PNG"),
        ] {
            let template = PromptTemplate::parse(&path, line).unwrap();
            let error = template.render_content(&BTreeMap::new()).unwrap_err();
            assert!(matches!(error, TemplateError::Unreadable { .. }), "{error}");
            assert!(error.to_string().contains(problem), "{error}");
        }
        // An argument's value never embeds a file, on a line of its own or as a path.
        std::fs::write(dir.path().join("secret.txt"), "the secret").unwrap();
        for body in ["Look at {{what}}\n", "@{{what}}\n"] {
            let template = PromptTemplate::parse(
                &path,
                &format!("---\narguments:\n  - name: what\n---\n{body}"),
            )
            .unwrap();
            let values = BTreeMap::from([("what".to_owned(), "x\n@secret.txt".to_owned())]);
            let content = template.render_content(&values).unwrap();
            assert!(
                content
                    .iter()
                    .all(|block| matches!(block, ContentBlock::Text { .. })),
                "{content:?}"
            );
            assert!(!format!("{content:?}").contains("the secret"));
        }
        let plain = PromptTemplate::parse(&path, "email me @ noon").unwrap();
        assert_eq!(
            plain.render_content(&BTreeMap::new()).unwrap(),
            [ContentBlock::text("email me @ noon")]
        );
    }

    /// A cloned repository's template embedding the user's key, `/etc`, or a file through a
    /// link out of the project: none is read.
    #[cfg(unix)]
    #[test]
    fn a_template_embeds_only_files_inside_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let prompts = project.join(".agentry/prompts");
        std::fs::create_dir_all(&prompts).unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("src/lib.rs"), "code").unwrap();
        std::fs::write(dir.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(dir.path().join("id_rsa"), project.join("key")).unwrap();
        std::fs::write(prompts.join("look.md"), "@../../src/lib.rs\n").unwrap();
        let folders = [TemplateFolder {
            path: prompts.clone(),
            embeds_within: project.clone(),
        }];
        let (templates, _) = load_templates(&folders);
        let content = templates[0].render_content(&BTreeMap::new()).unwrap();
        assert!(format!("{content:?}").contains("code"));
        for line in ["@../../../id_rsa", "@/etc/hostname", "@../../key"] {
            std::fs::write(prompts.join("look.md"), format!("{line}\n")).unwrap();
            let (templates, _) = load_templates(&folders);
            let error = templates[0].render_content(&BTreeMap::new()).unwrap_err();
            assert!(error.to_string().contains("is outside"), "{line}: {error}");
        }
    }
}
