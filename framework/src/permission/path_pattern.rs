//! Path patterns of permission rules, read as Claude Code users write them:
//!
//! | pattern | starts from | example |
//! |---|---|---|
//! | `//path` | the filesystem root | `Read(//etc/**)` |
//! | `~/path` | the home folder | `Read(~/.ssh/**)` |
//! | `/path` | the folder of the file the rule came from (the project root for a project's configuration) | `Edit(/src/**)` |
//! | `path`, `./path` | the session's working directory | `Read(secret/**)`, `Read(*.env)` |
//!
//! and matched the way `.gitignore` lines are: a pattern without a slash (but a trailing one)
//! matches at any depth, `*` stays within one folder and `**` crosses folders, and a pattern
//! that matches a folder covers everything inside it (`secret/`, `secret/**` and `secret` all
//! cover `secret/key.txt` and the folder `secret` itself). The call's side is its canonical
//! locations, so the pattern's folder is made canonical too.

use agentry_plugin::paths::canonical_path;
use agentry_plugin::tool::PathMatcher;
use std::path::{Path, PathBuf};

/// Where a path pattern's relative forms start.
#[derive(Debug, Clone, Copy)]
pub struct PatternBase<'a> {
    /// The session's working directory (`path`, `./path`).
    pub cwd: &'a Path,
    /// The rule's own root (`/path`); the working directory when it has none.
    pub root: Option<&'a Path>,
    /// The home folder (`~/path`), when there is one.
    pub home: Option<&'a Path>,
}

/// A pattern's start and the rest, before it is compiled.
struct Split<'a> {
    anchor: PathBuf,
    rest: &'a str,
    anchored: bool,
}

/// Resolves `pattern` against `base` into its matcher, or says why it can never match.
pub fn resolve(pattern: &str, base: PatternBase<'_>) -> Result<PathMatcher, String> {
    let Split {
        anchor,
        rest,
        anchored,
    } = split(pattern, base)?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix("/**").unwrap_or(rest);
    let glob = match rest {
        "" | "**" => None,
        rest if anchored => Some(rest.to_owned()),
        rest => Some(format!("**/{rest}")),
    };
    PathMatcher::new(canonical_path(&anchor), glob.as_deref())
        .map_err(|e| format!("`{pattern}` is not a valid pattern: {e}"))
}

fn split<'a>(pattern: &'a str, base: PatternBase<'_>) -> Result<Split<'a>, String> {
    let pattern = pattern.trim();
    let anchored = |anchor: &Path, rest: &'a str| Split {
        anchor: anchor.to_path_buf(),
        rest,
        anchored: true,
    };
    if let Some(rest) = pattern.strip_prefix("//") {
        return Ok(anchored(Path::new("/"), rest));
    }
    if pattern == "~" || pattern.starts_with("~/") {
        let home = base
            .home
            .ok_or_else(|| format!("`{pattern}` starts from the home folder, and there is none"))?;
        return Ok(anchored(home, pattern.get(2..).unwrap_or("")));
    }
    if let Some(rest) = pattern.strip_prefix('/') {
        return Ok(anchored(base.root.unwrap_or(base.cwd), rest));
    }
    if let Some(rest) = pattern.strip_prefix("./") {
        return Ok(anchored(base.cwd, rest));
    }
    if pattern.starts_with('~') {
        return Err(format!(
            "`{pattern}`: only `~/` (the home folder) is understood, not another user's"
        ));
    }
    // As in .gitignore: a slash anywhere but at the end anchors the pattern.
    let anchored = pattern.trim_end_matches('/').contains('/');
    Ok(Split {
        anchor: base.cwd.to_path_buf(),
        rest: pattern,
        anchored,
    })
}

