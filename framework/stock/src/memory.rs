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
//! imported file follows the one importing it, once, up to [`IMPORT_DEPTH`] imports deep; an
//! `@name` that names no file is only text. What a file may import depends on whose it is, as
//! its real path (links resolved) says: the user's own file (and what it imports) reads the
//! project and the home folder; a project's file — which a cloned repository wrote — reads the
//! project, and in the home folder only Markdown in `~/.claude/` (where Claude Code keeps the
//! user's own instructions), never `~/.ssh` or a credentials file. A file a `Read(…)` deny rule
//! covers is never read, nor a file that is not a regular one (a FIFO would block the chat) or
//! is larger than [`MAX_FILE_BYTES`].

use agentry::prompt::InstructionSource;
use agentry::tool::ReadDenials;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How many imports deep a chain of imports is followed (Claude Code's limit).
pub const IMPORT_DEPTH: usize = 5;

/// The largest instruction file read.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The names of the instruction files read in each folder, in order.
const FOLDER_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"];

/// The stock agent's [`InstructionSource`]: the instruction files users keep for their agents
/// (see the [module](self)), as the `agentry` binary reads them. Give it to an agent with
/// [`AgentBuilder::instructions`](agentry::agent::AgentBuilder::instructions).
#[derive(Debug, Clone, Copy, Default)]
pub struct InstructionFiles;

impl InstructionSource for InstructionFiles {
    fn instruction_files(&self, cwd: &Path, denials: &ReadDenials) -> Vec<(PathBuf, String)> {
        instruction_files(cwd, denials)
    }
}

/// The instruction files that apply in `cwd`, in order, each with its text (empty files left
/// out), their imports after them; none that `denials` covers.
pub fn instruction_files(cwd: &Path, denials: &ReadDenials) -> Vec<(PathBuf, String)> {
    instruction_files_with_home(cwd, dirs::home_dir().as_deref(), denials)
}

/// [`instruction_files`] with `home` as the user's home folder.
pub fn instruction_files_with_home(
    cwd: &Path,
    home: Option<&Path>,
    denials: &ReadDenials,
) -> Vec<(PathBuf, String)> {
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
        project: canonical(project),
        home: home.map(Path::to_path_buf),
        home_real: home.map(canonical),
        denials,
        seen: HashSet::new(),
        files: Vec::new(),
    };
    if let Some(path) = user_file {
        reader.read(&path, 0, Owner::User);
    }
    for path in folder_files {
        reader.read(&path, 0, Owner::Project);
    }
    reader.files
}

/// Whose a file is, which decides what it may import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// The user's own `~/.claude/CLAUDE.md`, and what it imports.
    User,
    /// A file of the project's folders, and what it imports.
    Project,
}

/// Reads files and their imports, each once.
struct Reader<'a> {
    /// The project's folder (canonical).
    project: PathBuf,
    /// The home folder, as `~/` imports are written from it.
    home: Option<PathBuf>,
    /// The home folder (canonical).
    home_real: Option<PathBuf>,
    /// What deny rules keep from being read.
    denials: &'a ReadDenials,
    /// The files read so far (canonical).
    seen: HashSet<PathBuf>,
    files: Vec<(PathBuf, String)>,
}

