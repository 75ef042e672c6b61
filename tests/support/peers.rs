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
