//! The search back-ends, each speaking its service's own API: SearXNG (`/search?format=json`),
//! the Brave Search API, Tavily, and any JSON API read through configured field paths. Errors
//! say which back-end answered what, and quota and rate limits are named as such.

use crate::hit::Hit;
use crate::settings::{BackendName, HOW_TO_CONFIGURE, JsonFields, SearchSettings};
use serde_json::{Value, json};
use std::time::Duration;

/// Why a search failed; the message is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// No back-end is configured.
    #[error("{HOW_TO_CONFIGURE}")]
    NotConfigured,
    /// The configuration cannot be used.
    #[error("[web_search]: {0}")]
    Settings(String),
    /// The back-end answered with an error.
    #[error("{backend} answered {status}{}: {message}", if *.quota { " (a quota or rate limit: wait, or raise the plan's limit)" } else { "" })]
    Api {
        /// Which back-end.
        backend: &'static str,
        /// The HTTP status.
        status: u16,
        /// Whether it is a quota or rate limit.
        quota: bool,
        /// What the back-end said.
        message: String,
    },
    /// The answer is not what the back-end's API returns.
    #[error("{backend} sent an answer WebSearch cannot read: {message}")]
    Unreadable {
        /// Which back-end.
        backend: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The request did not get through.
    #[error("{backend} could not be reached: {message}")]
    Transport {
        /// Which back-end.
        backend: &'static str,
        /// Why.
        message: String,
    },
}

/// A configured back-end.
#[derive(Debug, Clone)]
pub struct Backend {
    name: BackendName,
    url: String,
    api_key: Option<String>,
    max_results: usize,
    json: Option<JsonFields>,
    client: reqwest::Client,
}

impl Backend {
    /// The back-end `settings` describe (`${ENV}` in the key and headers expanded now, from the
    /// process's environment).
    pub fn new(settings: &SearchSettings) -> Result<Self, SearchError> {
        Self::with_env(settings, &|name| std::env::var(name).ok())
    }

