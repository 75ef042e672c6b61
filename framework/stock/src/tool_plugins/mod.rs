//! Native tool plugins the user installs (`agentry plugins install SOURCE`): from a crate of the
//! registry, built with the system's cargo; from a crate's folder; from a built library; or
//! from a built library's https URL with its checksum. Each is checked before it is installed:
//! its declaration (read from the file, without loading it) must name this agentry's plugin
//! ABI. Installed libraries live in the data folder's `plugins/NAME/`, recorded in
//! `plugins/installed.json` (see [`manifest`]); the agent loads them as it loads the libraries
//! of its plugins folders.

mod cargo;
mod download;
mod error;
pub mod manifest;
mod source;
pub mod template;

pub use error::InstallError;
pub use manifest::{InstalledPlugin, Manifest, Source};
pub use source::Requested;

use agentry_plugin_host::declaration;
use std::path::{Path, PathBuf};

/// How to install or update.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstallOptions {
    /// Build without optimisations (faster to build; slower tools).
    pub debug: bool,
    /// Build a crate with its own `Cargo.lock` as it is.
    pub locked: bool,
}

/// What an install or update did.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The plugin as installed now.
    pub plugin: InstalledPlugin,
    /// The one of its name it replaced.
    pub replaced: Option<InstalledPlugin>,
}

/// What `update` found.
#[derive(Debug, Clone)]
pub enum Updated {
    /// A newer build is installed.
    Installed(Installed),
    /// The installed plugin is what its source gives now.
    UpToDate(InstalledPlugin),
}

/// The tool plugins installed in a data folder.
#[derive(Debug, Clone)]
pub struct ToolPlugins {
    folder: PathBuf,
}

impl ToolPlugins {
    /// The plugins installed in `data_folder`.
    pub fn new(data_folder: &Path) -> ToolPlugins {
        ToolPlugins {
            folder: data_folder.join("plugins"),
        }
    }

    /// The manifest's file.
    pub fn manifest_path(&self) -> PathBuf {
        self.folder.join("installed.json")
    }

    /// The installed plugins.
    pub fn installed(&self) -> Result<Vec<InstalledPlugin>, InstallError> {
        Ok(Manifest::read(&self.manifest_path())?.plugins)
    }

    /// Installs from `requested`, in place of an installed plugin of the same name.
    pub async fn install(
        &self,
        requested: Requested,
        options: InstallOptions,
    ) -> Result<Installed, InstallError> {
        let _lock = self.lock()?;
        self.sweep();
        let work = tempfile::Builder::new()
            .prefix(".work-")
            .tempdir_in(&self.folder)
            .map_err(InstallError::io(&self.folder))?;
        let target_dir = work.path().join("target");
        let mut downloaded = None;
        let (library, source, built) = match requested {
            Requested::Crate { name, requirement } => {
                let krate = cargo::fetch(&name, &requirement, work.path()).await?;
                let library =
                    cargo::build(&krate, build_options(options, Some(&target_dir))).await?;
                (library, Source::Crate { name, requirement }, Some(krate))
            }
            Requested::CrateFolder(path) => {
                let krate = cargo::crate_in(&path).await?;
                let library = cargo::build(&krate, build_options(options, None)).await?;
                (library, Source::Path { path }, Some(krate))
            }
            Requested::Library(path) => (path.clone(), Source::Library { path }, None),
            Requested::Url { url, sha256 } => {
                let file = downloaded.insert(download::download(&url, &sha256, work.path()).await?);
                let source = Source::Url {
                    url: url.to_string(),
                };
                (file.path().to_path_buf(), source, None)
            }
        };
        let debug = built.is_some() && options.debug;
        self.place(&library, source, built.map(|k| (k.name, k.version)), debug)
    }

    /// Holds the plugins folder for this process (`plugins/.lock`) until dropped: one install,
    /// update or removal at a time, so none loses another's record.
    fn lock(&self) -> Result<std::fs::File, InstallError> {
        std::fs::create_dir_all(&self.folder).map_err(InstallError::io(&self.folder))?;
        let path = self.folder.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(InstallError::io(&path))?;
        file.lock().map_err(InstallError::io(&path))?;
        Ok(file)
    }

