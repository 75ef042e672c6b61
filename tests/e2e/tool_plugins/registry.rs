//! A local cargo registry for the tests of `agentry plugins install CRATE`, made from this
//! checkout and cargo's own cache, so that nothing leaves the machine: `agentry-plugin`,
//! `agentry-plugin-abi` and `agentry-plugin-hello` packaged as `cargo package` makes them for
//! crates.io, and every crate they depend on on this platform, as cargo downloaded it for the
//! workspace's build. Cargo's `[source]` replacement points crates.io at it.
//!
//! The index is written from `cargo metadata --filter-platform` (the registry index's format:
//! <https://doc.rust-lang.org/cargo/reference/registry-index.html>): a dependency only another
//! platform uses is left out of its dependent's entry, since its sources were never downloaded.

use crate::repository;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment cargo needs under the sandbox's (whose `HOME` is its own): the toolchain,
/// this run's cargo, no network, and the cheapest builds.
pub fn toolchain_env() -> Vec<(String, String)> {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut env = vec![
        ("CARGO_NET_OFFLINE".to_owned(), "true".to_owned()),
        // Builds made once and thrown away: no incremental caches, no debug info (what the
        // test run's own build does; cargo's settings override each crate's profile).
        ("CARGO_INCREMENTAL".to_owned(), "0".to_owned()),
        ("CARGO_PROFILE_DEV_DEBUG".to_owned(), "false".to_owned()),
        (
            "RUSTUP_HOME".to_owned(),
            std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup")),
        ),
    ];
    for name in ["CARGO", "RUSTUP_TOOLCHAIN"] {
        if let Ok(value) = std::env::var(name) {
            env.push((name.to_owned(), value));
        }
    }
    env
}

/// The cargo home the workspace's build downloaded into.
pub fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo"))
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    command.env("CARGO_NET_OFFLINE", "true");
    command
}

fn output(command: &mut Command) -> Vec<u8> {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The SHA-256 of `bytes`, in lowercase hexadecimal.
pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Where a crate's entry goes in the index (`se/rd/serde`, `3/s/syn`, `2/qu`, `1/a`).
fn index_path(name: &str) -> PathBuf {
    let name = name.to_lowercase();
    match name.len() {
        1 => PathBuf::from("1").join(&name),
        2 => PathBuf::from("2").join(&name),
        3 => PathBuf::from("3").join(&name[..1]).join(&name),
        _ => PathBuf::from(&name[..2]).join(&name[2..4]).join(&name),
    }
}

/// Makes the local registry in `dir` and a cargo home whose configuration puts it in place of
/// crates.io. Returns the cargo home.
pub fn make(dir: &Path) -> PathBuf {
    let registry = dir.join("registry");
    let seed = dir.join("seed");
    std::fs::create_dir_all(seed.join("src")).unwrap();
    std::fs::write(seed.join("src/lib.rs"), "").unwrap();
    let hello = repository().join("examples/plugin-hello");
    std::fs::write(
        seed.join("Cargo.toml"),
        format!(
            "[package]\nname = \"seed\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\nagentry-plugin-hello = {{ path = \"{}\" }}\n\n[workspace]\n",
            hello.display()
        ),
    )
    .unwrap();
    // The workspace's versions of everything.
    std::fs::copy(repository().join("Cargo.lock"), seed.join("Cargo.lock")).unwrap();
    let host = String::from_utf8(output(cargo().arg("-vV")))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .unwrap();
    let metadata: Value = serde_json::from_slice(&output(
        cargo()
            .args([
                "metadata",
                "--format-version",
                "1",
                "--filter-platform",
                &host,
            ])
            .arg("--manifest-path")
            .arg(seed.join("Cargo.toml")),
    ))
    .unwrap();
    // The checkout's crates, packaged as for crates.io.
    let packaged = dir.join("packaged");
    output(
        cargo()
            .args(["package", "--no-verify", "--allow-dirty", "--quiet"])
            .args([
                "-p",
                "agentry-plugin",
                "-p",
                "agentry-plugin-abi",
                "-p",
                "agentry-plugin-hello",
            ])
            .arg("--target-dir")
            .arg(&packaged)
            .current_dir(repository()),
    );
    let packages: Vec<&Value> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|package| package["name"] != "seed")
        .collect();
    let present: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let downloads = cargo_home().join("registry/cache");
    for package in &packages {
        let (name, version) = (
            package["name"].as_str().unwrap(),
            package["version"].as_str().unwrap(),
        );
        let file_name = format!("{name}-{version}.crate");
        let crate_file = if package["source"].is_null() {
            packaged.join("package").join(&file_name)
        } else {
            std::fs::read_dir(&downloads)
                .unwrap()
                .map(|entry| entry.unwrap().path().join(&file_name))
                .find(|path| path.exists())
                .unwrap_or_else(|| panic!("{file_name} is not in cargo's cache"))
        };
        let copy = registry.join(&file_name);
        std::fs::create_dir_all(&registry).unwrap();
        std::fs::copy(&crate_file, &copy).unwrap();
        let entry = index_entry(package, &present, &sha256(&std::fs::read(&copy).unwrap()));
        let path = registry.join("index").join(index_path(name));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut lines = std::fs::read_to_string(&path).unwrap_or_default();
        lines.push_str(&format!("{entry}\n"));
        std::fs::write(&path, lines).unwrap();
    }
    let home = dir.join("cargo-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"this-checkout\"\n\n[source.this-checkout]\nlocal-registry = \"{}\"\n\n[net]\noffline = true\n",
            registry.display()
        ),
    )
    .unwrap();
    home
}

