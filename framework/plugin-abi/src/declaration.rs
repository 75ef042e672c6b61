//! A plugin's declaration (ABI 1.2): what it was built for, in a section of the library file of
//! its own, so that a host or an installer reads it without loading the library (loading runs
//! the library's initialisers: code). [`export_plugin!`](crate::export_plugin) writes it.
//!
//! The section holds UTF-8 lines of `key value`, the first `agentry-plugin 1` (this format's
//! version):
//!
//! ```text
//! agentry-plugin 1
//! abi 1.2
//! sdk 0.1.0
//! agentry >=0.1.0, <0.2.0
//! rustc rustc 1.95.0 (59807616e 2026-04-14)
//! panic unwind
//! plugin my-plugin 0.3.0
//! ```
//!
//! `abi` is the plugin ABI it was built for, `sdk` the `agentry-plugin-abi` version it was built
//! with, and `agentry` the agentry versions that speak that ABI by the compatibility policy (a
//! release keeps its plugin ABI's major within a minor version while agentry is 0.x); `plugin`
//! is the plugin crate's own name and version. Keys a
//! reader does not know are skipped, so later versions may add lines.

/// The section's name in an ELF library (Linux, the BSDs).
pub const ELF_SECTION: &str = ".agentry_plugin";
/// The section's name in a Mach-O library (macOS), in the `__DATA` segment.
pub const MACHO_SECTION: &str = "__agentry_plugin";
/// The section's name in a PE library (Windows: at most eight bytes).
pub const PE_SECTION: &str = ".agentry";

/// The first line of a declaration.
const HEADER: &str = "agentry-plugin 1";

/// The declaration's text, with its `panic` line's value.
macro_rules! declaration_text {
    ($panic:literal) => {
        concat!(
            "agentry-plugin 1\nabi 1.2\nsdk ",
            env!("CARGO_PKG_VERSION"),
            "\nagentry >=",
            env!("CARGO_PKG_VERSION_MAJOR"),
            ".",
            env!("CARGO_PKG_VERSION_MINOR"),
            ".0, <",
            env!("AGENTRY_PLUGIN_NEXT_BREAKING"),
            "\nrustc ",
            env!("AGENTRY_PLUGIN_RUSTC"),
            "\npanic ",
            $panic,
            "\n"
        )
    };
}

/// The declaration of a plugin built with this SDK (what [`bytes`] holds).
#[cfg(panic = "unwind")]
pub const TEXT: &str = declaration_text!("unwind");
/// The declaration of a plugin built with this SDK (what [`bytes`] holds).
#[cfg(not(panic = "unwind"))]
pub const TEXT: &str = declaration_text!("abort");

/// The length of [`TEXT`].
pub const LEN: usize = TEXT.len();

/// The plugin's own line: its crate's name and version (`plugin NAME VERSION`, made where
/// [`export_plugin!`](crate::export_plugin) expands, in the plugin's crate).
#[macro_export]
#[doc(hidden)]
macro_rules! __plugin_line {
    () => {
        concat!(
            "plugin ",
            env!("CARGO_PKG_NAME"),
            " ",
            env!("CARGO_PKG_VERSION"),
            "\n"
        )
    };
}

/// The section's bytes: [`TEXT`], then the plugin's own line. `N` is their length together (a
/// different `N` fails the build).
pub const fn bytes<const N: usize>(plugin_line: &str) -> [u8; N] {
    assert!(
        N == LEN + plugin_line.len(),
        "the declaration's length is wrong"
    );
    let mut out = [0; N];
    let mut at = 0;
    while at < LEN {
        out[at] = TEXT.as_bytes()[at];
        at += 1;
    }
    while at < N {
        out[at] = plugin_line.as_bytes()[at - LEN];
        at += 1;
    }
    out
}

/// A plugin's crate, as its declaration names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCrate {
    /// The crate's name.
    pub name: String,
    /// The crate's version.
    pub version: String,
}

/// What a plugin library declares about its build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// The ABI major version it was built for.
    pub abi_major: u32,
    /// The ABI minor version it was built for.
    pub abi_minor: u32,
    /// The `agentry-plugin-abi` version it was built with.
    pub sdk_version: String,
    /// The agentry versions that speak its ABI (a semver requirement, as `>=0.1.0, <0.2.0`).
    pub agentry_versions: String,
    /// The compiler it was built with (`rustc --version`).
    pub rustc_version: String,
    /// Whether its panics unwind (a plugin whose panics abort is refused).
    pub panic_unwind: bool,
    /// The plugin's crate, when the declaration names it.
    pub plugin: Option<PluginCrate>,
}

