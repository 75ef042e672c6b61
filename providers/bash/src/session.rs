//! What the shell tools keep per session: the working directory, where files go (the session's
//! temporary folder), and the background commands (stopped when the session ends).

use agentry_plugin::process_group::kill_group_now;
pub(crate) use agentry_plugin::sync::lock;
use agentry_plugin::tool::ToolProgress;
use agentry_plugin::tool::{SessionState, ToolContext};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A command left running with `run_in_background`.
pub(crate) struct BackgroundShell {
    /// The command line.
    pub command: String,
    /// Its process group.
    pub group: i32,
    /// Output not yet read by TaskOutput, and the exit code once it has exited.
    pub state: Arc<Mutex<crate::output::ShellOutput>>,
    /// Cancels the task that watches it.
    pub stop: tokio_util::sync::CancellationToken,
    /// Cancelled when the command has ended.
    pub ended: tokio_util::sync::CancellationToken,
    /// The file its whole output goes to, if there is one.
    pub log_path: Option<PathBuf>,
}

/// The shell state of one session.
pub(crate) struct ShellSession {
    cwd: Mutex<Option<PathBuf>>,
    /// The session's temporary folder (`None` if it could not be made).
    temp_dir: Option<PathBuf>,
    next_id: AtomicU64,
    /// Whether the user has been told that commands run unsandboxed here.
    told_unsandboxed: AtomicBool,
    pub background: Mutex<BTreeMap<String, BackgroundShell>>,
}

impl ShellSession {
    /// The session's shell state.
    pub fn of(ctx: &ToolContext) -> Arc<ShellSession> {
        ctx.state.get_or_init(|| ShellSession {
            cwd: Mutex::new(None),
            temp_dir: ctx
                .state
                .temp_dir()
                .inspect_err(|e| tracing::warn!("no temporary folder for the shell: {e}"))
                .ok(),
            next_id: AtomicU64::new(1),
            told_unsandboxed: AtomicBool::new(false),
            background: Mutex::new(BTreeMap::new()),
        })
    }

    /// Where the next command starts: where the last one ended, else the session's cwd.
    pub fn cwd(&self, session_cwd: &Path) -> PathBuf {
        lock(&self.cwd)
            .clone()
            .filter(|dir| dir.is_dir())
            .unwrap_or_else(|| session_cwd.to_path_buf())
    }

    /// The session's temporary folder (`None` if it could not be made).
    pub fn temp_dir(&self) -> Option<&Path> {
        self.temp_dir.as_deref()
    }

    /// A file named `name` in the session's temporary folder (`None` without one).
    pub fn temp_file(&self, name: &str) -> Option<PathBuf> {
        self.temp_dir.as_ref().map(|dir| dir.join(name))
    }

    /// Takes the directory a finished command left in `file`; the session's next Bash call is
    /// prepared (its writes judged) there.
    pub fn take_cwd_from(&self, file: &Path, state: &SessionState) {
        if let Ok(text) = std::fs::read_to_string(file) {
            let dir = PathBuf::from(text.trim_end_matches('\n'));
            if dir.is_dir() {
                state.set_tool_folder(crate::NAME, dir.clone());
                *lock(&self.cwd) = Some(dir);
            }
        }
        let _ = std::fs::remove_file(file);
    }

    /// Tells the user, once per session, that commands run unsandboxed and why.
    pub fn tell_unsandboxed_once(&self, reason: &str, ctx: &ToolContext) {
        if !self.told_unsandboxed.swap(true, Ordering::SeqCst) {
            tracing::warn!("Bash commands run unsandboxed: {reason}");
            ctx.progress.report(ToolProgress::Notice(format!(
                "Bash commands run unsandboxed in this session: {reason} (the sandbox's \
                 when_unavailable setting is \"warn\"; \"refuse\" refuses them instead)"
            )));
        }
    }

    /// A new id (`bash_1`, `bash_2`, …).
    pub fn next_id(&self) -> String {
        format!("bash_{}", self.next_id.fetch_add(1, Ordering::SeqCst))
    }
}

impl Drop for ShellSession {
    fn drop(&mut self) {
        for shell in lock(&self.background).values() {
            shell.stop.cancel();
            kill_group_now(shell.group);
        }
    }
}
