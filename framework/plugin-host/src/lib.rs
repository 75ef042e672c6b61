//! Tool providers from plugin libraries: the host side of the ABI in [`agentry_plugin_abi::abi`].
//!
//! [`load`] opens a library with every symbol resolved at once (`RTLD_NOW`, so a broken
//! library fails here), reads its info symbol, checks the magic, the ABI major and that panics
//! unwind, asks it to describe its provider and checks every input schema. The library is never
//! unloaded. Its tools become ordinary [`DynTool`]s: the executor cannot tell them apart from
//! linked ones. A tool that panics fails its call, and the plugin refuses later calls.
#![allow(unsafe_code)]

mod call;
mod commands;
pub mod declaration;
mod hosted;
mod services;

use agentry::commands::CommandSource;
use agentry::ids::SessionId;
use agentry::provider::{Login, Provider, ProviderOrigin, ProviderStatus};
use agentry::session_servers::SessionServers;
use agentry::tool::{DynTool, ToolError};
use agentry_plugin_abi::abi::{self, Buffer, PluginInfo, PluginV1};
use call::PluginTool;

/// The plugin ABI this host speaks, as `MAJOR.MINOR`: it loads plugins built for the same
/// major version.
pub fn abi_version() -> String {
    format!("{}.{}", abi::ABI_MAJOR, abi::ABI_MINOR)
}

/// This host's ABI, SDK and compiler, as a refusal names them.
fn host_build() -> String {
    let (sdk, rustc) = agentry_plugin_abi::export::build_info();
    format!("ABI {} (agentry-plugin {sdk}, {rustc})", abi_version())
}
use agentry_plugin::settings::Settings;
pub use agentry_plugin_abi::wire::LogTarget;
use agentry_plugin_abi::wire::{ConfiguredDescription, Description, Query};
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Why a plugin could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The file is not a shared library the system can load.
    #[error("{path}: not a loadable shared library: {message}")]
    NotALibrary {
        /// The file.
        path: PathBuf,
        /// What the loader said.
        message: String,
    },
    /// The library is not an agentry plugin.
    #[error(
        "{path}: not an agentry plugin (it has no `{symbol}` symbol, or a wrong magic number): is `agentry_plugin_abi::export_plugin!(…)` missing from the crate, or is it not built as a `cdylib`?"
    )]
    NotAPlugin {
        /// The file.
        path: PathBuf,
        /// The symbol looked for.
        symbol: &'static str,
    },
    /// The plugin was built for another ABI major.
    #[error(
        "{path}: built for plugin {plugin}, but this agentry speaks {host}: rebuild the plugin against this agentry's agentry-plugin"
    )]
    AbiMismatch {
        /// The file.
        path: PathBuf,
        /// The plugin's ABI, SDK and compiler versions.
        plugin: String,
        /// The host's.
        host: String,
    },
    /// The plugin's declaration (the section saying what it was built for) is malformed.
    #[error("{path}: {message}")]
    Declaration {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The plugin was built with `panic = "abort"`, so a panicking tool would end agentry.
    #[error(
        "{path}: built with panic = \"abort\", so one panicking tool would end agentry: build it with panic = \"unwind\""
    )]
    PanicAbort {
        /// The file.
        path: PathBuf,
    },
    /// The plugin's description is unusable.
    #[error("{path}: its provider description is unusable: {message}")]
    Describe {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The plugin could not be configured: its settings leave nothing usable.
    #[error("{path}: {message}")]
    Configure {
        /// The file.
        path: PathBuf,
        /// What the plugin said.
        message: String,
    },
}

/// Where loaded plugins log (see [`log_to`]).
static LOGS: std::sync::OnceLock<LogTarget> = std::sync::OnceLock::new();

/// Sends the logs of the plugins loaded from now on where `target` says (where the host's own
/// go); set once, at start-up. Without it a plugin's logs are dropped.
pub fn log_to(target: LogTarget) {
    let _ = LOGS.set(target);
}

/// A loaded plugin library (kept for the life of the process).
struct Library {
    path: PathBuf,
    name: String,
    table: &'static PluginV1,
    panicked: AtomicBool,
}

