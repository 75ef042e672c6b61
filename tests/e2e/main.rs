//! End-to-end tests of the real `agentry` binary, compiled into one test binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry_tests::Sandbox;

/// A sandbox running the `agentry` binary cargo built for this test.
fn sandbox() -> Sandbox {
    Sandbox::new(env!("CARGO_BIN_EXE_agentry"))
}

mod cli;
mod crash;
mod models;
mod plugins;
mod providers;
mod run;
