//! A `command` hook's run: `sh -c COMMAND` in the session's folder, the event's JSON on its
//! stdin, in its own process group (stopped whole on timeout), with Claude Code's variables:
//! `$CLAUDE_PROJECT_DIR` (and agentry's `$AGENTRY_PROJECT_DIR`), `$CLAUDE_PLUGIN_ROOT` for a
//! plugin's hooks, `$CLAUDE_ENV_FILE` for `SessionStart`'s (the session's environment file,
//! whose `export` lines its commands take up).

use super::output::Ran;
use std::path::Path;
use std::time::Duration;

/// What a command runs with besides its input.
pub(crate) struct CommandEnv<'a> {
    /// The session's folder.
    pub(crate) project_dir: &'a Path,
    /// The plugin's folder, for a plugin's hook.
    pub(crate) plugin_root: Option<&'a Path>,
    /// The session's environment file, for a `SessionStart` hook.
    pub(crate) env_file: Option<&'a Path>,
}

/// Runs `command` with `input` on its stdin, for at most `timeout`.
pub(crate) async fn run(
    command: &str,
    input: &str,
    env: &CommandEnv<'_>,
    timeout: Duration,
) -> Ran {
    use tokio::io::AsyncWriteExt;
    let mut process = tokio::process::Command::new("sh");
    process
        .arg("-c")
        .arg(command)
        .current_dir(env.project_dir)
        .env("CLAUDE_PROJECT_DIR", env.project_dir)
        .env("AGENTRY_PROJECT_DIR", env.project_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(root) = env.plugin_root {
        process.env("CLAUDE_PLUGIN_ROOT", root);
    }
    if let Some(file) = env.env_file {
        process.env("CLAUDE_ENV_FILE", file);
    }
    #[cfg(unix)]
    process.process_group(0);
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(error) => return Ran::Unstartable(error.to_string()),
    };
    let group = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input closes the pipe: that is its business.
        let _ = stdin.write_all(input.as_bytes()).await;
    }
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => match output.status.code() {
            Some(code) => Ran::Exited(
                code,
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            ),
            None => Ran::Killed,
        },
        Ok(Err(error)) => Ran::Unstartable(error.to_string()),
        Err(_) => {
            #[cfg(unix)]
            if let Some(group) = group {
                agentry_plugin::process_group::kill_group_now(group as i32);
            }
            Ran::TimedOut(timeout)
        }
    }
}
