//! WebFetch against a local site on 127.0.0.1: the fetcher (`fetch`) and the tool through the
//! executor (`tool`).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod fetch;
mod site;
mod tool;
