//! Recording a session's model traffic: [`RecordingModel`] wraps any model and writes each
//! request and the response it streamed as one JSON line, for [`ReplayModel`](super::replay::ReplayModel)
//! to play back offline. A recording never holds credentials (they live in the HTTP clients, not
//! in requests), and a [`Redactor`] blanks configured patterns and secret values in what it
//! writes.
//!
//! The file starts with a header line, then one line per request:
//!
//! ```json
//! {"agentry_recording":1,"model":"openai/gpt-4.1","context_window":1047576,"accepts_images":true}
//! {"request":{"system":"…","messages":[…],"tools":[…]},"events":[{"type":"text_delta","text":"Hi"},…]}
//! {"request":{…},"events":[…],"error":{"api":{"status":529,"message":"overloaded"}}}
//! ```

use super::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
use crate::sync::lock;
use futures::Stream;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// The format version a recording's header names.
pub const RECORDING_VERSION: u32 = 1;

/// What stands in for a redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// The environment block's lines that change with the machine and the day (see
/// [`crate::prompt::environment_block`]).
const ENVIRONMENT_LINES: [&str; 3] = [
    r"(?m)^Working directory: .*$",
    r"(?m)^Platform: .*$",
    r"(?m)^Date: .*$",
];

/// A recording's first line: the model it was made with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// The format version ([`RECORDING_VERSION`]).
    pub agentry_recording: u32,
    /// The recorded model's name.
    pub model: String,
    /// Its context window, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Whether it takes images.
    pub accepts_images: bool,
}

/// One recorded request and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// The request, redacted.
    pub request: ModelRequest,
    /// The events streamed back, in order (redacted).
    #[serde(default)]
    pub events: Vec<ModelEvent>,
    /// How the response failed, if it did (before or during the stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordedError>,
    /// Whether the agent stopped reading before the response ended (a cancelled turn).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// A model error as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedError {
    /// [`ModelError::Config`].
    Config(String),
    /// [`ModelError::Api`].
    Api {
        /// The HTTP status.
        status: Option<u16>,
        /// The provider's message.
        message: String,
    },
    /// [`ModelError::Connection`].
    Connection(String),
    /// [`ModelError::Protocol`] (and the other kinds).
    Protocol(String),
}

impl From<&ModelError> for RecordedError {
    fn from(error: &ModelError) -> Self {
        match error {
            ModelError::Config(message) => RecordedError::Config(message.clone()),
            ModelError::Api { status, message } => RecordedError::Api {
                status: *status,
                message: message.clone(),
            },
            ModelError::Connection(message) => RecordedError::Connection(message.clone()),
            other => RecordedError::Protocol(other.to_string()),
        }
    }
}

impl From<RecordedError> for ModelError {
    fn from(error: RecordedError) -> Self {
        match error {
            RecordedError::Config(message) => ModelError::Config(message),
            RecordedError::Api { status, message } => ModelError::Api { status, message },
            RecordedError::Connection(message) => ModelError::Connection(message),
            RecordedError::Protocol(message) => ModelError::Protocol(message),
        }
    }
}

/// Blanks secrets in what is recorded: every match of its patterns, and every occurrence of its
/// literal secrets (the values of API keys in the environment, say), become [`REDACTED`].
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    patterns: Vec<Regex>,
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor for these regular expressions (an invalid one is an error naming it).
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        let patterns = patterns
            .iter()
            .map(|pattern| {
                Regex::new(pattern).map_err(|e| format!("redaction pattern `{pattern}`: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            patterns,
            secrets: Vec::new(),
        })
    }

    /// Also blanks these exact values (values shorter than 8 characters are left alone: they
    /// would blank ordinary words).
    pub fn with_secrets(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        self.secrets
            .extend(secrets.into_iter().filter(|secret| secret.len() >= 8));
        self
    }

    /// Also blanks the lines of the environment block that change with the machine and the day
    /// (working directory, platform, date), so that a recording replays anywhere, any day: a
    /// replay takes `[REDACTED]` for whatever stood there.
    pub fn blank_environment(mut self) -> Self {
        self.patterns.extend(
            ENVIRONMENT_LINES
                .iter()
                .filter_map(|pattern| Regex::new(pattern).ok()),
        );
        self
    }

    /// `text` with its secrets blanked.
    pub fn redact_text(&self, text: &str) -> String {
        let mut text = self.secrets.iter().fold(text.to_owned(), |text, secret| {
            text.replace(secret, REDACTED)
        });
        for pattern in &self.patterns {
            text = pattern.replace_all(&text, REDACTED).into_owned();
        }
        text
    }

    /// `value` with every string in it redacted (keys included).
    pub fn redact<T: Serialize + serde::de::DeserializeOwned + Clone>(&self, value: &T) -> T {
        if self.patterns.is_empty() && self.secrets.is_empty() {
            return value.clone();
        }
        serde_json::to_value(value)
            .and_then(|json| serde_json::from_value(self.redact_json(json)))
            .unwrap_or_else(|_| value.clone())
    }

    fn redact_json(&self, value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(text) => Value::String(self.redact_text(&text)),
            Value::Array(items) => items.into_iter().map(|v| self.redact_json(v)).collect(),
            Value::Object(fields) => fields
                .into_iter()
                .map(|(key, v)| (self.redact_text(&key), self.redact_json(v)))
                .collect(),
            other => other,
        }
    }
}

