//! The two ways the stock providers load: linked into the full binary, or built as plugins
//! (their `providers/plugins/` crates, built with the tests) into the thin CLI (`agentry-thin`,
//! agentry-cli's sources with no provider linked: `cargo build -p agentry-thin`). A suite written once runs
//! both ways through [`both_ways!`](crate::both_ways).

use crate::{agentry_binary, sandbox};
use agentry_tests::Sandbox;
use std::path::PathBuf;

pub(crate) use agentry_tests::STOCK_PLUGINS;

/// How the binary under test gets its stock providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loading {
    /// Linked into the full binary.
    Linked,
    /// Loaded as plugins by the thin CLI.
    Plugins,
}

impl Loading {
    /// A sandbox running the binary of this way.
    pub(crate) fn sandbox(self) -> Sandbox {
        match self {
            Loading::Linked => sandbox(),
            Loading::Plugins => thin(),
        }
    }

    /// `args` with the flags this way needs before them (`--plugin FILE` for each stock
    /// plugin).
    pub(crate) fn args(self, args: &[&str]) -> Vec<String> {
        let mut all = match self {
            Loading::Linked => Vec::new(),
            Loading::Plugins => plugin_flags(),
        };
        all.extend(args.iter().map(|arg| (*arg).to_owned()));
        all
    }

    /// `args` followed by the flags this way needs (for a listing, whose flags come after
    /// its subcommand's name).
    pub(crate) fn after(self, args: &[&str]) -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        all.extend(self.args(&[]));
        all
    }
}

/// Runs a test written as `fn(Loading)` both ways, as two tests named `linked` and `plugins`
/// in a module of the test's name.
#[macro_export]
macro_rules! both_ways {
    ($name:ident) => {
        mod $name {
            #[test]
            fn linked() {
                super::$name($crate::loading::Loading::Linked);
            }

            #[test]
            fn plugins() {
                super::$name($crate::loading::Loading::Plugins);
            }
        }
    };
}

/// A file built beside the agentry binary under test, or a clear failure saying how to build it.
pub(crate) fn built(relative: &str, how: &str) -> PathBuf {
    let path = agentry_binary().parent().unwrap().join(relative);
    assert!(path.exists(), "no {}: {how}", path.display());
    path
}

/// A sandbox running the thin CLI.
pub(crate) fn thin() -> Sandbox {
    Sandbox::new(built(
        "agentry-thin",
        "build it with `cargo build -p agentry-thin` (./scripts/test does)",
    ))
}

/// The plugin file of the stock provider `name` (`libagentry_NAME_plugin.so`, which the test
/// build makes from its `agentry-NAME-plugin` crate).
pub(crate) fn stock_plugin(name: &str) -> PathBuf {
    crate::built_plugin(&format!("agentry_{name}_plugin"))
}

/// `--plugin FILE` for each stock plugin.
pub(crate) fn plugin_flags() -> Vec<String> {
    STOCK_PLUGINS
        .iter()
        .flat_map(|name| {
            let file = stock_plugin(name);
            ["--plugin".to_owned(), file.display().to_string()]
        })
        .collect()
}

/// Borrowed views of `args`, for helpers that take `&[&str]`.
pub(crate) fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}
