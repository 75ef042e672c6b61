//! Building a plugin crate with the system's cargo (`$CARGO`, else `cargo` on the `PATH`): a
//! crate of the registry is resolved and fetched by cargo, copied out of cargo's cache and built
//! there; a crate's folder is built where it is, in its own target folder. Cargo runs in the
//! folder it builds (the work folder for a registry's crate), never in the user's: a checkout's
//! `.cargo/config.toml` or `rust-toolchain.toml` must not choose what a registry install builds,
//! as they do not for `cargo install`. Cargo's own progress goes to stderr; the library comes
//! from its JSON messages, and must be in the build's target folder.

use super::error::InstallError;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::AsyncBufReadExt as _;

/// A crate to build: its manifest and name, and its version.
#[derive(Debug, Clone)]
pub struct CrateToBuild {
    /// Its `Cargo.toml`.
    pub manifest: PathBuf,
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its workspace's target folder (where cargo builds it without `--target-dir`).
    pub target_directory: PathBuf,
}

impl CrateToBuild {
    /// The folder cargo runs in for this crate: its own.
    fn folder(&self) -> &Path {
        self.manifest.parent().unwrap_or(Path::new("."))
    }
}

/// How to build.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildOptions<'a> {
    /// Without optimisations (cargo's dev profile) instead of the release profile.
    pub debug: bool,
    /// The target folder, when not the crate's own (cargo's `CARGO_TARGET_DIR` still wins).
    pub target_dir: Option<&'a Path>,
    /// Build with the crate's own `Cargo.lock` as it is (`--locked`).
    pub locked: bool,
}

/// The system's cargo.
fn cargo() -> tokio::process::Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = tokio::process::Command::new(program);
    command.kill_on_drop(true);
    command
}

/// Runs cargo with `args` in `dir` and returns its standard output; its standard error goes
/// to ours.
async fn run(args: &[&str], dir: &Path) -> Result<Vec<u8>, InstallError> {
    let mut command = cargo();
    command.args(args).stderr(Stdio::inherit()).current_dir(dir);
    let out = command
        .output()
        .await
        .map_err(|e| InstallError::Cargo(format!("cannot run cargo ({e}): is Rust installed?")))?;
    if !out.status.success() {
        return Err(InstallError::Cargo(format!(
            "`cargo {}` failed ({})",
            args.join(" "),
            out.status
        )));
    }
    Ok(out.stdout)
}

/// The platform cargo builds for by default (its host's), from `cargo -vV` in `dir`.
async fn host(dir: &Path) -> Result<String, InstallError> {
    let out = run(&["-vV"], dir).await?;
    String::from_utf8_lossy(&out)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| InstallError::Cargo("`cargo -vV` names no host".to_owned()))
}

/// The package `name` of `cargo metadata`'s answer for `manifest`, as a crate to build.
async fn package_of(
    manifest: &Path,
    name: Option<&str>,
    registry: bool,
) -> Result<CrateToBuild, InstallError> {
    let manifest_arg = manifest.to_string_lossy();
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let platform = host(dir).await?;
    let mut args = vec![
        "metadata",
        "--format-version",
        "1",
        "--manifest-path",
        &manifest_arg,
        "--filter-platform",
        &platform,
    ];
    if !registry {
        args.push("--no-deps");
    }
    let metadata: Value = serde_json::from_slice(&run(&args, dir).await?)
        .map_err(|e| InstallError::Cargo(format!("`cargo metadata` said no JSON ({e})")))?;
    let wanted = |package: &&Value| match name {
        Some(name) => package["name"] == name && package["source"].as_str().is_some() == registry,
        None => package["manifest_path"].as_str().map(Path::new) == Some(manifest),
    };
    let package = metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(wanted))
        .ok_or_else(|| {
            InstallError::Cargo(format!(
                "cargo found no package {} for {}",
                name.unwrap_or("at all"),
                manifest.display()
            ))
        })?;
    let text = |key: &str| package[key].as_str().unwrap_or_default().to_owned();
    Ok(CrateToBuild {
        manifest: PathBuf::from(text("manifest_path")),
        name: text("name"),
        version: text("version"),
        target_directory: PathBuf::from(metadata["target_directory"].as_str().unwrap_or_default()),
    })
}

/// The crate in the folder `folder`.
pub async fn crate_in(folder: &Path) -> Result<CrateToBuild, InstallError> {
    package_of(&folder.join("Cargo.toml"), None, false).await
}

/// Resolves `name` at `requirement` in the registry cargo uses, fetches it, and copies its
/// sources into `work` (cargo's cache is not built in). Returns the copy.
pub async fn fetch(
    name: &str,
    requirement: &str,
    work: &Path,
) -> Result<CrateToBuild, InstallError> {
    if !super::source::is_crate_name(name) || semver::VersionReq::parse(requirement).is_err() {
        return Err(InstallError::Source(format!(
            "`{name}` at `{requirement}` is not a crate and a version requirement"
        )));
    }
    let resolver = work.join("resolve");
    std::fs::create_dir_all(&resolver).map_err(InstallError::io(&resolver))?;
    let manifest = format!(
        "[package]\nname = \"agentry-plugin-install\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n{name} = \"{requirement}\"\n\n[workspace]\n"
    );
    for (file, text) in [("Cargo.toml", manifest.as_str()), ("lib.rs", "")] {
        let path = resolver.join(file);
        std::fs::write(&path, text).map_err(InstallError::io(&path))?;
    }
    let found = package_of(&resolver.join("Cargo.toml"), Some(name), true).await?;
    let cached = found
        .manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let copy = work.join("source");
    copy_tree(&cached, &copy)?;
    Ok(CrateToBuild {
        manifest: copy.join("Cargo.toml"),
        ..found
    })
}

