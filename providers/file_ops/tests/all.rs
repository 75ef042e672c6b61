//! The file tools, called through agentry's executor.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
