//! **Grep**: a regex search over files, in-process on ripgrep's own crates — a parallel walk
//! that honours ignore files, binary files skipped, cancellable.

use crate::FileOpsConfig;
use crate::walk::walker;
use agentry_plugin::sync::lock;
use agentry_plugin::tool::ReadDenials;
use agentry_plugin::tool::{
    RulePatterns, Tool, ToolCallLocation, ToolContext, ToolError, ToolKind, ToolOutput,
};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// Searches file contents.
#[derive(Debug, Clone)]
pub struct Grep {
    config: FileOpsConfig,
}

impl Grep {
    /// The tool with these limits.
    pub fn new(config: FileOpsConfig) -> Self {
        Self { config }
    }
}

/// What Grep shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines (with context when asked).
    Content,
    /// The files that match, newest first.
    #[default]
    FilesWithMatches,
    /// How many lines match in each file.
    Count,
}

/// Grep's input.
// `context` is taken for `-C`, as Claude Code takes it (the executor renames it; models are
// not shown the alias).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-agentry-aliases" = {"context": "-C"}))]
pub struct GrepInput {
    /// The regular expression (Rust regex syntax, as ripgrep's).
    pub pattern: String,
    /// The file or directory to search (default: the working directory).
    pub path: Option<String>,
    /// Only files matching this glob (`*.rs`, `!*_test.go`); several globs may be separated by
    /// commas or spaces (`*.rs, *.toml`).
    pub glob: Option<String>,
    /// Only files of this ripgrep type (`rust`, `py`, `js`, …).
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// What to show (default: files_with_matches).
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Case-insensitive.
    #[serde(rename = "-i", default)]
    pub case_insensitive: bool,
    /// Line numbers in content mode (default: true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (content mode).
    #[serde(rename = "-A")]
    pub after: Option<usize>,
    /// Lines of context before each match (content mode).
    #[serde(rename = "-B")]
    pub before: Option<usize>,
    /// Lines of context around each match (content mode).
    #[serde(rename = "-C")]
    pub context: Option<usize>,
    /// Let the pattern span lines (`.` matches newlines).
    #[serde(default)]
    pub multiline: bool,
    /// Show at most this many entries (lines, files or counts).
    pub head_limit: Option<usize>,
    /// Skip this many entries first.
    pub offset: Option<usize>,
}

/// The globs of Grep's `glob`: separated by commas or whitespace, except inside braces
/// (`*.{ts,tsx}` is one glob).
fn split_globs(text: &str) -> Vec<&str> {
    let mut globs = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                globs.push(&text[start..at]);
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    globs.push(&text[start..]);
    globs.retain(|glob| !glob.is_empty());
    globs
}

/// What one file yielded.
struct FileHits {
    path: PathBuf,
    modified: SystemTime,
    lines: Vec<String>,
    count: u64,
}

impl Tool for Grep {
    type Input = GrepInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Grep"
    }

    fn description(&self) -> String {
        "Searches file contents with a regular expression (ripgrep syntax). output_mode \
         files_with_matches (default, newest first), content (matching lines, with -n, -A, -B, -C) \
         or count; filter with glob or type; -i for case-insensitive; multiline to match across \
         lines; head_limit and offset to page. Hidden files are searched; version-control \
         folders and ignored and binary files are skipped."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    /// `Read(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::ReadsFiles
    }

    fn title(&self, input: &GrepInput) -> String {
        match &input.path {
            Some(path) => format!("Grep {:?} in {path}", input.pattern),
            None => format!("Grep {:?}", input.pattern),
        }
    }

    fn locations(&self, input: &GrepInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::path(
            cwd.join(input.path.as_deref().unwrap_or(".")),
        )]
    }

    async fn call(&self, input: GrepInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let root = ctx.resolve_path(input.path.as_deref().unwrap_or("."));
        let max_chars = self.config.max_grep_chars;
        let cancel = ctx.cancel.clone();
        let denials = ReadDenials::of(&ctx);
        tokio::task::spawn_blocking(move || search(&root, &input, &cancel, max_chars, denials))
            .await
            .map_err(|e| ToolError::failed(format!("the search did not finish: {e}")))?
    }
}

fn matcher(input: &GrepInput) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder.case_insensitive(input.case_insensitive);
    if input.multiline {
        builder.multi_line(true).dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .build(&input.pattern)
        .map_err(|e| ToolError::InvalidInput(format!("the pattern is not a valid regex: {e}")))
}

fn searcher(input: &GrepInput) -> Searcher {
    let context = input.context.unwrap_or(0);
    let content = input.output_mode == OutputMode::Content;
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .multi_line(input.multiline)
        .before_context(if content {
            input.before.unwrap_or(context)
        } else {
            0
        })
        .after_context(if content {
            input.after.unwrap_or(context)
        } else {
            0
        })
        .build()
}

