//! # agentry-search
//!
//! The `WebSearch` tool (`query`, `allowed_domains`, `blocked_domains`) over the back-end the
//! configuration names, each spoken to in its own API: a SearXNG instance
//! (`/search?format=json`), the Brave Search API, Tavily, or any JSON API whose answer is read
//! through configured field paths. Results come back as a numbered list of title, URL and
//! snippet (and as structured raw output), filtered by domain. Without a back-end, each call
//! says how to configure one.
//!
//! ```toml
//! [web_search]
//! backend = "brave"                 # searxng, brave, tavily, json
//! api_key = "${BRAVE_API_KEY}"      # brave and tavily; ${ENV} is expanded
//! # url = "http://localhost:8888"   # required for searxng and json; another API address otherwise
//! max_results = 10
//! timeout_secs = 20
//!
//! # backend = "json":
//! # url = "https://search.example.com/api?q={query}&n={count}"
//! # [web_search.json]
//! # method = "GET"
//! # headers = { "X-Key" = "${EXAMPLE_KEY}" }
//! # results = "data.items"          # dotted path to the list
//! # title = "name"
//! # url = "link"
//! # snippet = "summary"
//! ```

pub mod backend;
pub mod hit;
pub mod settings;
pub mod tool;

pub use backend::{Backend, SearchError};
pub use settings::SearchSettings;
pub use tool::WebSearch;

use agentry_plugin::provider::SimpleProvider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings, made};

/// The provider of `WebSearch` over the configured back-end (`None`: not configured, and each
/// call says how to configure one).
pub fn provider(settings: Option<&SearchSettings>) -> SimpleProvider {
    let backend = match settings {
        Some(settings) => Backend::new(settings),
        None => Err(SearchError::NotConfigured),
    };
    SimpleProvider::new("search", "Searches the web.").with_tool(WebSearch::new(backend))
}

/// The configuration section WebSearch reads: `[web_search]`.
pub const SECTION: &str = "web_search";

/// The `[web_search]` table as written (a TOML table read as JSON).
pub fn settings_from(value: serde_json::Value) -> Result<SearchSettings, SearchError> {
    serde_json::from_value(value).map_err(|e| SearchError::Settings(e.to_string()))
}

/// How WebSearch is made, linked or as a plugin: over the `[web_search]` back-end; without a
/// usable one (reported), each call says what to configure.
pub const RECIPE: Recipe = Recipe {
    name: "search",
    sections: &[SECTION],
    make,
};

fn make(settings: Settings) -> Making {
    let chosen = settings.section(SECTION).cloned().map(settings_from);
    let configured = match chosen {
        Some(Ok(settings)) => Configured::new(provider(Some(&settings))),
        Some(Err(error)) => Configured::new(provider(None)).with_problems([error.to_string()]),
        None => Configured::new(provider(None)),
    };
    made(Ok(configured))
}
