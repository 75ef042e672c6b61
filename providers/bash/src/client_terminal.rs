//! Bash in the front-end client's terminal (ACP's `terminal/*`): the editor runs and shows the
//! command; agentry waits for it, stops it on timeout or cancellation, and reads its output.

use crate::exit_code::Ending;
use crate::output::Captured;
use agentry_plugin::tool::{
    ClientTerminals, TerminalCommand, ToolContent, ToolContext, ToolError, ToolProgress,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long a stopped command gets to report its end.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What a command run in a client terminal left.
pub(crate) struct ClientRun {
    /// The client's terminal id.
    pub terminal_id: String,
    /// How it ended.
    pub ending: Ending,
    /// Its output.
    pub captured: Captured,
}

/// A script for a client terminal.
pub(crate) struct ClientCommand<'a> {
    /// What `bash -c` runs.
    pub script: String,
    /// Where.
    pub cwd: &'a Path,
    /// How long it may take.
    pub timeout: Duration,
    /// The most output the client keeps.
    pub output_byte_limit: u64,
}

/// Runs a script in a new client terminal; its output goes to `captured`.
pub(crate) async fn run(
    terminals: &Arc<dyn ClientTerminals>,
    command: ClientCommand<'_>,
    mut captured: Captured,
    ctx: &ToolContext,
) -> Result<ClientRun, ToolError> {
    let timeout = command.timeout;
    let command = TerminalCommand {
        command: "bash".to_owned(),
        args: vec!["-c".to_owned(), command.script],
        cwd: command.cwd.to_path_buf(),
        output_byte_limit: Some(command.output_byte_limit),
    };
    let terminal_id = terminals
        .create(command)
        .await
        .map_err(|e| ToolError::failed(format!("the editor could not start the command: {e}")))?;
    ctx.progress
        .report(ToolProgress::Content(vec![ToolContent::Terminal {
            terminal_id: terminal_id.clone(),
        }]));
    let ending = tokio::select! {
        exit = terminals.wait_for_exit(terminal_id.clone()) => match exit {
            Ok(exit) => Ending::Exited(exit.exit_code),
            Err(message) => {
                release(terminals, &terminal_id).await;
                return Err(ToolError::failed(format!("the editor lost the command: {message}")));
            }
        },
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
        () = ctx.cancel.cancelled() => Ending::Cancelled,
    };
    if !matches!(ending, Ending::Exited(_)) {
        if let Err(message) = terminals.kill(terminal_id.clone()).await {
            tracing::warn!("terminal/kill failed: {message}");
        }
        let _ =
            tokio::time::timeout(STOP_GRACE, terminals.wait_for_exit(terminal_id.clone())).await;
    }
    match terminals.output(terminal_id.clone()).await {
        Ok(text) => captured.push(text.as_bytes()),
        Err(message) => tracing::warn!("terminal/output failed: {message}"),
    }
    release(terminals, &terminal_id).await;
    Ok(ClientRun {
        terminal_id,
        ending,
        captured,
    })
}

async fn release(terminals: &Arc<dyn ClientTerminals>, terminal_id: &str) {
    if let Err(message) = terminals.release(terminal_id.to_owned()).await {
        tracing::warn!("terminal/release failed: {message}");
    }
}
