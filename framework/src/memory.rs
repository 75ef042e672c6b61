//! The instruction files users already keep for their agents, read into the prompt's
//! environment block: `AGENTS.md`, and Claude Code's `CLAUDE.md` and `CLAUDE.local.md`, with the
//! files they import (`@path`).
//!
//! Order, from the most general to the most specific (a later file takes precedence where two
//! disagree, as it is read later):
//! 1. the user's own `~/.claude/CLAUDE.md`;
//! 2. each folder from the repository root (the nearest ancestor with `.git`; the working
//!    directory alone outside a repository) down to the working directory, outermost first,
//!    and in each folder `AGENTS.md`, then `CLAUDE.md`, then `CLAUDE.local.md` (the personal
//!    one, usually not committed).
//!
//! A file imports another with `@path` (relative to the importing file's folder, `~/…` from the
//! home folder, or absolute), anywhere in its text except in code spans and code blocks. Each
//! imported file follows the one importing it, once, up to [`IMPORT_DEPTH`] imports deep; a
//! file outside the project and the home folder, or one that does not exist, is not read (an
//! `@name` that names no file is only text).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How many imports deep a chain of imports is followed (Claude Code's limit).
pub const IMPORT_DEPTH: usize = 5;

/// The names of the instruction files read in each folder, in order.
const FOLDER_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"];

/// The instruction files that apply in `cwd`, in order, each with its text (empty files left
/// out), their imports after them.
pub fn instruction_files(cwd: &Path) -> Vec<(PathBuf, String)> {
    instruction_files_with_home(cwd, dirs::home_dir().as_deref())
}

/// [`instruction_files`] with `home` as the user's home folder.
pub fn instruction_files_with_home(cwd: &Path, home: Option<&Path>) -> Vec<(PathBuf, String)> {
    let ancestors: Vec<&Path> = cwd.ancestors().collect();
    let root_index = ancestors
        .iter()
        .position(|dir| dir.join(".git").exists())
        .unwrap_or(0);
    let project = ancestors[root_index];
    let user_file = home.map(|home| home.join(".claude").join("CLAUDE.md"));
    let folder_files = ancestors[..=root_index]
        .iter()
        .rev()
        .flat_map(|dir| FOLDER_FILES.iter().map(move |name| dir.join(name)));
    let mut reader = Reader {
        allowed: [Some(project), home]
            .into_iter()
            .flatten()
            .map(canonical)
            .collect(),
        home: home.map(Path::to_path_buf),
        seen: HashSet::new(),
        files: Vec::new(),
    };
    for path in user_file.into_iter().chain(folder_files) {
        reader.read(&path, 0);
    }
    reader.files
}

/// Reads files and their imports, each once.
struct Reader {
    /// The folders imports may come from (canonical): the project's and the home folder.
    allowed: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// The files read so far (canonical).
    seen: HashSet<PathBuf>,
    files: Vec<(PathBuf, String)>,
}

