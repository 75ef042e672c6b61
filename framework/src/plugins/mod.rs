//! Tool providers from plugin libraries: the host side of the ABI in [`agentry_plugin::abi`].
//!
//! [`load`] opens a library with every symbol resolved at once (`RTLD_NOW`, so a broken
//! library fails here), reads its info symbol, checks the magic, the ABI major and that panics
//! unwind, asks it to describe its provider and checks every input schema. The library is never
//! unloaded. Its tools become ordinary [`DynTool`]s: the executor cannot tell them apart from
//! linked ones. A tool that panics fails its call, and the plugin refuses later calls.
#![allow(unsafe_code)]

mod call;
mod commands;
mod services;

use crate::commands::CommandSource;
use crate::ids::SessionId;
use crate::provider::{Provider, ProviderOrigin};
use crate::tool::{DynTool, ToolError};
use agentry_plugin::abi::{self, Buffer, PluginInfo, PluginV1};
use call::PluginTool;

/// The plugin ABI this host speaks, as `MAJOR.MINOR`: it loads plugins built for the same
/// major version.
pub fn abi_version() -> String {
    format!("{}.{}", abi::ABI_MAJOR, abi::ABI_MINOR)
}
use agentry_plugin::settings::Settings;
use agentry_plugin::wire::{ConfiguredDescription, Description, Query};
use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
        "{path}: not an agentry plugin (it has no `{symbol}` symbol, or a wrong magic number): is `agentry_plugin::export_plugin!(…)` missing from the crate, or is it not built as a `cdylib`?"
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
    /// A tool's input schema is not a valid JSON Schema.
    #[error("{path}: tool `{tool}` has an invalid input schema: {message}")]
    InvalidSchema {
        /// The file.
        path: PathBuf,
        /// The tool.
        tool: String,
        /// What the validator said.
        message: String,
    },
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

/// Loads a plugin library and returns its provider.
pub fn load(path: &Path) -> Result<PluginProvider, PluginError> {
    let path = path.to_path_buf();
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
    // SAFETY: loading a library runs its initialisers; plugins are code the user chose to run.
    let library =
        unsafe { libloading::os::unix::Library::open(Some(&path), flags) }.map_err(|e| {
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
        let (host_sdk, host_rustc) = agentry_plugin::export::build_info();
        return Err(PluginError::AbiMismatch {
            path,
            plugin: format!(
                "ABI {}.{} (agentry-plugin {}, {})",
                info.abi_major,
                info.abi_minor,
                c_text(info.sdk_version),
                c_text(info.rustc_version)
            ),
            host: format!(
                "ABI {}.{} (agentry-plugin {host_sdk}, {host_rustc})",
                abi::ABI_MAJOR,
                abi::ABI_MINOR
            ),
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
    check_schemas(&path, &description)?;
    Ok(PluginProvider {
        library: Arc::new(Library {
            path,
            name: description.name.clone(),
            table,
            panicked: AtomicBool::new(false),
        }),
        description,
    })
}

/// Fails on a tool whose input schema is not a valid JSON Schema.
fn check_schemas(path: &Path, description: &Description) -> Result<(), PluginError> {
    for tool in &description.tools {
        jsonschema::validator_for(&tool.input_schema).map_err(|e| PluginError::InvalidSchema {
            path: path.to_path_buf(),
            tool: tool.name.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
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

/// A provider served by a plugin library.
pub struct PluginProvider {
    library: Arc<Library>,
    description: Description,
}

impl PluginProvider {
    /// The configuration sections the provider reads, when it is to be configured
    /// ([`configure`](Self::configure)) before use; `None` for a provider that reads none (and
    /// every 1.0 plugin).
    pub fn sections(&self) -> Option<&[String]> {
        self.description.sections.as_deref()
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
        check_schemas(&self.library.path, &configured.description)?;
        self.description = configured.description;
        Ok(configured.problems)
    }
}

impl Provider for PluginProvider {
    fn name(&self) -> &str {
        &self.description.name
    }

    fn description(&self) -> String {
        self.description.description.clone()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.description
            .tools
            .iter()
            .map(|tool| {
                Arc::new(PluginTool {
                    library: self.library.clone(),
                    tool: tool.clone(),
                }) as Arc<dyn DynTool>
            })
            .collect()
    }

    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::Plugin {
            path: self.library.path.clone(),
        }
    }

    fn readable_roots(&self) -> Vec<PathBuf> {
        self.description.readable_roots.clone()
    }

    fn commands(&self) -> Option<Arc<dyn CommandSource>> {
        self.description.commands.then(|| {
            Arc::new(commands::PluginCommands {
                library: self.library.clone(),
            }) as Arc<dyn CommandSource>
        })
    }

    fn take_notices(&self, session_id: &SessionId) -> Vec<String> {
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
}
