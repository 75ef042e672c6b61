//! The HTTP side shared by the hosted-model clients: one `reqwest` client, connect and idle
//! timeouts, retries of 429 / 5xx / overloaded answers with exponential backoff and jitter that
//! honour `retry-after`, and headers that authorize each attempt afresh where a fixed key will
//! not do (`Authorize`: a signature, a token that expires). Each retry is announced as a
//! [`ModelEvent::Notice`] in the stream.

use crate::wire::framing::{self, Framing};
use crate::wire::{StreamDecoder, clip};
use agentry::model::{ModelError, ModelEvent, ModelStream};
use agentry_plugin::error_text::with_causes;
use bytes::Bytes;
use futures::StreamExt;
use rand::Rng;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Timeouts and retry policy of a model client.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long a response may send nothing before it counts as stalled.
    pub idle_timeout: Duration,
    /// How many times a retryable failure is retried.
    pub max_retries: u32,
    /// The first backoff; it doubles with each retry (with jitter), up to `max_backoff`.
    pub initial_backoff: Duration,
    /// The longest wait between attempts (a longer `retry-after` is still honoured).
    pub max_backoff: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(120),
            max_retries: 4,
            initial_backoff: Duration::from_millis(1000),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// The headers that authorize one attempt of a request, made when it is sent: a signature over
/// it (SigV4), or a bearer token fetched and refreshed before it expires.
#[agentry::async_trait]
pub(crate) trait Authorize: Send + Sync + std::fmt::Debug {
    /// The headers that authorize posting `body` to `url` now; an error names the credential
    /// that is missing or was refused, and where it was looked for.
    async fn headers(&self, url: &reqwest::Url, body: &[u8]) -> Result<HeaderMap, ModelError>;
}

/// A header carrying a credential (a key, a token, a signature), marked sensitive so that no
/// `Debug` of the request shows it; `what` names the credential when it cannot be a header.
pub(crate) fn credential_header(value: &str, what: &str) -> Result<HeaderValue, ModelError> {
    let mut header = HeaderValue::from_str(value)
        .map_err(|_| ModelError::Config(format!("{what} has characters a header cannot carry")))?;
    header.set_sensitive(true);
    Ok(header)
}

/// Where requests of one client go. The HTTP client (which reads the system's root
/// certificates) is built at the first request, not when the agent starts: an editor's agent
/// answers `initialize` without it.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    pub url: String,
    pub headers: HeaderMap,
    pub options: HttpOptions,
    authorize: Option<Arc<dyn Authorize>>,
}

impl Endpoint {
    pub fn new(url: String, headers: HeaderMap, options: HttpOptions) -> Self {
        Self {
            client: Arc::default(),
            url,
            headers,
            options,
            authorize: None,
        }
    }

    /// Authorizes each attempt with `authorize`'s headers too.
    #[cfg(any(feature = "azure", feature = "bedrock", feature = "vertex"))]
    pub fn authorized_by(mut self, authorize: Arc<dyn Authorize>) -> Self {
        self.authorize = Some(authorize);
        self
    }