/// Where recorded lines go: a file, written a whole line at a time.
struct RecordFile {
    file: Mutex<std::fs::File>,
}

impl RecordFile {
    fn write_line<T: Serialize>(&self, line: &T) {
        let mut json = match serde_json::to_vec(line) {
            Ok(json) => json,
            Err(error) => return tracing::warn!("a model exchange could not be recorded: {error}"),
        };
        json.push(b'\n');
        let mut file = lock(&self.file);
        if let Err(error) = file.write_all(&json).and_then(|()| file.flush()) {
            tracing::warn!("a model exchange could not be recorded: {error}");
        }
    }
}

/// A model that records each request and its response, then hands the response on unchanged.
pub struct RecordingModel {
    inner: Arc<dyn Model>,
    file: Arc<RecordFile>,
    redactor: Arc<Redactor>,
}

impl RecordingModel {
    /// Records `inner`'s traffic to `path` (created readable by the user alone, or truncated
    /// and tightened), redacted by `redactor`.
    pub fn create(inner: Arc<dyn Model>, path: &Path, redactor: Redactor) -> std::io::Result<Self> {
        let file = agentry_plugin::private::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        agentry_plugin::private::file(path)?;
        let recording = Self {
            file: Arc::new(RecordFile {
                file: Mutex::new(file),
            }),
            redactor: Arc::new(redactor),
            inner,
        };
        recording.file.write_line(&RecordingHeader {
            agentry_recording: RECORDING_VERSION,
            model: recording.inner.name(),
            context_window: recording.inner.context_window(),
            accepts_images: recording.inner.accepts_images(),
        });
        Ok(recording)
    }

    /// The same recording for another model (a session switched models): its exchanges go on
    /// in the same file.
    pub fn with_model(&self, inner: Arc<dyn Model>) -> Self {
        Self {
            inner,
            file: Arc::clone(&self.file),
            redactor: Arc::clone(&self.redactor),
        }
    }
}

#[async_trait::async_trait]
impl Model for RecordingModel {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn context_window(&self) -> Option<u64> {
        self.inner.context_window()
    }

    fn accepts_images(&self) -> bool {
        self.inner.accepts_images()
    }

    fn price(&self) -> Option<crate::cost::Price> {
        self.inner.price()
    }

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let mut exchange = Exchange {
            request: self.redactor.redact(&request),
            events: Vec::new(),
            error: None,
            interrupted: false,
        };
        match self.inner.stream(request).await {
            Ok(stream) => Ok(Box::pin(Recorded {
                stream,
                exchange: Some(exchange),
                file: Arc::clone(&self.file),
                redactor: Arc::clone(&self.redactor),
            })),
            Err(error) => {
                exchange.error = Some(RecordedError::from(&error));
                self.file.write_line(&exchange);
                Err(error)
            }
        }
    }
}

/// A response being recorded: written once it ends, fails, or is dropped unfinished.
struct Recorded {
    stream: ModelStream,
    exchange: Option<Exchange>,
    file: Arc<RecordFile>,
    redactor: Arc<Redactor>,
}

impl Recorded {
    /// Writes the exchange (its events redacted now, off the streaming path), once.
    fn finish(&mut self, interrupted: bool) {
        if let Some(mut exchange) = self.exchange.take() {
            exchange.interrupted = interrupted;
            exchange.events = self.redactor.redact(&exchange.events);
            self.file.write_line(&exchange);
        }
    }
}

impl Stream for Recorded {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.stream.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(event))) => {
                let finished = matches!(event, ModelEvent::Finished { .. });
                let event = event.clone();
                if let Some(exchange) = &mut self.exchange {
                    exchange.events.push(event);
                }
                // The reader may stop at the last event without asking for the end.
                if finished {
                    self.finish(false);
                }
            }
            Poll::Ready(Some(Err(error))) => {
                if let Some(exchange) = &mut self.exchange {
                    exchange.error = Some(RecordedError::from(error));
                }
                self.finish(false);
            }
            Poll::Ready(None) => self.finish(false),
            Poll::Pending => {}
        }
        polled
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        self.finish(true);
    }
}
