//! The README's team agent cannot drift: its code is `examples/readme_agent.rs` (which the
//! workspace compiles), and the `Cargo.toml` shown beside it lists every crate the code uses.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeSet;
use std::path::Path;

/// The README's "Using the framework" section.
fn section() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme.find("## Using the framework").unwrap();
    let end = readme[start + 1..]
        .find("\n## ")
        .map_or(readme.len(), |at| start + 1 + at);
    readme[start..end].to_owned()
}

/// The first fenced block of `language` in `text`.
fn block(text: &str, language: &str) -> String {
    let fence = format!("```{language}\n");
    let start = text.find(&fence).unwrap() + fence.len();
    let end = start + text[start..].find("```\n").unwrap();
    text[start..end].to_owned()
}

#[test]
fn the_readme_shows_the_compiled_example() {
    let example =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("readme_agent.rs"))
            .unwrap();
    assert_eq!(
        block(&section(), "rust"),
        example,
        "README.md's agent differs from examples/readme_agent.rs: make them the same"
    );
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
    let code = block(&section, "rust");
    let used: BTreeSet<String> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .filter_map(|word| word.split_once("::").map(|(first, _)| first.to_owned()))
        .filter(|first| !first.is_empty() && first.chars().all(|c| c.is_lowercase() || c == '_'))
        .filter(|first| !["std", "crate", "self", "super"].contains(&first.as_str()))
        .collect();
    let missing: Vec<&String> = used.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "the README's Cargo.toml lacks {missing:?}"
    );
    assert!(
        used.contains("anyhow") && used.contains("tokio"),
        "{used:?}"
    );
}
