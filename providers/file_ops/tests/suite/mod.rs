mod client_files;
mod documents;
mod races;
mod read;
mod schemas;
mod search;
mod write_edit;

use agentry::testing::{CallOutcome, ToolHarness};
use agentry::tool::ToolContent;
use agentry_file_ops::{FileOps, FileOpsConfig};
use std::path::{Path, PathBuf};

/// A workspace folder and a harness whose session works in it.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub harness: ToolHarness,
}

impl Workspace {
    pub fn new() -> Self {
        Self::with_config(FileOpsConfig::default())
    }

    pub fn with_config(config: FileOpsConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let harness = ToolHarness::new(&FileOps::new(config), dir.path()).unwrap();
        Self { dir, harness }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root().join(relative)).unwrap()
    }

    pub async fn call(&self, tool: &str, input: serde_json::Value) -> CallOutcome {
        self.harness.call(tool, input).await
    }
}

/// The diff a call reported: (path, old, new).
pub fn diff(outcome: &CallOutcome) -> (PathBuf, Option<String>, String) {
    outcome
        .content()
        .into_iter()
        .find_map(|c| match c {
            ToolContent::Diff {
                path,
                old_text,
                new_text,
            } => Some((path, old_text, new_text)),
            _ => None,
        })
        .expect("no diff content")
}

pub fn ok(outcome: &CallOutcome) -> String {
    assert!(
        !outcome.result.is_error,
        "the call failed: {}",
        outcome.text()
    );
    outcome.text()
}

pub fn err(outcome: &CallOutcome) -> String {
    assert!(
        outcome.result.is_error,
        "the call succeeded: {}",
        outcome.text()
    );
    outcome.text()
}

pub fn rel(root: &Path, path: &str) -> String {
    root.join(path).display().to_string()
}