impl Declaration {
    /// Reads a declaration section's bytes (trailing NUL padding allowed).
    pub fn parse(bytes: &[u8]) -> Result<Declaration, String> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| "the plugin's declaration is not UTF-8 text".to_owned())?
            .trim_end_matches('\0');
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(format!(
                "the plugin's declaration does not start with `{HEADER}`"
            ));
        }
        let mut abi = None;
        let mut sdk_version = None;
        let mut agentry_versions = None;
        let mut rustc_version = None;
        let mut panic_unwind = None;
        let mut plugin = None;
        for line in lines {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "abi" => abi = Some(value),
                "sdk" => sdk_version = Some(value.to_owned()),
                "agentry" => agentry_versions = Some(value.to_owned()),
                "rustc" => rustc_version = Some(value.to_owned()),
                "panic" => panic_unwind = Some(value == "unwind"),
                "plugin" => {
                    plugin = value.split_once(' ').map(|(name, version)| PluginCrate {
                        name: name.to_owned(),
                        version: version.to_owned(),
                    })
                }
                _ => {}
            }
        }
        let missing = |key: &str| format!("the plugin's declaration has no `{key}` line");
        let abi = abi.ok_or_else(|| missing("abi"))?;
        let (major, minor) = abi
            .split_once('.')
            .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)))
            .ok_or_else(|| format!("the plugin's declared ABI `{abi}` is not MAJOR.MINOR"))?;
        Ok(Declaration {
            abi_major: major,
            abi_minor: minor,
            sdk_version: sdk_version.ok_or_else(|| missing("sdk"))?,
            agentry_versions: agentry_versions.ok_or_else(|| missing("agentry"))?,
            rustc_version: rustc_version.unwrap_or_else(|| "unknown".to_owned()),
            panic_unwind: panic_unwind.ok_or_else(|| missing("panic"))?,
            plugin,
        })
    }

    /// The ABI it was built for, as `MAJOR.MINOR`.
    pub fn abi(&self) -> String {
        format!("{}.{}", self.abi_major, self.abi_minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ABI_MAJOR, ABI_MINOR};

    #[test]
    fn this_sdks_declaration_reads_back_as_its_abi_and_versions() {
        let line = "plugin my-tools 0.3.0\n";
        let declared = Declaration::parse(&bytes::<{ LEN + 22 }>(line)).unwrap();
        assert_eq!(
            declared.plugin,
            Some(PluginCrate {
                name: "my-tools".to_owned(),
                version: "0.3.0".to_owned()
            })
        );
        assert_eq!(
            (declared.abi_major, declared.abi_minor),
            (ABI_MAJOR, ABI_MINOR)
        );
        assert_eq!(declared.sdk_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(declared.agentry_versions, ">=0.1.0, <0.2.0");
        assert!(declared.rustc_version.starts_with("rustc "), "{declared:?}");
        assert!(declared.panic_unwind);
    }

    #[test]
    fn padding_and_unknown_keys_are_skipped() {
        let text = b"agentry-plugin 1\nabi 2.0\nsdk 0.3.1\nagentry >=0.3.0, <0.4.0\npanic unwind\nlater thing\n\0\0\0";
        let declared = Declaration::parse(text).unwrap();
        assert_eq!(declared.abi(), "2.0");
        assert_eq!(declared.rustc_version, "unknown");
        assert_eq!(declared.plugin, None);
    }

    #[test]
    fn a_declaration_of_another_shape_is_refused() {
        for (bytes, says) in [
            (&b"agentry-plugin 2\nabi 1.2\n"[..], "does not start"),
            (
                b"agentry-plugin 1\nsdk 0.1.0\nagentry x\npanic unwind\n",
                "no `abi`",
            ),
            (b"agentry-plugin 1\nabi one\nsdk 0.1.0\n", "not MAJOR.MINOR"),
            (
                b"agentry-plugin 1\nabi 1.2\nsdk 0.1.0\nagentry x\n",
                "no `panic`",
            ),
            (b"\xff\xfe", "not UTF-8"),
        ] {
            let error = Declaration::parse(bytes).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }
}