    /// [`Backend::new`] with `${ENV}` read through `env`.
    pub fn with_env(
        settings: &SearchSettings,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SearchError> {
        let expand = |text: &str| {
            agentry_plugin::env_vars::expand_with(text, |name| env(name))
                .map_err(SearchError::Settings)
        };
        let url = match (settings.backend, &settings.url) {
            (_, Some(url)) => url.trim_end_matches('/').to_owned(),
            (BackendName::Brave, None) => "https://api.search.brave.com".to_owned(),
            (BackendName::Tavily, None) => "https://api.tavily.com".to_owned(),
            (BackendName::Searxng, None) => {
                return Err(SearchError::Settings(
                    "backend = \"searxng\" needs url = \"http://your-searxng\"".to_owned(),
                ));
            }
            (BackendName::Json, None) => {
                return Err(SearchError::Settings(
                    "backend = \"json\" needs url = \"https://…?q={query}\"".to_owned(),
                ));
            }
        };
        let api_key = settings.api_key.as_deref().map(expand).transpose()?;
        if matches!(settings.backend, BackendName::Brave | BackendName::Tavily) && api_key.is_none()
        {
            return Err(SearchError::Settings(format!(
                "backend = \"{}\" needs api_key (\"${{ENV_VAR}}\" keeps it out of the file)",
                label(settings.backend)
            )));
        }
        let json = match (settings.backend, &settings.json) {
            (BackendName::Json, None) => {
                return Err(SearchError::Settings(
                    "backend = \"json\" needs a [web_search.json] table: results, title, url (and snippet)".to_owned(),
                ));
            }
            (_, Some(fields)) => {
                let mut fields = fields.clone();
                for value in fields.headers.values_mut() {
                    *value = expand(value)?;
                }
                Some(fields)
            }
            (_, None) => None,
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(settings.timeout_secs.unwrap_or(20)))
            .user_agent(concat!("agentry-search/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SearchError::Settings(e.to_string()))?;
        Ok(Self {
            name: settings.backend,
            url,
            api_key,
            max_results: settings.max_results.unwrap_or(10).clamp(1, 50),
            json,
            client,
        })
    }

    /// The back-end's name.
    pub fn label(&self) -> &'static str {
        label(self.name)
    }

    /// Searches for `query`, asking the back-end to keep to `allowed` / away from `blocked`
    /// domains where its API can (the caller filters the results in any case).
    pub async fn search(
        &self,
        query: &str,
        allowed: &[String],
        blocked: &[String],
    ) -> Result<Vec<Hit>, SearchError> {
        let request = match self.name {
            BackendName::Searxng => self
                .client
                .get(format!("{}/search", self.url))
                .query(&[("q", query), ("format", "json")]),
            BackendName::Brave => self
                .client
                .get(format!("{}/res/v1/web/search", self.url))
                .query(&[("q", query), ("count", &self.max_results.to_string())])
                .header("Accept", "application/json")
                .header(
                    "X-Subscription-Token",
                    self.api_key.as_deref().unwrap_or_default(),
                ),
            BackendName::Tavily => self
                .client
                .post(format!("{}/search", self.url))
                .bearer_auth(self.api_key.as_deref().unwrap_or_default())
                .json(&json!({
                    "query": query,
                    "max_results": self.max_results,
                    "include_domains": allowed,
                    "exclude_domains": blocked,
                })),
            BackendName::Json => self.json_request(query),
        };
        let answer = self.send(request).await?;
        let hits = match self.name {
            BackendName::Searxng => read_list(&answer, "results", "title", "url", Some("content")),
            BackendName::Brave => {
                read_list(&answer, "web.results", "title", "url", Some("description"))
            }
            BackendName::Tavily => read_list(&answer, "results", "title", "url", Some("content")),
            BackendName::Json => {
                let fields = self.json.as_ref().ok_or(SearchError::NotConfigured)?;
                read_list(
                    &answer,
                    &fields.results,
                    &fields.title,
                    &fields.url,
                    fields.snippet.as_deref(),
                )
            }
        };
        let mut hits = hits.map_err(|message| SearchError::Unreadable {
            backend: self.label(),
            message,
        })?;
        hits.truncate(self.max_results);
        Ok(hits)
    }

    fn json_request(&self, query: &str) -> reqwest::RequestBuilder {
        let fields = self.json.as_ref();
        let encoded: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        let count = self.max_results.to_string();
        let url = self
            .url
            .replace("{query}", &encoded)
            .replace("{count}", &count);
        let post = fields
            .and_then(|f| f.method.as_deref())
            .is_some_and(|m| m.eq_ignore_ascii_case("POST"));
        let mut request = if post {
            self.client
                .post(url)
                .json(&json!({"query": query, "count": self.max_results}))
        } else {
            self.client.get(url)
        };
        for (name, value) in fields.map(|f| f.headers.iter()).into_iter().flatten() {
            request = request.header(name, value);
        }
        request
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, SearchError> {
        let backend = self.label();
        let transport = |e: reqwest::Error| SearchError::Transport {
            backend,
            message: if e.is_timeout() {
                "timed out".to_owned()
            } else {
                e.to_string()
            },
        };
        let response = request.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let body = response.text().await.map_err(transport)?;
        if !(200..300).contains(&status) {
            return Err(SearchError::Api {
                backend,
                status,
                quota: matches!(status, 402 | 429 | 432 | 433),
                message: error_message(&body),
            });
        }
        serde_json::from_str(&body).map_err(|e| SearchError::Unreadable {
            backend,
            message: format!("not JSON ({e}): {}", start(&body)),
        })
    }
}

fn label(name: BackendName) -> &'static str {
    match name {
        BackendName::Searxng => "SearXNG",
        BackendName::Brave => "Brave Search",
        BackendName::Tavily => "Tavily",
        BackendName::Json => "the JSON search API",
    }
}

/// The first 300 characters of `text`.
fn start(text: &str) -> String {
    text.chars().take(300).collect::<String>().trim().to_owned()
}

/// What an error answer says: the message fields the services use (Brave's `error.detail`,
/// Tavily's `detail.error`, a plain `detail`, `error` or `message`), else its start.
fn error_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return start(body);
    };
    [
        "/error/detail",
        "/detail/error",
        "/detail",
        "/error/message",
        "/error",
        "/message",
    ]
    .iter()
    .find_map(|pointer| value.pointer(pointer).and_then(Value::as_str))
    .map_or_else(|| start(body), str::to_owned)
}

/// The value at a dotted path (`web.results`, `items.0.link`); empty: the value itself.
fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .filter(|part| !part.is_empty())
        .try_fold(value, |value, part| match value {
            Value::Array(items) => items.get(part.parse::<usize>().ok()?),
            other => other.get(part),
        })
}

/// The results at `list`, each read through the `title`, `url` and `snippet` paths.
fn read_list(
    answer: &Value,
    list: &str,
    title: &str,
    url: &str,
    snippet: Option<&str>,
) -> Result<Vec<Hit>, String> {
    let Some(items) = at(answer, list) else {
        // A search with no results may leave the list out altogether.
        return Ok(Vec::new());
    };
    let items = items
        .as_array()
        .ok_or_else(|| format!("`{list}` is not a list"))?;
    let text = |item: &Value, path: &str| {
        at(item, path)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(items
        .iter()
        .map(|item| Hit {
            title: text(item, title),
            url: text(item, url),
            snippet: snippet.map(|path| text(item, path)).unwrap_or_default(),
        })
        .filter(|hit| !hit.url.is_empty())
        .collect())
}
