//! Azure OpenAI: a deployment behind the OpenAI client, at Azure's URLs with Azure's key
//! header. The v1 API (`{endpoint}/openai/v1/chat/completions`, or `/responses`, the deployment
//! named as the `model`) by default; the classic, dated one
//! (`{endpoint}/openai/deployments/{DEPLOYMENT}/chat/completions?api-version=V`) when an API
//! version is given. The key goes in `api-key`. Azure's stream quirks are read by the OpenAI
//! decoders.

use crate::http::{Endpoint, HttpOptions, credential_header};
use crate::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use agentry::model::ModelError;
use reqwest::header::{HeaderMap, HeaderName};

/// Settings of an Azure OpenAI deployment.
#[derive(Debug, Clone)]
pub struct AzureSettings {
    /// The name users know the model by (`azure/gpt-4o-prod`).
    pub display_name: String,
    /// The deployment's name.
    pub deployment: String,
    /// The resource's endpoint (`https://RESOURCE.openai.azure.com`).
    pub endpoint: String,
    /// The classic API's version (`2024-10-21`); the v1 API when `None`.
    pub api_version: Option<String>,
    /// The resource's key.
    pub api_key: String,
    /// Chat Completions or Responses.
    pub api: OpenAiApi,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// The most output tokens to ask for.
    pub max_output_tokens: Option<u32>,
    /// Timeouts and retries.
    pub http: HttpOptions,
}

impl AzureSettings {
    /// The URL requests go to.
    pub fn url(&self) -> String {
        let endpoint = self.endpoint.trim_end_matches('/');
        let path = match self.api {
            OpenAiApi::ChatCompletions => "chat/completions",
            OpenAiApi::Responses => "responses",
        };
        match (&self.api_version, self.api) {
            (None, _) => format!("{endpoint}/openai/v1/{path}"),
            (Some(version), OpenAiApi::ChatCompletions) => format!(
                "{endpoint}/openai/deployments/{}/{path}?api-version={version}",
                self.deployment
            ),
            (Some(version), OpenAiApi::Responses) => {
                format!("{endpoint}/openai/{path}?api-version={version}")
            }
        }
    }
}

/// A client of an Azure OpenAI deployment.
pub fn azure_openai(settings: AzureSettings) -> Result<OpenAiModel, ModelError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        HeaderName::from_static("api-key"),
        credential_header(&settings.api_key, "the API key")?,
    );
    let endpoint = Endpoint::new(settings.url(), headers, settings.http.clone());
    Ok(OpenAiModel::at(
        OpenAiSettings {
            display_name: settings.display_name,
            // The v1 API wants the deployment as the model; the classic one ignores it.
            model: settings.deployment,
            base_url: settings.endpoint,
            api_key: None,
            api: settings.api,
            context_window: settings.context_window,
            images: settings.images,
            max_output_tokens: settings.max_output_tokens,
            http: settings.http,
        },
        endpoint,
    ))
}
