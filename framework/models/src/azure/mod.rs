//! Azure OpenAI and Claude on Azure AI Foundry. An Azure OpenAI deployment is reached through
//! the OpenAI client at Azure's URLs: the v1 API (`{endpoint}/openai/v1/chat/completions`, or
//! `/responses`, the deployment named as the `model`) by default; the classic, dated one
//! (`{endpoint}/openai/deployments/{DEPLOYMENT}/chat/completions?api-version=V`) when an API
//! version is given. Azure's stream quirks are read by the OpenAI decoders. Claude on Foundry
//! is Anthropic's Messages API at the resource's `/anthropic` URL ([`foundry_claude`]). Either
//! is authorized by the resource's key (`api-key`, `x-api-key`) or by Microsoft Entra ID tokens
//! ([`entra`]).

pub mod entra;

use crate::anthropic::{AnthropicModel, AnthropicSettings};
use crate::auth::BearerTokens;
use crate::http::{Endpoint, HttpOptions, credential_header};
use crate::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use crate::secret::Secret;
use agentry::model::ModelError;
use entra::EntraSource;
use reqwest::header::{HeaderMap, HeaderName};
use std::sync::Arc;

/// Microsoft Entra ID tokens, kept until shortly before they expire.
pub type EntraTokens = BearerTokens<EntraSource>;

/// How requests to an Azure resource are authorized.
#[derive(Debug, Clone)]
pub enum AzureAuth {
    /// The resource's key.
    ApiKey(Secret),
    /// Microsoft Entra ID tokens, one per attempt, as `Authorization: Bearer`.
    Entra(Arc<EntraTokens>),
}

impl AzureAuth {
    /// An endpoint at `url` with `headers`, authorized this way: the key in `key_header`, or
    /// a bearer token.
    fn endpoint(
        &self,
        url: String,
        mut headers: HeaderMap,
        key_header: &'static str,
        http: HttpOptions,
    ) -> Result<Endpoint, ModelError> {
        Ok(match self {
            Self::ApiKey(key) => {
                headers.insert(
                    HeaderName::from_static(key_header),
                    credential_header(key.expose(), "the API key")?,
                );
                Endpoint::new(url, headers, http)
            }
            Self::Entra(tokens) => Endpoint::new(url, headers, http).authorized_by(tokens.clone()),
        })
    }
}

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
    /// The resource's key, or Entra ID tokens.
    pub auth: AzureAuth,
    /// Chat Completions or Responses.
    pub api: OpenAiApi,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// The most output tokens to ask for.
    pub max_output_tokens: Option<u32>,
    /// Whether the deployment's model reasons (see [`OpenAiSettings::reasoning`]); `None`: as
    /// the deployment's name says.
    pub reasoning: Option<bool>,
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
    let endpoint = settings.auth.endpoint(
        settings.url(),
        HeaderMap::new(),
        "api-key",
        settings.http.clone(),
    )?;
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
            reasoning: settings.reasoning,
            http: settings.http,
        },
        endpoint,
    ))
}

/// A Claude model on Azure AI Foundry: Anthropic's Messages API at `settings.base_url`
/// (`https://RESOURCE.services.ai.azure.com/anthropic`), authorized by `auth` (a key in
/// `x-api-key`, as on Anthropic's API; `settings.api_key` is not used).
pub fn foundry_claude(
    settings: AnthropicSettings,
    auth: &AzureAuth,
) -> Result<AnthropicModel, ModelError> {
    let endpoint = auth.endpoint(
        AnthropicModel::url(&settings),
        AnthropicModel::version_headers(),
        "x-api-key",
        settings.http.clone(),
    )?;
    Ok(AnthropicModel::at(settings, endpoint))
}
