//! **Bash**: one command in a real terminal, with a timeout, streamed output and a persistent
//! working directory.

use crate::NAME;
use crate::ShellConfig;
use crate::background;
use crate::client_terminal::{self, ClientCommand};
use crate::exit_code::Ending;
use crate::exit_code::{self, Meaning};
use crate::output::Captured;
use crate::process::{Running, spawn};
use crate::rules;
use crate::sandbox::{Confinement, explain_refusal};
use crate::session::ShellSession;
use agentry_plugin::paths::canonical_path;
use agentry_plugin::process_group::stop_group;
use agentry_plugin::tool::{
    RulePatterns, RuleSubjects, Tool, ToolCallLocation, ToolContent, ToolContext, ToolError,
    ToolKind, ToolOutput, ToolProgress,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// How long to keep reading output after the command has been stopped or has exited.
const DRAIN: Duration = Duration::from_millis(200);
/// How often the front-end gets the output so far.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// How much output a progress update shows.
const PROGRESS_CHARS: usize = 4_000;

/// Runs a shell command.
#[derive(Debug, Clone)]
pub struct Bash {
    config: ShellConfig,
}

impl Bash {
    /// The tool with these limits.
    pub fn new(config: ShellConfig) -> Self {
        Self { config }
    }
}

/// Bash's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command (run with `bash -c`).
    pub command: String,
    /// The timeout in milliseconds (default 120000, at most 600000).
    #[schemars(range(min = 1, max = 600_000))]
    pub timeout: Option<u64>,
    /// What the command does, in 5–10 words (shown to the user).
    pub description: Option<String>,
    /// Start it in the background and return at once with a task id (wait for it and read its
    /// output with TaskOutput, stop it with TaskStop).
    #[serde(default)]
    pub run_in_background: bool,
    /// Run the command outside the sandbox, where it may write anywhere and use the network.
    /// Only after the sandbox refused something the command needs: the user is asked first.
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: bool,
}

/// How much output a client terminal keeps for the model (its oldest bytes go first).
const CLIENT_OUTPUT_BYTES: u64 = 1024 * 1024;

impl Tool for Bash {
    type Input = BashInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> String {
        let mut description = "Runs a shell command with `bash -c` in a terminal. The working \
             directory carries over to the next command (a `cd` sticks); environment changes do \
             not. Output is cut to 30,000 characters (start and end kept; the whole output is \
             saved to a file you can Read). Use run_in_background for servers, watchers and long \
             builds, then TaskOutput and TaskStop. Prefer Read, Glob and Grep over cat, find and \
             grep."
            .to_owned();
        if let Some(limits) = self.sandbox_limits() {
            description.push_str(&format!(
                " Commands run in a sandbox: {limits}. When the sandbox refuses something a \
                 command needs, the result says what; run it again with \
                 dangerouslyDisableSandbox: true, and the user is asked to allow it."
            ));
        }
        description
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    /// The command itself, whole, then the model's description of it: what the user is asked
    /// about is what runs, whatever the model says it does.
    fn title(&self, input: &BashInput) -> String {
        let command = input.command.trim();
        let title = match input
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            Some(description) => format!("{command} — {description}"),
            None => command.to_owned(),
        };
        match self.escalation(input) {
            Some(_) => format!("{title} (outside the sandbox)"),
            None => title,
        }
    }

    /// Asking to run outside the sandbox always asks the user, even where this tool's own
    /// setting has no sandbox: the session may have chosen one.
    fn escalation(&self, input: &BashInput) -> Option<String> {
        input
            .dangerously_disable_sandbox
            .then(|| "run outside the sandbox".to_owned())
    }

