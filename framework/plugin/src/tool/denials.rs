//! [`ReadDenials`]: what the session's deny rules keep a search through folders from reading,
//! made of resolved path patterns ([`PathMatcher`]). Both travel to plugins as JSON.

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::{Path, PathBuf};

/// A path pattern resolved for one session: a canonical folder and, below it, a glob matched
/// the way `.gitignore` lines are (`*` stays within one folder, `**` crosses folders). A
/// pattern that matches a folder covers everything inside it.
#[derive(Debug, Clone)]
pub struct PathMatcher {
    /// The canonical folder the pattern is relative to.
    anchor: PathBuf,
    /// The pattern below the anchor; `None` matches the anchor and everything in it.
    glob: Option<GlobMatcher>,
}

impl PathMatcher {
    /// The matcher of `glob` below `anchor` (which the caller has made canonical); `None`
    /// covers the whole folder.
    pub fn new(anchor: PathBuf, glob: Option<&str>) -> Result<Self, globset::Error> {
        let glob = match glob {
            None => None,
            Some(text) => Some(
                GlobBuilder::new(text)
                    .literal_separator(true)
                    .build()?
                    .compile_matcher(),
            ),
        };
        Ok(Self { anchor, glob })
    }

    /// Whether the pattern covers `path` (canonical): it, or a folder holding it, matches.
    pub fn matches(&self, path: &Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.anchor) else {
            return false;
        };
        let Some(glob) = &self.glob else {
            return true;
        };
        let mut candidate = relative;
        loop {
            if candidate.as_os_str().is_empty() {
                return false;
            }
            if glob.is_match(candidate) {
                return true;
            }
            candidate = candidate.parent().unwrap_or(Path::new(""));
        }
    }

    /// The folder the pattern starts from.
    pub fn anchor(&self) -> &Path {
        &self.anchor
    }
}

/// A [`PathMatcher`] as JSON: `{"anchor": "/abs", "glob": "**/*.key"}`.
#[derive(Serialize, Deserialize)]
struct MatcherJson {
    anchor: PathBuf,
    glob: Option<String>,
}

impl Serialize for PathMatcher {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MatcherJson {
            anchor: self.anchor.clone(),
            glob: self.glob.as_ref().map(|glob| glob.glob().glob().to_owned()),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PathMatcher {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = MatcherJson::deserialize(deserializer)?;
        PathMatcher::new(json.anchor, json.glob.as_deref()).map_err(serde::de::Error::custom)
    }
}

/// The paths a search must leave out: those the session's deny rules keep from being read.
/// The executor offers it to each call of a tool that reads files (in its context's
/// extensions, and to a plugin's call in its request), so that Grep and Glob skip what
/// `Read(…)` deny rules cover.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReadDenials {
    patterns: Vec<PathMatcher>,
}

impl ReadDenials {
    /// The denials made of `patterns`.
    pub fn new(patterns: Vec<PathMatcher>) -> Self {
        Self { patterns }
    }

    /// The denials offered to the running call, if any.
    pub fn of(ctx: &crate::tool::ToolContext) -> Option<std::sync::Arc<ReadDenials>> {
        ctx.extensions
            .get::<ReadDenials>()
            .filter(|denials| !denials.is_empty())
    }

    /// Whether there is nothing to leave out.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether a deny rule covers `path` (canonical).
    pub fn covers(&self, path: &Path) -> bool {
        self.patterns.iter().any(|pattern| pattern.matches(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_keep_their_meaning_through_json() {
        let denials = ReadDenials::new(vec![
            PathMatcher::new("/work".into(), Some("**/*.key")).unwrap(),
            PathMatcher::new("/work/secrets".into(), None).unwrap(),
        ]);
        let json = serde_json::to_value(&denials).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"anchor": "/work", "glob": "**/*.key"},
                {"anchor": "/work/secrets", "glob": null}
            ])
        );
        let back: ReadDenials = serde_json::from_value(json).unwrap();
        for path in [
            "/work/a/b/id.key",
            "/work/secrets",
            "/work/secrets/deep/x.txt",
        ] {
            assert!(back.covers(Path::new(path)), "{path}");
        }
        for path in ["/work/a/id.keys", "/elsewhere/id.key", "/work/secretsx/a"] {
            assert!(!back.covers(Path::new(path)), "{path}");
        }
        let bad = serde_json::json!([{"anchor": "/w", "glob": "src/[a"}]);
        assert!(serde_json::from_value::<ReadDenials>(bad).is_err());
    }

    #[test]
    fn star_stays_within_one_folder() {
        let matcher = PathMatcher::new("/w".into(), Some("src/*.rs")).unwrap();
        assert!(matcher.matches(Path::new("/w/src/a.rs")));
        assert!(!matcher.matches(Path::new("/w/src/deep/a.rs")));
        assert_eq!(matcher.anchor(), Path::new("/w"));
    }
}
