//! **Glob**: files whose path matches a glob pattern, newest first, honouring ignore files.
//!
//! Which files Glob and Grep see, as Claude Code's do: hidden files are included, version-control
//! folders (`.git`, `.hg`, `.svn`, `.jj`, …) never; `.gitignore` counts inside a git repository
//! and `.ignore` / `.rgignore` everywhere. An absolute pattern (`/repo/src/**/*.rs`) searches
//! from the folder its fixed part names.

use crate::FileOpsConfig;
use crate::walk::walker;
use agentry_plugin::sync::lock;
use agentry_plugin::tool::ReadDenials;
use agentry_plugin::tool::{
    RulePatterns, Tool, ToolCallLocation, ToolContext, ToolError, ToolKind, ToolOutput,
};
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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

/// Where to search and what to match there: an absolute pattern is split into the folder its
/// fixed components name and the rest (`/repo/src/**/*.rs` → `/repo/src`, `**/*.rs`); any other
/// pattern is matched under `path`.
fn base_and_pattern(pattern: &str, path: PathBuf) -> (PathBuf, String) {
    let pattern_path = Path::new(pattern);
    if !pattern_path.is_absolute() {
        return (path, pattern.to_owned());
    }
    let is_glob = |part: &str| part.contains(['*', '?', '[', ']', '{', '}']);
    let mut base = PathBuf::new();
    let mut rest = Vec::new();
    let components: Vec<&str> = pattern.split('/').collect();
    // The last component is what is matched, even when it has no metacharacter.
    let fixed = components
        .iter()
        .take(components.len().saturating_sub(1))
        .take_while(|part| !is_glob(part))
        .count();
    for (index, part) in components.iter().enumerate() {
        if index < fixed {
            base.push(if part.is_empty() { "/" } else { part });
        } else {
            rest.push(*part);
        }
    }
    (base, rest.join("/"))
}

impl Tool for Glob {
    type Input = GlobInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Glob"
    }

    fn description(&self) -> String {
        "Finds files whose path matches a glob pattern (`**/*.rs`, `src/**/*.{ts,tsx}`, or an \
         absolute `/repo/src/**/*.rs`), newest first. Hidden files are included; version-control \
         folders and files ignored by .gitignore (in a git repository) or .ignore are skipped."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    /// `Read(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::ReadsFiles
    }

    fn title(&self, input: &GlobInput) -> String {
        match &input.path {
            Some(path) => format!("Glob {} in {path}", input.pattern),
            None => format!("Glob {}", input.pattern),
        }
    }

    fn locations(&self, input: &GlobInput, cwd: &Path) -> Vec<ToolCallLocation> {
        let path = cwd.join(input.path.as_deref().unwrap_or("."));
        vec![ToolCallLocation::path(
            base_and_pattern(&input.pattern, path).0,
        )]
    }

    async fn call(&self, input: GlobInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.resolve_path(input.path.as_deref().unwrap_or("."));
        let (root, pattern) = base_and_pattern(&input.pattern, path);
        let invalid = |e: globset::Error| {
            ToolError::InvalidInput(format!("the pattern is not a valid glob: {e}"))
        };
        let glob = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(invalid)?;
        // A set, not a lone matcher: it takes the fast paths (`**/*.rs` is an extension test).
        let matcher = globset::GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(invalid)?;
        let cap = self.config.max_glob_results;
        let cancel = ctx.cancel.clone();
        let denials = ReadDenials::of(&ctx);
        tokio::task::spawn_blocking(move || {
            if !root.is_dir() {
                return Err(ToolError::failed(format!(
                    "{} is not a directory.",
                    root.display()
                )));
            }
            let found = find(&root, &matcher, &cancel, denials);
            if cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            Ok(list(&root, found, cap))
        })
        .await
        .map_err(|e| ToolError::failed(format!("the search did not finish: {e}")))?
    }
}

/// Every file under `root` whose relative path matches (but those `denials` cover), with its
/// modification time. Each
/// walker thread keeps its own list (no lock per match); the lists are joined at the end.
fn find(
    root: &Path,
    matcher: &globset::GlobSet,
    cancel: &CancellationToken,
    denials: Option<Arc<ReadDenials>>,
) -> Vec<(PathBuf, SystemTime)> {
    let found = Mutex::new(Vec::new());
    let mut collectors = Collectors {
        root,
        matcher,
        cancel,
        found: &found,
    };
    walker(root, denials)
        .build_parallel()
        .visit(&mut collectors);
    found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Makes one [`Collector`] per walker thread.
struct Collectors<'a> {
    root: &'a Path,
    matcher: &'a globset::GlobSet,
    cancel: &'a CancellationToken,
    found: &'a Mutex<Vec<(PathBuf, SystemTime)>>,
}

impl<'a> ParallelVisitorBuilder<'a> for Collectors<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(Collector {
            root: self.root,
            matcher: self.matcher,
            cancel: self.cancel,
            found: self.found,
            mine: Vec::new(),
        })
    }
}

/// One walker thread's matches, added to the shared list when the thread is done.
struct Collector<'a> {
    root: &'a Path,
    matcher: &'a globset::GlobSet,
    cancel: &'a CancellationToken,
    found: &'a Mutex<Vec<(PathBuf, SystemTime)>>,
    mine: Vec<(PathBuf, SystemTime)>,
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if entry.file_type().is_some_and(|t| t.is_file()) {
            let relative = entry.path().strip_prefix(self.root).unwrap_or(entry.path());
            if self.matcher.is_match(relative) {
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                self.mine.push((entry.into_path(), modified));
            }
        }
        WalkState::Continue
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        lock(self.found).append(&mut self.mine);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_patterns_search_from_their_fixed_folder() {
        let cwd = PathBuf::from("/work");
        let split = |pattern: &str| base_and_pattern(pattern, cwd.clone());
        assert_eq!(
            split("/repo/src/**/*.rs"),
            (PathBuf::from("/repo/src"), "**/*.rs".to_owned())
        );
        assert_eq!(
            split("/repo/Cargo.toml"),
            (PathBuf::from("/repo"), "Cargo.toml".to_owned())
        );
        assert_eq!(
            split("/repo/*/lib.rs"),
            (PathBuf::from("/repo"), "*/lib.rs".to_owned())
        );
        assert_eq!(split("/*.md"), (PathBuf::from("/"), "*.md".to_owned()));
        assert_eq!(
            split("src/**/*.rs"),
            (cwd.clone(), "src/**/*.rs".to_owned())
        );
    }
}
