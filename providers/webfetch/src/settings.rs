//! `[webfetch]` in agentry's configuration, as the user writes it.

use crate::fetch::FetchSettings;
use crate::guard::{AddressGuard, AddressRange};
use crate::tool::DEFAULT_MAX_CONTENT_CHARS;
use serde::Deserialize;
use std::time::Duration;

/// The configuration section WebFetch reads: `[webfetch]`.
pub const SECTION: &str = "webfetch";

/// The `[webfetch]` table (every key optional; see the crate documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFetchSettings {
    /// The model that answers prompts (`PROVIDER/MODEL`); the session's when absent.
    pub model: Option<String>,
    /// Fetch `http` URLs as `http` rather than `https`.
    #[serde(default)]
    pub allow_http: bool,
    /// Non-public addresses (`ADDRESS` or `ADDRESS/PREFIX`) that may be fetched.
    #[serde(default)]
    pub allow_addresses: Vec<String>,
    /// When any are named, only these domains (and their subdomains) may be fetched.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Domains (and their subdomains) never fetched.
    #[serde(default)]
    pub blocked_domains: Vec<String>,
    /// A body is read up to this many bytes.
    pub max_bytes: Option<usize>,
    /// The model reads this many characters of a page at most.
    pub max_content_chars: Option<usize>,
    /// The most redirects followed.
    pub max_redirects: Option<usize>,
    /// Seconds connecting may take.
    pub connect_timeout_secs: Option<u64>,
    /// Seconds a whole fetch may take.
    pub timeout_secs: Option<u64>,
}

/// A `[webfetch]` table that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("[webfetch]: {0}")]
pub struct SettingsError(String);

impl WebFetchSettings {
    /// The table as written (a TOML table read as JSON), checked.
    pub fn from_value(value: serde_json::Value) -> Result<Self, SettingsError> {
        let settings: Self =
            serde_json::from_value(value).map_err(|e| SettingsError(e.to_string()))?;
        settings.ranges()?;
        Ok(settings)
    }

    fn ranges(&self) -> Result<Vec<AddressRange>, SettingsError> {
        self.allow_addresses
            .iter()
            .map(|text| {
                text.parse()
                    .map_err(|e: String| SettingsError(format!("allow_addresses: {e}")))
            })
            .collect()
    }

    /// How pages are fetched.
    pub fn fetch_settings(&self) -> FetchSettings {
        let defaults = FetchSettings::default();
        FetchSettings {
            guard: AddressGuard::allowing(self.ranges().unwrap_or_default()),
            upgrade_http: !self.allow_http,
            allowed_domains: self.allowed_domains.clone(),
            blocked_domains: self.blocked_domains.clone(),
            max_redirects: self.max_redirects.unwrap_or(defaults.max_redirects),
            max_bytes: self.max_bytes.unwrap_or(defaults.max_bytes).max(1),
            connect_timeout: self
                .connect_timeout_secs
                .map_or(defaults.connect_timeout, Duration::from_secs),
            timeout: self
                .timeout_secs
                .map_or(defaults.timeout, Duration::from_secs),
        }
    }

    /// The most characters of a page the model reads.
    pub fn max_content_chars(&self) -> usize {
        self.max_content_chars.unwrap_or(DEFAULT_MAX_CONTENT_CHARS)
    }
}
