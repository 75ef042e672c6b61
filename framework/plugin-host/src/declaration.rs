//! A plugin library's declaration (ABI 1.2), read from its file without loading it: what it was
//! built for, so that a plugin of another ABI is refused before any of its code runs.

use crate::PluginError;
use agentry_plugin_abi::declaration::{self, Declaration};
use object::{BinaryFormat, Object, ObjectSection};
use std::path::Path;

/// Reads the declaration of the plugin library at `path`: `None` when the library has none (a
/// plugin built before ABI 1.2, or one written by hand in another language).
pub fn read(path: &Path) -> Result<Option<Declaration>, PluginError> {
    let not_a_library = |message: String| PluginError::NotALibrary {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| not_a_library(e.to_string()))?;
    let file = object::File::parse(&*bytes)
        .map_err(|e| not_a_library(format!("not a shared library this system knows ({e})")))?;
    let name = match file.format() {
        BinaryFormat::MachO => declaration::MACHO_SECTION,
        BinaryFormat::Pe | BinaryFormat::Coff => declaration::PE_SECTION,
        _ => declaration::ELF_SECTION,
    };
    let Some(section) = file.section_by_name(name) else {
        return Ok(None);
    };
    let data = section
        .data()
        .map_err(|e| not_a_library(format!("its declaration cannot be read ({e})")))?;
    Declaration::parse(data)
        .map(Some)
        .map_err(|message| PluginError::Declaration {
            path: path.to_path_buf(),
            message,
        })
}

/// Refuses a declared plugin this host cannot load: another ABI major, or panics that abort.
pub fn check(path: &Path, declared: &Declaration) -> Result<(), PluginError> {
    if declared.abi_major != agentry_plugin_abi::abi::ABI_MAJOR {
        return Err(PluginError::AbiMismatch {
            path: path.to_path_buf(),
            plugin: format!(
                "ABI {} (agentry-plugin {}, {}; for agentry {})",
                declared.abi(),
                declared.sdk_version,
                declared.rustc_version,
                declared.agentry_versions
            ),
            host: crate::host_build(),
        });
    }
    if !declared.panic_unwind {
        return Err(PluginError::PanicAbort {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}
