//! What `agentry plugins install SOURCE` names: a crate of the registry, a crate's folder, a
//! built library, or a built library's URL with its checksum.

use super::error::InstallError;
use reqwest::Url;
use std::path::PathBuf;

/// A source to install a tool plugin from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// A crate of the registry cargo uses, at a version requirement (`*`: the newest).
    Crate {
        /// The crate's name.
        name: String,
        /// The version requirement.
        requirement: String,
    },
    /// A crate's folder (holding its `Cargo.toml`).
    CrateFolder(PathBuf),
    /// A built library.
    Library(PathBuf),
    /// A built library to download, and its SHA-256 (lowercase hex).
    Url {
        /// Where it is.
        url: Url,
        /// Its checksum.
        sha256: String,
    },
}

impl Requested {
    /// Reads `source` as the user gave it, with `--version` and `--sha256`.
    pub fn parse(
        source: &str,
        version: Option<&str>,
        sha256: Option<&str>,
    ) -> Result<Requested, InstallError> {
        let refuse = |message: String| Err(InstallError::Source(message));
        let requested = if source.contains("://") {
            let url = Url::parse(source)
                .map_err(|e| InstallError::Source(format!("{source}: not a URL ({e})")))?;
            check_url(&url)?;
            let Some(sha256) = sha256 else {
                return refuse(format!(
                    "{source}: a plugin from a URL needs --sha256 HEX, the library's SHA-256 as its publisher gives it"
                ));
            };
            Requested::Url {
                url,
                sha256: checksum(sha256)?,
            }
        } else if looks_like_a_path(source) {
            let path = std::fs::canonicalize(source).map_err(InstallError::io(source))?;
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => {
                    if !path.join("Cargo.toml").is_file() {
                        return refuse(format!(
                            "{}: a folder without a Cargo.toml is not a crate",
                            path.display()
                        ));
                    }
                    Requested::CrateFolder(path)
                }
                Ok(_) => Requested::Library(path),
                Err(e) => return Err(InstallError::io(path)(e)),
            }
        } else if is_crate_name(source) {
            Requested::Crate {
                name: source.to_owned(),
                requirement: match version {
                    Some(version) if version.starts_with(|c: char| c.is_ascii_digit()) => {
                        format!("={version}")
                    }
                    Some(requirement) => requirement.to_owned(),
                    None => "*".to_owned(),
                },
            }
        } else {
            return refuse(format!(
                "`{source}` is neither a crate name, a path (start it with ./ or /), nor an https URL"
            ));
        };
        if version.is_some() && !matches!(requested, Requested::Crate { .. }) {
            return refuse("--version picks a version of a crate from the registry".to_owned());
        }
        if sha256.is_some() && !matches!(requested, Requested::Url { .. }) {
            return refuse("--sha256 checks a library downloaded from a URL".to_owned());
        }
        Ok(requested)
    }
}

/// Whether `source` is written as a path: with a `/` (or the system's separator) in it, or
/// starting with `.`. A bare name is a crate's, even when a file of that name is here: a
/// checkout must not stand in for the registry's crate of its name.
fn looks_like_a_path(source: &str) -> bool {
    source.contains(std::path::MAIN_SEPARATOR) || source.contains('/') || source.starts_with('.')
}

/// Whether `name` can be a crate's name (ASCII letters, digits, `-` and `_`, a letter first).
pub(crate) fn is_crate_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Downloads go over https only; http only to this machine's own loopback addresses.
fn check_url(url: &Url) -> Result<(), InstallError> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err(InstallError::Source(
            "a URL with a user name or password in it is not used (it would be recorded and shown): give the library's public address".to_owned(),
        ));
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err(InstallError::Source(format!(
            "{url}: plugins are downloaded over https (http only from this machine's loopback address)"
        ))),
        other => Err(InstallError::Source(format!(
            "{url}: `{other}` URLs are not downloaded: give an https URL"
        ))),
    }
}

