//! Protected paths: files whose change makes later runs do more than the user agreed to — a
//! project's agentry and Claude Code configuration (`.agentry/`, `.claude/`, `.mcp.json`), a
//! repository's hooks and configuration (`.git/`), the user's own configuration, and the shell's
//! start-up files. Writing one always asks, in every mode but bypass, whichever tool writes it
//! (Write, Edit or a Bash redirection) and whatever allow rule covers it.

use std::path::Path;

/// Folders, at any depth, whose files configure what runs.
const PROTECTED_FOLDERS: &[&str] = &[".agentry", ".claude", ".git"];

/// Files, at any depth, that configure what runs.
const PROTECTED_FILES: &[&str] = &[".mcp.json", ".envrc"];

/// Files and folders in the home folder that run code or configure agents.
const PROTECTED_IN_HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".config/fish",
    ".config/agentry",
    ".ssh",
    ".gitconfig",
    ".config/git",
];

/// Why writing `path` (canonical) is protected, if it is.
pub fn protected(path: &Path, home: Option<&Path>) -> Option<String> {
    if let Some(inside) = home.and_then(|home| path.strip_prefix(home).ok())
        && let Some(entry) = PROTECTED_IN_HOME
            .iter()
            .find(|entry| inside.starts_with(entry))
    {
        return Some(format!("~/{entry} runs code or configures what runs"));
    }
    let mut components = path.components().peekable();
    while let Some(component) = components.next() {
        let name = component.as_os_str().to_string_lossy();
        if PROTECTED_FOLDERS.contains(&name.as_ref()) && components.peek().is_some() {
            return Some(format!(
                "{name}/ configures what agentry, Claude Code or git run"
            ));
        }
        if PROTECTED_FOLDERS.contains(&name.as_ref()) || PROTECTED_FILES.contains(&name.as_ref()) {
            return Some(format!(
                "{name} configures what agentry, Claude Code or git run"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_hooks_and_start_up_files_are_protected_wherever_they_are() {
        let home = Path::new("/home/u");
        for protected_path in [
            "/work/.agentry/config.toml",
            "/work/.claude/settings.json",
            "/work/sub/.claude/agents/x.md",
            "/work/.mcp.json",
            "/work/.git/hooks/pre-commit",
            "/work/.git/config",
            "/work/.git",
            "/work/vendor/lib/.git/config",
            "/work/.envrc",
            "/home/u/.bashrc",
            "/home/u/.profile",
            "/home/u/.config/agentry/config.toml",
            "/home/u/.ssh/authorized_keys",
            "/home/u/.config/fish/config.fish",
        ] {
            assert!(
                protected(Path::new(protected_path), Some(home)).is_some(),
                "{protected_path}"
            );
        }
        for free in [
            "/work/src/lib.rs",
            "/work/.gitignore",
            "/work/.github/workflows/ci.yml",
            "/work/git/config",
            "/work/claude.md",
            "/home/u/notes.txt",
            "/work/.bashrc.example",
        ] {
            assert!(protected(Path::new(free), Some(home)).is_none(), "{free}");
        }
    }
}
