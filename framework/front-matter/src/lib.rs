//! Markdown documents that start with YAML front matter between `---` lines: prompt templates,
//! sub-agent definitions, skills. Errors give the line in the whole file.

use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A document that cannot be used: which file, which line, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct DocumentError {
    /// The file.
    pub path: PathBuf,
    /// The line, when known.
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl DocumentError {
    /// A problem with `path`, at `line` when known.
    pub fn new(path: &Path, line: Option<u64>, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// The front matter of the file `path` (whose text is `text`) read as `T`, and the body; an
/// error names the file and the line.
pub fn read_document<'t, T: DeserializeOwned + Default>(
    path: &Path,
    text: &'t str,
) -> Result<(T, &'t str), DocumentError> {
    read(text).map_err(|e| {
        DocumentError::new(path, e.line, format!("invalid front matter: {}", e.message))
    })
}

/// The line (1-based) of the first line of `text` that starts with `key` (leading spaces
/// aside): where a front matter key is set, for an error about its value.
pub fn line_of(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .position(|line| line.trim_start().starts_with(key))
        .map(|index| index as u64 + 1)
}

/// A list of tools or rules as Claude Code's front matter writes it (an agent's `tools`, a
/// command's `allowed-tools`): one text, its items apart by commas or spaces outside
/// parentheses (`Read, Grep` or `Bash(git add:*) Bash(git status:*)`), or a YAML list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(untagged)]
pub enum ToolList {
    /// One text.
    Text(String),
    /// A list.
    List(Vec<String>),
}

impl ToolList {
    /// Its items, trimmed, none empty.
    pub fn items(self) -> Vec<String> {
        let items = match self {
            ToolList::List(items) => items,
            ToolList::Text(text) => {
                let mut items = vec![String::new()];
                let mut depth = 0usize;
                for c in text.chars() {
                    match c {
                        '(' => depth += 1,
                        ')' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    if depth == 0 && (c == ',' || c.is_whitespace()) {
                        items.push(String::new());
                    } else if let Some(item) = items.last_mut() {
                        item.push(c);
                    }
                }
                items
            }
        };
        items
            .into_iter()
            .map(|item| item.trim().to_owned())
            .filter(|item| !item.is_empty())
            .collect()
    }
}

/// The largest document read.
const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;

/// Reads every file in `files` with `parse`, by name (`name_of`): a later file's document
/// replaces an earlier one of the same name (the project's over the user's). Files that cannot
/// be read or used — not a regular file (a FIFO would block), larger than a megabyte — come
/// back as errors beside the documents.
pub fn load_named<T>(
    files: impl IntoIterator<Item = PathBuf>,
    parse: impl Fn(&Path, &str) -> Result<T, DocumentError>,
    name_of: impl Fn(&T) -> &str,
) -> (BTreeMap<String, T>, Vec<DocumentError>) {
    let mut found = BTreeMap::new();
    let mut errors = Vec::new();
    for file in files {
        let parsed = agentry_plugin::paths::read_regular_file(&file, MAX_DOCUMENT_BYTES)
            .and_then(|text| text.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
            .map_err(|e| DocumentError {
                path: file.clone(),
                line: None,
                message: e.to_string(),
            })
            .and_then(|text| parse(&file, &text));
        match parsed {
            Ok(document) => {
                found.insert(name_of(&document).to_owned(), document);
            }
            Err(error) => errors.push(error),
        }
    }
    (found, errors)
}

/// The documents of the enabled Claude Code plugins: for each bundle, the files `files_of`
/// gives read with `parse` (as [`load_named`] does), each renamed `BUNDLE:NAME` with `rename`
/// (a plugin's sub-agents and skills are named after it).
pub fn load_bundled<T>(
    bundles: &[agentry_plugin::settings::PluginBundle],
    files_of: impl Fn(&agentry_plugin::settings::PluginBundle) -> Vec<PathBuf>,
    parse: impl Fn(&Path, &str) -> Result<T, DocumentError>,
    name_of: impl Fn(&T) -> &str,
    rename: impl Fn(&mut T, String),
) -> (Vec<T>, Vec<DocumentError>) {
    let mut documents = Vec::new();
    let mut errors = Vec::new();
    for bundle in bundles {
        let (found, failed) = load_named(files_of(bundle), &parse, &name_of);
        errors.extend(failed);
        for (name, mut document) in found {
            rename(&mut document, format!("{}:{name}", bundle.name));
            documents.push(document);
        }
    }
    (documents, errors)
}

/// Why a document's front matter cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct FrontMatterError {
    /// The line of the file the problem is on, when known.
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
}

/// Splits `---`-fenced front matter from the body; `None` when the text has none.
pub fn split(text: &str) -> (Option<&str>, &str) {
    let Some(after_open) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in after_open.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = &after_open[offset + line.len()..];
            return (Some(&after_open[..offset]), body);
        }
        offset += line.len();
    }
    (None, text)
}

/// The front matter read as `T` (its default when there is none or it is empty), and the body.
pub fn read<T: DeserializeOwned + Default>(text: &str) -> Result<(T, &str), FrontMatterError> {
    let (front, body) = split(text);
    let front = match front {
        Some(yaml) if !yaml.trim().is_empty() => {
            serde_saphyr::from_str(yaml).map_err(|error: serde_saphyr::Error| {
                // The front matter starts on the file's second line.
                let line = error
                    .location()
                    .map(|location| location.line() + 1)
                    .filter(|&line| line > 1);
                let message = error.to_string();
                let message = message.lines().next().unwrap_or_default().to_owned();
                FrontMatterError { line, message }
            })?
        }
        _ => T::default(),
    };
    Ok((front, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Front {
        name: Option<String>,
        count: Option<u32>,
    }

    #[test]
    fn tool_lists_split_at_commas_and_spaces_outside_parentheses() {
        let text = ToolList::Text("Read, Grep Bash(git add:*),Bash(git status:*)  ".to_owned());
        assert_eq!(
            text.items(),
            ["Read", "Grep", "Bash(git add:*)", "Bash(git status:*)"]
        );
        let list = ToolList::List(vec![" Bash(npm run test) ".to_owned(), String::new()]);
        assert_eq!(list.items(), ["Bash(npm run test)"]);
    }

    #[test]
    fn front_matter_and_body_are_split_and_read() {
        let (front, body) = read::<Front>("---\nname: x\ncount: 3\n---\nBody\n").unwrap();
        assert_eq!(
            front,
            Front {
                name: Some("x".into()),
                count: Some(3)
            }
        );
        assert_eq!(body, "Body\n");
        let (front, body) = read::<Front>("No front matter\n").unwrap();
        assert_eq!((front, body), (Front::default(), "No front matter\n"));
    }

    #[test]
    fn errors_name_the_line_of_the_file() {
        let error = read::<Front>("---\nname: x\ncount: many\n---\nBody\n").unwrap_err();
        assert_eq!(error.line, Some(3), "{error}");
        assert!(error.to_string().starts_with("line 3: "), "{error}");
    }
}
