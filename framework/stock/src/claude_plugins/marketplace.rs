//! A Claude Code marketplace (`.claude-plugin/marketplace.json` in a folder or a git
//! repository): its name and its plugins, each with where it comes from — a folder of the
//! marketplace (`"./plugins/x"`), or a git repository (`{"source": "github", "repo"}`,
//! `{"source": "url", "url"}`, `{"source": "git-subdir", "url", "path"}`, with `ref` or `sha`).

use super::error::ManifestError;
use super::manifest::{inside, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where a plugin of a marketplace comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A folder of the marketplace.
    Folder(PathBuf),
    /// A git repository (a folder of it, for `git-subdir`), at a branch or tag, or a commit.
    Git {
        /// What `git clone` is given.
        url: String,
        /// The branch or tag.
        reference: Option<String>,
        /// The commit.
        sha: Option<String>,
        /// The plugin's folder in the repository.
        path: Option<String>,
    },
}

/// One plugin a marketplace offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginEntry {
    /// Its name (`NAME@MARKETPLACE` installs it).
    pub name: String,
    /// What it is, as the marketplace says.
    pub description: Option<String>,
    /// Its version, as the marketplace says.
    pub version: Option<String>,
    /// Where it comes from.
    pub source: PluginSource,
}

/// A marketplace's catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    /// Its name.
    pub name: String,
    /// Its folder (the one holding `.claude-plugin/`).
    pub root: PathBuf,
    /// Its plugins.
    pub plugins: Vec<PluginEntry>,
}

impl Marketplace {
    /// The marketplace whose folder is `root`.
    pub fn read(root: &Path) -> Result<Self, ManifestError> {
        let path = root.join(".claude-plugin").join("marketplace.json");
        let invalid = |message: String| ManifestError::Invalid {
            path: path.clone(),
            message,
        };
        let Some(Value::Object(catalog)) = read_json(&path)? else {
            return Err(invalid(
                "there is no marketplace here (no .claude-plugin/marketplace.json holding a JSON object)"
                    .to_owned(),
            ));
        };
        let name = catalog
            .get("name")
            .and_then(Value::as_str)
            .filter(|name| is_name(name))
            .ok_or_else(|| {
                invalid("`name` must be a name (letters, digits, `-`, `_`, `.`)".to_owned())
            })?
            .to_owned();
        let Some(Value::Array(entries)) = catalog.get("plugins") else {
            return Err(invalid(
                "`plugins` must list the marketplace's plugins".to_owned(),
            ));
        };
        let pool = catalog
            .get("metadata")
            .and_then(|m| m.get("pluginRoot"))
            .and_then(Value::as_str);
        let mut plugins: Vec<PluginEntry> = Vec::new();
        for (at, entry) in entries.iter().enumerate() {
            let field = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
            let name = field("name")
                .filter(|name| is_name(name))
                .ok_or_else(|| invalid(format!("plugins[{at}] has no usable `name`")))?;
            if plugins.iter().any(|plugin| plugin.name == name) {
                return Err(invalid(format!("the plugin name `{name}` is given twice")));
            }
            let source = source_of(entry.get("source"), pool, root, &path)
                .map_err(|message| invalid(format!("plugins[{at}] (`{name}`): {message}")))?;
            plugins.push(PluginEntry {
                name,
                description: field("description"),
                version: field("version"),
                source,
            });
        }
        Ok(Self {
            name,
            root: root.to_path_buf(),
            plugins,
        })
    }

    /// The plugin named `name`.
    pub fn plugin(&self, name: &str) -> Option<&PluginEntry> {
        self.plugins.iter().find(|plugin| plugin.name == name)
    }
}

/// Whether `name` may name a marketplace or a plugin (it is part of `NAME@MARKETPLACE` and of
/// folder names).
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A plugin entry's `source`.
fn source_of(
    source: Option<&Value>,
    pool: Option<&str>,
    root: &Path,
    catalog: &Path,
) -> Result<PluginSource, String> {
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    match source {
        Some(Value::String(path)) => {
            let written = match pool {
                Some(pool) if !path.starts_with("./") && !path.contains('/') => {
                    format!("{}/{path}", pool.trim_end_matches('/'))
                }
                _ => path.clone(),
            };
            inside(catalog, root, &written, "source")
                .map(PluginSource::Folder)
                .map_err(|e| e.to_string())
        }
        Some(object @ Value::Object(_)) => {
            let reference = text(object, "ref");
            let sha = text(object, "sha");
            let (url, path) = match text(object, "source").as_deref() {
                Some("github") => {
                    let repo = text(object, "repo").ok_or("a github source needs `repo`")?;
                    (format!("https://github.com/{repo}.git"), None)
                }
                Some("url" | "git") => (
                    text(object, "url").ok_or("a url source needs `url`")?,
                    text(object, "path"),
                ),
                Some("git-subdir") => (
                    text(object, "url").ok_or("a git-subdir source needs `url`")?,
                    Some(text(object, "path").ok_or("a git-subdir source needs `path`")?),
                ),
                Some(other) => {
                    return Err(format!(
                        "the source kind `{other}` is not one agentry installs (it installs folders of the marketplace, github, url and git-subdir sources)"
                    ));
                }
                None => return Err("the source has no `source` kind".to_owned()),
            };
            let leaves = |p: &str| {
                Path::new(p).is_absolute() || p.split(['/', '\\']).any(|part| part == "..")
            };
            if path.as_deref().is_some_and(leaves) {
                return Err("the source's `path` leads out of its repository".to_owned());
            }
            // A commit is hex, and a branch or tag no option: git must read neither as one.
            if sha.as_deref().is_some_and(|sha| {
                sha.len() < 7 || sha.len() > 64 || !sha.chars().all(|c| c.is_ascii_hexdigit())
            }) {
                return Err("the source's `sha` is not a commit's hex digits".to_owned());
            }
            if reference
                .as_deref()
                .is_some_and(|r| r.is_empty() || r.starts_with('-'))
            {
                return Err("the source's `ref` is not a branch or tag name".to_owned());
            }
            Ok(PluginSource::Git {
                url,
                reference,
                sha,
                path,
            })
        }
        _ => Err("it has no `source`".to_owned()),
    }
}