impl Reader {
    /// Reads `path` (an import `depth` deep), then what it imports.
    fn read(&mut self, path: &Path, depth: usize) {
        let Ok(real) = path.canonicalize() else {
            return;
        };
        if !self.seen.insert(real) {
            return;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        let imports = imports(&text);
        self.files.push((path.to_path_buf(), text));
        if depth == IMPORT_DEPTH {
            return;
        }
        let folder = path.parent().unwrap_or(Path::new("/"));
        for import in imports {
            let Some(target) = self.resolve(folder, &import) else {
                continue;
            };
            self.read(&target, depth + 1);
        }
    }

    /// Where `import` (written in a file of `folder`) points, when that is inside the
    /// project or the home folder.
    fn resolve(&self, folder: &Path, import: &str) -> Option<PathBuf> {
        let path = match import.strip_prefix("~/") {
            Some(rest) => self.home.as_ref()?.join(rest),
            None => folder.join(import),
        };
        let real = path.canonicalize().ok()?;
        let inside = self.allowed.iter().any(|root| real.starts_with(root));
        (inside && real.is_file()).then_some(path)
    }
}

/// `path` canonical, or as it is when it cannot be.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// The paths a text imports (`@path` at the start of a word), outside code spans and blocks,
/// in order.
fn imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Code spans alternate with text between backticks: the even pieces are text.
        for (piece, prose) in line.split('`').zip([true, false].into_iter().cycle()) {
            if !prose {
                continue;
            }
            for word in piece.split_whitespace() {
                let word = word.trim_start_matches(['(', '[', '"', '\'']);
                let Some(path) = word.strip_prefix('@') else {
                    continue;
                };
                let path = path.trim_end_matches([',', ';', ':', ')', ']', '"', '\'', '.']);
                if !path.is_empty() {
                    found.push(path.to_owned());
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project (a repository) with a `home` beside it.
    fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("crate/src")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        (dir, root, home)
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn texts(files: &[(PathBuf, String)]) -> Vec<&str> {
        files.iter().map(|(_, text)| text.trim()).collect()
    }

    #[test]
    fn the_users_file_then_each_folder_from_the_root_down_agents_then_claude_then_local() {
        let (_dir, root, home) = project();
        write(&home.join(".claude/CLAUDE.md"), "user");
        write(&root.join("CLAUDE.local.md"), "root local");
        write(&root.join("CLAUDE.md"), "root claude");
        write(&root.join("AGENTS.md"), "root agents");
        write(&root.join("crate/CLAUDE.md"), "crate claude");
        write(&root.join("crate/src/AGENTS.md"), "  \n");
        let files = instruction_files_with_home(&root.join("crate/src"), Some(&home));
        assert_eq!(
            texts(&files),
            [
                "user",
                "root agents",
                "root claude",
                "root local",
                "crate claude"
            ]
        );
    }

    #[test]
    fn imports_follow_their_file_once_relative_from_home_and_depth_limited() {
        let (_dir, root, home) = project();
        write(
            &root.join("CLAUDE.md"),
            "See @docs/style.md and @~/.claude/mine.md, mail me@example.com.",
        );
        write(&root.join("docs/style.md"), "style; more in @deeper/one.md");
        write(
            &root.join("docs/deeper/one.md"),
            "one @two.md and back @../style.md",
        );
        write(&root.join("docs/deeper/two.md"), "two @three.md");
        write(&root.join("docs/deeper/three.md"), "three @four.md");
        write(&root.join("docs/deeper/four.md"), "four @five.md");
        write(&root.join("docs/deeper/five.md"), "five: too deep");
        write(&home.join(".claude/mine.md"), "mine");
        let files = instruction_files_with_home(&root, Some(&home));
        assert_eq!(
            texts(&files),
            [
                "See @docs/style.md and @~/.claude/mine.md, mail me@example.com.",
                "style; more in @deeper/one.md",
                "one @two.md and back @../style.md",
                "two @three.md",
                "three @four.md",
                "four @five.md",
                "mine",
            ]
        );
    }

    #[test]
    fn imports_outside_the_project_and_home_or_in_code_are_not_read() {
        let (dir, root, home) = project();
        write(&dir.path().join("secret.txt"), "outside");
        write(&root.join("inside.md"), "inside");
        write(
            &root.join("AGENTS.md"),
            "@../secret.txt @/etc/hostname `@inside.md`\n```\n@inside.md\n```\n@missing.md",
        );
        let files = instruction_files_with_home(&root, Some(&home));
        assert_eq!(files.len(), 1, "{files:?}");
        write(&root.join("CLAUDE.md"), "(@inside.md)");
        let files = instruction_files_with_home(&root, Some(&home));
        assert_eq!(texts(&files)[2], "inside");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_project_is_outside_it() {
        let (dir, root, home) = project();
        write(&dir.path().join("secret.txt"), "outside");
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("link.md")).unwrap();
        write(&root.join("CLAUDE.md"), "@link.md");
        let files = instruction_files_with_home(&root, Some(&home));
        assert_eq!(texts(&files), ["@link.md"]);
    }

    #[test]
    fn outside_a_repository_only_the_working_directorys_own_files_count() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("AGENTS.md"), "outer");
        let cwd = dir.path().join("sub");
        std::fs::create_dir(&cwd).unwrap();
        assert!(instruction_files_with_home(&cwd, None).is_empty());
        write(&cwd.join("CLAUDE.md"), "inner");
        assert_eq!(texts(&instruction_files_with_home(&cwd, None)), ["inner"]);
    }
}
