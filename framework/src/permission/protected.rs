//! Protected paths: files whose change makes later runs do more than the user agreed to — a
//! project's agentry and Claude Code configuration (`.agentry/`, `.claude/`, `.mcp.json`), a
//! repository's hooks and configuration (`.git/`), skills (`.agents/`), agentry's own
//! configuration and data folders (the folders the user trusts are kept there), the user's own
//! configuration, and the shell's start-up files. Writing one always asks, in every mode but bypass, whichever tool writes it
//! (Write, Edit or a Bash redirection) and whatever allow rule covers it.

use agentry_plugin::paths::canonical_path;
use std::path::{Path, PathBuf};

/// Folders, at any depth, whose files configure what runs.
const PROTECTED_FOLDERS: &[&str] = &[".agentry", ".claude", ".agents", ".git"];

/// Files, at any depth, that configure what runs.
const PROTECTED_FILES: &[&str] = &[".mcp.json", ".envrc"];

/// Files and folders in the home folder that run code or configure agents.
const PROTECTED_IN_HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".inputrc",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".pam_environment",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".config/fish",
    ".config/agentry",
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd",
    ".ssh",
    ".gitconfig",
    ".config/git",
    ".npmrc",
    ".cargo/config",
    ".cargo/config.toml",
];

/// Folders of the user's configuration folder (`$XDG_CONFIG_HOME`, wherever it is) that run
/// code or configure agents.
const PROTECTED_IN_CONFIG: &[&str] = &[
    "agentry",
    "git",
    "fish",
    "environment.d",
    "autostart",
    "systemd",
];

/// Why writing `path` (canonical) is protected, if it is. `more` are protected files and folders
/// besides the built-in ones: the agent's data folder, the files a project's settings run.
pub fn protected(path: &Path, home: Option<&Path>, more: &[PathBuf]) -> Option<String> {
    if let Some(inside) = home.and_then(|home| path.strip_prefix(home).ok())
        && let Some(entry) = PROTECTED_IN_HOME
            .iter()
            .find(|entry| inside.starts_with(entry))
    {
        return Some(format!("~/{entry} runs code or configures what runs"));
    }
    let config = dirs::config_dir().map(|config| canonical_path(&config));
    if let Some(entry) = config.as_ref().and_then(|config| {
        PROTECTED_IN_CONFIG
            .iter()
            .find(|entry| path.starts_with(config.join(entry)))
    }) {
        return Some(format!(
            "the configuration folder's {entry}/ runs code or configures what runs"
        ));
    }
    if let Some(named) = more
        .iter()
        .map(|named| canonical_path(named))
        .find(|named| path.starts_with(named))
    {
        return Some(format!(
            "{} is the agent's own data, or runs when its configuration says (a hook, a plugin)",
            named.display()
        ));
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
            "/work/.agents/skills/x/SKILL.md",
            "/home/u/.bashrc",
            "/home/u/.profile",
            "/home/u/.config/agentry/config.toml",
            "/home/u/.ssh/authorized_keys",
            "/home/u/.config/fish/config.fish",
        ] {
            assert!(
                protected(Path::new(protected_path), Some(home), &[]).is_some(),
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
            assert!(
                protected(Path::new(free), Some(home), &[]).is_none(),
                "{free}"
            );
        }
    }

    #[test]
    fn agentry_s_own_folders_are_protected_wherever_they_are_configured() {
        let data = tempfile::tempdir().unwrap();
        let data = data.path().canonicalize().unwrap();
        let trust_file = data.join("trusted-folders.json");
        assert!(protected(&trust_file, None, std::slice::from_ref(&data)).is_some());
        assert!(protected(&trust_file, None, &[]).is_none());
        let configured = dirs::config_dir().unwrap().join("agentry/config.toml");
        assert!(protected(&canonical_path(&configured), None, &[]).is_some());
    }
}
