//! The Gemini API client: `POST {base}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse`
//! with the key in `x-goog-api-key`, the body of [`request`], the stream read by
//! [`wire::gemini`](crate::wire::gemini), tool names Gemini would refuse mapped there and back
//! ([`tool_names::GEMINI`](crate::tool_names::GEMINI)).

pub mod request;

use crate::http::{Endpoint, HttpOptions, credential_header};
use crate::secret::Secret;
use crate::tool_names::GEMINI;
use crate::wire::gemini::Decoder;
use agentry::model::{Model, ModelError, ModelRequest, ModelStream};
use reqwest::header::{HeaderMap, HeaderName};

/// Settings of a Gemini API client.
#[derive(Debug, Clone)]
pub struct GeminiSettings {
    /// The name users know the model by (`gemini/gemini-2.5-pro`).
    pub display_name: String,
    /// The model id the API takes.
    pub model: String,
    /// The API base URL (`https://generativelanguage.googleapis.com`).
    pub base_url: String,
    /// The API key.
    pub api_key: Secret,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// The most output tokens per response (the model's own when `None`).
    pub max_output_tokens: Option<u32>,
    /// Timeouts and retries.
    pub http: HttpOptions,
}

/// A model behind the Gemini API.
#[derive(Debug)]
pub struct GeminiModel {
    settings: GeminiSettings,
    endpoint: Endpoint,
}

impl GeminiModel {
    /// A client with these settings.
    pub fn new(settings: GeminiSettings) -> Result<Self, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("x-goog-api-key"),
            credential_header(settings.api_key.expose(), "the API key")?,
        );
        let url = format!(
            "{}/v1beta/models/{}:streamGenerateContent?alt=sse",
            settings.base_url.trim_end_matches('/'),
            settings.model
        );
        let endpoint = Endpoint::new(url, headers, settings.http.clone());
        Ok(Self { settings, endpoint })
    }
}

#[agentry::async_trait]
impl Model for GeminiModel {
    described_by_settings!();

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let limit = request.output_limit(self.settings.max_output_tokens);
        Ok(stream_generated(
            self.endpoint.clone(),
            &self.settings.model,
            &request,
            limit,
        ))
    }
}

/// Posts `request` to a `streamGenerateContent` endpoint (the Gemini API's or Vertex AI's) and
/// decodes the answer, the tool names Gemini would refuse mapped back.
pub(crate) fn stream_generated(
    endpoint: Endpoint,
    model: &str,
    request: &ModelRequest,
    limit: Option<u32>,
) -> ModelStream {
    let body = request::generate_body(model, request, limit);
    let originals = GEMINI.originals(request.tools.iter().map(|t| t.name.as_str()));
    endpoint.stream(&body, move || Decoder::with_names(originals.clone()))
}
