//! Background shells: `run_in_background`, **BashOutput** and **KillShell**.

use crate::ShellConfig;
use crate::output::Captured;
use crate::process::{Running, spawn, stop_group};
use crate::session::{BackgroundShell, ShellSession, lock};
use agentry::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// What a background shell has produced since it was last read.
#[derive(Default)]
pub(crate) struct ShellOutput {
    unread: Captured,
    /// `Some(code)` once it has ended (`Some(None)`: killed by a signal).
    exit: Option<Option<i32>>,
}

/// Starts a command in the background and registers it with the session.
pub(crate) fn start(
    shell: &Arc<ShellSession>,
    command: &str,
    cwd: &Path,
) -> Result<ToolOutput, ToolError> {
    let running = spawn(command, cwd).map_err(ToolError::failed)?;
    let id = shell.next_id();
    let state = Arc::new(Mutex::new(ShellOutput::default()));
    let stop = CancellationToken::new();
    let group = running.group;
    tokio::spawn(follow(running, state.clone(), stop.clone()));
    lock(&shell.background).insert(
        id.clone(),
        BackgroundShell {
            command: command.to_owned(),
            group,
            state,
            stop,
        },
    );
    Ok(ToolOutput::text(format!(
        "Started background shell {id}. Read its new output with BashOutput (bash_id: \"{id}\"); stop it with KillShell (shell_id: \"{id}\")."
    ))
    .with_raw_output(serde_json::json!({"shell_id": id})))
}

/// Collects a background command's output until it ends or is stopped.
async fn follow(mut running: Running, state: Arc<Mutex<ShellOutput>>, stop: CancellationToken) {
    let mut reading = true;
    loop {
        tokio::select! {
            chunk = running.output.recv(), if reading => match chunk {
                Some(bytes) => lock(&state).unread.push(&bytes),
                None => reading = false,
            },
            code = &mut running.exit => {
                lock(&state).exit = Some(code.ok().flatten());
                // Read what is left, briefly: a grandchild may still hold the terminal.
                let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(200);
                while let Ok(Some(bytes)) = tokio::time::timeout_at(deadline, running.output.recv()).await {
                    lock(&state).unread.push(&bytes);
                }
                return;
            }
            () = stop.cancelled() => return,
        }
    }
}

/// Reads a background shell's new output.
#[derive(Debug, Clone)]
pub struct BashOutput {
    config: ShellConfig,
}

impl BashOutput {
    /// The tool with these limits.
    pub fn new(config: ShellConfig) -> Self {
        Self { config }
    }
}

/// BashOutput's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashOutputInput {
    /// The shell's id, from Bash with run_in_background.
    pub bash_id: String,
    /// Only lines matching this regular expression (the others are discarded).
    pub filter: Option<String>,
}

impl Tool for BashOutput {
    type Input = BashOutputInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "BashOutput"
    }

    fn description(&self) -> String {
        "Returns a background shell's output since the last read, and whether it is still \
         running; `filter` keeps only matching lines."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn title(&self, input: &BashOutputInput) -> String {
        format!("Output of {}", input.bash_id)
    }

    async fn call(
        &self,
        input: BashOutputInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let filter = input
            .filter
            .as_deref()
            .map(regex::Regex::new)
            .transpose()
            .map_err(|e| {
                ToolError::InvalidInput(format!("the filter is not a valid regex: {e}"))
            })?;
        let shell = ShellSession::of(&ctx);
        // The lookup's guard must be gone before `unknown_shell` locks the map again.
        let found = lock(&shell.background)
            .get(&input.bash_id)
            .map(|s| s.state.clone());
        let state = found.ok_or_else(|| unknown_shell(&shell, &input.bash_id))?;
        let (unread, exit) = {
            let mut state = lock(&state);
            (std::mem::take(&mut state.unread), state.exit)
        };
        let mut text = unread.for_model(self.config.max_output_chars);
        if let Some(filter) = filter {
            text = text
                .lines()
                .filter(|l| filter.is_match(l))
                .map(|l| format!("{l}\n"))
                .collect();
        }
        let status = match exit {
            None => "running".to_owned(),
            Some(Some(code)) => format!("exited with code {code}"),
            Some(None) => "killed by a signal".to_owned(),
        };
        let body = if text.is_empty() {
            "(no new output)".to_owned()
        } else {
            text
        };
        Ok(ToolOutput::text(format!(
            "{}\n[{} is {status}]",
            body.trim_end_matches('\n'),
            input.bash_id
        ))
        .with_raw_output(serde_json::json!({"status": status, "new_bytes": unread.total_bytes()})))
    }
}

/// Stops a background shell.
#[derive(Debug, Clone, Copy, Default)]
pub struct KillShell;

/// KillShell's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillShellInput {
    /// The shell's id, from Bash with run_in_background.
    pub shell_id: String,
}

impl Tool for KillShell {
    type Input = KillShellInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "KillShell"
    }

    fn description(&self) -> String {
        "Stops a background shell and every process it started.".to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn title(&self, input: &KillShellInput) -> String {
        format!("Stop {}", input.shell_id)
    }

    async fn call(&self, input: KillShellInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let shell = ShellSession::of(&ctx);
        let removed = lock(&shell.background).remove(&input.shell_id);
        let removed = removed.ok_or_else(|| unknown_shell(&shell, &input.shell_id))?;
        removed.stop.cancel();
        stop_group(removed.group, ShellConfig::default().kill_grace).await;
        Ok(ToolOutput::text(format!(
            "Stopped {} ({}).",
            input.shell_id, removed.command
        )))
    }
}

fn unknown_shell(shell: &ShellSession, id: &str) -> ToolError {
    let known: Vec<String> = lock(&shell.background).keys().cloned().collect();
    ToolError::failed(if known.is_empty() {
        format!("There is no background shell `{id}`: none is running in this session.")
    } else {
        format!(
            "There is no background shell `{id}`; running: {}.",
            known.join(", ")
        )
    })
}
