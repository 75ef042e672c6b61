//! # agentry-webfetch
//!
//! The `WebFetch` tool: fetches a URL, reads it as Markdown (HTML), pretty JSON or text, and
//! answers the call's `prompt` about it with a model — a small, fast one when configured, the
//! session's otherwise.
//!
//! Safe by default: `http` is fetched as `https`; only public addresses are connected to (the
//! [`guard`] refuses loopback, private, link-local — cloud metadata —, carrier-grade NAT and the
//! other non-public ranges, checked on the addresses a name resolves to and on every redirect,
//! so DNS rebinding and redirect tricks fail); domains can be allowed or blocked; a permission
//! rule `WebFetch(domain:example.com)` allows one domain and its subdomains.
//!
//! Configuration (`[webfetch]` in agentry's `config.toml`, every key optional):
//!
//! ```toml
//! [webfetch]
//! model = "openai/gpt-4.1-mini"     # answers prompts; the session's model when absent
//! allow_http = false                # true: fetch http URLs as http
//! allow_addresses = ["10.1.0.0/16"] # non-public addresses that may be fetched
//! allowed_domains = []              # when any are named, only these (and subdomains)
//! blocked_domains = ["example.org"] # never these (and subdomains)
//! max_bytes = 10485760              # a body is read up to this many bytes
//! max_content_chars = 100000        # the model reads this much of a page at most
//! max_redirects = 10
//! connect_timeout_secs = 10
//! timeout_secs = 30
//! ```

pub mod cache;
pub mod convert;
pub mod error;
pub mod fetch;
pub mod guard;
pub mod resolve;
mod settings;
pub mod tool;

pub use settings::{SECTION, SettingsError, WebFetchSettings};
pub use tool::WebFetch;

use agentry_plugin::provider::SimpleProvider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings, made};

/// The provider of `WebFetch`, with `settings` (its `model` answers prompts, opened by the
/// agent; the session's model when absent).
pub fn provider(settings: &WebFetchSettings) -> SimpleProvider {
    let fetcher = fetch::Fetcher::new(settings.fetch_settings());
    let tool = WebFetch::new(fetcher, settings.model.clone())
        .with_max_content_chars(settings.max_content_chars());
    SimpleProvider::new(
        "webfetch",
        "Fetches web pages and answers prompts about them.",
    )
    .with_tool(tool)
}

/// How WebFetch is made, linked or as a plugin: from `[webfetch]`; an unusable table leaves
/// it out.
pub const RECIPE: Recipe = Recipe {
    name: "webfetch",
    sections: &[SECTION],
    make,
};

fn make(settings: Settings) -> Making {
    let settings = match settings.section(SECTION) {
        Some(table) => WebFetchSettings::from_value(table.clone()),
        None => Ok(WebFetchSettings::default()),
    };
    made(
        settings
            .map(|settings| Configured::new(provider(&settings)))
            .map_err(|e| e.to_string()),
    )
}
