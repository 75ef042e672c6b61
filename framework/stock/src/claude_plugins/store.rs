//! [`PluginStore`]: the Claude Code marketplaces and plugins agentry knows, in its data folder
//! (`claude-plugins/`): `marketplaces.json` (each marketplace's source and folder — a local
//! folder where it is, a repository cloned into `marketplaces/NAME/`) and `plugins.json` (each
//! installed plugin: its marketplace, version, the commit it was installed from, its copy in
//! `cache/MARKETPLACE/PLUGIN/VERSION/`, and whether it is enabled). Every change is written
//! whole and atomically, and a failed one leaves nothing behind.

use super::error::ManifestError;
use super::git;
use super::manifest::PluginContents;
use super::marketplace::{Marketplace, PluginSource, is_name};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a marketplace or plugin could not be added, installed or changed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file of the store, a marketplace or a plugin is wrong or unreadable.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The store's own files could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Git failed.
    #[error("{0}")]
    Git(String),
    /// What was asked does not fit what there is.
    #[error("{0}")]
    Refused(String),
}

/// A marketplace agentry knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownMarketplace {
    /// Where it was added from, as given.
    pub source: String,
    /// Its folder.
    pub root: PathBuf,
    /// Whether agentry cloned it (into its data folder), and so updates and removes it.
    pub cloned: bool,
}

/// A plugin installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    /// Its name.
    pub name: String,
    /// Its marketplace.
    pub marketplace: String,
    /// Its version (its manifest's or entry's, else the commit's first 12 characters, else
    /// `local`).
    pub version: String,
    /// The commit it was installed from, when it came from a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its copy.
    pub path: PathBuf,
    /// Whether it is enabled (the settings files' `enabledPlugins` may say otherwise).
    pub enabled: bool,
}

impl InstalledPlugin {
    /// `NAME@MARKETPLACE`.
    pub fn id(&self) -> String {
        format!("{}@{}", self.name, self.marketplace)
    }
}

/// The marketplaces and plugins in a data folder.
#[derive(Debug, Clone)]
pub struct PluginStore {
    folder: PathBuf,
}

impl PluginStore {
    /// The store in `data_folder`.
    pub fn new(data_folder: &Path) -> Self {
        Self {
            folder: data_folder.join("claude-plugins"),
        }
    }

    /// The marketplaces, by name.
    pub fn marketplaces(&self) -> Result<BTreeMap<String, KnownMarketplace>, StoreError> {
        self.read("marketplaces.json")
    }

    /// The installed plugins, by `NAME@MARKETPLACE`.
    pub fn plugins(&self) -> Result<BTreeMap<String, InstalledPlugin>, StoreError> {
        self.read("plugins.json")
    }

    /// Adds the marketplace at `source` (a folder, a git URL, or GitHub's `owner/repo`,
    /// `#ref` or `@ref` after it for a branch or tag); returns its catalog.
    pub fn add_marketplace(&self, source: &str) -> Result<Marketplace, StoreError> {
        let local = Path::new(source);
        let (catalog, cloned) = if local.is_dir() {
            let root = local
                .canonicalize()
                .map_err(|e| StoreError::Refused(format!("{source}: {e}")))?;
            (Marketplace::read(&root)?, false)
        } else {
            let (url, reference) = git_source(source)?;
            let staging = self.staging()?;
            let clone = staging.path().join("marketplace");
            git::clone(&url, &clone, reference.as_deref(), None).map_err(StoreError::Git)?;
            let catalog = Marketplace::read(&clone)?;
            let kept = self.folder.join("marketplaces").join(&catalog.name);
            if kept.exists() {
                std::fs::remove_dir_all(&kept).map_err(|e| write_error(&kept, e))?;
            }
            std::fs::create_dir_all(kept.parent().unwrap_or(&self.folder))
                .map_err(|e| write_error(&kept, e))?;
            std::fs::rename(&clone, &kept).map_err(|e| write_error(&kept, e))?;
            (Marketplace::read(&kept)?, true)
        };
        let mut known = self.marketplaces()?;
        known.insert(
            catalog.name.clone(),
            KnownMarketplace {
                source: source.to_owned(),
                root: catalog.root.clone(),
                cloned,
            },
        );
        self.write("marketplaces.json", &known)?;
        Ok(catalog)
    }

    /// The catalog of the marketplace `name`.
    pub fn marketplace(&self, name: &str) -> Result<Marketplace, StoreError> {
        let known = self.marketplaces()?;
        let marketplace = known.get(name).ok_or_else(|| {
            StoreError::Refused(format!(
                "there is no marketplace `{name}` (add it with `agentry plugin marketplace add SOURCE`)"
            ))
        })?;
        Ok(Marketplace::read(&marketplace.root)?)
    }