    /// The HTTP client, built the first time it is needed.
    fn client(&self) -> Result<&reqwest::Client, ModelError> {
        self.client
            .get_or_init(|| {
                reqwest::Client::builder()
                    .connect_timeout(self.options.connect_timeout)
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))
            })
            .as_ref()
            .map_err(|e| ModelError::Config(e.clone()))
    }

    /// Posts `body` and decodes the streamed answer, cut into events of format `I`, with a
    /// fresh decoder from `decoder`.
    pub fn stream<I, D, F>(self, body: &Value, decoder: F) -> ModelStream
    where
        I: Framing,
        D: StreamDecoder<I> + 'static,
        F: Fn() -> D + Send + 'static,
    {
        // Serialized once: every attempt sends (and signs) the same bytes.
        let body = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
        let state = Phase::Send { attempt: 1 };
        Box::pin(futures::stream::unfold(
            (state, self, body, decoder),
            |(phase, endpoint, body, decoder)| async move {
                let mut phase = phase;
                loop {
                    match phase {
                        Phase::Done => return None,
                        Phase::Stream(mut inner) => {
                            let next = inner.next().await?;
                            return Some((next, (Phase::Stream(inner), endpoint, body, decoder)));
                        }
                        Phase::Wait { attempt, delay } => {
                            tokio::time::sleep(delay).await;
                            phase = Phase::Send { attempt };
                        }
                        Phase::Send { attempt } => match endpoint.attempt(&body, attempt).await {
                            Attempt::Streaming(response) => {
                                let idle = endpoint.options.idle_timeout;
                                phase = Phase::Stream(framing::decode::<I, _, _, _>(
                                    response.bytes_stream(),
                                    decoder(),
                                    idle,
                                ));
                            }
                            Attempt::Retry { delay, why } => {
                                let notice = ModelEvent::Notice {
                                    message: format!(
                                        "{why}; retrying in {:.1} s (attempt {} of {})",
                                        delay.as_secs_f32(),
                                        attempt + 1,
                                        endpoint.options.max_retries + 1
                                    ),
                                };
                                let next = Phase::Wait {
                                    attempt: attempt + 1,
                                    delay,
                                };
                                return Some((Ok(notice), (next, endpoint, body, decoder)));
                            }
                            Attempt::Failed(error) => {
                                return Some((Err(error), (Phase::Done, endpoint, body, decoder)));
                            }
                        },
                    }
                }
            },
        ))
    }

    /// The request of one attempt, with its authorization made now.
    async fn request(&self, body: &Bytes) -> Result<reqwest::RequestBuilder, ModelError> {
        let mut headers = self.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(authorize) = &self.authorize {
            let url = reqwest::Url::parse(&self.url)
                .map_err(|e| ModelError::Config(format!("`{}` is not a URL: {e}", self.url)))?;
            headers.extend(authorize.headers(&url, body).await?);
        }
        let client = self.client()?;
        Ok(client.post(&self.url).headers(headers).body(body.clone()))
    }

    async fn attempt(&self, body: &Bytes, attempt: u32) -> Attempt {
        let may_retry = attempt <= self.options.max_retries;
        let request = match self.request(body).await {
            Ok(request) => request,
            Err(error) => return Attempt::Failed(error),
        };
        let sent = request.send().await;
        let response = match sent {
            Ok(response) => response,
            Err(error) if may_retry && (error.is_connect() || error.is_timeout()) => {
                return Attempt::Retry {
                    delay: self.backoff(attempt, None),
                    why: format!("cannot reach the model ({})", with_causes(&error)),
                };
            }
            Err(error) => {
                return Attempt::Failed(ModelError::Connection(format!(
                    "{}: {}",
                    self.url,
                    with_causes(&error)
                )));
            }
        };
        let status = response.status();
        if status.is_success() {
            return Attempt::Streaming(response);
        }
        let retry_after = retry_after(response.headers());
        let error_type = error_type(response.headers());
        let text = response.text().await.unwrap_or_default();
        let message = match error_type {
            Some(kind) => format!("{} [{kind}]", error_message(&text)),
            None => error_message(&text),
        };
        let overloaded = text.contains("overloaded_error");
        let retryable = status.as_u16() == 429 || status.is_server_error() || overloaded;
        if retryable && may_retry {
            return Attempt::Retry {
                delay: self.backoff(attempt, retry_after),
                why: format!("the model answered HTTP {} ({message})", status.as_u16()),
            };
        }
        Attempt::Failed(ModelError::Api {
            status: Some(status.as_u16()),
            message,
        })
    }

    /// The wait before attempt `attempt + 1`: `retry-after` when the server gave one, else
    /// exponential backoff with full jitter in its upper half.
    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait;
        }
        let base = self
            .options
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
            .min(self.options.max_backoff);
        base.mul_f64(rand::rng().random_range(0.5..=1.0))
    }
}

enum Phase {
    Send { attempt: u32 },
    Wait { attempt: u32, delay: Duration },
    Stream(ModelStream),
    Done,
}

enum Attempt {
    Streaming(reqwest::Response),
    Retry { delay: Duration, why: String },
    Failed(ModelError),
}

/// `retry-after-ms`, or `retry-after` in seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

/// The error's type, where the service names it in a header (AWS's `x-amzn-ErrorType`,
/// `ThrottlingException:http://…`, without what follows the colon).
fn error_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("x-amzn-errortype")?.to_str().ok()?;
    let kind = value.split(':').next().unwrap_or(value).trim();
    (!kind.is_empty()).then(|| kind.to_owned())
}

/// The provider's message in an error body (`{"error": {"message": …}}` in most APIs; Google's
/// JSON-array answers wrap it in a list).
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let parsed = match parsed {
        Some(Value::Array(mut items)) if !items.is_empty() => Some(items.swap_remove(0)),
        other => other,
    };
    // Bedrock says `{"message": …}`, sometimes `{"Message": …}`.
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("Message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    match message {
        Some(message) => message,
        None if body.trim().is_empty() => "no error message".to_owned(),
        None => clip(body.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn a_credential_header_never_shows_in_debug_output() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-api-key",
            credential_header("sk-secret-1", "the key").unwrap(),
        );
        let endpoint = Endpoint::new(String::new(), headers, HttpOptions::default());
        assert!(!format!("{endpoint:?}").contains("sk-secret-1"));
        let refused = credential_header("line\nbreak", "the key").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "model configuration: the key has characters a header cannot carry"
        );
    }

    #[test]
    fn retry_after_reads_milliseconds_then_seconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
    }

    #[test]
    fn backoff_doubles_within_jitter_and_caps() {
        let endpoint = Endpoint::new(String::new(), HeaderMap::new(), HttpOptions::default());
        for attempt in 1..8 {
            let wait = endpoint.backoff(attempt, None);
            let full = Duration::from_secs(1)
                .saturating_mul(2u32.pow(attempt - 1))
                .min(Duration::from_secs(30));
            assert!(
                wait >= full / 2 && wait <= full,
                "attempt {attempt}: {wait:?}"
            );
        }
        assert_eq!(
            endpoint.backoff(1, Some(Duration::from_secs(90))),
            Duration::from_secs(90)
        );
    }

    #[test]
    fn error_messages_come_from_either_api_shape() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key","type":"auth"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}"#
            ),
            "max_tokens: too big"
        );
        assert_eq!(error_message("upstream down"), "upstream down");
        assert_eq!(
            error_message(
                r#"[{"error":{"code":429,"message":"Resource exhausted.","status":"RESOURCE_EXHAUSTED"}}]"#
            ),
            "Resource exhausted."
        );
    }
}
