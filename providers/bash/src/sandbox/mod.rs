//! The sandbox Bash commands run in (in agentry's own terminal; a client's terminal is the
//! client's business). On Linux, Landlock confines writes to the session's workspace roots and
//! the temporary folders, and a seccomp filter refuses sockets of every family but Unix, unless
//! the settings allow the network. A call may ask to run outside the sandbox
//! (`dangerouslyDisableSandbox`), which the user is always asked about.

#[cfg(target_os = "linux")]
mod linux;
mod report;

pub(crate) use report::explain_refusal;

use agentry_plugin::tool::ToolContext;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub use agentry_plugin::tool::SandboxMode;

/// What Bash does on a system that cannot sandbox (a kernel without Landlock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WhenUnavailable {
    /// Run commands unsandboxed, saying so once per session.
    #[default]
    Warn,
    /// Refuse to run commands (a call may still ask to run outside the sandbox).
    Refuse,
}

/// The sandbox's settings: `sandbox = "read-only"` in the configuration, or a `[sandbox]` table
/// (`mode`, `network`, `writable`, `when_unavailable`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSettings {
    /// How commands are confined.
    pub mode: SandboxMode,
    /// Whether sandboxed commands may use the network (off by default).
    pub network: bool,
    /// More folders commands may write in (`~/` is the home folder), as in `~/.cache`.
    pub writable: Vec<PathBuf>,
    /// What to do where the kernel cannot sandbox.
    pub when_unavailable: WhenUnavailable,
}

/// The configuration section the sandbox's settings are read from: `sandbox`.
pub const SECTION: &str = "sandbox";

impl SandboxSettings {
    /// The settings of a `sandbox` section as written (TOML read as JSON); the defaults
    /// without one.
    pub fn from_section(section: Option<&serde_json::Value>) -> Result<Self, String> {
        section.map_or(Ok(Self::default()), |value| Self::from_value(value.clone()))
    }

    /// Reads the settings as written in a configuration: a mode's name or a table.
    pub fn from_value(value: serde_json::Value) -> Result<Self, String> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Mode(SandboxMode),
            Table(SandboxSettings),
        }
        match serde_json::from_value(value.clone()) {
            Ok(Written::Mode(mode)) => Ok(Self {
                mode,
                ..Self::default()
            }),
            Ok(Written::Table(settings)) => Ok(settings),
            // Untagged enums say only that nothing matched: ask the table for its own error.
            Err(_) if value.is_string() => Err(format!(
                "sandbox: {value} is not a mode (\"workspace-write\", \"read-only\" or \"off\")"
            )),
            Err(_) => serde_json::from_value::<SandboxSettings>(value)
                .map_err(|e| format!("sandbox: {e}")),
        }
    }

    /// The mode a call runs in: its session's choice (a [`SandboxMode`] in the call's
    /// extensions), else these settings' mode.
    pub fn mode_for(&self, ctx: &ToolContext) -> SandboxMode {
        ctx.extensions
            .get::<SandboxMode>()
            .map_or(self.mode, |mode| *mode)
    }

    /// What one command may do in `mode`, for a session with these workspace roots and
    /// temporary folder (`None`: the mode is off).
    pub(crate) fn confinement(
        &self,
        mode: SandboxMode,
        workspace_roots: &[PathBuf],
        session_temp: Option<&Path>,
    ) -> Option<Confinement> {
        if mode == SandboxMode::Off {
            return None;
        }
        let mut writable: Vec<PathBuf> = session_temp.map(Path::to_path_buf).into_iter().collect();
        if mode == SandboxMode::WorkspaceWrite {
            writable.extend(workspace_roots.iter().cloned());
            writable.push(std::env::temp_dir());
            writable.push(PathBuf::from("/dev/shm"));
            writable.extend(self.writable.iter().map(|path| expand_home(path)));
        }
        Some(Confinement {
            mode,
            writable,
            network: self.network,
            when_unavailable: self.when_unavailable,
        })
    }
}

/// `~/x` as a path in the home folder.
fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

/// Devices every command may write to (the terminal, /dev/null and their like).
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// What one sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Confinement {
    /// The mode it came from.
    pub mode: SandboxMode,
    /// The folders (and files) it may write in, besides [`DEVICES`].
    pub writable: Vec<PathBuf>,
    /// Whether it may open sockets other than Unix ones.
    pub network: bool,
    /// What to do where the kernel cannot sandbox.
    pub when_unavailable: WhenUnavailable,
}

