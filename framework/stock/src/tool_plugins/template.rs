//! `agentry plugins new NAME`: a plugin crate that builds, tests and installs as it is — one
//! tool, its test, and the `export_plugin!` line — to grow from.

use super::error::InstallError;
use super::source::is_crate_name;
use std::path::{Path, PathBuf};

/// The version requirement of agentry's crates a new plugin depends on: this agentry's minor
/// series, whose plugin ABI it speaks.
const AGENTRY_REQUIREMENT: &str = concat!(
    "^",
    env!("CARGO_PKG_VERSION_MAJOR"),
    ".",
    env!("CARGO_PKG_VERSION_MINOR")
);

/// Writes a new plugin crate named `name` into the folder `folder` (which must not exist, or be
/// empty). Returns the files written.
pub fn write(folder: &Path, name: &str) -> Result<Vec<PathBuf>, InstallError> {
    if !is_crate_name(name) {
        return Err(InstallError::Source(format!(
            "`{name}` cannot be a crate's name: ASCII letters, digits, - and _, a letter first"
        )));
    }
    // The folder is new, or empty: nothing of the user's is ever written over (each file is
    // made new, never opened if it exists).
    let empty = std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::read_dir(folder))
        .map(|mut entries| entries.next().is_none());
    match empty {
        Ok(true) => {}
        Ok(false) => {
            return Err(InstallError::Source(format!(
                "{}: the folder already holds files; a new plugin goes into a new folder",
                folder.display()
            )));
        }
        Err(e) => return Err(InstallError::io(folder)(e)),
    }
    let files = [
        ("Cargo.toml", manifest(name)),
        ("src/lib.rs", library(name)),
        (".gitignore", "/target\n".to_owned()),
    ];
    let mut written = Vec::new();
    for (relative, text) in files {
        let path = folder.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(InstallError::io(parent))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(InstallError::io(&path))?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(InstallError::io(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// The crate's `Cargo.toml`.
fn manifest(name: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
rust-version = "1.95"
description = "Tools for agentry agents."

[lib]
# cdylib: the plugin library agentry loads (`agentry plugins install .`).
crate-type = ["cdylib"]

[dependencies]
agentry-plugin = "{AGENTRY_REQUIREMENT}"
agentry-plugin-abi = "{AGENTRY_REQUIREMENT}"
schemars = "1"
serde = {{ version = "1", features = ["derive"] }}

[dev-dependencies]
tokio = {{ version = "1", features = ["macros", "rt"] }}
"#
    )
}

/// The crate's `src/lib.rs`: one tool, exported, and its test.
fn library(name: &str) -> String {
    format!(
        r#"//! {name}: an agentry tool plugin. Install it with `agentry plugins install .`; the tools
//! it exports are offered to the model beside agentry's own, through the same permissions.

use agentry_plugin::provider::SimpleProvider;
use agentry_plugin::tool::{{ToolContext, ToolError, ToolKind, tool_fn}};

/// What the model gives the `CountLetters` tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct CountLettersInput {{
    /// The text whose letters to count.
    pub text: String,
}}

/// Counts the letters of a text (a tool of kind `think`: it reads nothing and changes nothing,
/// so it needs no permission).
pub async fn count_letters(
    input: CountLettersInput,
    _context: ToolContext,
) -> Result<String, ToolError> {{
    let letters = input.text.chars().filter(|c| c.is_alphabetic()).count();
    Ok(format!("{{letters}} letters"))
}}

agentry_plugin_abi::export_plugin!(
    SimpleProvider::new("{provider}", "Tools of the {name} plugin.").with_tool(tool_fn(
        "CountLetters",
        "Counts the letters of a text.",
        ToolKind::Think,
        count_letters
    ))
);

#[cfg(test)]
mod tests {{
    use super::*;

    #[tokio::test]
    async fn counts_only_letters() {{
        let input = CountLettersInput {{
            text: "Hello, world! 42".to_owned(),
        }};
        let answer = count_letters(input, ToolContext::standalone(".")).await;
        assert_eq!(answer.ok().as_deref(), Some("10 letters"));
    }}
}}
"#,
        provider = name.replace('-', "_")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_plugin_is_written_into_an_empty_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("my-tools");
        let written = write(&folder, "my-tools").unwrap();
        assert_eq!(written.len(), 3);
        let manifest: toml::Table = std::fs::read_to_string(folder.join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(manifest["package"]["name"].as_str(), Some("my-tools"));
        assert_eq!(
            manifest["dependencies"]["agentry-plugin"].as_str(),
            Some(AGENTRY_REQUIREMENT)
        );
        let source = std::fs::read_to_string(folder.join("src/lib.rs")).unwrap();
        assert!(
            source.contains(r#"SimpleProvider::new("my_tools""#),
            "{source}"
        );
        let again = write(&folder, "my-tools").unwrap_err().to_string();
        assert!(again.contains("already holds files"), "{again}");
        let bad = write(&dir.path().join("x"), "my tools")
            .unwrap_err()
            .to_string();
        assert!(bad.contains("cannot be a crate's name"), "{bad}");
    }
}