/// The part of a `/path` pattern before its first wildcard, when the pattern starts from a
/// rule's root (for telling `/etc/x` meant as `//etc/x`).
pub fn literal_root_prefix(pattern: &str) -> Option<&str> {
    let rest = pattern.strip_prefix('/').filter(|r| !r.starts_with('/'))?;
    let end = rest
        .find(['*', '?', '[', '{'])
        .map_or(rest.len(), |at| rest[..at].rfind('/').unwrap_or(0));
    Some(rest[..end].trim_end_matches('/')).filter(|prefix| !prefix.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree {
        _dir: tempfile::TempDir,
        cwd: PathBuf,
        root: PathBuf,
        home: PathBuf,
    }

    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        let root = top.join("project");
        let cwd = root.join("sub");
        let home = top.join("home");
        for folder in [&cwd, &home] {
            std::fs::create_dir_all(folder).unwrap();
        }
        Tree {
            _dir: dir,
            cwd,
            root,
            home,
        }
    }

    fn matches(tree: &Tree, pattern: &str, path: &Path) -> bool {
        let base = PatternBase {
            cwd: &tree.cwd,
            root: Some(&tree.root),
            home: Some(&tree.home),
        };
        resolve(pattern, base).unwrap().matches(path)
    }

    #[test]
    fn each_of_the_four_forms_starts_where_it_says() {
        let t = tree();
        let key = t.cwd.join("secret/key.txt");
        for pattern in [
            "secret/**",
            "./secret/**",
            "secret/",
            "secret",
            "secret/key.txt",
        ] {
            assert!(matches(&t, pattern, &key), "{pattern}");
        }
        assert!(matches(&t, "/sub/secret/**", &key));
        assert!(!matches(&t, "/secret/**", &key));
        assert!(matches(&t, &format!("/{}", key.display()), &key));
        assert!(matches(&t, "//etc/**", Path::new("/etc/passwd")));
        assert!(!matches(&t, "/etc/**", Path::new("/etc/passwd")));
        assert!(matches(&t, "~/.ssh/**", &t.home.join(".ssh/id_ed25519")));
        assert!(matches(&t, "~", &t.home.join(".bashrc")));
        assert!(!matches(&t, "~/.ssh/**", &t.cwd.join(".ssh/id")));
    }

    #[test]
    fn patterns_match_like_gitignore_lines() {
        let t = tree();
        let deep = t.cwd.join("a/b/.env");
        assert!(matches(&t, ".env", &deep), "no slash: any depth");
        assert!(matches(&t, "*.env", &t.cwd.join("x/prod.env")));
        assert!(!matches(&t, "a/.env", &deep), "a slash anchors it");
        assert!(matches(&t, "a/**/.env", &deep));
        assert!(
            matches(&t, "**/b", &deep),
            "a matching folder covers its contents"
        );
        assert!(
            !matches(&t, "a/*.env", &t.cwd.join("a/b/x.env")),
            "* stays in a folder"
        );
        assert!(
            matches(&t, "secret/**", &t.cwd.join("secret")),
            "the folder itself"
        );
        assert!(!matches(&t, "secret/**", &t.cwd.join("secrets/x")));
        assert!(
            !matches(&t, ".env", &t.root.join(".env")),
            "outside the cwd"
        );
        assert!(matches(&t, "**", &t.cwd.join("anything")));
    }

    #[test]
    fn the_anchor_is_made_canonical_like_the_calls_side() {
        let t = tree();
        #[cfg(unix)]
        {
            let link = t.root.join("link");
            std::os::unix::fs::symlink(&t.cwd, &link).unwrap();
            let base = PatternBase {
                cwd: &link,
                root: None,
                home: None,
            };
            let pattern = resolve("secret/**", base).unwrap();
            assert!(pattern.matches(&t.cwd.join("secret/key.txt")));
        }
    }

    #[test]
    fn patterns_that_cannot_match_say_why() {
        let t = tree();
        let base = PatternBase {
            cwd: &t.cwd,
            root: None,
            home: None,
        };
        assert!(resolve("~/.ssh/**", base).unwrap_err().contains("home"));
        assert!(resolve("src/[a", base).unwrap_err().contains("not a valid"));
        assert!(resolve("~bob/x", base).is_err());
    }

    #[test]
    fn the_literal_start_of_a_root_pattern() {
        assert_eq!(literal_root_prefix("/etc/passwd"), Some("etc/passwd"));
        assert_eq!(literal_root_prefix("/etc/ssh/*.key"), Some("etc/ssh"));
        assert_eq!(literal_root_prefix("/src/**"), Some("src"));
        assert_eq!(literal_root_prefix("/*.rs"), None);
        assert_eq!(literal_root_prefix("//etc/x"), None);
        assert_eq!(literal_root_prefix("src/x"), None);
    }
}
