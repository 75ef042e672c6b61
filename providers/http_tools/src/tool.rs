//! One configured HTTP tool: its schema as the model sees it, and a call — the model's JSON
//! input sent to a plain endpoint, or to a LangServe runnable's `invoke` — whose answer becomes
//! the result, and whose failures (an error status, an answer that is not JSON, a timeout)
//! become failed calls carrying the server's message.

use agentry_plugin::tool::{
    DynTool, PreparedCall, ToolCallLocation, ToolContext, ToolError, ToolKind, ToolOutput,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Where and how a tool's calls go.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A plain HTTP endpoint.
    Plain {
        /// Its URL.
        url: String,
        /// `GET` puts the input's fields in the query; otherwise the input is the JSON body.
        get: bool,
    },
    /// A LangServe runnable: `POST {base}/invoke` with `{"input": …}`, answering `{"output": …}`.
    LangServe {
        /// The runnable's base URL.
        base: String,
        /// Whether the model's input wraps the runnable's under `input` (a runnable whose input
        /// is not an object).
        wrapped: bool,
    },
}

/// A tool registered by configuration.
pub struct HttpTool {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its kind.
    pub kind: ToolKind,
    /// Its input schema.
    pub input_schema: Value,
    /// Where calls go.
    pub endpoint: Endpoint,
    /// Headers sent with each call.
    pub headers: Vec<(String, String)>,
    /// How long a call may take.
    pub timeout: Duration,
    /// The HTTP client.
    pub client: reqwest::Client,
}

impl DynTool for HttpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn kind(&self) -> ToolKind {
        self.kind
    }

    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }

    fn prepare(&self, input: Value, _cwd: &Path) -> Result<Box<dyn PreparedCall>, ToolError> {
        let request = match &self.endpoint {
            Endpoint::Plain { url, get: true } => {
                let fields = query_fields(&input)?;
                self.client.get(url).query(&fields)
            }
            Endpoint::Plain { url, get: false } => self.client.post(url).json(&input),
            Endpoint::LangServe { base, wrapped } => {
                let input = if *wrapped {
                    input.get("input").cloned().unwrap_or(Value::Null)
                } else {
                    input
                };
                self.client
                    .post(format!("{base}/invoke"))
                    .json(&json!({"input": input, "config": {}, "kwargs": {}}))
            }
        };
        let request = self
            .headers
            .iter()
            .fold(request, |request, (name, value)| {
                request.header(name, value)
            })
            .timeout(self.timeout);
        Ok(Box::new(HttpCall {
            title: self.name.clone(),
            request: Some(request),
            langserve: matches!(self.endpoint, Endpoint::LangServe { .. }),
            timeout: self.timeout,
        }))
    }
}

/// The fields of an object input as query pairs (strings as they are, other values as JSON).
fn query_fields(input: &Value) -> Result<Vec<(String, String)>, ToolError> {
    let Some(object) = input.as_object() else {
        return Err(ToolError::InvalidInput(
            "the input must be a JSON object".to_owned(),
        ));
    };
    Ok(object
        .iter()
        .map(|(name, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (name.clone(), text)
        })
        .collect())
}

struct HttpCall {
    title: String,
    request: Option<reqwest::RequestBuilder>,
    langserve: bool,
    timeout: Duration,
}

impl PreparedCall for HttpCall {
    fn title(&self) -> String {
        self.title.clone()
    }

    fn locations(&self) -> Vec<ToolCallLocation> {
        Vec::new()
    }

    fn run(
        mut self: Box<Self>,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let request = self.request.take();
        Box::pin(async move {
            let request = request.ok_or_else(|| ToolError::failed("the call ran twice"))?;
            let send = async {
                let response = request.send().await?;
                let status = response.status().as_u16();
                let body = response.text().await?;
                Ok::<_, reqwest::Error>((status, body))
            };
            let sent = ctx.cancel.run_until_cancelled(send).await;
            let (status, body) = sent.ok_or(ToolError::Cancelled)?.map_err(|e| {
                if e.is_timeout() {
                    ToolError::failed(format!(
                        "{} did not answer within {} s",
                        self.title,
                        self.timeout.as_secs()
                    ))
                } else {
                    ToolError::failed(format!("{} could not be reached: {e}", self.title))
                }
            })?;
            answer(status, &body, self.langserve).map(ToolOutput::text)
        })
    }
}

/// The result of an answer: its `output` (LangServe) or its body, as text; an error status or
/// an unreadable answer as a failure with the server's message.
pub fn answer(status: u16, body: &str, langserve: bool) -> Result<String, ToolError> {
    let parsed = serde_json::from_str::<Value>(body);
    if !(200..300).contains(&status) {
        let message = parsed
            .as_ref()
            .ok()
            .and_then(error_message)
            .unwrap_or_else(|| body.chars().take(500).collect::<String>().trim().to_owned());
        return Err(ToolError::failed(format!(
            "the server answered {status}: {message}"
        )));
    }
    match (parsed, langserve) {
        (Ok(value), true) => match value.get("output") {
            Some(output) => Ok(text_of(output)),
            None => Err(ToolError::failed(format!(
                "the runnable's answer has no `output`: {}",
                body.chars().take(300).collect::<String>()
            ))),
        },
        (Err(error), true) => Err(ToolError::failed(format!(
            "the runnable's answer is not valid JSON ({error}): {}",
            body.chars().take(300).collect::<String>()
        ))),
        (Ok(value), false) => Ok(text_of(&value)),
        (Err(_), false) => Ok(body.to_owned()),
    }
}

/// A string as it is, anything else as pretty JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// The message of an error answer (FastAPI's `detail`, or `error` / `message`).
fn error_message(value: &Value) -> Option<String> {
    ["/detail", "/error/message", "/error", "/message"]
        .iter()
        .find_map(|pointer| value.pointer(pointer))
        .map(|found| match found {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
}

/// Shared by the tools of one configuration.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .user_agent(concat!("agentry-http-tools/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())
}

/// A tool as a provider's entry.
pub(crate) fn erased(tool: HttpTool) -> Arc<dyn DynTool> {
    Arc::new(tool)
}
