//! `!command`: a shell command the user runs directly, in the session's folder. Its output is
//! shown in the conversation and goes to the model with the next message, as Claude Code's
//! bash mode does. Ctrl-C stops it and everything it started.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// The most output kept of a command.
const KEPT_BYTES: usize = 64 * 1024;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRun {
    /// The command.
    pub command: String,
    /// Its output (standard output and error, interleaved), cut to its last 64 KiB.
    pub output: String,
    /// Its exit code; `None` when a signal ended it or it was stopped.
    pub exit_code: Option<i32>,
    /// Whether the user stopped it.
    pub stopped: bool,
}

impl ShellRun {
    /// What the model reads of it with the next message.
    pub fn for_model(&self) -> String {
        let ending = match (self.stopped, self.exit_code) {
            (true, _) => "stopped by the user".to_owned(),
            (false, Some(code)) => format!("exit code {code}"),
            (false, None) => "killed by a signal".to_owned(),
        };
        format!(
            "<bash-input>{}</bash-input>\n<bash-output>{}</bash-output>\n<bash-exit>{ending}</bash-exit>",
            self.command,
            self.output.trim_end()
        )
    }
}

/// Runs `command` with `sh -c` in `cwd`, until it ends or `stop` fires.
pub async fn run(command: &str, cwd: &Path, stop: CancellationToken) -> std::io::Result<ShellRun> {
    let mut shell = tokio::process::Command::new("sh");
    shell
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    // Its own process group, which stopping it stops whole.
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = shell.spawn()?;
    let group = child.id().map(|pid| pid as i32);
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no output pipe"))?;
    let mut output = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut stopped = false;
    loop {
        tokio::select! {
            read = stdout.read(&mut chunk) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    output.extend_from_slice(&chunk[..n]);
                    if output.len() > 2 * KEPT_BYTES {
                        output.drain(..output.len() - KEPT_BYTES);
                    }
                }
            },
            () = stop.cancelled() => {
                stopped = true;
                break;
            }
        }
    }
    if let (Some(group), true) = (group, stopped) {
        agentry_plugin::process_group::stop_group(group, Duration::from_millis(500)).await;
    }
    let status = child.wait().await?;
    if output.len() > KEPT_BYTES {
        output.drain(..output.len() - KEPT_BYTES);
    }
    Ok(ShellRun {
        command: command.to_owned(),
        output: agentry_plugin::terminal_text::plain_text(&output),
        exit_code: if stopped { None } else { status.code() },
        stopped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_and_exit_code_are_kept_for_the_model() {
        let dir = std::env::temp_dir();
        let run = run(
            "echo out; echo err >&2; exit 3",
            &dir,
            CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(run.output, "out\nerr\n");
        assert_eq!(run.exit_code, Some(3));
        assert!(
            run.for_model()
                .contains("<bash-exit>exit code 3</bash-exit>")
        );
    }

    #[tokio::test]
    async fn a_stopped_command_leaves_no_process_behind() {
        let dir = std::env::temp_dir();
        let marker = format!("agentry-shell-{}", std::process::id());
        let stop = CancellationToken::new();
        let stopper = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stopper.cancel();
        });
        let command = format!("sleep 3017 & sleep 3018; echo {marker}");
        let run = run(&command, &dir, stop).await.unwrap();
        assert!(run.stopped);
        let sleeping = |seconds: &str| {
            std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
                std::fs::read(entry.path().join("cmdline"))
                    .is_ok_and(|cmdline| cmdline == format!("sleep\0{seconds}\0").as_bytes())
            })
        };
        assert!(
            !sleeping("3017") && !sleeping("3018"),
            "a process was left running"
        );
    }
}
