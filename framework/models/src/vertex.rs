//! The Vertex AI client. Gemini models go through
//! `{base}/v1/projects/P/locations/L/publishers/google/models/MODEL:streamGenerateContent?alt=sse`
//! with the Gemini API's body, read by the Gemini decoder (which reads Vertex's own chunks too);
//! Claude models (`claude-…`) through `…/publishers/anthropic/models/MODEL:streamRawPredict`
//! with Anthropic's Messages body (no `model`, `anthropic_version: "vertex-2023-10-16"`), read
//! by the Anthropic decoder. Each request carries a Google access token from Application
//! Default Credentials ([`crate::google`]).

use crate::anthropic::hosted_messages_body;
use crate::gemini::stream_generated;
use crate::google::GoogleTokens;
use crate::http::{Endpoint, HttpOptions};
use crate::wire::anthropic;
use agentry::model::{Model, ModelError, ModelRequest, ModelStream};
use reqwest::header::HeaderMap;
use std::sync::Arc;

/// The `anthropic_version` Vertex AI's Claude models take.
pub const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// Settings of a Vertex AI client.
#[derive(Debug, Clone)]
pub struct VertexSettings {
    /// The name users know the model by (`vertex/gemini-2.5-pro`).
    pub display_name: String,
    /// The model id (`gemini-2.5-pro`, `claude-sonnet-4-5@20250929`).
    pub model: String,
    /// The API's base URL, without `/v1` (`https://aiplatform.googleapis.com` for the `global`
    /// location, `https://LOCATION-aiplatform.googleapis.com` for the others).
    pub base_url: String,
    /// The Google Cloud project.
    pub project: String,
    /// The location (`global`, `us-east5`, …).
    pub location: String,
    /// Where the access tokens come from.
    pub tokens: Arc<GoogleTokens>,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// The most output tokens per response.
    pub max_output_tokens: u32,
    /// Timeouts and retries.
    pub http: HttpOptions,
}

/// Whose model it is, which decides the path and the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VertexPublisher {
    /// Google's Gemini models.
    Google,
    /// Anthropic's Claude models.
    Anthropic,
}

impl VertexPublisher {
    /// The publisher of a model id.
    pub fn of(model: &str) -> Self {
        if model.starts_with("claude") {
            Self::Anthropic
        } else {
            Self::Google
        }
    }
}

/// A model on Vertex AI.
#[derive(Debug)]
pub struct VertexModel {
    settings: VertexSettings,
    publisher: VertexPublisher,
    endpoint: Endpoint,
}

impl VertexModel {
    /// A client with these settings.
    pub fn new(settings: VertexSettings) -> Self {
        let publisher = VertexPublisher::of(&settings.model);
        let (path, method) = match publisher {
            VertexPublisher::Google => ("google", "streamGenerateContent?alt=sse"),
            VertexPublisher::Anthropic => ("anthropic", "streamRawPredict"),
        };
        let url = format!(
            "{}/v1/projects/{}/locations/{}/publishers/{path}/models/{}:{method}",
            settings.base_url.trim_end_matches('/'),
            settings.project,
            settings.location,
            settings.model
        );
        let endpoint = Endpoint::new(url, HeaderMap::new(), settings.http.clone())
            .authorized_by(settings.tokens.clone());
        Self {
            settings,
            publisher,
            endpoint,
        }
    }

    /// Whose model it is.
    pub fn publisher(&self) -> VertexPublisher {
        self.publisher
    }
}

#[agentry::async_trait]
impl Model for VertexModel {
    described_by_settings!();

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let max = self.settings.max_output_tokens;
        let limit = request.output_limit(Some(max)).unwrap_or(max);
        let endpoint = self.endpoint.clone();
        Ok(match self.publisher {
            VertexPublisher::Google => {
                stream_generated(endpoint, &self.settings.model, &request, Some(limit))
            }
            VertexPublisher::Anthropic => endpoint.stream(
                &hosted_messages_body(&request, limit, VERTEX_ANTHROPIC_VERSION, true),
                anthropic::Decoder::new,
            ),
        })
    }
}
