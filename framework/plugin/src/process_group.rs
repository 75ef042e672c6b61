//! Stopping a process group: a command and everything it started, as a cancelled tool call or
//! a front-end's own shell command must leave nothing behind.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::time::Duration;

/// Stops the process group `group`: SIGTERM, then SIGKILL after `grace` if anything is left.
pub async fn stop_group(group: i32, grace: Duration) {
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

/// Kills the process group `group` at once.
pub fn kill_group_now(group: i32) {
    let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
}
