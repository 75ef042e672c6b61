//! Background commands: `run_in_background`, **TaskOutput** (alias `BashOutput`) and
//! **TaskStop** (alias `KillShell`). Each command's whole output also goes to a file in the
//! session's temporary folder, and the model is told when a command it has not waited for ends.

use crate::ShellConfig;
use crate::output::{OutputFile, ShellOutput};
use crate::process::{Running, spawn};
use crate::sandbox::Confinement;
use crate::session::{BackgroundShell, ShellSession, lock};
use agentry_plugin::process_group::stop_group;
use agentry_plugin::tool::{Notices, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Starts a command in the background and registers it with the session.
pub(crate) fn start(
    shell: &Arc<ShellSession>,
    command: &str,
    cwd: &Path,
    confinement: Option<&Confinement>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let running = spawn(command, cwd, confinement).map_err(ToolError::failed)?;
    if let Some(reason) = &running.unsandboxed {
        shell.tell_unsandboxed_once(reason, ctx);
    }
    let id = shell.next_id();
    let log_path = shell.temp_file(&format!("{id}.output.txt"));
    let log = log_path
        .as_deref()
        .and_then(|path| OutputFile::create(path).ok());
    let log_path = log_path.filter(|_| log.is_some());
    let state = Arc::new(Mutex::new(ShellOutput {
        log,
        ..ShellOutput::default()
    }));
    let stop = CancellationToken::new();
    let ended = CancellationToken::new();
    let group = running.group;
    let watcher = Watcher {
        state: state.clone(),
        stop: stop.clone(),
        ended: ended.clone(),
        notices: ctx.state.notices().clone(),
        id: id.clone(),
        command: command.to_owned(),
    };
    tokio::spawn(watcher.follow(running));
    lock(&shell.background).insert(
        id.clone(),
        BackgroundShell {
            command: command.to_owned(),
            group,
            state,
            stop,
            ended,
            log_path: log_path.clone(),
        },
    );
    let saved = log_path
        .map(|path| format!(" Its whole output also goes to {}.", path.display()))
        .unwrap_or_default();
    Ok(ToolOutput::text(format!(
        "Started {id} in the background. TaskOutput (task_id: \"{id}\") waits for it and reads \
         its output; TaskStop stops it. You will be told when it ends.{saved}"
    ))
    .with_raw_output(serde_json::json!({"task_id": id})))
}

/// Follows one background command.
struct Watcher {
    state: Arc<Mutex<ShellOutput>>,
    stop: CancellationToken,
    ended: CancellationToken,
    notices: Notices,
    id: String,
    command: String,
}

impl Watcher {
    /// Collects the command's output until it ends (then tells the model) or is stopped.
    async fn follow(self, mut running: Running) {
        let mut reading = true;
        loop {
            tokio::select! {
                chunk = running.output.recv(), if reading => match chunk {
                    Some(bytes) => lock(&self.state).take(&bytes),
                    None => reading = false,
                },
                code = &mut running.exit => {
                    let code = code.ok().flatten();
                    // Read what is left, briefly: a grandchild may still hold the terminal.
                    let deadline = tokio::time::Instant::now() + Duration::from_millis(200);
                    while let Ok(Some(bytes)) = tokio::time::timeout_at(deadline, running.output.recv()).await {
                        lock(&self.state).take(&bytes);
                    }
                    self.finish(code);
                    return;
                }
                () = self.stop.cancelled() => return,
            }
        }
    }

    fn finish(self, code: Option<i32>) {
        {
            let mut state = lock(&self.state);
            state.exit = Some(code);
            if let Some(log) = &mut state.log
                && !log.flush()
            {
                state.log = None;
            }
        }
        let command: String = self.command.chars().take(200).collect();
        self.notices.post(
            self.id.clone(),
            format!(
                "Background command {} (`{command}`) {}. Read its output with TaskOutput \
                 (task_id: \"{}\").",
                self.id,
                ending(Some(code)),
                self.id
            ),
        );
        self.ended.cancel();
    }
}

/// How a background command stands, in words.
fn ending(exit: Option<Option<i32>>) -> String {
    match exit {
        None => "is still running".to_owned(),
        Some(Some(code)) => format!("exited with code {code}"),
        Some(None) => "was killed by a signal".to_owned(),
    }
}

/// Waits for a background command and reads its new output.
#[derive(Debug, Clone)]
pub struct TaskOutput {
    config: ShellConfig,
}

impl TaskOutput {
    /// The tool with these limits.
    pub fn new(config: ShellConfig) -> Self {
        Self { config }
    }
}

/// TaskOutput's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-agentry-aliases" = {
    "bash_id": {"field": "task_id", "defaults": {"block": false}},
    "shell_id": "task_id"
}))]
pub struct TaskOutputInput {
    /// The command's task id, from Bash with run_in_background.
    pub task_id: String,
    /// Wait for the command to end (or the timeout to pass) before answering (default true).
    #[serde(default = "yes")]
    pub block: bool,
    /// How long to wait, in milliseconds (default 30000, at most 600000).
    #[schemars(range(min = 0, max = 600_000))]
    pub timeout: Option<u64>,
    /// Only lines matching this regular expression (the others are discarded).
    pub filter: Option<String>,
}