/// A package's index entry, without the dependencies not in `present` (another platform's).
fn index_entry(package: &Value, present: &BTreeSet<&str>, cksum: &str) -> Value {
    let mut kept_names = BTreeSet::new();
    let mut dropped_names = BTreeSet::new();
    let mut deps = Vec::new();
    for dep in package["dependencies"].as_array().unwrap() {
        let name = dep["name"].as_str().unwrap();
        let used_as = dep["rename"].as_str().unwrap_or(name);
        if dep["kind"] == "dev" || !present.contains(name) {
            dropped_names.insert(used_as.to_owned());
            continue;
        }
        kept_names.insert(used_as.to_owned());
        let mut entry = json!({
            "name": used_as,
            "req": dep["req"],
            "features": dep["features"],
            "optional": dep["optional"],
            "default_features": dep["uses_default_features"],
            "target": dep["target"],
            "kind": dep["kind"].as_str().unwrap_or("normal"),
        });
        if dep["rename"].is_string() {
            entry["package"] = json!(name);
        }
        deps.push(entry);
    }
    let dropped: BTreeSet<&String> = dropped_names.difference(&kept_names).collect();
    let own_features = package["features"].as_object().unwrap();
    // `dep:X`, `X/feature`, `X?/feature`, or `X` for an optional dependency (not a feature).
    let names_a_dropped_dependency = |value: &str| {
        let dependency = match (value.split_once('/'), value.strip_prefix("dep:")) {
            (Some((dependency, _)), _) => dependency.trim_end_matches('?'),
            (None, Some(dependency)) => dependency,
            (None, None) if !own_features.contains_key(value) => value,
            (None, None) => return false,
        };
        dropped.iter().any(|name| name.as_str() == dependency)
    };
    let features: serde_json::Map<String, Value> = own_features
        .iter()
        .map(|(feature, enables)| {
            let kept: Vec<&Value> = enables
                .as_array()
                .unwrap()
                .iter()
                .filter(|value| !names_a_dropped_dependency(value.as_str().unwrap()))
                .collect();
            (feature.clone(), json!(kept))
        })
        .collect();
    json!({
        "name": package["name"],
        "vers": package["version"],
        "deps": deps,
        "cksum": cksum,
        "features": {},
        "features2": features,
        "v": 2,
        "yanked": false,
        "links": package["links"],
        "rust_version": package["rust_version"],
    })
}