impl Reader<'_> {
    /// Reads `path` (an import `depth` deep, of a file of `owner`), then what it imports.
    fn read(&mut self, path: &Path, depth: usize, owner: Owner) {
        let Ok(real) = path.canonicalize() else {
            return;
        };
        if !self.may_read(&real, owner) || !self.seen.insert(real) {
            return;
        }
        let text = match agentry_plugin::paths::read_regular_file(path, MAX_FILE_BYTES) {
            Ok(Some(text)) => text,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(file = %path.display(), %error, "instruction file not read");
                return;
            }
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
            let target = match import.strip_prefix("~/") {
                Some(rest) => match &self.home {
                    Some(home) => home.join(rest),
                    None => continue,
                },
                None => folder.join(import),
            };
            self.read(&target, depth + 1, owner);
        }
    }

    /// Whether a file of `owner` (or one it imports) may read `real`: inside the project, or
    /// in the home folder as the owner may; never what a deny rule covers.
    fn may_read(&self, real: &Path, owner: Owner) -> bool {
        if self.denials.covers(real) {
            return false;
        }
        let in_home = |inside: &str| {
            self.home_real
                .as_ref()
                .is_some_and(|home| real.starts_with(home.join(inside)))
        };
        let allowed = real.starts_with(&self.project)
            || match owner {
                Owner::User => in_home(""),
                Owner::Project => {
                    in_home(".claude") && real.extension().is_some_and(|ext| ext == "md")
                }
            };
        allowed && real.is_file()
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

    /// The instruction files of `cwd`, with no deny rules.
    fn read_with(cwd: &Path, home: Option<&Path>) -> Vec<(PathBuf, String)> {
        instruction_files_with_home(cwd, home, &ReadDenials::default())
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
        let files = read_with(&root.join("crate/src"), Some(&home));
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
        let files = read_with(&root, Some(&home));
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
        let files = read_with(&root, Some(&home));
        assert_eq!(files.len(), 1, "{files:?}");
        write(&root.join("CLAUDE.md"), "(@inside.md)");
        let files = read_with(&root, Some(&home));
        assert_eq!(texts(&files)[2], "inside");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_out_of_the_project_is_outside_it() {
        let (dir, root, home) = project();
        write(&dir.path().join("secret.txt"), "outside");
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("link.md")).unwrap();
        write(&root.join("CLAUDE.md"), "@link.md");
        let files = read_with(&root, Some(&home));
        assert_eq!(texts(&files), ["@link.md"]);
    }

    #[test]
    fn outside_a_repository_only_the_working_directorys_own_files_count() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("AGENTS.md"), "outer");
        let cwd = dir.path().join("sub");
        std::fs::create_dir(&cwd).unwrap();
        assert!(read_with(&cwd, None).is_empty());
        write(&cwd.join("CLAUDE.md"), "inner");
        assert_eq!(texts(&read_with(&cwd, None)), ["inner"]);
    }

    /// What a cloned repository's instruction files ask for beyond the project: the user's
    /// keys, Claude Code's credentials, any file through a link. Only Markdown the user keeps
    /// in `~/.claude/` is read, and the user's own file still reads their home folder.
    #[cfg(unix)]
    #[test]
    fn a_projects_files_read_nothing_of_home_but_the_users_claude_notes() {
        use std::os::unix::fs::symlink;
        let (dir, root, home) = project();
        write(&home.join(".ssh/id_rsa"), "PRIVATE KEY");
        write(&home.join(".claude/.credentials.json"), "TOKEN");
        write(&home.join(".claude/notes.md"), "notes");
        write(&home.join("mine.md"), "mine");
        write(&dir.path().join("outside.txt"), "OUTSIDE");
        write(
            &root.join("CLAUDE.md"),
            "@~/.ssh/id_rsa @~/.claude/.credentials.json @~/.claude/notes.md @~/mine.md",
        );
        symlink(dir.path().join("outside.txt"), root.join("AGENTS.md")).unwrap();
        symlink(home.join(".ssh/id_rsa"), root.join("CLAUDE.local.md")).unwrap();
        write(&home.join(".claude/CLAUDE.md"), "user @~/mine.md");
        let files = read_with(&root, Some(&home));
        assert_eq!(
            texts(&files),
            [
                "user @~/mine.md",
                "mine",
                "@~/.ssh/id_rsa @~/.claude/.credentials.json @~/.claude/notes.md @~/mine.md",
                "notes",
            ]
        );
    }

    #[test]
    fn deny_rules_and_files_that_are_not_regular_keep_an_instruction_file_out() {
        let (_dir, root, home) = project();
        write(&root.join(".env"), "SECRET=1");
        write(&root.join("CLAUDE.md"), "@.env @pipe.md");
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("pipe.md"))
            .status()
            .unwrap();
        assert!(made.success());
        let root_real = root.canonicalize().unwrap();
        let denials = ReadDenials::new(vec![
            agentry::tool::PathMatcher::new(root_real.clone(), Some(".env")).unwrap(),
        ]);
        let files = instruction_files_with_home(&root, Some(&home), &denials);
        assert_eq!(texts(&files), ["@.env @pipe.md"]);
        let denials = ReadDenials::new(vec![
            agentry::tool::PathMatcher::new(root_real.join("CLAUDE.md"), None).unwrap(),
        ]);
        assert!(instruction_files_with_home(&root, Some(&home), &denials).is_empty());
    }
}
