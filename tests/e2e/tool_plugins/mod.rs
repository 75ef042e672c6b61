//! `agentry plugins`: native tool plugins installed from a crate's folder, from a registry (a
//! local one this test makes: nothing leaves the machine), from a built library and from a
//! loopback URL with its checksum; listed, updated and removed; a new plugin crate that builds,
//! tests and installs as it is; and libraries of another ABI refused without being loaded.

mod registry;

use crate::{repository, sandbox};
use agentry_tests::Sandbox;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Runs `agentry ARGS` with the toolchain's environment, a shared target folder and `env`.
fn agentry(
    sb: &Sandbox,
    args: &[&str],
    target: &Path,
    env: &[(&str, &str)],
) -> agentry_tests::Outcome {
    let mut all: Vec<(String, String)> = registry::toolchain_env();
    all.push(("CARGO_TARGET_DIR".to_owned(), target.display().to_string()));
    all.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let borrowed: Vec<(&str, &str)> = all.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    sb.run_with_env(args, &borrowed)
}

/// The sandbox's data folder.
fn data(sb: &Sandbox) -> PathBuf {
    sb.database().parent().unwrap().to_path_buf()
}

fn installed(sb: &Sandbox) -> Vec<Value> {
    let out = sb.run(&["plugins", "list", "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json().as_array().unwrap().clone()
}

/// The `hello` provider's row of `agentry providers --json`, if it is offered.
fn hello_provider(sb: &Sandbox) -> Option<Value> {
    let out = sb.run(&["providers", "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "hello")
        .cloned()
}

#[test]
fn a_plugin_installs_from_its_folder_a_registry_and_a_url_and_is_updated_and_removed() {
    // Its builds yield the processors to the tests beside it (see .config/nextest.toml).
    let pid = std::process::id().to_string();
    let reniced = std::process::Command::new("renice")
        .args(["-n", "10", "-p", &pid])
        .output()
        .unwrap();
    assert!(reniced.status.success(), "{reniced:?}");
    let sb = sandbox();
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let cargo_home = registry::cargo_home().display().to_string();
    let real_home = [("CARGO_HOME", cargo_home.as_str())];

    // From the crate's folder, built with the system's cargo.
    let folder = repository()
        .join("examples/plugin-hello")
        .canonicalize()
        .unwrap();
    let out = agentry(
        &sb,
        &["plugins", "install", folder.to_str().unwrap(), "--debug"],
        &target,
        &real_home,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.starts_with("Installed agentry-plugin-hello 0.1.0 (plugin ABI 1.2, for agentry >=0.1.0, <0.2.0) from crate in "),
        "{}",
        out.stdout
    );
    let listed = installed(&sb);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["source"], json!({"kind": "path", "path": folder}));
    assert_eq!(listed[0]["abi"], "1.2");
    assert_eq!(listed[0]["intact"], true);
    let file = PathBuf::from(listed[0]["file"].as_str().unwrap());
    assert!(
        file.starts_with(data(&sb).join("plugins/agentry-plugin-hello")),
        "{file:?}"
    );
    let provider = hello_provider(&sb).expect("the installed plugin's provider is offered");
    assert_eq!(provider["origin"], json!({"kind": "plugin", "path": file}));
    let built = std::fs::read(&file).unwrap();
    let right = registry::sha256(&built);
    assert_eq!(listed[0]["sha256"], right.as_str());

    // From a registry: crates.io replaced by a local registry of this checkout's crates. The
    // folder it is run in has cargo settings that would break any build they reach, and a
    // folder of the crate's name: neither has a say in what a registry install builds.
    sb.write(
        "project/.cargo/config.toml",
        "[build]\nrustc-wrapper = \"/bin/false\"\n",
    );
    sb.write(
        "project/agentry-plugin-hello/Cargo.toml",
        "[package]\nname = \"impostor\"\nversion = \"6.6.6\"\n",
    );
    let home = registry::make(work.path());
    let home = home.display().to_string();
    let local = [("CARGO_HOME", home.as_str())];
    let out = agentry(
        &sb,
        &[
            "plugins",
            "install",
            "agentry-plugin-hello",
            "--version",
            "0.1.0",
            "--debug",
        ],
        &target,
        &local,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "from crate agentry-plugin-hello =0.1.0, in place of the build from crate in {}",
            folder.display()
        )),
        "{}",
        out.stdout
    );
    let listed = installed(&sb);
    assert_eq!(
        listed[0]["source"],
        json!({"kind": "crate", "name": "agentry-plugin-hello", "requirement": "=0.1.0"})
    );
    let out = agentry(&sb, &["plugins", "update"], &target, &local);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "agentry-plugin-hello 0.1.0 is up to date\n");
    assert!(hello_provider(&sb).is_some());

    // From a loopback URL: with a wrong checksum nothing changes; with the right one it installs.
    let served = built.clone();
    let router = axum::Router::new().route(
        "/libagentry_plugin_hello.so",
        axum::routing::get(move || {
            let body = served.clone();
            async move { body }
        }),
    );
    let address = agentry_tests::http::serve_on_own_thread(router);
    let url = format!("http://{address}/libagentry_plugin_hello.so");
    let wrong = "0".repeat(64);
    let out = sb.run(&["plugins", "install", &url, "--sha256", &wrong]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "its SHA-256 is {right}, not the {wrong} given with --sha256: nothing installed"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(installed(&sb)[0]["source"]["kind"], "crate");
    let mut leftovers: Vec<String> = std::fs::read_dir(data(&sb).join("plugins"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    leftovers.sort();
    assert_eq!(
        leftovers,
        [".lock", "agentry-plugin-hello", "installed.json"],
        "the download was left behind"
    );
    let out = sb.run(&["plugins", "install", &url]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("needs --sha256"), "{}", out.stderr);
    let out = sb.run(&[
        "plugins",
        "install",
        &url,
        "--sha256",
        &right.to_uppercase(),
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "from {url}, in place of the build from crate agentry-plugin-hello =0.1.0"
        )),
        "{}",
        out.stdout
    );
    let out = sb.run(&["plugins", "update", "agentry-plugin-hello"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("pinned by its checksum"),
        "{}",
        out.stderr
    );

    // A file changed behind its back is shown as such.
    std::fs::write(&file, b"not the library").unwrap();
    let out = sb.run(&["plugins", "list"]);
    assert!(
        out.stdout.contains("changed since it was installed"),
        "{}",
        out.stdout
    );

    // Removed: its record and its folder go, and its tools with them.
    let out = sb.run(&["plugins", "remove", "agentry-plugin-hello"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Removed agentry-plugin-hello 0.1.0\n");
    assert!(installed(&sb).is_empty());
    assert!(!file.parent().unwrap().exists());
    assert!(hello_provider(&sb).is_none());
    let out = sb.run(&["plugins", "remove", "agentry-plugin-hello"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("no tool plugin named `agentry-plugin-hello` is installed"),
        "{}",
        out.stderr
    );

    // A new plugin crate: it tests and installs as it is (its dependencies from the registry).
    let crate_dir = work.path().join("my-tools");
    let out = sb.run(&[
        "plugins",
        "new",
        "my-tools",
        "--path",
        crate_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let mut test =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    test.args(["test", "--quiet"])
        .current_dir(&crate_dir)
        .envs(registry::toolchain_env())
        .env("CARGO_HOME", &home)
        .env("CARGO_TARGET_DIR", &target);
    let tested = test.output().unwrap();
    assert!(
        tested.status.success(),
        "{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(
        String::from_utf8_lossy(&tested.stdout).contains("1 passed"),
        "{tested:?}"
    );
    let out = agentry(
        &sb,
        &["plugins", "install", crate_dir.to_str().unwrap(), "--debug"],
        &target,
        &local,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with("Installed my-tools 0.1.0 (plugin ABI 1.2"),
        "{}",
        out.stdout
    );
    let script = sb.script(
        "count",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c", "name": "CountLetters", "arguments": {"text": "Hello, world! 42"}}}]},
            {"events": [{"text": "done"}]}
        ]}),
    );
    let out = sb.run_scripted(&script, &["--output-format", "stream-json", "count"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let done = out
        .json_lines()
        .into_iter()
        .find(|e| e["type"] == "tool_call_update" && e["status"] == "completed")
        .unwrap_or_else(|| panic!("the call did not complete: {}", out.stdout));
    assert!(done.to_string().contains("10 letters"), "{done}");
}

#[test]
fn a_library_of_another_abi_or_none_declared_is_not_installed_nor_loaded() {
    let sb = sandbox();
    let fixtures = tempfile::tempdir().unwrap();
    let mark = fixtures.path().join("loaded");
    let mark_env = [("AGENTRY_TEST_LOADED_MARK", mark.to_str().unwrap())];
    let declared =
        crate::plugins::broken(fixtures.path(), "abi2", "DECLARED_ABI=\"2.0\" ABI_MAJOR=2");
    let out = sb.run_with_env(
        &["plugins", "install", declared.to_str().unwrap()],
        &mark_env,
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("built for plugin ABI 2.0 (agentry-plugin 9.9.9")
            && out.stderr.contains("but this agentry speaks ABI 1.2"),
        "{}",
        out.stderr
    );
    let undeclared = crate::plugins::broken(fixtures.path(), "old", "ABI_MAJOR=1");
    let out = sb.run_with_env(
        &["plugins", "install", undeclared.to_str().unwrap()],
        &mark_env,
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("declares no plugin ABI"),
        "{}",
        out.stderr
    );
    // Removing by a name that climbs out of the plugins folder removes nothing.
    let keep = sb.write("data/keep.txt", "kept");
    let out = sb.run(&["plugins", "remove", ".."]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("no tool plugin named `..` is installed"),
        "{}",
        out.stderr
    );
    assert!(keep.exists());
    // A manifest pointing at a library elsewhere loads nothing.
    let elsewhere = fixtures.path().join("libelsewhere.so");
    std::fs::copy(&declared, &elsewhere).unwrap();
    sb.write(
        "data/plugins/installed.json",
        &json!({"plugins": [{"name": "x", "version": "1.0.0", "source": {"kind": "library", "path": elsewhere},
            "abi": "1.2", "agentry": ">=0.1.0, <0.2.0", "sha256": "00", "file": elsewhere}]})
        .to_string(),
    );
    let out = sb.run_with_env(&["providers"], &mark_env);
    assert!(
        out.stderr
            .contains("the installed tool plugins are not loaded")
            && out.stderr.contains("is not a plugin agentry installed"),
        "{}",
        out.stderr
    );
    std::fs::remove_file(data(&sb).join("plugins/installed.json")).unwrap();
    let text = sb.write("libtext.so", "just text");
    let out = sb.run(&["plugins", "install", text.to_str().unwrap()]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("not a shared library this system knows"),
        "{}",
        out.stderr
    );
    // An object file is no library; a FIFO is never read (it would wait for a writer).
    let object = fixtures.path().join("libobject.so");
    let compiled = std::process::Command::new("cc")
        .args(["-c", "-fPIC", "-o"])
        .arg(&object)
        .arg(repository().join("tests/fixtures/plugins/bad_plugin.c"))
        .status()
        .unwrap();
    assert!(compiled.success());
    let out = sb.run(&["plugins", "install", object.to_str().unwrap()]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("not a shared library (it is Relocatable)"),
        "{}",
        out.stderr
    );
    let fifo = fixtures.path().join("libfifo.so");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let out = sb.run(&["plugins", "install", fifo.to_str().unwrap()]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    assert!(!mark.exists(), "a refused library was loaded");
    assert!(installed(&sb).is_empty());
}

#[test]
fn completions_and_the_manual_come_from_the_command_line() {
    let sb = sandbox();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef agentry"),
        ("fish", "complete -c agentry"),
    ] {
        let out = sb.run(&["completions", shell]);
        assert_eq!(out.code, Some(0), "{out:?}");
        assert!(
            out.stdout.contains(marker),
            "{shell}: {}",
            &out.stdout[..200.min(out.stdout.len())]
        );
        assert!(out.stdout.contains("plugins"), "{shell}");
    }
    let page = sb.run(&["man"]);
    assert_eq!(page.code, Some(0), "{page:?}");
    assert!(
        page.stdout.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        &page.stdout[..100]
    );
    assert!(
        page.stdout.contains(".TH agentry 1"),
        "{}",
        &page.stdout[..300]
    );
    let pages = tempfile::tempdir().unwrap();
    let pages = pages.path();
    let out = sb.run(&["man", "--out-dir", pages.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{out:?}");
    for name in [
        "agentry.1",
        "agentry-run.1",
        "agentry-plugins.1",
        "agentry-serve.1",
    ] {
        assert!(pages.join(name).is_file(), "{name}");
    }
    let version = sb.run(&["--version"]);
    let text = version.stdout;
    assert!(
        text.starts_with(&format!("agentry {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(
        text.contains(", plugin ABI 1.2)\nproviders linked: file_ops, bash, builtin"),
        "{text}"
    );
}