    /// Removes what an install that was stopped (a crash, Ctrl-C) left in the plugins folder:
    /// work folders and staged files (called with the lock held, so none is in use).
    fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(&self.folder) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".work-") {
                let _ = std::fs::remove_dir_all(&path);
            } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                let staged = std::fs::read_dir(&path).into_iter().flatten().flatten();
                for file in
                    staged.filter(|f| f.file_name().to_string_lossy().starts_with(".install-"))
                {
                    let _ = std::fs::remove_file(file.path());
                }
            }
        }
    }

    /// Checks the library at `library` and installs it: its declaration must name this
    /// agentry's ABI; its name and version are its crate's (`built`) or its declaration's.
    fn place(
        &self,
        library: &Path,
        source: Source,
        built: Option<(String, String)>,
        debug: bool,
    ) -> Result<Installed, InstallError> {
        let not_loadable =
            |e: agentry_plugin_host::PluginError| InstallError::NotLoadable(e.to_string());
        let declared = declaration::read(library).map_err(not_loadable)?.ok_or_else(|| {
            InstallError::NotLoadable(format!(
                "{}: declares no plugin ABI (it was built before ABI 1.2, or not with agentry_plugin_abi::export_plugin!): rebuild it against this agentry's agentry-plugin-abi",
                library.display()
            ))
        })?;
        declaration::check(library, &declared).map_err(not_loadable)?;
        let (name, version) = match (built, &declared.plugin) {
            (Some(built), _) => built,
            (None, Some(plugin)) => (plugin.name.clone(), plugin.version.clone()),
            (None, None) => {
                return Err(InstallError::NotLoadable(format!(
                    "{}: its declaration names no crate, so it has no name to be installed under",
                    library.display()
                )));
            }
        };
        if !manifest::is_safe_name(&name) {
            return Err(InstallError::NotLoadable(format!(
                "{}: `{name}` cannot be a plugin's name (letters, digits, - and _ only)",
                library.display()
            )));
        }
        let file = manifest::library_path(&self.folder, &name);
        let folder = self.folder.join(&name);
        std::fs::create_dir_all(&folder).map_err(InstallError::io(&folder))?;
        let staged = tempfile::Builder::new()
            .prefix(".install-")
            .tempfile_in(&folder)
            .map_err(InstallError::io(&folder))?;
        std::fs::copy(library, staged.path()).map_err(InstallError::io(library))?;
        staged
            .as_file()
            .sync_all()
            .map_err(InstallError::io(staged.path()))?;
        let sha256 = file_sha256(staged.path()).map_err(InstallError::io(staged.path()))?;
        staged
            .persist(&file)
            .map_err(|e| InstallError::io(&file)(e.error))?;
        let plugin = InstalledPlugin {
            name,
            version,
            source,
            abi: declared.abi(),
            agentry: declared.agentry_versions,
            sha256,
            file,
            debug,
        };
        let mut manifest = Manifest::read(&self.manifest_path())?;
        let replaced = manifest.put(plugin.clone());
        manifest.write(&self.manifest_path())?;
        Ok(Installed { plugin, replaced })
    }

    /// Builds or fetches the plugin named `name` again from its source, and installs it when
    /// it differs from the one installed.
    pub async fn update(
        &self,
        name: &str,
        options: InstallOptions,
    ) -> Result<Updated, InstallError> {
        let installed = Manifest::read(&self.manifest_path())?
            .get(name)
            .cloned()
            .ok_or_else(|| InstallError::NotInstalled(name.to_owned()))?;
        let requested = match &installed.source {
            Source::Crate { name, requirement } => Requested::Crate {
                name: name.clone(),
                requirement: requirement.clone(),
            },
            Source::Path { path } => Requested::CrateFolder(path.clone()),
            Source::Library { path } => {
                return Err(InstallError::Source(format!(
                    "{name} was installed from the library {}: whatever is there now may be another file, so install it again by name if it is the one you want",
                    path.display()
                )));
            }
            Source::Url { url } => {
                return Err(InstallError::Source(format!(
                    "{name} came from {url}, pinned by its checksum: to update it, install it again with the new release's URL and --sha256"
                )));
            }
        };
        let options = InstallOptions {
            debug: options.debug || installed.debug,
            ..options
        };
        if let Source::Crate { name, requirement } = &installed.source {
            let work = tempfile::tempdir().map_err(InstallError::io(std::env::temp_dir()))?;
            let newest = cargo::fetch(name, requirement, work.path()).await?;
            if newest.version == installed.version {
                return Ok(Updated::UpToDate(installed));
            }
        }
        let now = self.install(requested, options).await?;
        if now.plugin.sha256 == installed.sha256 && now.plugin.version == installed.version {
            return Ok(Updated::UpToDate(now.plugin));
        }
        Ok(Updated::Installed(now))
    }

    /// Uninstalls the plugin named `name`: its record and its folder.
    pub fn remove(&self, name: &str) -> Result<InstalledPlugin, InstallError> {
        if !manifest::is_safe_name(name) {
            return Err(InstallError::NotInstalled(name.to_owned()));
        }
        let _lock = self.lock()?;
        let mut manifest = Manifest::read(&self.manifest_path())?;
        let removed = manifest
            .remove(name)
            .ok_or_else(|| InstallError::NotInstalled(name.to_owned()))?;
        manifest.write(&self.manifest_path())?;
        let folder = self.folder.join(name);
        if folder.exists() {
            std::fs::remove_dir_all(&folder).map_err(InstallError::io(&folder))?;
        }
        Ok(removed)
    }
}

/// The SHA-256 of the file at `path`, as the manifest records it (lowercase hex).
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    crate::config::trust::file_digest(path).map(|digest| crate::config::trust::hex(&digest))
}

/// How cargo builds a crate for `options`, into `target_dir` (none: the crate's own).
fn build_options(options: InstallOptions, target_dir: Option<&Path>) -> cargo::BuildOptions<'_> {
    cargo::BuildOptions {
        debug: options.debug,
        target_dir,
        locked: options.locked,
    }
}
