//! Support for the end-to-end tests: a mock model server ([`mock_model`]), the official
//! protocol peers ([`peers`]), and the real
//! `agentry` binary in a sandbox of its own (home,
//! config, data directory, project), scripts for the scripted model, and line-by-line reading of
//! a running child's output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod acp_process;
pub mod aws;
pub mod chat_events;
pub mod http;
pub mod mock_model;
pub mod otlp;
pub mod peers;
pub mod servers;
pub mod terminal_page;
pub mod tmux;
pub mod token_service;

/// The stock providers that build as plugins (each from its `agentry-NAME-plugin` crate;
/// `scripts/build-plugins` copies them to `target/plugins/libagentry_NAME.so`).
pub const STOCK_PLUGINS: [&str; 9] = [
    "file_ops",
    "bash",
    "builtin",
    "search",
    "webfetch",
    "http_tools",
    "fork",
    "skill",
    "mcp",
];

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// A home, config and data directory and a project directory, all temporary.
pub struct Sandbox {
    binary: PathBuf,
    root: tempfile::TempDir,
}

impl Sandbox {
    /// A fresh sandbox that runs `binary` (the test's `env!("CARGO_BIN_EXE_agentry")`).
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["home", "config", "data", "project"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        Self {
            binary: binary.into(),
            root,
        }
    }

    /// The project directory (the runs' working directory).
    pub fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// The session database.
    pub fn database(&self) -> PathBuf {
        self.root.path().join("data/sessions.db")
    }

    /// The user's config file (`$XDG_CONFIG_HOME/agentry/config.toml`).
    pub fn user_config(&self) -> PathBuf {
        self.root.path().join("config/agentry/config.toml")
    }