    /// `Bash(git status)` matches that exact command, `Bash(cargo test:*)` every command that
    /// starts with `cargo test`, `Bash(npm run * --silent)` with `*` for any text; each is
    /// matched against every simple command of the line, as bash's grammar reads it.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::Own
    }

    fn check_rule_pattern(&self, pattern: &str) -> Result<(), String> {
        rules::check(pattern)
    }

    fn rule_subjects(&self, input: &BashInput) -> RuleSubjects {
        rules::subjects(&input.command)
    }

    /// The files the command's redirections write (`> out.txt`), which `Edit(…)` rules judge.
    fn locations(&self, input: &BashInput, cwd: &Path) -> Vec<ToolCallLocation> {
        rules::written_files(&input.command, cwd)
            .into_iter()
            .map(ToolCallLocation::path)
            .collect()
    }

    fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
        rules::matches(pattern, subject)
    }

    async fn call(&self, input: BashInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let shell = ShellSession::of(&ctx);
        let cwd = shell.cwd(&ctx.cwd);
        // Its writes were judged as paths in the folder it was prepared in; another command
        // may have moved the shell since.
        if canonical_path(&cwd) != canonical_path(&ctx.cwd)
            && rules::writes_relative_paths(&input.command)
        {
            return Err(ToolError::failed(format!(
                "The command writes to a relative path, but the shell moved to {} after its \
                 permission to write was judged for {}: run it again, or write the path whole.",
                cwd.display(),
                ctx.cwd.display()
            )));
        }
        let sandbox = &self.config.sandbox;
        let confinement = if input.dangerously_disable_sandbox {
            None
        } else {
            sandbox.confinement(
                sandbox.mode_for(&ctx),
                &ctx.workspace_roots,
                shell.temp_dir(),
            )
        };
        let command = with_session_env(&input.command, &ctx.state);
        if input.run_in_background {
            return background::start(&shell, &command, &cwd, confinement.as_ref(), &ctx);
        }
        let timeout = Duration::from_millis(
            input
                .timeout
                .unwrap_or(self.config.default_timeout.as_millis() as u64),
        )
        .min(self.config.max_timeout);
        let terminal_id = format!("term_{}", ctx.tool_call_id);
        let cwd_file = shell.temp_file(&format!("{terminal_id}.cwd"));
        let script = remembering_cwd(&command, cwd_file.as_deref());
        // Output beyond what the model is shown is kept whole in a file it can read.
        let captured = match shell.temp_file(&format!("{terminal_id}.output.txt")) {
            Some(file) => Captured::spilling_to(file, self.config.max_output_chars as u64),
            None => Captured::default(),
        };
        if let Some(terminals) = &ctx.client.terminals {
            let command = ClientCommand {
                script,
                cwd: &cwd,
                timeout,
                output_byte_limit: CLIENT_OUTPUT_BYTES,
            };
            let mut run = client_terminal::run(terminals, command, captured, &ctx).await?;
            if let (Ending::Exited(_), Some(file)) = (&run.ending, &cwd_file) {
                shell.take_cwd_from(file, &ctx.state);
            }
            return self.result(
                &input.command,
                run.ending,
                &mut run.captured,
                run.terminal_id,
                timeout,
                None,
            );
        }
        let mut running = spawn(&script, &cwd, confinement.as_ref()).map_err(ToolError::failed)?;
        if let Some(reason) = &running.unsandboxed {
            shell.tell_unsandboxed_once(reason, &ctx);
        }
        // Only a command the sandbox confined can have been refused by it.
        let confinement = confinement.filter(|_| running.unsandboxed.is_none());
        ctx.progress
            .report(ToolProgress::Content(vec![ToolContent::Terminal {
                terminal_id: terminal_id.clone(),
            }]));
        let mut captured = captured;
        let ending = watch(&mut running, &mut captured, timeout, &ctx, &terminal_id).await;
        stop_group(running.group, self.config.kill_grace).await;
        if !matches!(ending, Ending::Exited(_)) {
            // Reap the child: it exits once its group is killed.
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut running.exit).await;
        }
        drain(&mut running, &mut captured).await;
        if let (Ending::Exited(_), Some(file)) = (&ending, &cwd_file) {
            shell.take_cwd_from(file, &ctx.state);
        }
        let refused = confinement
            .as_ref()
            .map(|confinement| (confinement, cwd.as_path()));
        self.result(
            &input.command,
            ending,
            &mut captured,
            terminal_id,
            timeout,
            refused,
        )
    }
}

impl Bash {
    /// What the sandbox allows, for the model, when it is on.
    fn sandbox_limits(&self) -> Option<String> {
        let sandbox = &self.config.sandbox;
        let writes = match sandbox.mode {
            crate::SandboxMode::Off => return None,
            crate::SandboxMode::WorkspaceWrite => {
                "they may write only in the workspace and the temporary folder"
            }
            crate::SandboxMode::ReadOnly => "they may not write files",
        };
        let network = if sandbox.network {
            "may use the network"
        } else {
            "have no network"
        };
        Some(format!("{writes}, and {network}"))
    }

