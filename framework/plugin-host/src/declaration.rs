//! A plugin library's declaration (ABI 1.2), read from its file without loading it: what it was
//! built for, so that a plugin of another ABI is refused before any of its code runs.

use crate::PluginError;
use agentry_plugin_abi::declaration::{self, Declaration};
use object::{Architecture, BinaryFormat, Object, ObjectKind, ObjectSection};
use std::path::Path;

/// Reads the declaration of the plugin library at `path`: `None` when the library has none (a
/// plugin built before ABI 1.2, or one written by hand in another language). The file must be
/// a regular file holding a shared library for this system and processor; only the parts of
/// it the reader needs are read.
pub fn read(path: &Path) -> Result<Option<Declaration>, PluginError> {
    let not_a_library = |message: String| PluginError::NotALibrary {
        path: path.to_path_buf(),
        message,
    };
    let file =
        agentry_plugin::paths::open_regular(path).map_err(|e| not_a_library(e.to_string()))?;
    let cache = object::ReadCache::new(file);
    let library = object::File::parse(&cache)
        .map_err(|e| not_a_library(format!("not a shared library this system knows ({e})")))?;
    if let Some(wrong) = unfit_here(&library) {
        return Err(not_a_library(wrong));
    }
    let name = match library.format() {
        BinaryFormat::MachO => declaration::MACHO_SECTION,
        BinaryFormat::Pe | BinaryFormat::Coff => declaration::PE_SECTION,
        _ => declaration::ELF_SECTION,
    };
    let Some(section) = library.section_by_name(name) else {
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

/// Why `library` cannot load on this system: not a shared library, or one of another system's
/// format or another processor's.
fn unfit_here<'data, R: object::ReadRef<'data>>(
    library: &object::File<'data, R>,
) -> Option<String> {
    if library.kind() != ObjectKind::Dynamic {
        return Some(format!("not a shared library (it is {:?})", library.kind()));
    }
    let format = if cfg!(target_vendor = "apple") {
        BinaryFormat::MachO
    } else if cfg!(windows) {
        BinaryFormat::Pe
    } else {
        BinaryFormat::Elf
    };
    if library.format() != format {
        return Some(format!(
            "a {:?} library, and this system loads {format:?} ones",
            library.format()
        ));
    }
    let here = host_architecture();
    (here != Architecture::Unknown && library.architecture() != here).then(|| {
        format!(
            "built for {:?} processors, and this machine's are {here:?}",
            library.architecture()
        )
    })
}

/// This machine's processor, as `object` names it.
fn host_architecture() -> Architecture {
    match std::env::consts::ARCH {
        "x86_64" => Architecture::X86_64,
        "aarch64" => Architecture::Aarch64,
        "x86" => Architecture::I386,
        "arm" => Architecture::Arm,
        "riscv64" => Architecture::Riscv64,
        "powerpc64" => Architecture::PowerPc64,
        "s390x" => Architecture::S390x,
        "loongarch64" => Architecture::LoongArch64,
        _ => Architecture::Unknown,
    }
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
