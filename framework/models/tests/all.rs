//! The HTTP model clients against mock servers speaking each API's wire format, and every
//! recorded stream of each format.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