/// Copies the folder `from` to `to`: its folders and regular files; links and special files
/// (a FIFO, a device) are left out, so a crate's sources cannot reach outside themselves.
fn copy_tree(from: &Path, to: &Path) -> Result<(), InstallError> {
    std::fs::create_dir_all(to).map_err(InstallError::io(to))?;
    for entry in std::fs::read_dir(from).map_err(InstallError::io(from))? {
        let entry = entry.map_err(InstallError::io(from))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(InstallError::io(&source))?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target).map_err(InstallError::io(&source))?;
        }
    }
    Ok(())
}

/// Builds `krate`'s library and returns the plugin library it made.
pub async fn build(
    krate: &CrateToBuild,
    options: BuildOptions<'_>,
) -> Result<PathBuf, InstallError> {
    let manifest = krate.manifest.to_string_lossy();
    let mut command = cargo();
    command.current_dir(krate.folder()).args([
        "build",
        "--lib",
        "--message-format=json-render-diagnostics",
        "--manifest-path",
        &manifest,
        "--package",
        &format!("{}@{}", krate.name, krate.version),
    ]);
    if !options.debug {
        command.arg("--release");
    }
    if options.locked {
        command.arg("--locked");
    }
    let target_root = match (std::env::var_os("CARGO_TARGET_DIR"), options.target_dir) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(dir)) => {
            command.arg("--target-dir").arg(dir);
            dir.to_path_buf()
        }
        (None, None) => krate.target_directory.clone(),
    };
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| InstallError::Cargo(format!("cannot run cargo ({e}): is Rust installed?")))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(InstallError::Cargo(
            "cargo's output was not kept".to_owned(),
        ));
    };
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let mut library = None;
    // What rustc prints passes through cargo's output as it is (a proc macro can print a line
    // that looks like cargo's): the last word on the crate's library, in the target folder,
    // is cargo's own.
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(message) = serde_json::from_str::<Value>(&line)
            && let Some(file) = plugin_library(&message, &krate.manifest)
        {
            library = Some(file);
        }
    }
    let status = child
        .wait()
        .await
        .map_err(|e| InstallError::Cargo(format!("cargo did not finish ({e})")))?;
    if !status.success() {
        return Err(InstallError::Cargo(format!(
            "building {} {} failed ({status}): cargo said why above",
            krate.name, krate.version
        )));
    }
    let library = library
        .ok_or_else(|| InstallError::NoLibrary(format!("{} {}", krate.name, krate.version)))?;
    let inside = |path: &Path| std::fs::canonicalize(path).ok();
    match (inside(&library), inside(&target_root)) {
        (Some(file), Some(root)) if file.starts_with(&root) => Ok(file),
        _ => Err(InstallError::Cargo(format!(
            "cargo named {} as the library built, which is not in the build's target folder {}",
            library.display(),
            target_root.display()
        ))),
    }
}

/// The shared library a `compiler-artifact` message of `manifest`'s `cdylib` names.
fn plugin_library(message: &Value, manifest: &Path) -> Option<PathBuf> {
    let is_ours = message["reason"] == "compiler-artifact"
        && message["manifest_path"].as_str().map(Path::new) == Some(manifest)
        && message["target"]["crate_types"]
            .as_array()
            .is_some_and(|types| types.iter().any(|t| t == "cdylib"));
    if !is_ours {
        return None;
    }
    message["filenames"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(PathBuf::from)
        .find(|file| {
            file.extension()
                .is_some_and(|ext| ext == "so" || ext == "dylib" || ext == "dll")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_library_is_the_cdylib_of_the_crate_built() {
        let manifest = Path::new("/src/my-plugin/Cargo.toml");
        let artifact = |manifest: &str, types: Value, files: Value| {
            json!({"reason": "compiler-artifact", "manifest_path": manifest,
                   "target": {"crate_types": types}, "filenames": files})
        };
        let ours = artifact(
            "/src/my-plugin/Cargo.toml",
            json!(["cdylib", "rlib"]),
            json!(["/t/libmy_plugin.rlib", "/t/libmy_plugin.so"]),
        );
        assert_eq!(
            plugin_library(&ours, manifest),
            Some(PathBuf::from("/t/libmy_plugin.so"))
        );
        let a_dependency = artifact(
            "/registry/serde/Cargo.toml",
            json!(["cdylib"]),
            json!(["/t/libserde.so"]),
        );
        assert_eq!(plugin_library(&a_dependency, manifest), None);
        let only_rlib = artifact(
            "/src/my-plugin/Cargo.toml",
            json!(["rlib"]),
            json!(["/t/libmy_plugin.rlib"]),
        );
        assert_eq!(plugin_library(&only_rlib, manifest), None);
        let finished = json!({"reason": "build-finished", "success": true});
        assert_eq!(plugin_library(&finished, manifest), None);
    }
}
