//! What was typed before, kept across runs: one JSON string per line in a file (so entries
//! may hold several lines), browsed with Up and Down.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The most entries kept.
const KEPT: usize = 1_000;

/// The input history.
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
    file: Option<PathBuf>,
    /// Where browsing is (`entries.len()` when not browsing), and what was typed before.
    position: usize,
    draft: String,
}

impl History {
    /// The history kept in `file` (none kept when `None`); a missing or unreadable file is an
    /// empty history.
    pub fn open(file: Option<PathBuf>) -> Self {
        let entries: Vec<String> = file
            .as_deref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|text| {
                text.lines()
                    .filter_map(|line| serde_json::from_str(line).ok())
                    .collect()
            })
            .unwrap_or_default();
        let position = entries.len();
        Self {
            entries,
            file,
            position,
            draft: String::new(),
        }
    }

    /// The default file: `history.jsonl` in agentry's data directory.
    pub fn default_file() -> PathBuf {
        agentry_stock::data_folder().join("history.jsonl")
    }

    /// Records a sent entry (not twice in a row) and stops browsing.
    pub fn record(&mut self, entry: &str) {
        if entry.trim().is_empty() {
            return;
        }
        if self.entries.last().map(String::as_str) != Some(entry) {
            self.entries.push(entry.to_owned());
            if let Some(file) = &self.file
                && let Err(error) = append(file, entry)
            {
                tracing::warn!(
                    "cannot keep the input history in {}: {error}",
                    file.display()
                );
            }
            if self.entries.len() > KEPT * 2 {
                self.entries.drain(..self.entries.len() - KEPT);
                self.rewrite();
            }
        }
        self.position = self.entries.len();
        self.draft.clear();
    }

    /// The entry before the one shown (`current` is what the input holds now).
    pub fn previous(&mut self, current: &str) -> Option<&str> {
        if self.position == 0 {
            return None;
        }
        if self.position == self.entries.len() {
            self.draft = current.to_owned();
        }
        self.position -= 1;
        self.entries.get(self.position).map(String::as_str)
    }

    /// The entry after the one shown, and at the end what was being typed.
    pub fn following(&mut self) -> Option<&str> {
        if self.position >= self.entries.len() {
            return None;
        }
        self.position += 1;
        Some(self.entries.get(self.position).unwrap_or(&self.draft))
    }

    fn rewrite(&self) {
        let Some(file) = &self.file else { return };
        let text: String = self
            .entries
            .iter()
            .filter_map(|e| serde_json::to_string(e).ok())
            .map(|line| line + "\n")
            .collect();
        if let Err(error) = std::fs::write(file, text) {
            tracing::warn!(
                "cannot rewrite the input history {}: {error}",
                file.display()
            );
        }
    }
}

fn append(file: &Path, entry: &str) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        agentry_plugin::private::create_folder(dir)?;
    }
    // What the user typed is theirs alone, like their sessions.
    let mut out = agentry_plugin::private::file_options()
        .create(true)
        .append(true)
        .open(file)?;
    agentry_plugin::private::file(file)?;
    let line = serde_json::to_string(entry).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_a_restart_and_browse_back_to_the_draft() {
        let dir = std::env::temp_dir().join(format!("agentry-history-{}", std::process::id()));
        let file = dir.join("history.jsonl");
        let _ = std::fs::remove_file(&file);
        let mut history = History::open(Some(file.clone()));
        history.record("first");
        history.record("second\nwith two lines");
        history.record("second\nwith two lines");
        let mut history = History::open(Some(file.clone()));
        assert_eq!(history.previous("draft"), Some("second\nwith two lines"));
        assert_eq!(history.previous("ignored"), Some("first"));
        assert_eq!(history.previous("ignored"), None);
        assert_eq!(history.following(), Some("second\nwith two lines"));
        assert_eq!(history.following(), Some("draft"));
        assert_eq!(history.following(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "what the user typed is theirs alone");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
