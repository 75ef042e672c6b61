//! End-to-end tests of the real `agentry` binary, compiled into one test binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod cli;
mod crash;
mod run;
