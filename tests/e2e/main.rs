//! End-to-end tests of the real `agentry` binary, compiled into one test binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry_tests::mock_model::MockModelServer;
use agentry_tests::{Outcome, Sandbox};

/// A sandbox running the `agentry` binary cargo built for this test.
fn sandbox() -> Sandbox {
    Sandbox::new(env!("CARGO_BIN_EXE_agentry"))
}

/// `agentry run --model openai/gpt-4.1 ARGS…` with the OpenAI client pointed at `server`.
fn run_openai(sb: &Sandbox, server: &MockModelServer, args: &[&str]) -> Outcome {
    let base = format!("{}/v1", server.url());
    let mut command = vec!["run", "--model", "openai/gpt-4.1"];
    command.extend_from_slice(args);
    sb.run_with_env(
        &command,
        &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
    )
}

mod acp;
mod cli;
mod crash;
mod mcp;
mod mcp_serve;
mod models;
mod plugins;
mod providers;
mod run;
