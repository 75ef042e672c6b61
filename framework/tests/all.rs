//! The framework's behaviour tests, compiled into one binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