impl Confinement {
    /// Whether writing `path` (absolute) is allowed.
    pub fn may_write(&self, path: &Path) -> bool {
        self.writable
            .iter()
            .map(PathBuf::as_path)
            .chain(DEVICES.iter().map(Path::new))
            .any(|root| path.starts_with(root) || path.starts_with(canonical(root)))
    }

    /// The writable folders, for messages (`/work/p, /tmp`).
    pub fn writable_list(&self) -> String {
        let folders: Vec<String> = self
            .writable
            .iter()
            .filter(|path| !path.starts_with("/dev"))
            .map(|path| path.display().to_string())
            .collect();
        if folders.is_empty() {
            "nowhere".to_owned()
        } else {
            folders.join(", ")
        }
    }
}

/// The path with its links resolved, where it exists.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// How far the sandbox could be enforced for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Enforcement {
    /// Writes and (unless allowed) the network are confined.
    Enforced,
    /// This system cannot sandbox; the command ran unconfined (with the reason).
    Unavailable(String),
}

/// Why a command could not start sandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SandboxError(pub String);

impl std::fmt::Display for SandboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Runs `start` (which starts the command) on a thread confined by `confinement`; the process
/// it starts inherits the confinement, agentry's other threads keep none of it.
pub(crate) fn run_confined<T: Send>(
    confinement: &Confinement,
    start: impl FnOnce() -> T + Send,
) -> Result<(T, Enforcement), SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::run_confined(confinement, start)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let reason = "the sandbox exists only on Linux".to_owned();
        match confinement.when_unavailable {
            WhenUnavailable::Warn => Ok((start(), Enforcement::Unavailable(reason))),
            WhenUnavailable::Refuse => Err(SandboxError(reason)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_read_as_a_mode_name_or_a_table_and_bad_ones_say_why() {
        let read_only = SandboxSettings::from_value(json!("read-only")).unwrap();
        assert_eq!(read_only.mode, SandboxMode::ReadOnly);
        assert!(!read_only.network);
        let table = SandboxSettings::from_value(json!({
            "network": true, "writable": ["~/.cache"], "when_unavailable": "refuse"
        }))
        .unwrap();
        assert_eq!(table.mode, SandboxMode::WorkspaceWrite);
        assert!(table.network);
        assert_eq!(table.when_unavailable, WhenUnavailable::Refuse);
        let bad_mode = SandboxSettings::from_value(json!("strict")).unwrap_err();
        assert!(bad_mode.contains("\"strict\" is not a mode"), "{bad_mode}");
        let bad_key = SandboxSettings::from_value(json!({"netwrk": true})).unwrap_err();
        assert!(bad_key.contains("unknown field `netwrk`"), "{bad_key}");
    }

    #[test]
    fn workspace_write_allows_the_roots_and_temp_and_read_only_only_the_sessions_folder() {
        let roots = [PathBuf::from("/work/p")];
        let session = Path::new("/tmp/agentry-session");
        let settings = SandboxSettings {
            writable: vec![PathBuf::from("/opt/cache")],
            ..SandboxSettings::default()
        };
        let write = settings
            .confinement(settings.mode, &roots, Some(session))
            .unwrap();
        assert!(write.may_write(Path::new("/work/p/src/a.rs")));
        assert!(write.may_write(&std::env::temp_dir().join("x")));
        assert!(write.may_write(Path::new("/opt/cache/y")));
        assert!(write.may_write(Path::new("/dev/null")));
        assert!(!write.may_write(Path::new("/work/other")));
        assert!(!write.may_write(Path::new("/etc/passwd")));
        let read_only = settings
            .confinement(SandboxMode::ReadOnly, &roots, Some(session))
            .unwrap();
        assert!(!read_only.may_write(Path::new("/work/p/src/a.rs")));
        assert!(read_only.may_write(&session.join("cwd")));
        assert_eq!(read_only.writable_list(), "/tmp/agentry-session");
        assert_eq!(settings.confinement(SandboxMode::Off, &roots, None), None);
    }
}