fn c_text(text: *const c_char) -> String {
    if text.is_null() {
        return "unknown".to_owned();
    }
    // SAFETY: the ABI says these are NUL-terminated static strings.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// Whether this program is linked statically (musl's default), where `dlopen` cannot load a
/// library.
const STATIC_BUILD: bool = cfg!(all(target_env = "musl", target_feature = "crt-static"));

/// Opens a library with every symbol resolved at once (`RTLD_NOW`; Windows resolves them at
/// load) and its symbols kept to itself (`RTLD_LOCAL`).
fn open_library(path: &Path) -> Result<libloading::Library, libloading::Error> {
    #[cfg(unix)]
    {
        let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
        // SAFETY: loading a library runs its initialisers; plugins are code the user chose to run.
        unsafe { libloading::os::unix::Library::open(Some(path), flags) }.map(Into::into)
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }
    }
}

/// Loads a plugin library and returns its provider. A library that declares another ABI (see
/// [`declaration`]) is refused before it is loaded.
pub fn load(path: &Path) -> Result<PluginProvider, PluginError> {
    match declaration::read(path) {
        Ok(Some(declared)) => declaration::check(path, &declared)?,
        Ok(None) => {}
        // A file the reader does not take for a library here (a universal macOS library, say):
        // the system's loader decides, and says why when it refuses.
        Err(PluginError::NotALibrary { .. }) => {}
        Err(other) => return Err(other),
    }
    let path = path.to_path_buf();
    if STATIC_BUILD {
        return Err(PluginError::NotALibrary {
            path,
            message: "this agentry is linked statically (the musl build), and a static program cannot load libraries: use the glibc build for plugins".to_owned(),
        });
    }
    let library = open_library(&path).map_err(|e| {
        let detail = std::error::Error::source(&e)
            .map(|cause| format!(": {cause}"))
            .unwrap_or_default();
        PluginError::NotALibrary {
            path: path.clone(),
            message: format!("{e}{detail}"),
        }
    })?;
    let not_a_plugin = |symbol| PluginError::NotAPlugin {
        path: path.clone(),
        symbol,
    };
    // SAFETY: the symbol's type is fixed by the ABI (all majors).
    let info_fn =
        unsafe { library.get::<extern "C" fn() -> *const PluginInfo>(abi::INFO_SYMBOL.as_bytes()) }
            .map_err(|_| not_a_plugin(abi::INFO_SYMBOL))?;
    // SAFETY: the function returns a pointer to a static PluginInfo.
    let info = unsafe { info_fn().as_ref() }.ok_or_else(|| not_a_plugin(abi::INFO_SYMBOL))?;
    if info.magic != abi::MAGIC {
        return Err(not_a_plugin(abi::INFO_SYMBOL));
    }
    if info.abi_major != abi::ABI_MAJOR {
        return Err(PluginError::AbiMismatch {
            path,
            plugin: format!(
                "ABI {}.{} (agentry-plugin {}, {})",
                info.abi_major,
                info.abi_minor,
                c_text(info.sdk_version),
                c_text(info.rustc_version)
            ),
            host: host_build(),
        });
    }
    if info.panic_unwind == 0 {
        return Err(PluginError::PanicAbort { path });
    }
    // SAFETY: for ABI major 1 the entry symbol has this type.
    let entry = unsafe {
        library.get::<extern "C" fn() -> *const PluginV1>(abi::ENTRY_SYMBOL_V1.as_bytes())
    }
    .map_err(|_| not_a_plugin(abi::ENTRY_SYMBOL_V1))?;
    // SAFETY: the entry returns a pointer to a static table that lives as long as the library,
    // which is never unloaded (forgotten below).
    let table: &'static PluginV1 =
        unsafe { entry().as_ref() }.ok_or_else(|| not_a_plugin(abi::ENTRY_SYMBOL_V1))?;
    std::mem::forget(library);
    if table.size < abi::V1_0_SIZE {
        return Err(PluginError::Describe {
            path,
            message: "its function table is shorter than ABI 1.0's".to_owned(),
        });
    }
    let describe_error = |message: String| PluginError::Describe {
        path: path.clone(),
        message,
    };
    let bytes = take(table, |out| (table.describe)(out)).map_err(describe_error)?;
    let description: Description = serde_json::from_slice(&bytes)
        .map_err(|e| describe_error(format!("it is not valid JSON of the expected shape ({e})")))?;
    let library = Arc::new(Library {
        path,
        name: description.name.clone(),
        table,
        panicked: AtomicBool::new(false),
    });
    if let Some(target) = LOGS.get()
        && let Some(Err(problem)) = library.query::<serde_json::Value>(&Query::Logs(target.clone()))
    {
        tracing::warn!(
            "plugin {}: its logs are lost: {problem}",
            library.path.display()
        );
    }
    Ok(PluginProvider::hosted(library, 0, description, false))
}

