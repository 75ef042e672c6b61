//! An `agentry acp` process driven over raw JSON-RPC on stdio, as an editor drives it: for the
//! benchmarks and soak runs that measure the process from outside.

use crate::Sandbox;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// An `agentry acp` process and its pipes.
pub struct AcpProcess {
    /// The process.
    pub child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl AcpProcess {
    /// `agentry acp ARGS` in the sandbox, with `env` added.
    pub fn spawn(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = sb.agentry(&[&["acp"], args].concat());
        command.envs(env.iter().copied());
        Self::start(command)
    }

    /// Another ACP agent binary (a baseline), in the same sandbox environment.
    pub fn spawn_other(sb: &Sandbox, binary: &Path) -> Self {
        let mut command = Command::new(binary);
        command.envs(sb.environment()).current_dir(sb.project());
        Self::start(command)
    }

    /// Starts `command` with piped stdin and stdout (stderr discarded).
    pub fn start(mut command: Command) -> Self {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    /// Sends a request; calls `on_message` for each message until its response, which it returns.
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        mut on_message: impl FnMut(&Value),
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        loop {
            let line = self.lines.next().unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            on_message(&message);
        }
    }

    /// `initialize`, with no client capabilities.
    pub fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
            |_| {},
        )
    }

    /// `session/new` in `cwd`; the session's id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let response = self.request(
            "session/new",
            json!({"cwd": cwd.display().to_string(), "mcpServers": []}),
            |_| {},
        );
        response["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// The process's resident set, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for AcpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
