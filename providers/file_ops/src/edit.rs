//! **Edit** and **MultiEdit**: exact string replacements in a file the session has read,
//! written atomically, reported as a diff with a numbered snippet of the result. A file with
//! CRLF line endings is matched as Read shows it (without `\r`) and keeps its endings; text
//! that differs from `old_string` only in curly vs straight quotes is taken when the exact text
//! is not there (see [`crate::matching`]). An empty `old_string` on a file that does not exist
//! creates it with `new_string`.

use crate::files::TextFiles;
use crate::matching::{self, LineEndings};
use crate::state::ReadFiles;
use agentry_plugin::tool::{
    RulePatterns, Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Lines of context shown around the first change.
const SNIPPET_CONTEXT: usize = 4;

/// One replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Replacement {
    /// The exact text to replace (with its whitespace and indentation).
    pub old_string: String,
    /// The text to put in its place (must differ).
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Replaces text in a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edit;

/// Edit's input.
// `old_str`, `new_str` and `path` are taken for `old_string`, `new_string` and `file_path`, as
// Claude Code takes them (the executor renames them; models are not shown the aliases).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-agentry-aliases" = {"old_str": "old_string", "new_str": "new_string", "path": "file_path"}))]
pub struct EditInput {
    /// The file to edit (absolute, or relative to the working directory).
    pub file_path: String,
    /// The exact text to replace (with its whitespace and indentation).
    pub old_string: String,
    /// The text to put in its place (must differ).
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Makes several replacements in one file, in order, all or nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct MultiEdit;

/// MultiEdit's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditInput {
    /// The file to edit (absolute, or relative to the working directory).
    pub file_path: String,
    /// The replacements, applied one after another to the result of the previous one.
    #[schemars(length(min = 1))]
    pub edits: Vec<Replacement>,
}

/// A replacement applied.
#[derive(Debug, PartialEq, Eq)]
struct Replaced {
    /// The new text.
    text: String,
    /// The byte offset of the first change.
    first: usize,
    /// Whether `old_string` matched only with its quotes taken as curly or straight.
    quotes_differ: bool,
}

/// Applies one replacement to `text`.
fn replace(text: &str, edit: &Replacement, path: &Path) -> Result<Replaced, String> {
    if edit.old_string.is_empty() {
        return Err(format!(
            "old_string is empty, and {} exists: to replace the whole file use Write",
            path.display()
        ));
    }
    if edit.old_string == edit.new_string {
        return Err(
            "old_string and new_string are the same, so there is nothing to change".to_owned(),
        );
    }
    let found = matching::find(text, &edit.old_string);
    let count = found.ranges.len();
    if count == 0 {
        return Err(format!(
            "old_string was not found in {}: Read the file again and copy the text exactly, with its whitespace and indentation",
            path.display()
        ));
    }
    if count > 1 && !edit.replace_all {
        return Err(format!(
            "old_string occurs {count} times in {}: include more of the surrounding text to make it unique, or set replace_all to replace every occurrence",
            path.display()
        ));
    }
    let ranges = if edit.replace_all {
        &found.ranges[..]
    } else {
        &found.ranges[..1]
    };
    Ok(Replaced {
        text: matching::replace_ranges(text, ranges, &edit.new_string),
        first: ranges[0].0,
        quotes_differ: found.quotes_differ,
    })
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// A `cat -n` snippet of `text` around `line`.
fn snippet(text: &str, line: usize) -> String {
    let start = line.saturating_sub(SNIPPET_CONTEXT).max(1);
    let mut out = String::new();
    for (number, content) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if number >= start && number <= line + SNIPPET_CONTEXT {
            let _ = writeln!(out, "{number:>6}\t{content}");
        }
    }
    out
}

/// The file's text, or `None` when it does not exist (a client's file that cannot be read is
/// taken as missing).
async fn existing_text(path: &Path, files: &TextFiles) -> Result<Option<String>, ToolError> {
    if files.through_client() {
        return Ok(files.read(path).await.ok());
    }
    if !path.exists() {
        return Ok(None);
    }
    files.read(path).await.map(Some)
}

/// Reads the file (enforcing read-before-edit), applies `edits`, writes it back. A file that
/// does not exist is created when the first edit's `old_string` is empty.
async fn apply(
    path: PathBuf,
    edits: &[Replacement],
    read_files: &ReadFiles,
    files: &TextFiles,
) -> Result<ToolOutput, ToolError> {
    let old_text = existing_text(&path, files).await?;
    let (endings, mut text, edits) = match &old_text {
        Some(old_text) => {
            files.check_fresh(read_files, &path, old_text)?;
            let endings = LineEndings::of(old_text);
            (endings, endings.to_model(old_text), edits)
        }
        None => match edits.split_first() {
            Some((first, rest)) if first.old_string.is_empty() => {
                (LineEndings::Lf, first.new_string.clone(), rest)
            }
            _ => {
                return Err(ToolError::failed(format!(
                    "{} does not exist: to create a file use Write (or Edit with an empty old_string).",
                    path.display()
                )));
            }
        },
    };
    let mut first_change: Option<usize> = None;
    let mut quotes_differ = false;
    for (index, edit) in edits.iter().enumerate() {
        let edit = Replacement {
            old_string: endings.to_model(&edit.old_string),
            new_string: endings.to_model(&edit.new_string),
            replace_all: edit.replace_all,
        };
        let replaced = replace(&text, &edit, &path).map_err(|reason| {
            ToolError::failed(if edits.len() == 1 {
                format!("{reason}.")
            } else {
                format!(
                    "edit {} of {}: {reason}. No edit was applied.",
                    index + 1,
                    edits.len()
                )
            })
        })?;
        let line = line_of(&text, replaced.first);
        first_change = Some(first_change.map_or(line, |l| l.min(line)));
        quotes_differ |= replaced.quotes_differ;
        text = replaced.text;
    }
    let new_text = endings.to_file(&text);
    files.write(&path, new_text.clone()).await?;
    files.saw(read_files, &path, &new_text);
    let line = first_change.unwrap_or(1);
    let changes = edits.len();
    let mut summary = match &old_text {
        None => format!("Created {}.", path.display()),
        Some(_) => format!(
            "Edited {} ({changes} change{}).",
            path.display(),
            if changes == 1 { "" } else { "s" },
        ),
    };
    if quotes_differ {
        summary.push_str(
            " old_string matched text whose quotes are curly where yours were straight (or the other way round); new_string was put in as you wrote it.",
        );
    }
    let _ = write!(
        summary,
        " The result around line {line}:\n{}",
        snippet(&text, line)
    );
    Ok(ToolOutput {
        raw_output: Some(serde_json::json!({
            "path": path,
            "edits": changes,
            "first_changed_line": line,
            "created": old_text.is_none(),
            "crlf": endings == LineEndings::Crlf,
        })),
        content: vec![ToolContent::Diff {
            path,
            old_text,
            new_text,
        }],
        for_model: Some(summary),
    })
}

/// The line of the first occurrence of `old_string` in the file, for follow-along.
fn first_line(path: &Path, old_string: &str) -> u32 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            let text = LineEndings::of(&text).to_model(&text);
            let found = matching::find(&text, &old_string.replace("\r\n", "\n"));
            found.ranges.first().map(|&(at, _)| line_of(&text, at))
        })
        .and_then(|line| u32::try_from(line).ok())
        .unwrap_or(1)
}

