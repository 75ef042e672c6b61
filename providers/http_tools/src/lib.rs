//! # agentry-http-tools
//!
//! Tools registered by configuration — the langchain family of the chat-flow protocol. Each
//! `[[http_tools]]` entry is either a plain HTTP endpoint (name, description, URL, method,
//! headers with `${ENV}`, input schema) or a LangServe runnable, whose input schema is
//! discovered from `GET {base}/input_schema` and which is called with `POST {base}/invoke`
//! `{"input": …}`, its `output` being the result. Several runnables under one base (a
//! LangServe app serving a set of tools) are named in `tools`, or found in the app's
//! `openapi.json` with `tools = ["*"]`. An error status, an answer that is not JSON (from a
//! runnable) or a timeout is a failed call carrying the server's message.
//!
//! ```toml
//! [[http_tools]]
//! name = "weather"
//! description = "The current weather in a city."
//! url = "https://api.example.com/weather"
//! method = "GET"                                  # the input's fields as the query; POST sends it as JSON
//! headers = { Authorization = "Bearer ${WEATHER_KEY}" }
//! input_schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }
//!
//! [[http_tools]]
//! langserve = "http://localhost:8000/summarize"   # the tool `summarize`
//!
//! [[http_tools]]
//! langserve = "http://localhost:8001"
//! name = "math"                                   # tools math_add, math_multiply
//! tools = ["add", "multiply"]                     # or ["*"]: every runnable in its openapi.json
//! kind = "other"                                  # fetch by default
//! timeout_secs = 60
//! ```

mod load;
pub mod settings;
pub mod tool;

pub use load::as_object_schema;
pub use settings::HttpToolEntry;
pub use tool::{Endpoint, HttpTool};

use agentry_plugin::provider::SimpleProvider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings};

/// The provider of the tools `entries` declare (reaching their servers to discover LangServe
/// schemas), with `${NAME}` read through `env`, and what could not be used, with why.
pub async fn provider(
    entries: &[HttpToolEntry],
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> (SimpleProvider, Vec<String>) {
    let (tools, problems) = load::tools(entries, env).await;
    let provider = tools.into_iter().fold(
        SimpleProvider::new(
            "http_tools",
            "Tools registered by configuration: HTTP endpoints and LangServe runnables.",
        ),
        |provider, tool| provider.with_dyn_tool(tool::erased(tool)),
    );
    (provider, problems)
}

/// The configuration section of the HTTP tools: `[[http_tools]]`.
pub const SECTION: &str = "http_tools";

/// The `[[http_tools]]` entries as written (TOML read as JSON).
pub fn entries_from(value: serde_json::Value) -> Result<Vec<HttpToolEntry>, String> {
    serde_json::from_value(value).map_err(|e| format!("[[http_tools]]: {e}"))
}

/// How the HTTP tools are made, linked or as a plugin: one per `[[http_tools]]` entry (a
/// LangServe schema fetched now); an entry that cannot be used is reported and left out.
pub const RECIPE: Recipe = Recipe {
    name: "http_tools",
    sections: &[SECTION],
    make,
};

fn make(settings: Settings) -> Making {
    let entries = settings
        .section(SECTION)
        .cloned()
        .map_or(Ok(Vec::new()), entries_from);
    Making::later(async move {
        let env = |name: &str| std::env::var(name).ok();
        let (provider, problems) = provider(&entries?, &env).await;
        let problems = problems
            .into_iter()
            .map(|problem| format!("tool not registered: {problem}"));
        Ok(Configured::new(provider).with_problems(problems))
    })
}
