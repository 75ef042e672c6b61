//! The record of installed tool plugins: `plugins/installed.json` in the data folder, one entry
//! per plugin (its name, version, where it came from, the ABI it was built for and the checksum
//! of the library installed), written atomically.

use super::error::InstallError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where an installed plugin came from (and where `update` looks for a newer one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A crate of the registry cargo uses (crates.io, or what its configuration puts in its
    /// place), built with the system's cargo.
    Crate {
        /// The crate's name.
        name: String,
        /// The version requirement: `*` for the newest, `=X.Y.Z` when pinned with `--version`.
        requirement: String,
    },
    /// A crate in a folder, built with the system's cargo.
    Path {
        /// The crate's folder.
        path: PathBuf,
    },
    /// A built library in a file.
    Library {
        /// The file.
        path: PathBuf,
    },
    /// A built library downloaded from a URL, with the checksum it was given.
    Url {
        /// The URL.
        url: String,
    },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Crate { name, requirement } if requirement == "*" => write!(f, "crate {name}"),
            Source::Crate { name, requirement } => write!(f, "crate {name} {requirement}"),
            Source::Path { path } => write!(f, "crate in {}", path.display()),
            Source::Library { path } => write!(f, "library {}", path.display()),
            Source::Url { url } => write!(f, "{url}"),
        }
    }
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledPlugin {
    /// Its name (its crate's).
    pub name: String,
    /// Its version (its crate's).
    pub version: String,
    /// Where it came from.
    pub source: Source,
    /// The plugin ABI it was built for (`MAJOR.MINOR`).
    pub abi: String,
    /// The agentry versions that speak that ABI, as its declaration says.
    pub agentry: String,
    /// The SHA-256 of the installed library.
    pub sha256: String,
    /// The installed library.
    pub file: PathBuf,
    /// Built without optimisations (`--debug`); an update builds it the same way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub debug: bool,
}

/// The installed plugins, as the manifest records them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// Each installed plugin, by name.
    pub plugins: Vec<InstalledPlugin>,
}

impl Manifest {
    /// Reads the manifest at `path` (none yet: nothing installed). Each entry must name a
    /// plugin by a safe name and its library where agentry installs it (beside the manifest, in
    /// the plugin's folder): a manifest edited to point anywhere else is refused whole.
    pub fn read(path: &Path) -> Result<Manifest, InstallError> {
        let invalid = |message: String| InstallError::Manifest {
            path: path.to_path_buf(),
            message,
        };
        let manifest: Manifest = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| invalid(format!("not a manifest of installed plugins ({e})")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(InstallError::io(path)(e)),
        };
        let folder = path.parent().unwrap_or(Path::new("."));
        for plugin in &manifest.plugins {
            if !is_safe_name(&plugin.name) || plugin.file != library_path(folder, &plugin.name) {
                return Err(invalid(format!(
                    "the entry {:?} is not a plugin agentry installed (its name or its file's place is not one agentry gives)",
                    plugin.name
                )));
            }
        }
        Ok(manifest)
    }

    /// Writes the manifest to `path` atomically.
    pub fn write(&self, path: &Path) -> Result<(), InstallError> {
        let mut json = serde_json::to_vec_pretty(self).map_err(|e| InstallError::Manifest {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        json.push(b'\n');
        agentry_plugin::atomic_file::write_atomically(path, &json).map_err(InstallError::io(path))
    }

    /// The plugin named `name`.
    pub fn get(&self, name: &str) -> Option<&InstalledPlugin> {
        self.plugins.iter().find(|plugin| plugin.name == name)
    }

    /// Records `plugin`, in place of one of the same name; returns the one it replaced.
    pub fn put(&mut self, plugin: InstalledPlugin) -> Option<InstalledPlugin> {
        let replaced = self.remove(&plugin.name);
        self.plugins.push(plugin);
        self.plugins.sort_by(|a, b| a.name.cmp(&b.name));
        replaced
    }

    /// Forgets the plugin named `name`; returns it.
    pub fn remove(&mut self, name: &str) -> Option<InstalledPlugin> {
        let at = self.plugins.iter().position(|plugin| plugin.name == name)?;
        Some(self.plugins.remove(at))
    }
}

/// Whether `name` is safe as a folder's name: ASCII letters, digits, `-` and `_`.
pub fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Where the library of the plugin `name` is installed, in the plugins folder `folder`.
pub fn library_path(folder: &Path, name: &str) -> PathBuf {
    folder.join(name).join(format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        name.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(folder: &Path, name: &str, version: &str) -> InstalledPlugin {
        InstalledPlugin {
            name: name.to_owned(),
            version: version.to_owned(),
            source: Source::Crate {
                name: name.to_owned(),
                requirement: "*".to_owned(),
            },
            abi: "1.2".to_owned(),
            agentry: ">=0.1.0, <0.2.0".to_owned(),
            sha256: "00".repeat(32),
            file: library_path(folder, name),
            debug: false,
        }
    }

    #[test]
    fn a_plugin_put_again_replaces_the_one_of_its_name_and_the_manifest_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("plugins");
        let path = folder.join("installed.json");
        assert!(Manifest::read(&path).unwrap().plugins.is_empty());
        let mut manifest = Manifest::default();
        assert_eq!(manifest.put(plugin(&folder, "zeta", "1.0.0")), None);
        assert_eq!(manifest.put(plugin(&folder, "alpha", "0.1.0")), None);
        let replaced = manifest.put(plugin(&folder, "zeta", "1.1.0")).unwrap();
        assert_eq!(replaced.version, "1.0.0");
        manifest.write(&path).unwrap();
        let read = Manifest::read(&path).unwrap();
        let names: Vec<(&str, &str)> = read
            .plugins
            .iter()
            .map(|p| (p.name.as_str(), p.version.as_str()))
            .collect();
        assert_eq!(names, [("alpha", "0.1.0"), ("zeta", "1.1.0")]);
        assert_eq!(read.get("alpha"), Some(&plugin(&folder, "alpha", "0.1.0")));
    }

    #[test]
    fn a_manifest_naming_a_file_elsewhere_or_an_unsafe_name_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("plugins");
        let path = folder.join("installed.json");
        let elsewhere = InstalledPlugin {
            file: PathBuf::from("/tmp/evil.so"),
            ..plugin(&folder, "tools", "1.0.0")
        };
        let climbing = InstalledPlugin {
            name: "../..".to_owned(),
            file: folder.join("../../lib.so"),
            ..plugin(&folder, "tools", "1.0.0")
        };
        for hostile in [elsewhere, climbing] {
            let manifest = Manifest {
                plugins: vec![plugin(&folder, "fine", "1.0.0"), hostile],
            };
            manifest.write(&path).unwrap();
            let error = Manifest::read(&path).unwrap_err().to_string();
            assert!(
                error.contains("is not a plugin agentry installed"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_damaged_manifest_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("installed.json");
        std::fs::write(&path, "{not json").unwrap();
        let error = Manifest::read(&path).unwrap_err().to_string();
        assert!(error.contains("installed.json: not a manifest"), "{error}");
    }
}