    /// Writes a file under the sandbox root and returns its path.
    pub fn write(&self, relative: &str, contents: &str) -> PathBuf {
        let path = self.root.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Writes a scripted-model script and returns its path.
    pub fn script(&self, name: &str, script: &Value) -> PathBuf {
        self.write(&format!("scripts/{name}.json"), &script.to_string())
    }

    /// The whole environment `agentry` runs with: `PATH`, a home, config and data directory of
    /// the sandbox's own, and the project trusted (`AGENTRY_TRUST`, as in a checkout of one's
    /// own; the tests of trust set it to `0`). The clouds' metadata services, which credential
    /// chains ask last, are off (AWS's and Google's by their variables; Azure's is looked for
    /// only on an Azure machine, and the tests that open Azure models without a service
    /// principal narrow the search with `AZURE_TOKEN_CREDENTIALS`), so no test reaches for an
    /// address off this machine.
    pub fn environment(&self) -> Vec<(String, PathBuf)> {
        vec![
            ("AGENTRY_TRUST".to_owned(), PathBuf::from("1")),
            (
                "AWS_EC2_METADATA_DISABLED".to_owned(),
                PathBuf::from("true"),
            ),
            ("NO_GCE_CHECK".to_owned(), PathBuf::from("True")),
            (
                "PATH".to_owned(),
                std::env::var_os("PATH").unwrap_or_default().into(),
            ),
            ("HOME".to_owned(), self.root.path().join("home")),
            (
                "XDG_CONFIG_HOME".to_owned(),
                self.root.path().join("config"),
            ),
            ("AGENTRY_DATA_DIR".to_owned(), self.root.path().join("data")),
        ]
    }

    /// Runs `agentry acp AGENT_ARGS` (with `env` added to the sandbox's environment) under the
    /// ACP test client: `client` gives the scenario's `steps` and, optionally,
    /// `clientCapabilities` and `permissions` (see `tests/peers/acp-client.mjs`).
    pub fn acp(
        &self,
        agent_args: &[&str],
        env: &[(&str, &str)],
        mut client: Value,
    ) -> peers::Transcript {
        client["agent"] = self.command_line(&["acp"], agent_args, env);
        peers::run_acp_client(&client, self.root.path(), Duration::from_secs(60))
    }

    /// Runs `agentry mcp serve ARGS` (with the sandbox's environment plus `env`) under the MCP
    /// test client, which plays `client["steps"]`.
    pub fn mcp_serve(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
        mut client: Value,
    ) -> peers::Transcript {
        client["server"] = self.command_line(&["mcp", "serve"], args, env);
        peers::run_mcp_client(&client, self.root.path(), Duration::from_secs(60))
    }

    /// How a test client starts `agentry COMMAND ARGS` in the project, with the sandbox's
    /// environment plus `env`.
    fn command_line(&self, command: &[&str], args: &[&str], env: &[(&str, &str)]) -> Value {
        let mut environment: serde_json::Map<String, Value> = self
            .environment()
            .into_iter()
            .map(|(name, value)| (name, Value::from(value.display().to_string())))
            .collect();
        for (name, value) in env {
            environment.insert((*name).to_owned(), Value::from(*value));
        }
        let args: Vec<&str> = command.iter().chain(args).copied().collect();
        serde_json::json!({
            "command": self.binary.display().to_string(),
            "args": args,
            "env": environment,
            "cwd": self.project().display().to_string(),
        })
    }

    /// `agentry ARGS` with the sandbox's environment, in the project directory.
    pub fn agentry(&self, args: &[impl AsRef<std::ffi::OsStr>]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(self.project())
            .env_clear()
            .envs(self.environment())
            .stdin(Stdio::null());
        command
    }

    /// Runs `agentry ARGS` to completion.
    pub fn run(&self, args: &[impl AsRef<std::ffi::OsStr>]) -> Outcome {
        Outcome::of(self.agentry(args))
    }

    /// Runs `agentry run --model scripted:SCRIPT ARGS` to completion.
    pub fn run_scripted(&self, script: &Path, args: &[&str]) -> Outcome {
        self.run(&scripted_run_args(script, args))
    }

    /// Starts `agentry run --model scripted:SCRIPT ARGS` with piped output.
    pub fn spawn_scripted(&self, script: &Path, args: &[&str]) -> Running {
        self.spawn(&scripted_run_args(script, args))
    }

    /// Runs `agentry ARGS` with extra environment variables.
    pub fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Outcome {
        let mut command = self.agentry(args);
        command.envs(env.iter().copied());
        Outcome::of(command)
    }

    /// Starts `agentry ARGS` with piped output, to read while it runs.
    pub fn spawn(&self, args: &[impl AsRef<std::ffi::OsStr>]) -> Running {
        self.spawn_with_env(args, &[])
    }

    /// Starts `agentry ARGS` with extra environment variables, as [`Sandbox::spawn`] does.
    pub fn spawn_with_env(
        &self,
        args: &[impl AsRef<std::ffi::OsStr>],
        env: &[(&str, &str)],
    ) -> Running {
        let mut child = self
            .agentry(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(line) => {
                        if sender.send(line).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        Running { child, lines }
    }
}

fn scripted_run_args(script: &Path, args: &[&str]) -> Vec<String> {
    [
        "run".to_owned(),
        "--model".to_owned(),
        format!("scripted:{}", script.display()),
    ]
    .into_iter()
    .chain(args.iter().map(|a| (*a).to_owned()))
    .collect()
}

/// A finished run.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Outcome {
    /// Runs a command to completion.
    pub fn of(mut command: Command) -> Self {
        let output = command.output().unwrap();
        Self {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    /// Standard output read as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {}", self.stdout))
    }

    /// Standard output read as JSON lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

/// A run in progress.
pub struct Running {
    /// The child process.
    pub child: Child,
    lines: Receiver<String>,
}

impl Running {
    /// Waits (at most 20 s) for a stdout line satisfying `pred` and returns it.
    pub fn wait_for_line(&self, pred: impl Fn(&str) -> bool) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .expect("no matching output line within 20 s");
            if pred(&line) {
                return line;
            }
        }
    }

    /// The remaining stdout lines, after the process ends.
    pub fn rest(&self) -> Vec<String> {
        self.lines.iter().collect()
    }

    /// Sends a signal to the process.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
    }

    /// Waits (at most 20 s) for the process to end.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        for _ in 0..2000 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("the process did not end within 20 s");
    }
}