    /// The call's result; `confined`: the sandbox the command ran in and where, whose
    /// refusals a failure explains.
    fn result(
        &self,
        command: &str,
        ending: Ending,
        captured: &mut Captured,
        terminal_id: String,
        timeout: Duration,
        confined: Option<(&Confinement, &Path)>,
    ) -> Result<ToolOutput, ToolError> {
        let mut text = captured.for_model(self.config.max_output_chars);
        if text.is_empty() {
            text = "(no output)".to_owned();
        }
        if let Ending::Exited(Some(code)) = ending
            && code != 0
            && let Some((confinement, cwd)) = confined
            && let Some(note) = explain_refusal(&text, cwd, confinement)
        {
            text = format!("{}\n{note}", text.trim_end_matches('\n'));
        }
        let output = |status: &str| ToolOutput {
            content: vec![
                ToolContent::Terminal {
                    terminal_id: terminal_id.clone(),
                },
                ToolContent::text(text.clone()),
            ],
            raw_output: Some(serde_json::json!({
                "status": status,
                "output_bytes": captured.total_bytes(),
                "terminal_id": terminal_id,
            })),
            for_model: Some(text.clone()),
        };
        match ending {
            Ending::Exited(Some(code)) => {
                let mut done = output("exited");
                if let Some(raw) = &mut done.raw_output {
                    raw["exit_code"] = code.into();
                }
                let text = text.trim_end_matches('\n');
                match exit_code::meaning(command, code) {
                    Meaning::Success => {
                        done.for_model = Some(format!("{text}\nExit code 0"));
                        Ok(done)
                    }
                    Meaning::Answer(answer) => {
                        done.for_model = Some(format!("{text}\nExit code {code} ({answer})"));
                        Ok(done)
                    }
                    Meaning::Failure => {
                        done.for_model = Some(text.to_owned());
                        Err(ToolError::Failed {
                            message: format!("Exit code {code}"),
                            output: Some(done),
                        })
                    }
                }
            }
            Ending::Exited(None) => Err(ToolError::Failed {
                message: "[the command was killed by a signal]".to_owned(),
                output: Some(output("killed")),
            }),
            Ending::TimedOut => Err(ToolError::Failed {
                message: format!(
                    "[timed out after {} ms: the command and every process it started were stopped]",
                    timeout.as_millis()
                ),
                output: Some(output("timed_out")),
            }),
            Ending::Cancelled => Err(ToolError::Cancelled),
        }
    }
}

/// Waits for the command to exit, time out or be cancelled, collecting output and reporting
/// progress meanwhile.
async fn watch(
    running: &mut Running,
    captured: &mut Captured,
    timeout: Duration,
    ctx: &ToolContext,
    terminal_id: &str,
) -> Ending {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    let mut reported = 0u64;
    let mut reading = true;
    loop {
        tokio::select! {
            chunk = running.output.recv(), if reading => match chunk {
                Some(bytes) => captured.push(&bytes),
                None => reading = false,
            },
            code = &mut running.exit => return Ending::Exited(code.ok().flatten()),
            () = &mut deadline => return Ending::TimedOut,
            () = ctx.cancel.cancelled() => return Ending::Cancelled,
            _ = ticks.tick() => {
                if captured.total_bytes() != reported {
                    reported = captured.total_bytes();
                    ctx.progress.report(ToolProgress::Content(vec![
                        ToolContent::Terminal { terminal_id: terminal_id.to_owned() },
                        ToolContent::text(captured.tail_text(PROGRESS_CHARS)),
                    ]));
                    ctx.progress.report(ToolProgress::RawOutput(serde_json::json!({
                        "output_lines": captured.total_lines(),
                        "output_bytes": captured.total_bytes(),
                    })));
                }
            }
        }
    }
}

/// Reads what is left of the output, for a short while (a grandchild may hold the terminal).
async fn drain(running: &mut Running, captured: &mut Captured) {
    let deadline = tokio::time::Instant::now() + DRAIN;
    while let Ok(Some(bytes)) = tokio::time::timeout_at(deadline, running.output.recv()).await {
        captured.push(&bytes);
    }
}

/// The command after the session's environment file, when hooks wrote one
/// ([`SessionState::env_file`](agentry_plugin::tool::SessionState::env_file)): its `export`
/// lines count for the command.
fn with_session_env(command: &str, state: &agentry_plugin::tool::SessionState) -> String {
    let env_file = state.env_file().ok().filter(|file| file.is_file());
    match env_file {
        Some(file) => format!(
            ". '{}'\n{command}",
            file.display().to_string().replace('\'', r"'\''")
        ),
        None => command.to_owned(),
    }
}

/// The command, noting the directory it ends in (its exit code preserved) when the shell exits:
/// set before the command, so that neither an `exit` nor a here-document left open at its end
/// skips the note or reads it as its own text.
fn remembering_cwd(command: &str, cwd_file: Option<&Path>) -> String {
    match cwd_file {
        Some(file) => format!(
            "__agentry_note_cwd() {{ __agentry_status=$?; pwd -P >| '{}' 2>/dev/null; exit $__agentry_status; }}\ntrap __agentry_note_cwd EXIT\n{command}\n",
            file.display().to_string().replace('\'', r"'\''")
        ),
        None => command.to_owned(),
    }
}
