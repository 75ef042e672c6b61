//! Completion of what is being typed: `/` commands at the start of the input, and `@path`
//! anywhere, from the project's files (those `.gitignore` and `.ignore` leave out are not
//! offered).

use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The most files indexed for `@` completion.
const MOST_FILES: usize = 100_000;
/// The most suggestions shown.
const SHOWN: usize = 8;

/// A suggestion: the text that replaces the word being typed, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// The replacement.
    pub text: String,
    /// A description (a command's), if any.
    pub detail: Option<String>,
}

/// Suggestions for the word before the cursor, which starts at byte `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Where the word starts.
    pub start: usize,
    /// What may replace it, best first.
    pub suggestions: Vec<Suggestion>,
}

/// The project's files, listed once in the background.
#[derive(Clone, Default)]
pub struct FileIndex(Arc<OnceLock<Vec<String>>>);

impl FileIndex {
    /// Starts listing the files under `root` (relative paths; folders end with `/`).
    pub fn build(root: &Path) -> Self {
        let index = Self::default();
        let slot = index.0.clone();
        let root = root.to_path_buf();
        std::thread::spawn(move || {
            let _ = slot.set(list_files(&root));
        });
        index
    }

    /// The files, once listed.
    fn files(&self) -> &[String] {
        self.0.get().map(Vec::as_slice).unwrap_or_default()
    }
}

fn list_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .build();
    for entry in walk.flatten().skip(1) {
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let mut path = relative.to_string_lossy().into_owned();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            path.push('/');
        }
        files.push(path);
        if files.len() >= MOST_FILES {
            break;
        }
    }
    files.sort();
    files
}

/// Suggestions for `before_cursor` (the input up to the cursor): a command when it is all one
/// `/word`, a path when its last word starts with `@`.
pub fn complete(
    before_cursor: &str,
    commands: &[(String, Option<String>)],
    files: &FileIndex,
) -> Option<Completion> {
    if let Some(word) = before_cursor.strip_prefix('/')
        && !word.contains(char::is_whitespace)
    {
        let suggestions: Vec<Suggestion> = commands
            .iter()
            .filter(|(name, _)| name.starts_with(word))
            .take(SHOWN)
            .map(|(name, detail)| Suggestion {
                text: format!("/{name}"),
                detail: detail.clone(),
            })
            .collect();
        return (!suggestions.is_empty()).then_some(Completion {
            start: 0,
            suggestions,
        });
    }
    let start = before_cursor
        .rfind(char::is_whitespace)
        .map_or(0, |at| at + 1);
    let query = before_cursor[start..].strip_prefix('@')?;
    let suggestions: Vec<Suggestion> = rank(files.files(), query)
        .into_iter()
        .take(SHOWN)
        .map(|path| Suggestion {
            text: format!("@{path}"),
            detail: None,
        })
        .collect();
    (!suggestions.is_empty()).then_some(Completion { start, suggestions })
}

/// The paths matching `query`: those starting with it first, then those whose file name
/// does, then those containing it (case-insensitively), shorter first.
fn rank<'a>(files: &'a [String], query: &str) -> Vec<&'a str> {
    let query = query.to_lowercase();
    let mut scored: Vec<(u8, usize, &str)> = files
        .iter()
        .filter_map(|path| {
            let lower = path.to_lowercase();
            let name = lower
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(&lower);
            let score = if lower.starts_with(&query) {
                0
            } else if name.starts_with(&query) {
                1
            } else if lower.contains(&query) {
                2
            } else {
                return None;
            };
            Some((score, path.len(), path.as_str()))
        })
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, _, path)| path).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_complete_at_the_start_and_paths_after_an_at_sign() {
        let dir = std::env::temp_dir().join(format!("agentry-complete-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("target")).unwrap();
        std::fs::write(dir.join("src/main.rs"), "").unwrap();
        std::fs::write(dir.join("target/main.o"), "").unwrap();
        std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(dir.join("README.md"), "").unwrap();
        let files = FileIndex(Arc::new(OnceLock::from(list_files(&dir))));
        let commands = vec![
            ("help".to_owned(), Some("the commands".to_owned())),
            ("history".to_owned(), None),
            ("model".to_owned(), None),
        ];
        let found = complete("/h", &commands, &files).unwrap();
        let names: Vec<&str> = found.suggestions.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(names, ["/help", "/history"]);
        assert!(complete("/help me", &commands, &files).is_none());
        let found = complete("look at @mai", &commands, &files).unwrap();
        assert_eq!(found.start, 8);
        let paths: Vec<&str> = found.suggestions.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(paths, ["@src/main.rs"], "target/ is ignored");
        let found = complete("@", &commands, &files).unwrap();
        let paths: Vec<&str> = found.suggestions.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(paths, ["@src/", "@README.md", "@src/main.rs"]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