    /// Brings a cloned marketplace up to date (a folder is read as it is); returns its catalog.
    pub fn update_marketplace(&self, name: &str) -> Result<Marketplace, StoreError> {
        let known = self.marketplaces()?;
        let marketplace = known
            .get(name)
            .ok_or_else(|| StoreError::Refused(format!("there is no marketplace `{name}`")))?;
        if marketplace.cloned {
            git::pull(&marketplace.root).map_err(StoreError::Git)?;
        }
        Ok(Marketplace::read(&marketplace.root)?)
    }

    /// Removes the marketplace `name`, its clone and the plugins installed from it; returns
    /// those plugins' ids.
    pub fn remove_marketplace(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let mut known = self.marketplaces()?;
        let marketplace = known
            .remove(name)
            .ok_or_else(|| StoreError::Refused(format!("there is no marketplace `{name}`")))?;
        let installed: Vec<String> = self
            .plugins()?
            .into_values()
            .filter(|plugin| plugin.marketplace == name)
            .map(|plugin| plugin.id())
            .collect();
        for id in &installed {
            self.uninstall(id)?;
        }
        self.write("marketplaces.json", &known)?;
        if marketplace.cloned {
            std::fs::remove_dir_all(&marketplace.root)
                .map_err(|e| write_error(&marketplace.root, e))?;
        }
        Ok(installed)
    }

