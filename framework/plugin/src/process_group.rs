//! Stopping a process group: a command and everything it started, as a cancelled tool call or
//! a front-end's own shell command must leave nothing behind. On Unix the group is a process
//! group (the command started with `process_group(0)`); on Windows, the process tree rooted at
//! the command's process, stopped with `taskkill /T`.

use std::time::Duration;

/// Stops the process group `group`: SIGTERM, then SIGKILL after `grace` if anything is left (on
/// Windows: asks the tree to close, then ends it after `grace`).
pub async fn stop_group(group: i32, grace: Duration) {
    platform::stop(group, grace).await;
}

/// Kills the process group `group` at once.
pub fn kill_group_now(group: i32) {
    platform::kill_now(group);
}

#[cfg(unix)]
mod platform {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    use std::time::Duration;

    pub async fn stop(group: i32, grace: Duration) {
        let pgid = Pid::from_raw(group);
        if killpg(pgid, Signal::SIGTERM).is_err() {
            return; // The group is already gone.
        }
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline {
            // Signal 0 checks whether any member is left.
            if killpg(pgid, None).is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let _ = killpg(pgid, Signal::SIGKILL);
    }

    pub fn kill_now(group: i32) {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

#[cfg(windows)]
mod platform {
    use std::process::Stdio;
    use std::time::Duration;

    /// `taskkill /T /PID ROOT` (with `/F`: forced), quietly; whether it found the tree.
    async fn taskkill(root: i32, forced: bool) -> bool {
        let mut command = tokio::process::Command::new("taskkill");
        command.args(["/T", "/PID", &root.to_string()]);
        if forced {
            command.arg("/F");
        }
        command.stdout(Stdio::null()).stderr(Stdio::null());
        command.status().await.is_ok_and(|status| status.success())
    }

    pub async fn stop(root: i32, grace: Duration) {
        // Console programs ignore the request to close: what is left after `grace` is ended.
        taskkill(root, false).await;
        tokio::time::sleep(grace).await;
        taskkill(root, true).await;
    }

    pub fn kill_now(root: i32) {
        let _ = std::process::Command::new("taskkill")
            .args(["/T", "/F", "/PID", &root.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
