//! **Glob**: files whose path matches a glob pattern, newest first, honouring ignore files.

use crate::FileOpsConfig;
use agentry::sync::lock;
use agentry::tool::{Tool, ToolCallLocation, ToolContext, ToolError, ToolKind, ToolOutput};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// Finds files by name pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    config: FileOpsConfig,
}

impl Glob {
    /// The tool with these limits.
    pub fn new(config: FileOpsConfig) -> Self {
        Self { config }
    }
}

/// Glob's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The pattern, matched against paths relative to `path` (`**/*.rs`, `src/**/mod.rs`, `*.{js,ts}`).
    pub pattern: String,
    /// The directory to search (default: the working directory).
    pub path: Option<String>,
}

/// A directory walker with ripgrep's rules: hidden files skipped; `.ignore` and `.rgignore`
/// files honoured everywhere, `.gitignore` files inside a git repository (outside one they
/// mean nothing to git, and a packaged tree may carry one that ignores everything).
pub(crate) fn walker(root: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(true)
        .git_ignore(true)
        .ignore(true)
        .parents(true);
    builder
}

impl Tool for Glob {
    type Input = GlobInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> String {
        "Finds files whose path matches a glob pattern (`**/*.rs`, `src/**/*.{ts,tsx}`), newest \
         first. Hidden files and files ignored by .gitignore (in a git repository) or .ignore \
         are skipped."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn title(&self, input: &GlobInput) -> String {
        match &input.path {
            Some(path) => format!("Glob {} in {path}", input.pattern),
            None => format!("Glob {}", input.pattern),
        }
    }

    fn locations(&self, input: &GlobInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::path(
            cwd.join(input.path.as_deref().unwrap_or(".")),
        )]
    }

    async fn call(&self, input: GlobInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let root = ctx.resolve_path(input.path.as_deref().unwrap_or("."));
        let matcher = globset::GlobBuilder::new(&input.pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::InvalidInput(format!("the pattern is not a valid glob: {e}")))?
            .compile_matcher();
        let cap = self.config.max_glob_results;
        let cancel = ctx.cancel.clone();
        tokio::task::spawn_blocking(move || {
            if !root.is_dir() {
                return Err(ToolError::failed(format!(
                    "{} is not a directory.",
                    root.display()
                )));
            }
            let found = find(&root, &matcher, &cancel);
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            Ok(list(&root, found, cap))
        })
        .await
        .map_err(|e| ToolError::failed(format!("the search did not finish: {e}")))?
    }
}

/// Every file under `root` whose relative path matches, with its modification time.
pub(crate) fn find(
    root: &Path,
    matcher: &globset::GlobMatcher,
    cancel: &CancellationToken,
) -> Vec<(PathBuf, SystemTime)> {
    let found = Mutex::new(Vec::new());
    walker(root).build_parallel().run(|| {
        Box::new(|entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                if matcher.is_match(relative) {
                    let modified = entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    lock(&found).push((entry.into_path(), modified));
                }
            }
            WalkState::Continue
        })
    });
    found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn list(root: &Path, mut found: Vec<(PathBuf, SystemTime)>, cap: usize) -> ToolOutput {
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = found.len();
    let mut out = String::new();
    if total == 0 {
        let _ = writeln!(out, "No files found under {}.", root.display());
    }
    for (path, _) in found.iter().take(cap) {
        let _ = writeln!(out, "{}", path.display());
    }
    if total > cap {
        let _ = writeln!(
            out,
            "({} more files not shown: narrow the pattern or the path.)",
            total - cap
        );
    }
    ToolOutput::text(out).with_raw_output(serde_json::json!({
        "matches": total,
        "shown": total.min(cap),
    }))
}