    /// Reads the plugin `id` (`NAME@MARKETPLACE`) as it would be installed, in a staging
    /// folder: what it brings, for the user to see. [`install`](Self::install) keeps it.
    pub fn stage(&self, id: &str) -> Result<Staged, StoreError> {
        let (name, marketplace_name) = split_id(id)?;
        let marketplace = self.marketplace(marketplace_name)?;
        let entry = marketplace.plugin(name).ok_or_else(|| {
            StoreError::Refused(format!(
                "the marketplace `{marketplace_name}` has no plugin `{name}` (it has: {})",
                marketplace
                    .plugins
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let staging = self.staging()?;
        let (folder, commit) = match &entry.source {
            PluginSource::Folder(folder) => {
                // Links resolved: a folder that is a link out of the marketplace is not its.
                let inside = match (folder.canonicalize(), marketplace.root.canonicalize()) {
                    (Ok(folder), Ok(root)) if folder.is_dir() => folder.starts_with(root),
                    _ => {
                        return Err(StoreError::Refused(format!(
                            "the marketplace `{marketplace_name}` says `{name}` is in {}, which is not there",
                            folder.display()
                        )));
                    }
                };
                if !inside {
                    return Err(StoreError::Refused(format!(
                        "the marketplace `{marketplace_name}` says `{name}` is in {}, a link leading out of the marketplace",
                        folder.display()
                    )));
                }
                (folder.clone(), git::commit(&marketplace.root))
            }
            PluginSource::Git {
                url,
                reference,
                sha,
                path,
            } => {
                let clone = staging.path().join("source");
                git::clone(url, &clone, reference.as_deref(), sha.as_deref())
                    .map_err(StoreError::Git)?;
                let commit = git::commit(&clone);
                let folder = match path {
                    Some(path) => clone.join(path),
                    None => clone,
                };
                if !folder.is_dir() {
                    return Err(StoreError::Refused(format!(
                        "{url} has no folder {}",
                        path.as_deref().unwrap_or("")
                    )));
                }
                (folder, commit)
            }
        };
        // Read where it is, then copied, so that the copy is what runs.
        let contents = PluginContents::read(&folder, name)?;
        let version = contents
            .version
            .clone()
            .or_else(|| entry.version.clone())
            .or_else(|| commit.as_ref().map(|c| c.chars().take(12).collect()))
            .unwrap_or_else(|| "local".to_owned());
        if !is_name(&version) {
            return Err(StoreError::Refused(format!(
                "the version `{version}` of `{id}` cannot name a folder"
            )));
        }
        let copy = staging.path().join("plugin");
        copy_folder(&folder, &copy)?;
        let contents = PluginContents::read(&copy, name)?;
        Ok(Staged {
            plugin: InstalledPlugin {
                name: name.to_owned(),
                marketplace: marketplace_name.to_owned(),
                version,
                commit,
                path: PathBuf::new(),
                enabled: true,
            },
            contents,
            staging,
        })
    }

    /// Keeps a staged plugin: its copy moves to the cache and it is recorded, enabled.
    pub fn install(&self, staged: Staged) -> Result<InstalledPlugin, StoreError> {
        let Staged {
            mut plugin,
            staging,
            ..
        } = staged;
        let kept = self
            .folder
            .join("cache")
            .join(&plugin.marketplace)
            .join(&plugin.name)
            .join(&plugin.version);
        if kept.exists() {
            std::fs::remove_dir_all(&kept).map_err(|e| write_error(&kept, e))?;
        }
        std::fs::create_dir_all(kept.parent().unwrap_or(&self.folder))
            .map_err(|e| write_error(&kept, e))?;
        std::fs::rename(staging.path().join("plugin"), &kept).map_err(|e| write_error(&kept, e))?;
        plugin.path = kept;
        let mut plugins = self.plugins()?;
        if let Some(old) = plugins.insert(plugin.id(), plugin.clone())
            && old.path != plugin.path
        {
            let _ = std::fs::remove_dir_all(&old.path);
        }
        self.write("plugins.json", &plugins)?;
        Ok(plugin)
    }

    /// Uninstalls the plugin `id`: its record and its copy go.
    pub fn uninstall(&self, id: &str) -> Result<InstalledPlugin, StoreError> {
        let mut plugins = self.plugins()?;
        let plugin = plugins
            .remove(id)
            .ok_or_else(|| StoreError::Refused(format!("no plugin `{id}` is installed")))?;
        self.write("plugins.json", &plugins)?;
        if plugin.path.exists() {
            std::fs::remove_dir_all(&plugin.path).map_err(|e| write_error(&plugin.path, e))?;
        }
        // Its plugin folder, when no other version is left in it.
        if let Some(parent) = plugin.path.parent() {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(plugin)
    }

    /// Enables or disables the installed plugin `id`.
    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<InstalledPlugin, StoreError> {
        let mut plugins = self.plugins()?;
        let plugin = plugins
            .get_mut(id)
            .ok_or_else(|| StoreError::Refused(format!("no plugin `{id}` is installed")))?;
        plugin.enabled = enabled;
        let plugin = plugin.clone();
        self.write("plugins.json", &plugins)?;
        Ok(plugin)
    }

    /// A fresh staging folder in the store (removed with it, so a failure leaves nothing).
    fn staging(&self) -> Result<tempfile::TempDir, StoreError> {
        std::fs::create_dir_all(&self.folder).map_err(|e| write_error(&self.folder, e))?;
        tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&self.folder)
            .map_err(|e| write_error(&self.folder, e))
    }

    /// One of the store's files (empty when there is none yet).
    fn read<T: for<'de> Deserialize<'de> + Default>(&self, file: &str) -> Result<T, StoreError> {
        let path = self.folder.join(file);
        match super::manifest::read_json(&path)? {
            None => Ok(T::default()),
            Some(value) => serde_json::from_value(value).map_err(|e| {
                StoreError::Manifest(ManifestError::Invalid {
                    path,
                    message: e.to_string(),
                })
            }),
        }
    }

    /// Writes one of the store's files whole.
    fn write<T: Serialize>(&self, file: &str, value: &T) -> Result<(), StoreError> {
        let path = self.folder.join(file);
        std::fs::create_dir_all(&self.folder).map_err(|e| write_error(&self.folder, e))?;
        let text = serde_json::to_vec_pretty(value).unwrap_or_default();
        agentry_plugin::atomic_file::write_atomically(&path, &text)
            .map_err(|e| write_error(&path, e))
    }
}

/// A plugin read and copied, not yet kept.
#[derive(Debug)]
pub struct Staged {
    /// What it will be recorded as.
    pub plugin: InstalledPlugin,
    /// What it brings (read from the copy).
    pub contents: PluginContents,
    staging: tempfile::TempDir,
}

/// `NAME@MARKETPLACE`, split.
fn split_id(id: &str) -> Result<(&str, &str), StoreError> {
    match id.split_once('@') {
        Some((name, marketplace)) if is_name(name) && is_name(marketplace) => {
            Ok((name, marketplace))
        }
        _ => Err(StoreError::Refused(format!(
            "`{id}` does not name a plugin: write NAME@MARKETPLACE"
        ))),
    }
}

/// What `git clone` is given for a marketplace source, and the branch or tag it names.
fn git_source(source: &str) -> Result<(String, Option<String>), StoreError> {
    let (address, reference) = match source.rsplit_once('#') {
        Some((address, reference)) => (address, Some(reference.to_owned())),
        None => (source, None),
    };
    let remote = address.contains("://") || address.starts_with("git@");
    if remote {
        return Ok((address.to_owned(), reference));
    }
    let (repo, at) = match address.split_once('@') {
        Some((repo, at)) => (repo, Some(at.to_owned())),
        None => (address, None),
    };
    let parts: Vec<&str> = repo.split('/').collect();
    if parts.len() == 2 && parts.iter().all(|part| is_name(part)) {
        return Ok((format!("https://github.com/{repo}.git"), reference.or(at)));
    }
    Err(StoreError::Refused(format!(
        "`{source}` is neither a folder holding .claude-plugin/marketplace.json, a git URL, nor OWNER/REPO"
    )))
}

/// An error writing `path`.
fn write_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Copies the folder `from` to `to` (its `.git` left out; links inside it kept as links, links
/// leading out of it left out).
fn copy_folder(from: &Path, to: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(to).map_err(|e| write_error(to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| write_error(from, e))?;
    for entry in entries.flatten() {
        let (source, name) = (entry.path(), entry.file_name());
        if name == ".git" {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type().map_err(|e| write_error(&source, e))?;
        if kind.is_symlink() {
            let link = std::fs::read_link(&source).map_err(|e| write_error(&source, e))?;
            let stays = link.is_relative()
                && !link
                    .components()
                    .any(|c| c == std::path::Component::ParentDir);
            #[cfg(unix)]
            if stays {
                std::os::unix::fs::symlink(&link, &target).map_err(|e| write_error(&target, e))?;
            }
        } else if kind.is_dir() {
            copy_folder(&source, &target)?;
        } else {
            std::fs::copy(&source, &target).map_err(|e| write_error(&target, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marketplace_sources_are_folders_git_urls_or_github_names() {
        assert_eq!(
            git_source("acme/plugins@v2").unwrap(),
            (
                "https://github.com/acme/plugins.git".to_owned(),
                Some("v2".to_owned())
            )
        );
        assert_eq!(
            git_source("file:///srv/plugins.git#main").unwrap(),
            (
                "file:///srv/plugins.git".to_owned(),
                Some("main".to_owned())
            )
        );
        assert!(git_source("not a source").is_err());
        assert!(split_id("lint@team").is_ok());
        assert!(split_id("lint").is_err());
        assert!(split_id("../x@team").is_err());
    }

    /// A marketplace in `root` offering `entries`.
    fn catalog(root: &Path, entries: serde_json::Value) {
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        let catalog = serde_json::json!({"name": "team", "plugins": entries});
        std::fs::write(
            root.join(".claude-plugin/marketplace.json"),
            catalog.to_string(),
        )
        .unwrap();
    }

    #[test]
    fn sources_git_could_read_as_options_or_paths_leading_out_are_refused() {
        let folder = tempfile::tempdir().unwrap();
        for (source, wanted) in [
            (
                serde_json::json!({"source": "url", "url": "file:///r.git", "sha": "--orphan=x"}),
                "`sha`",
            ),
            (
                serde_json::json!({"source": "url", "url": "file:///r.git", "ref": "-c"}),
                "`ref`",
            ),
            (
                serde_json::json!({"source": "git-subdir", "url": "file:///r.git", "path": "/etc"}),
                "leads out",
            ),
            (
                serde_json::json!({"source": "git-subdir", "url": "file:///r.git", "path": "a/../../b"}),
                "leads out",
            ),
        ] {
            catalog(
                folder.path(),
                serde_json::json!([{"name": "x", "source": source}]),
            );
            let error = Marketplace::read(folder.path()).unwrap_err().to_string();
            assert!(error.contains(wanted), "{source}: {error}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_plugin_folder_that_is_a_link_out_of_its_marketplace_is_not_installed() {
        let folder = tempfile::tempdir().unwrap();
        let (market, secrets) = (folder.path().join("market"), folder.path().join("secrets"));
        std::fs::create_dir_all(market.join("plugins")).unwrap();
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("key"), "secret").unwrap();
        std::os::unix::fs::symlink(&secrets, market.join("plugins/x")).unwrap();
        catalog(
            &market,
            serde_json::json!([{"name": "x", "source": "./plugins/x"}]),
        );
        let store = PluginStore::new(&folder.path().join("data"));
        store.add_marketplace(market.to_str().unwrap()).unwrap();
        let error = store.stage("x@team").unwrap_err().to_string();
        assert!(
            error.contains("a link leading out of the marketplace"),
            "{error}"
        );
    }
}