/// Whether `url`'s host is a loopback address (127.0.0.0/8, ::1) or `localhost`.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// A SHA-256 as 64 hexadecimal digits, lowercased.
fn checksum(given: &str) -> Result<String, InstallError> {
    let hex = given.trim().to_ascii_lowercase();
    if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(hex)
    } else {
        Err(InstallError::Source(format!(
            "--sha256 {given}: a SHA-256 is 64 hexadecimal digits"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_source_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let krate = dir.join("my-plugin");
        std::fs::create_dir(&krate).unwrap();
        std::fs::write(krate.join("Cargo.toml"), "").unwrap();
        let library = dir.join("libmine.so");
        std::fs::write(&library, "").unwrap();
        assert_eq!(
            Requested::parse("agentry-plugin-hello", None, None).unwrap(),
            Requested::Crate {
                name: "agentry-plugin-hello".to_owned(),
                requirement: "*".to_owned()
            }
        );
        for (version, requirement) in [("0.2.1", "=0.2.1"), ("^0.2", "^0.2")] {
            let Requested::Crate {
                requirement: got, ..
            } = Requested::parse("tools", Some(version), None).unwrap()
            else {
                panic!("not a crate");
            };
            assert_eq!(got, requirement);
        }
        assert_eq!(
            Requested::parse(krate.to_str().unwrap(), None, None).unwrap(),
            Requested::CrateFolder(krate)
        );
        assert_eq!(
            Requested::parse(library.to_str().unwrap(), None, None).unwrap(),
            Requested::Library(library)
        );
        let sha = "AB".repeat(32);
        let Requested::Url { url, sha256 } =
            Requested::parse("https://example.com/libx.so", None, Some(&sha)).unwrap()
        else {
            panic!("not a URL");
        };
        assert_eq!(url.as_str(), "https://example.com/libx.so");
        assert_eq!(sha256, "ab".repeat(32));
    }

    #[test]
    fn a_bare_name_is_a_crates_even_where_a_folder_has_that_name() {
        // Tests run in the crate's folder, which has a `src` folder (and no Cargo.toml in it).
        assert!(std::path::Path::new("src").is_dir());
        assert_eq!(
            Requested::parse("src", None, None).unwrap(),
            Requested::Crate {
                name: "src".to_owned(),
                requirement: "*".to_owned()
            }
        );
        let error = Requested::parse("./src", None, None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("a folder without a Cargo.toml"), "{error}");
    }

    #[test]
    fn unsafe_or_incomplete_sources_are_refused_with_the_reason() {
        let sha = "ab".repeat(32);
        for (source, version, sha256, says) in [
            ("https://example.com/libx.so", None, None, "needs --sha256"),
            (
                "https://example.com/libx.so",
                None,
                Some("abc"),
                "64 hexadecimal digits",
            ),
            (
                "http://example.com/libx.so",
                None,
                Some(sha.as_str()),
                "over https",
            ),
            (
                "http://127.0.0.1.example.com/x.so",
                None,
                Some(sha.as_str()),
                "over https",
            ),
            (
                "ftp://127.0.0.1/libx.so",
                None,
                Some(sha.as_str()),
                "`ftp` URLs",
            ),
            (
                "file:///tmp/libx.so",
                None,
                Some(sha.as_str()),
                "`file` URLs",
            ),
            ("my crate", None, None, "neither a crate name"),
            ("1password", None, None, "neither a crate name"),
            ("./no-such-folder", None, None, "No such file"),
            (
                "https://user:secret@example.com/x.so",
                None,
                Some(sha.as_str()),
                "user name or password",
            ),
            ("tools", None, Some(sha.as_str()), "--sha256 checks"),
        ] {
            let error = Requested::parse(source, version, sha256)
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{source}: {error}");
        }
        let http_loopback = [
            "http://127.0.0.1:8080/libx.so",
            "http://[::1]/libx.so",
            "http://localhost/libx.so",
        ];
        for source in http_loopback {
            assert!(
                Requested::parse(source, None, Some(&sha)).is_ok(),
                "{source}"
            );
        }
        let error = Requested::parse("https://example.com/x.so", Some("1.0.0"), Some(&sha))
            .unwrap_err()
            .to_string();
        assert!(error.contains("--version picks"), "{error}");
    }
}