fn walk_builder(
    root: &Path,
    input: &GrepInput,
    denials: Option<Arc<ReadDenials>>,
) -> Result<ignore::WalkBuilder, ToolError> {
    if !root.exists() {
        return Err(ToolError::failed(format!(
            "{} does not exist.",
            root.display()
        )));
    }
    let mut builder = walker(root, denials);
    if let Some(name) = &input.file_type {
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        types.select(name);
        let types = types.build().map_err(|e| {
            ToolError::InvalidInput(format!(
                "`{name}` is not a known file type ({e}); use glob instead"
            ))
        })?;
        builder.types(types);
    }
    if let Some(globs) = &input.glob {
        let mut overrides = ignore::overrides::OverrideBuilder::new(root);
        for glob in split_globs(globs) {
            overrides.add(glob).map_err(|e| {
                ToolError::InvalidInput(format!("the glob `{glob}` is not valid: {e}"))
            })?;
        }
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::InvalidInput(format!("the glob is not valid: {e}")))?;
        builder.overrides(overrides);
    }
    Ok(builder)
}

fn search(
    root: &Path,
    input: &GrepInput,
    cancel: &CancellationToken,
    max_chars: usize,
    denials: Option<Arc<ReadDenials>>,
) -> Result<ToolOutput, ToolError> {
    let matcher = matcher(input)?;
    let walk = walk_builder(root, input, denials)?;
    let single_file = root.is_file();
    let hits = Mutex::new(Vec::new());
    walk.build_parallel().run(|| {
        let mut searcher = searcher(input);
        let matcher = matcher.clone();
        let hits = &hits;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let mut sink = Collector::new(input, entry.path(), single_file);
            if searcher
                .search_path(&matcher, entry.path(), &mut sink)
                .is_ok()
                && sink.count > 0
            {
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                lock(hits).push(FileHits {
                    path: entry.into_path(),
                    modified,
                    lines: sink.lines,
                    count: sink.count,
                });
            }
            WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let hits = hits
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(render(hits, input, max_chars))
}

/// Collects one file's matches (and context lines) as output lines.
struct Collector {
    mode: OutputMode,
    numbers: bool,
    prefix: String,
    lines: Vec<String>,
    count: u64,
}

impl Collector {
    fn new(input: &GrepInput, path: &Path, single_file: bool) -> Self {
        Self {
            mode: input.output_mode,
            numbers: input.line_numbers.unwrap_or(true),
            prefix: if single_file {
                String::new()
            } else {
                path.display().to_string()
            },
            lines: Vec::new(),
            count: 0,
        }
    }

    fn push(&mut self, separator: char, line_number: Option<u64>, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let mut line = self.prefix.clone();
        if !line.is_empty() {
            line.push(separator);
        }
        if let (true, Some(number)) = (self.numbers, line_number) {
            let _ = write!(line, "{number}{separator}");
        }
        line.push_str(text.trim_end_matches(['\n', '\r']));
        self.lines.push(line);
    }
}

impl Sink for Collector {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, hit: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                let first = hit.line_number();
                for (i, line) in hit.lines().enumerate() {
                    self.push(':', first.map(|n| n + i as u64), line);
                }
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        self.push('-', context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.lines.push("--".to_owned());
        Ok(true)
    }
}

fn render(mut hits: Vec<FileHits>, input: &GrepInput, max_chars: usize) -> ToolOutput {
    let files = hits.len();
    let total_matches: u64 = hits.iter().map(|h| h.count).sum();
    let entries: Vec<String> = match input.output_mode {
        OutputMode::FilesWithMatches => {
            hits.sort_by(|a, b| {
                b.modified
                    .cmp(&a.modified)
                    .then_with(|| a.path.cmp(&b.path))
            });
            hits.iter().map(|h| h.path.display().to_string()).collect()
        }
        OutputMode::Count => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            hits.iter()
                .map(|h| format!("{}:{}", h.path.display(), h.count))
                .collect()
        }
        OutputMode::Content => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            let context = input.context.or(input.after).or(input.before).unwrap_or(0) > 0;
            let mut lines = Vec::new();
            for (i, hit) in hits.into_iter().enumerate() {
                if context && i > 0 {
                    lines.push("--".to_owned());
                }
                lines.extend(hit.lines);
            }
            lines
        }
    };
    let available = entries.len();
    let skip = input.offset.unwrap_or(0);
    let take = input.head_limit.unwrap_or(usize::MAX);
    let mut out = String::new();
    let mut shown = 0usize;
    let mut cut_for_size = false;
    for entry in entries.iter().skip(skip).take(take) {
        if out.len() + entry.len() + 1 > max_chars {
            cut_for_size = true;
            break;
        }
        out.push_str(entry);
        out.push('\n');
        shown += 1;
    }
    if available == 0 {
        out.push_str("No matches found.\n");
    } else {
        let rest = available.saturating_sub(skip + shown);
        if rest > 0 {
            let _ = writeln!(
                out,
                "({rest} more {} not shown{}: page on with offset {}.)",
                match input.output_mode {
                    OutputMode::Content => "lines",
                    _ => "files",
                },
                if cut_for_size {
                    " to keep the output short"
                } else {
                    ""
                },
                skip + shown
            );
        }
    }
    ToolOutput::text(out).with_raw_output(serde_json::json!({
        "files": files,
        "matches": total_matches,
        "entries": available,
        "shown": shown,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_split_on_commas_and_spaces_but_not_inside_braces() {
        assert_eq!(split_globs("*.rs"), ["*.rs"]);
        assert_eq!(split_globs("*.rs, *.toml"), ["*.rs", "*.toml"]);
        assert_eq!(split_globs("*.{ts,tsx} !*.d.ts"), ["*.{ts,tsx}", "!*.d.ts"]);
    }
}
