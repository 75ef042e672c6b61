//! What a release ships, made on this machine as the release makes it and installed as a user
//! installs it: the Linux x86_64 archive through dist's shell installer from a loopback server
//! into a scratch home, and the Debian package with dpkg (its man page, completions and
//! systemd unit), removed cleanly after. The release's configuration asks dist for every
//! target, installer and attestation the release promises.

use crate::{agentry_binary, repository};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn succeeded(command: &mut Command) -> Output {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A copy of the test build's binary without its symbols and line tables (a third smaller, so
/// the archives are made sooner), in `dir`.
fn stripped_binary(dir: &Path) -> PathBuf {
    let copy = dir.join("agentry");
    std::fs::copy(agentry_binary(), &copy).unwrap();
    succeeded(Command::new("strip").arg(&copy));
    copy
}

/// Serves the files of `dir` on a loopback port; returns its address.
fn serve_folder(dir: &Path) -> std::net::SocketAddr {
    let dir = dir.to_path_buf();
    let router = axum::Router::new().route(
        "/{file}",
        axum::routing::get(
            move |axum::extract::Path(file): axum::extract::Path<String>| {
                let path = dir.join(file);
                async move { std::fs::read(path).map_err(|_| axum::http::StatusCode::NOT_FOUND) }
            },
        ),
    );
    agentry_tests::http::serve_on_own_thread(router)
}

#[test]
fn the_archive_installs_with_dists_installer_from_a_loopback_server() {
    let out = tempfile::tempdir().unwrap();
    let build = tempfile::tempdir().unwrap();
    succeeded(
        Command::new(repository().join("scripts/release-local"))
            // The test build's binary is large: the least compression, on every core.
            .env("XZ_OPT", "-0 -T0")
            .arg("--binary")
            .arg(stripped_binary(build.path()))
            .arg(out.path()),
    );
    let archive = "agentry-cli-x86_64-unknown-linux-gnu.tar.xz";
    // The checksum beside the archive is the archive's.
    succeeded(
        Command::new("sha256sum")
            .args(["--check", &format!("{archive}.sha256")])
            .current_dir(out.path()),
    );
    let listing = text(&succeeded(
        Command::new("tar")
            .arg("-tJf")
            .arg(out.path().join(archive)),
    ));
    for file in ["agentry", "LICENSE-MIT", "LICENSE-APACHE", "README.md"] {
        assert!(
            listing.contains(&format!("agentry-cli-x86_64-unknown-linux-gnu/{file}\n")),
            "{listing}"
        );
    }
    let address = serve_folder(out.path());
    let home = tempfile::tempdir().unwrap();
    let installed = succeeded(
        Command::new("sh")
            .arg(out.path().join("agentry-cli-installer.sh"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home.path())
            .env("AGENTRY_CLI_DOWNLOAD_URL", format!("http://{address}")),
    );
    let said = format!(
        "{}{}",
        text(&installed),
        String::from_utf8_lossy(&installed.stderr)
    );
    assert!(said.contains("everything's installed!"), "{said}");
    let binary = home.path().join(".cargo/bin/agentry");
    let version = text(&succeeded(Command::new(&binary).arg("--version")));
    assert!(
        version.starts_with(&format!("agentry {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    // It put its bin folder on the PATH of the shells the home has.
    let profile = std::fs::read_to_string(home.path().join(".profile")).unwrap_or_default();
    assert!(profile.contains(".cargo/env"), "{profile}");
}

#[test]
fn dists_installers_are_the_ones_for_this_version() {
    for installer in ["agentry-cli-installer.sh", "agentry-cli-installer.ps1"] {
        let text =
            std::fs::read_to_string(repository().join("packaging/dist").join(installer)).unwrap();
        let download = format!("/releases/download/v{}", env!("CARGO_PKG_VERSION"));
        assert!(
            text.contains(&download),
            "packaging/dist/{installer} installs another version: make it again with dist (packaging/dist/PROVENANCE.md)"
        );
    }
}

#[test]
fn the_release_asks_dist_for_every_promised_target_installer_and_attestation() {
    let config: toml::Table = std::fs::read_to_string(repository().join("dist-workspace.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let dist = config["dist"].as_table().unwrap();
    let listed = |key: &str| -> Vec<&str> {
        dist[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect()
    };
    let mut targets = listed("targets");
    targets.sort_unstable();
    assert_eq!(
        targets,
        [
            "aarch64-apple-darwin",
            "aarch64-unknown-linux-gnu",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-msvc",
            "x86_64-unknown-linux-gnu",
            "x86_64-unknown-linux-musl",
        ]
    );
    assert_eq!(listed("installers"), ["shell", "powershell"]);
    assert_eq!(dist["github-attestations"].as_bool(), Some(true));
    assert_eq!(listed("local-artifacts-jobs"), ["./release-plugins"]);
    // The workflow dist generated from it is the one in the repository, of the same dist.
    let workflow =
        std::fs::read_to_string(repository().join(".github/workflows/release.yml")).unwrap();
    let version = dist["cargo-dist-version"].as_str().unwrap();
    assert!(
        workflow.contains(&format!("cargo-dist/releases/download/v{version}/")),
        "release.yml is not dist {version}'s: run `dist generate`"
    );
    assert!(
        workflow.contains("uses: ./.github/workflows/release-plugins.yml"),
        "release.yml does not run the plugins' job"
    );
    assert!(
        workflow.contains("uses: actions/attest@"),
        "release.yml makes no attestations"
    );
    // cargo binstall finds the archives dist makes.
    let cli: toml::Table = std::fs::read_to_string(repository().join("agent-cli/Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let binstall = &cli["package"]["metadata"]["binstall"];
    assert_eq!(
        binstall["pkg-url"].as_str(),
        Some("{ repo }/releases/download/v{ version }/{ name }-{ target }{ archive-suffix }")
    );
}

/// Installs a Debian package with dpkg and purges it when dropped.
struct Installed(&'static str);

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", self.0]).output();
    }
}

fn installed_files(package: &str) -> Vec<PathBuf> {
    text(&succeeded(
        Command::new("dpkg").args(["--listfiles", package]),
    ))
    .lines()
    .map(PathBuf::from)
    .filter(|path| path.is_file())
    .collect()
}

#[test]
fn the_debian_package_installs_its_manual_completions_and_unit_and_goes_cleanly() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "installing a Debian package into the machine needs root (CI runs the tests as root)"
    );
    let status = Command::new("dpkg")
        .args(["--status", "agentry"])
        .output()
        .unwrap();
    assert!(
        !status.status.success() && !Path::new("/usr/bin/agentry").exists(),
        "an agentry is installed on this machine already: this test would replace it"
    );
    let out = tempfile::tempdir().unwrap();
    let made = succeeded(
        Command::new(repository().join("scripts/deb"))
            .arg("--binary")
            .arg(stripped_binary(out.path()))
            .arg("--fast")
            .arg(out.path()),
    );
    let deb = PathBuf::from(text(&made).trim());
    assert!(
        deb.ends_with(format!("agentry_{}_amd64.deb", env!("CARGO_PKG_VERSION"))),
        "{deb:?}"
    );
    let fields = text(&succeeded(
        Command::new("dpkg-deb").arg("--field").arg(&deb),
    ));
    assert!(
        fields.contains("Package: agentry\n") && fields.contains("Depends: libc6"),
        "{fields}"
    );

    succeeded(Command::new("dpkg").arg("--install").arg(&deb));
    let _installed = Installed("agentry");
    let version = text(&succeeded(
        Command::new("/usr/bin/agentry").arg("--version"),
    ));
    assert!(version.starts_with("agentry "), "{version}");
    let page = text(&succeeded(
        Command::new("man")
            .arg("agentry")
            .env("MANPAGER", "cat")
            .env("MAN_KEEP_FORMATTING", "0"),
    ));
    assert!(
        page.contains("agentry") && page.contains("plugins"),
        "{page}"
    );
    let serve_page = text(&succeeded(
        Command::new("man")
            .arg("agentry-serve")
            .env("MANPAGER", "cat"),
    ));
    assert!(serve_page.contains("--token-file"), "{serve_page}");
    for completion in [
        "/usr/share/bash-completion/completions/agentry",
        "/usr/share/zsh/vendor-completions/_agentry",
        "/usr/share/fish/vendor_completions.d/agentry.fish",
    ] {
        let script = std::fs::read_to_string(completion).unwrap();
        assert!(script.contains("plugins"), "{completion}");
    }
    let unit = "/usr/lib/systemd/system/agentry-serve.service";
    let verified = Command::new("systemd-analyze")
        .args(["verify", unit])
        .output()
        .unwrap();
    assert!(
        verified.status.success() && verified.stderr.is_empty(),
        "systemd-analyze verify {unit}: {}",
        String::from_utf8_lossy(&verified.stderr)
    );
    let unit_text = std::fs::read_to_string(unit).unwrap();
    for hardening in [
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "LoadCredential=token:/etc/agentry/serve-token",
        "--token-file ${CREDENTIALS_DIRECTORY}/token",
    ] {
        assert!(unit_text.contains(hardening), "the unit lacks {hardening}");
    }
    let files = installed_files("agentry");
    assert!(files.len() > 10, "{files:?}");

    // Removed and purged: none of its files is left, and dpkg knows it no more.
    succeeded(Command::new("dpkg").args(["--remove", "agentry"]));
    succeeded(Command::new("dpkg").args(["--purge", "agentry"]));
    let left: Vec<&PathBuf> = files.iter().filter(|file| file.exists()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(
        !Command::new("dpkg")
            .args(["--status", "agentry"])
            .output()
            .unwrap()
            .status
            .success()
    );
}