impl Library {
    /// Fails a call at once when the plugin panicked earlier.
    fn check_alive(&self) -> Result<(), ToolError> {
        if self.panicked.load(Ordering::SeqCst) {
            Err(ToolError::failed(format!(
                "the plugin `{}` panicked earlier, so its tools are disabled until agentry restarts",
                self.name
            )))
        } else {
            Ok(())
        }
    }

    /// Disables the plugin after a panic; the error fails the call that panicked.
    fn note_panic(&self, message: &str) -> ToolError {
        self.panicked.store(true, Ordering::SeqCst);
        ToolError::failed(format!(
            "the plugin `{}` panicked ({message}); its tools are disabled until agentry restarts",
            self.name
        ))
    }

    /// Asks the plugin a [`Query`] (ABI 1.1; `None` from a 1.0 plugin) and reads its answer.
    fn query<T: serde::de::DeserializeOwned>(&self, query: &Query) -> Option<Result<T, String>> {
        if !self.table.has_v1_1() {
            return None;
        }
        let request = match serde_json::to_vec(query) {
            Ok(request) => request,
            Err(e) => return Some(Err(e.to_string())),
        };
        let table = self.table;
        let answer = take(table, |out| {
            (table.query)(request.as_ptr(), request.len(), out)
        })
        .and_then(|bytes| {
            serde_json::from_slice(&bytes)
                .map_err(|e| format!("the plugin answered a query with invalid JSON: {e}"))
        });
        Some(answer)
    }
}