fn yes() -> bool {
    true
}

/// How long TaskOutput waits when the model gives no timeout.
const DEFAULT_WAIT: Duration = Duration::from_millis(30_000);
/// The longest TaskOutput waits.
const MAX_WAIT: Duration = Duration::from_millis(600_000);

impl Tool for TaskOutput {
    type Input = TaskOutputInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TaskOutput"
    }

    fn aliases(&self) -> Vec<String> {
        vec!["BashOutput".to_owned()]
    }

    fn description(&self) -> String {
        "Reads a background command's output since the last read, and whether it is still \
         running. By default it first waits until the command ends or `timeout` passes; \
         `block: false` answers at once. `filter` keeps only matching lines."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }

    fn title(&self, input: &TaskOutputInput) -> String {
        format!("Output of {}", input.task_id)
    }

    async fn call(
        &self,
        input: TaskOutputInput,
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
        // The lookup's guard must be gone before `unknown_task` locks the map again.
        let found = lock(&shell.background)
            .get(&input.task_id)
            .map(|s| (s.state.clone(), s.ended.clone(), s.log_path.clone()));
        let (state, ended, log_path) = found.ok_or_else(|| unknown_task(&shell, &input.task_id))?;
        if input.block {
            let wait = input
                .timeout
                .map_or(DEFAULT_WAIT, Duration::from_millis)
                .min(MAX_WAIT);
            tokio::select! {
                () = ended.cancelled() => {}
                () = tokio::time::sleep(wait) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
        }
        let (mut unread, exit) = {
            let mut state = lock(&state);
            if let Some(log) = &mut state.log
                && !log.flush()
            {
                state.log = None;
            }
            (std::mem::take(&mut state.unread), state.exit)
        };
        if exit.is_some() {
            // Told here: the notice would say it again.
            ctx.state.notices().withdraw(&input.task_id);
        }
        let mut text = unread.for_model(self.config.max_output_chars);
        if let Some(filter) = filter {
            text = text
                .lines()
                .filter(|l| filter.is_match(l))
                .map(|l| format!("{l}\n"))
                .collect();
        }
        let body = if text.is_empty() {
            "(no new output)".to_owned()
        } else {
            text
        };
        let saved = log_path
            .map(|path| format!("; its whole output is in {}", path.display()))
            .unwrap_or_default();
        let status = ending(exit);
        Ok(ToolOutput::text(format!(
            "{}\n[{} {status}{saved}]",
            body.trim_end_matches('\n'),
            input.task_id
        ))
        .with_raw_output(serde_json::json!({
            "task_id": input.task_id,
            "status": if exit.is_some() { "completed" } else { "running" },
            "exit_code": exit.flatten(),
            "new_bytes": unread.total_bytes(),
        })))
    }
}

/// Stops a background command.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStop;

/// TaskStop's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-agentry-aliases" = {"shell_id": "task_id", "bash_id": "task_id"}))]
pub struct TaskStopInput {
    /// The command's task id, from Bash with run_in_background.
    pub task_id: String,
}

impl Tool for TaskStop {
    type Input = TaskStopInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "TaskStop"
    }

    fn aliases(&self) -> Vec<String> {
        vec!["KillShell".to_owned()]
    }

    fn description(&self) -> String {
        "Stops a background command and every process it started.".to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    fn title(&self, input: &TaskStopInput) -> String {
        format!("Stop {}", input.task_id)
    }

    async fn call(&self, input: TaskStopInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let shell = ShellSession::of(&ctx);
        let removed = lock(&shell.background).remove(&input.task_id);
        let removed = removed.ok_or_else(|| unknown_task(&shell, &input.task_id))?;
        removed.stop.cancel();
        ctx.state.notices().withdraw(&input.task_id);
        let exit = lock(&removed.state).exit;
        // Even after the command ended, what it left running in its group is stopped.
        stop_group(removed.group, ShellConfig::default().kill_grace).await;
        let what = match exit {
            Some(_) => format!("{} had already ended: it {}", input.task_id, ending(exit)),
            None => format!("Stopped {}", input.task_id),
        };
        Ok(ToolOutput::text(format!("{what} ({}).", removed.command)))
    }
}

/// A task id that names no background command of the session.
fn unknown_task(shell: &ShellSession, id: &str) -> ToolError {
    let known: Vec<String> = lock(&shell.background).keys().cloned().collect();
    ToolError::failed(if known.is_empty() {
        format!("There is no background command `{id}`: none was started in this session.")
    } else {
        format!(
            "There is no background command `{id}`; there are: {}.",
            known.join(", ")
        )
    })
}
