//! # agentry-file-ops
//!
//! The file tools agents are expected to have, with the names and semantics Claude Code users
//! know: **Read** (text, images, PDFs, Jupyter notebooks), **Write**, **Edit**, **MultiEdit**,
//! **NotebookEdit**, **Glob** and **Grep**. Every call goes
//! through agentry's executor, so each has its kind, title and locations, Write and Edit report
//! diffs, and the permission policy sees canonical paths.
//!
//! Files are written atomically, and an existing file is only overwritten or edited when this
//! session has read it and it has not changed on disk since. Glob and Grep run in-process on
//! ripgrep's own crates (`ignore`, `globset`, `grep-searcher`, `grep-regex`).
//!
//! ```
//! use agentry::prelude::*;
//! use agentry_file_ops::FileOps;
//!
//! # let model = agentry::model::scripted::ScriptedModel::new([]);
//! let builder = Agent::builder(model).provider(FileOps::default());
//! # let _ = builder;
//! ```

mod edit;
mod files;
mod glob;
mod grep;
mod matching;
mod notebook;
mod pdf;
mod read;
mod state;
mod walk;
mod write;

pub use edit::{Edit, MultiEdit};
pub use glob::Glob;
pub use grep::Grep;
pub use notebook::NotebookEdit;
pub use read::Read;
pub use write::Write;

use agentry_plugin::provider::Provider;
use agentry_plugin::settings::{Configured, Recipe, made};
use agentry_plugin::tool::{DynTool, erase};
use std::sync::Arc;

/// Limits of the file tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOpsConfig {
    /// The largest file Read returns whole; a larger one needs `offset` / `limit`.
    pub max_read_bytes: u64,
    /// The most paths Glob lists.
    pub max_glob_results: usize,
    /// The most characters of Grep output the model gets.
    pub max_grep_chars: usize,
    /// Whether Read gives a PDF's pages as images too (for models that take images).
    pub pdf_page_images: bool,
}

impl Default for FileOpsConfig {
    fn default() -> Self {
        Self {
            max_read_bytes: 256 * 1024,
            max_glob_results: 100,
            max_grep_chars: 30_000,
            pdf_page_images: true,
        }
    }
}

/// The `file_ops` provider.
#[derive(Debug, Clone, Default)]
pub struct FileOps {
    config: FileOpsConfig,
}

impl FileOps {
    /// The provider with these limits.
    pub fn new(config: FileOpsConfig) -> Self {
        Self { config }
    }
}

impl Provider for FileOps {
    fn name(&self) -> &str {
        "file_ops"
    }

    fn description(&self) -> String {
        "Read, write, edit and search files.".to_owned()
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let config = self.config.clone();
        vec![
            erase(Read::new(config.clone())),
            erase(Write),
            erase(Edit),
            erase(MultiEdit),
            erase(NotebookEdit),
            erase(Glob::new(config.clone())),
            erase(Grep::new(config)),
        ]
    }
}

/// How the file tools are made, linked or as a plugin: they read no settings.
pub const RECIPE: Recipe = Recipe {
    name: "file_ops",
    sections: &[],
    make: |_| made(Ok(Configured::new(FileOps::default()))),
};
