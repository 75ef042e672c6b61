//! The book's agents cannot drift: the smallest agent's code in "Building your own agent" is
//! `examples/smallest_agent.rs` and the team agent's `examples/readme_agent.rs` (which the
//! workspace compiles), the smallest stays within 25 lines, and the `Cargo.toml` shown lists
//! every crate either uses.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeSet;
use std::path::Path;

/// The book's chapter "Building your own agent".
fn section() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join("docs/book/src/building-your-own-agent.md")).unwrap()
}

/// The fenced blocks of `language` in `text`, in order.
fn blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&fence) {
        let start = at + fence.len();
        let end = start + rest[start..].find("```\n").unwrap();
        found.push(rest[start..end].to_owned());
        rest = &rest[end..];
    }
    found
}

/// The first fenced block of `language` in `text`.
fn block(text: &str, language: &str) -> String {
    blocks(text, language).remove(0)
}

/// An example's source.
fn example(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

#[test]
fn the_readme_shows_the_compiled_examples() {
    let shown = blocks(&section(), "rust");
    assert_eq!(
        shown[0],
        example("smallest_agent.rs"),
        "the book's smallest agent differs from examples/smallest_agent.rs: make them the same"
    );
    assert_eq!(
        shown[1],
        example("readme_agent.rs"),
        "the book's team agent differs from examples/readme_agent.rs: make them the same"
    );
}

#[test]
fn the_smallest_agent_is_at_most_25_lines() {
    let lines = example("smallest_agent.rs").lines().count();
    assert!(lines <= 25, "examples/smallest_agent.rs has {lines} lines");
}

#[test]
fn the_readme_cargo_toml_lists_every_crate_the_agent_uses() {
    let section = section();
    let manifest: toml::Table = block(&section, "toml").parse().unwrap();
    let listed: BTreeSet<String> = manifest["dependencies"]
        .as_table()
        .unwrap()
        .keys()
        .map(|name| name.replace('-', "_"))
        .collect();
    let code = blocks(&section, "rust").concat();
    let used: BTreeSet<String> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .filter_map(|word| word.split_once("::").map(|(first, _)| first.to_owned()))
        .filter(|first| !first.is_empty() && first.chars().all(|c| c.is_lowercase() || c == '_'))
        .filter(|first| !["std", "crate", "self", "super"].contains(&first.as_str()))
        .collect();
    let missing: Vec<&String> = used.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "the book's Cargo.toml lacks {missing:?}"
    );
    assert!(
        used.contains("anyhow") && used.contains("tokio"),
        "{used:?}"
    );
}