async fn run(
    ctx: ToolContext,
    file_path: String,
    edits: Vec<Replacement>,
) -> Result<ToolOutput, ToolError> {
    let read_files = ReadFiles::of(&ctx);
    let files = TextFiles::of(&ctx);
    let path = files.path_for(&ctx, &file_path)?;
    apply(path, &edits, &read_files, &files).await
}

impl Tool for Edit {
    type Input = EditInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Edit"
    }

    fn description(&self) -> String {
        "Replaces exact text in a file the session has read: `old_string` must occur exactly once \
         (or set `replace_all`), and `new_string` must differ from it. Copy `old_string` from Read's \
         output without the line-number prefix."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    /// `Edit(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::EditsFiles
    }

    fn title(&self, input: &EditInput) -> String {
        format!("Edit {}", input.file_path)
    }

    fn locations(&self, input: &EditInput, cwd: &Path) -> Vec<ToolCallLocation> {
        let path = cwd.join(&input.file_path);
        let line = first_line(&path, &input.old_string);
        vec![ToolCallLocation::line(path, line)]
    }

    async fn call(&self, input: EditInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let replacement = Replacement {
            old_string: input.old_string,
            new_string: input.new_string,
            replace_all: input.replace_all,
        };
        run(ctx, input.file_path, vec![replacement]).await
    }
}

impl Tool for MultiEdit {
    type Input = MultiEditInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "MultiEdit"
    }

    fn description(&self) -> String {
        "Makes several exact-text replacements in one file the session has read, in order, each on \
         the result of the one before; if any fails, none is applied. Each edit follows Edit's rules."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    /// `Edit(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::EditsFiles
    }

    fn title(&self, input: &MultiEditInput) -> String {
        format!("Edit {} ({} changes)", input.file_path, input.edits.len())
    }

    fn locations(&self, input: &MultiEditInput, cwd: &Path) -> Vec<ToolCallLocation> {
        let path = cwd.join(&input.file_path);
        let line = input
            .edits
            .first()
            .map_or(1, |edit| first_line(&path, &edit.old_string));
        vec![ToolCallLocation::line(path, line)]
    }

    async fn call(&self, input: MultiEditInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        run(ctx, input.file_path, input.edits).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str, all: bool) -> Replacement {
        Replacement {
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn replacements_check_presence_uniqueness_and_difference() {
        let path = Path::new("/f");
        let text = "a\nb\na\n";
        assert!(
            replace(text, &edit("z", "y", false), path)
                .unwrap_err()
                .contains("not found")
        );
        assert!(
            replace(text, &edit("a", "y", false), path)
                .unwrap_err()
                .contains("occurs 2 times")
        );
        assert!(
            replace(text, &edit("a", "a", false), path)
                .unwrap_err()
                .contains("the same")
        );
        let all = replace(text, &edit("a", "y", true), path).unwrap();
        assert_eq!((all.text.as_str(), all.first), ("y\nb\ny\n", 0));
        let one = replace(text, &edit("b", "c", false), path).unwrap();
        assert_eq!(
            (one.text.as_str(), line_of(text, one.first)),
            ("a\nc\na\n", 2)
        );
        assert!(!one.quotes_differ);
    }
}
