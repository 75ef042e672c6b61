//! The Amazon Bedrock client. Claude models (a model id, inference profile or ARN naming
//! `anthropic.claude…`) go through InvokeModelWithResponseStream with the Anthropic Messages
//! body, read by the Anthropic decoder: the body agentry sends Anthropic, cache breakpoints and
//! thinking signatures exactly as they are there. Every other model goes through
//! ConverseStream ([`converse`]), Bedrock's one format for all of them. Requests are signed
//! with SigV4 (service `bedrock`) from AWS's credential chain, or carry a Bedrock API key
//! (`AWS_BEARER_TOKEN_BEDROCK`) as a bearer token.

pub mod converse;

use crate::anthropic::hosted_messages_body;
use crate::aws::credentials::CredentialChain;
use crate::aws::sigv4::{self, Scope, Unsigned};
use crate::http::{Authorize, Endpoint, HttpOptions, credential_header};
use crate::secret::Secret;
use crate::tool_names::CONVERSE;
use crate::wire::bedrock::{ConverseDecoder, InvokeDecoder};
use agentry::model::{Model, ModelError, ModelRequest, ModelStream};
use percent_encoding::utf8_percent_encode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::sync::Arc;

/// The `anthropic_version` Bedrock's Claude models take.
pub const BEDROCK_ANTHROPIC_VERSION: &str = "bedrock-2023-05-31";

/// How requests to Bedrock are authorized.
#[derive(Debug, Clone)]
pub enum BedrockAuth {
    /// A Bedrock API key, sent as a bearer token.
    ApiKey(Secret),
    /// SigV4 signatures in `region`, with credentials from the chain.
    SigV4 {
        /// The region signed for.
        region: String,
        /// Where the credentials come from.
        credentials: Arc<CredentialChain>,
    },
}

/// Settings of a Bedrock client.
#[derive(Debug, Clone)]
pub struct BedrockSettings {
    /// The name users know the model by (`bedrock/us.anthropic.claude-sonnet-4-5-…`).
    pub display_name: String,
    /// The model id, inference profile id or ARN.
    pub model: String,
    /// The runtime endpoint (`https://bedrock-runtime.REGION.amazonaws.com`).
    pub endpoint: String,
    /// How requests are authorized.
    pub auth: BedrockAuth,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// The most output tokens per response.
    pub max_output_tokens: u32,
    /// Timeouts and retries.
    pub http: HttpOptions,
}

/// Which of Bedrock's streaming APIs a model is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BedrockApi {
    /// ConverseStream, for every model.
    Converse,
    /// InvokeModelWithResponseStream with the Anthropic Messages body, for Claude.
    InvokeClaude,
}

impl BedrockApi {
    /// The API for a model id, inference profile or ARN.
    pub fn for_model(model: &str) -> Self {
        if model.contains("anthropic.claude") {
            Self::InvokeClaude
        } else {
            Self::Converse
        }
    }
}

/// A model on Amazon Bedrock.
#[derive(Debug)]
pub struct BedrockModel {
    settings: BedrockSettings,
    api: BedrockApi,
    endpoint: Endpoint,
}

impl BedrockModel {
    /// A client with these settings.
    pub fn new(settings: BedrockSettings) -> Result<Self, ModelError> {
        let api = BedrockApi::for_model(&settings.model);
        let action = match api {
            BedrockApi::Converse => "converse-stream",
            BedrockApi::InvokeClaude => "invoke-with-response-stream",
        };
        // The id is one path segment, its `:` and `/` (an ARN's) encoded.
        let url = format!(
            "{}/model/{}/{action}",
            settings.endpoint.trim_end_matches('/'),
            utf8_percent_encode(&settings.model, sigv4::UNRESERVED)
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("accept"),
            HeaderValue::from_static("application/vnd.amazon.eventstream"),
        );
        let endpoint = match &settings.auth {
            BedrockAuth::ApiKey(key) => {
                let bearer =
                    credential_header(&format!("Bearer {}", key.expose()), "the Bedrock API key")?;
                headers.insert(HeaderName::from_static("authorization"), bearer);
                Endpoint::new(url, headers, settings.http.clone())
            }
            BedrockAuth::SigV4 {
                region,
                credentials,
            } => {
                Endpoint::new(url, headers, settings.http.clone()).authorized_by(Arc::new(Signer {
                    region: region.clone(),
                    credentials: credentials.clone(),
                }))
            }
        };
        Ok(Self {
            settings,
            api,
            endpoint,
        })
    }

    /// The API this model is reached through.
    pub fn api(&self) -> BedrockApi {
        self.api
    }
}

#[agentry::async_trait]
impl Model for BedrockModel {
    described_by_settings!();

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let max = self.settings.max_output_tokens;
        let limit = request.output_limit(Some(max)).unwrap_or(max);
        let endpoint = self.endpoint.clone();
        Ok(match self.api {
            BedrockApi::InvokeClaude => endpoint.stream(
                &hosted_messages_body(&request, limit, BEDROCK_ANTHROPIC_VERSION, false),
                InvokeDecoder::new,
            ),
            BedrockApi::Converse => {
                let model = &self.settings.model;
                let caches = model.contains("amazon.nova");
                let originals = CONVERSE.originals(request.tools.iter().map(|t| t.name.as_str()));
                endpoint.stream(
                    &converse::converse_body(&request, limit, caches),
                    move || ConverseDecoder::with_names(originals.clone()),
                )
            }
        })
    }
}

/// Signs each attempt with SigV4, with credentials good for it.
#[derive(Debug)]
struct Signer {
    region: String,
    credentials: Arc<CredentialChain>,
}

#[agentry::async_trait]
impl Authorize for Signer {
    async fn headers(&self, url: &reqwest::Url, body: &[u8]) -> Result<HeaderMap, ModelError> {
        let credentials = self.credentials.credentials().await?;
        let signed = sigv4::sign(
            &Unsigned {
                method: "POST",
                url,
                headers: &[("content-type".to_owned(), "application/json".to_owned())],
                body,
            },
            &credentials,
            &Scope {
                region: &self.region,
                service: "bedrock",
                time: chrono::Utc::now(),
                double_encode_path: true,
                content_sha256_header: false,
            },
        );
        let mut headers = HeaderMap::new();
        for (name, value) in signed.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ModelError::Config(format!("a signed header's name: {e}")))?;
            headers.insert(name, credential_header(&value, "the AWS credentials")?);
        }
        Ok(headers)
    }
}