/// Calls a function that answers into a plugin buffer; returns the bytes (copied, the buffer
/// given back) or the plugin's error message.
fn take(table: &PluginV1, call: impl FnOnce(*mut Buffer) -> i32) -> Result<Vec<u8>, String> {
    let mut buffer = Buffer::EMPTY;
    let code = call(&mut buffer);
    let bytes = if buffer.ptr.is_null() {
        Vec::new()
    } else {
        // SAFETY: the plugin filled `len` bytes at `ptr`; they are copied before being freed.
        unsafe { std::slice::from_raw_parts(buffer.ptr, buffer.len) }.to_vec()
    };
    (table.free)(buffer);
    match code {
        abi::OK => Ok(bytes),
        abi::PANICKED => Err(format!(
            "the plugin panicked: {}",
            String::from_utf8_lossy(&bytes)
        )),
        _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// A provider served by a plugin library: the plugin's own, or one it hosts (an MCP server).
pub struct PluginProvider {
    library: Arc<Library>,
    /// 0 for the plugin's own provider, else the plugin's handle of a hosted one.
    handle: u64,
    name: String,
    described: RwLock<Described>,
    /// Whether the plugin is told to drop it when the host does (a session's server).
    released_on_drop: bool,
}

/// A provider's description, as of its revision.
struct Described {
    description: Description,
    revision: u64,
}

impl PluginProvider {
    /// The provider `handle` of the plugin (0: its own), described as `description`.
    fn hosted(
        library: Arc<Library>,
        handle: u64,
        description: Description,
        released_on_drop: bool,
    ) -> Self {
        let revision = match description.changing {
            true => library.state(handle).map_or(0, |state| state.revision),
            false => 0,
        };
        Self {
            library,
            handle,
            name: description.name.clone(),
            described: RwLock::new(Described {
                description,
                revision,
            }),
            released_on_drop,
        }
    }

    /// Reads the description (as of the last [`refresh`](Self::refresh)).
    fn described<T>(&self, read: impl FnOnce(&Description) -> T) -> T {
        read(
            &self
                .described
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .description,
        )
    }

    /// Describes a changing provider again when its revision moved; `revision` is its latest.
    fn refresh(&self, revision: u64) {
        let current = self
            .described
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .revision;
        if current == revision {
            return;
        }
        match self.library.describe(self.handle) {
            Ok(description) => {
                *self
                    .described
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Described {
                    description,
                    revision,
                };
            }
            Err(problem) => {
                tracing::warn!(
                    "plugin {}: the new tools of `{}` are left out: {problem}",
                    self.library.path.display(),
                    self.name
                );
                // Not asked again until the tools change again.
                self.described
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .revision = revision;
            }
        }
    }

    /// The configuration sections the provider reads, when it is to be configured
    /// ([`configure`](Self::configure)) before use; `None` for a provider that reads none (and
    /// every 1.0 plugin).
    pub fn sections(&self) -> Option<Vec<String>> {
        self.described(|description| description.sections.clone())
    }

    /// Makes the plugin's provider anew from `settings` (ABI 1.1's `configure`), and returns
    /// what in them could not be used, for the user. Blocks while the plugin makes it.
    pub fn configure(&mut self, settings: &Settings) -> Result<Vec<String>, PluginError> {
        let failed = |message: String| PluginError::Configure {
            path: self.library.path.clone(),
            message,
        };
        let configured: ConfiguredDescription = self
            .library
            .query(&Query::Configure(settings.clone()))
            .ok_or_else(|| failed("it was built for ABI 1.0, which takes no settings".into()))?
            .map_err(failed)?;
        self.name = configured.description.name.clone();
        self.described
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .description = configured.description;
        Ok(configured.problems)
    }
}

impl Drop for PluginProvider {
    fn drop(&mut self) {
        if self.released_on_drop {
            let released = self.library.query::<serde_json::Value>(&Query::Release {
                provider: self.handle,
            });
            if let Some(Err(problem)) = released {
                tracing::warn!("plugin {}: {problem}", self.library.path.display());
            }
        }
    }
}

impl Provider for PluginProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.described(|description| description.description.clone())
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        if self.described(|description| description.changing) {
            self.refresh(self.revision());
        }
        self.described(|description| {
            description
                .tools
                .iter()
                .map(|tool| {
                    Arc::new(PluginTool {
                        library: self.library.clone(),
                        provider: self.handle,
                        tool: tool.clone(),
                    }) as Arc<dyn DynTool>
                })
                .collect()
        })
    }

    fn origin(&self) -> ProviderOrigin {
        self.described(|description| description.origin.clone())
            .unwrap_or_else(|| ProviderOrigin::Plugin {
                path: self.library.path.clone(),
            })
    }

    fn revision(&self) -> u64 {
        match self.described(|description| description.changing) {
            true => self
                .library
                .state(self.handle)
                .map_or(0, |state| state.revision),
            false => 0,
        }
    }

    fn readable_roots(&self) -> Vec<PathBuf> {
        self.described(|description| description.readable_roots.clone())
    }

    fn commands(&self) -> Option<Arc<dyn CommandSource>> {
        self.described(|description| description.commands).then(|| {
            Arc::new(commands::PluginCommands {
                library: self.library.clone(),
                provider: self.handle,
                changing: self.described(|description| description.changing),
            }) as Arc<dyn CommandSource>
        })
    }

    fn take_notices(&self, session_id: &SessionId) -> Vec<String> {
        // The plugin keeps notices per session, whichever of its providers left them.
        if self.handle != 0 {
            return Vec::new();
        }
        let query = Query::TakeNotices {
            session_id: session_id.to_string(),
        };
        match self.library.query(&query) {
            Some(Ok(notices)) => notices,
            Some(Err(problem)) => {
                tracing::warn!("plugin {}: {problem}", self.library.path.display());
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    fn end_session(&self, session_id: &SessionId) {
        // The plugin keeps sessions' state once, whichever of its providers it serves.
        if self.handle != 0 {
            return;
        }
        let query = Query::EndSession {
            session_id: session_id.to_string(),
        };
        if let Some(Err(problem)) = self.library.query::<serde_json::Value>(&query) {
            tracing::warn!("plugin {}: {problem}", self.library.path.display());
        }
    }

    fn hosted(&self) -> Vec<Arc<dyn Provider>> {
        hosted::hosted(&self.library, &self.described(|d| d.hosted.clone()))
    }

    fn status(&self) -> ProviderStatus {
        match self.described(|description| description.changing) {
            true => hosted::status(&self.library, self.handle),
            false => ProviderStatus::Ready,
        }
    }

    fn tool_prefix(&self) -> Option<String> {
        self.described(|description| description.tool_prefix.clone())
    }

    fn login(&self) -> Option<Arc<dyn Login>> {
        self.described(|description| description.login).then(|| {
            Arc::new(hosted::PluginLogin {
                library: self.library.clone(),
                handle: self.handle,
            }) as Arc<dyn Login>
        })
    }

    fn session_servers(&self) -> Option<Arc<dyn SessionServers>> {
        let transports = self.described(|description| description.session_servers)?;
        Some(Arc::new(hosted::PluginSessionServers {
            library: self.library.clone(),
            transports,
        }))
    }
}
