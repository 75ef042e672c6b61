//! OAuth 2.0 access tokens, as Google's and Microsoft's token and metadata services issue them,
//! and the bearer authorization of a model's requests with them.

use super::{Expiring, Refreshing, ServiceClient};
use crate::http::{Authorize, credential_header};
use crate::secret::Secret;
use agentry::model::ModelError;
use reqwest::header::{HeaderMap, HeaderName};
use serde::Deserialize;
use std::time::{Duration, SystemTime};

/// An OAuth 2.0 token endpoint's answer (RFC 6749 §5.1), as Google's and Microsoft's token
/// services, metadata services included, give it: `expires_in` a number or a numeric string,
/// or only an `expires_on` timestamp.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    expires_in: Option<Seconds>,
    expires_on: Option<Seconds>,
    error: Option<String>,
    error_description: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Seconds {
    Number(u64),
    Text(String),
}

impl Seconds {
    fn get(&self) -> Option<u64> {
        match self {
            Self::Number(n) => Some(*n),
            Self::Text(text) => text.trim().parse().ok(),
        }
    }
}

/// Sends `request` to a token endpoint; its token, or the service's own words for a refusal
/// (`invalid_grant: …`).
pub(crate) async fn oauth_token(
    request: reqwest::RequestBuilder,
) -> Result<Expiring<Secret>, String> {
    let answer = request.send().await.map_err(super::unreachable)?;
    let status = answer.status();
    let url = answer.url().clone();
    let text = answer.text().await.map_err(|e| e.to_string())?;
    let parsed: Option<TokenAnswer> = serde_json::from_str(&text).ok();
    match parsed {
        Some(TokenAnswer {
            access_token: Some(token),
            expires_in,
            expires_on,
            ..
        }) if status.is_success() => {
            let expires = match (expires_in.and_then(|s| s.get()), expires_on) {
                (Some(seconds), _) => Some(SystemTime::now() + Duration::from_secs(seconds)),
                (None, Some(on)) => on
                    .get()
                    .map(|epoch| SystemTime::UNIX_EPOCH + Duration::from_secs(epoch)),
                (None, None) => None,
            };
            Ok(Expiring {
                value: Secret::new(token),
                expires,
            })
        }
        Some(TokenAnswer {
            error: Some(error),
            error_description,
            ..
        }) => Err(match error_description {
            Some(description) => format!("{url} refused: {error}: {}", first_line(&description)),
            None => format!("{url} refused: {error}"),
        }),
        _ if status.is_success() => Err(format!("{url} answered without an access_token")),
        _ => Err(format!("{url} answered HTTP {}", status.as_u16())),
    }
}

/// Microsoft's descriptions run on with trace and correlation ids on later lines.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text).trim()
}

/// Where bearer tokens come from: a key file exchanged at a token endpoint, a metadata
/// service, a command.
#[agentry::async_trait]
pub trait TokenSource: Send + Sync + std::fmt::Debug {
    /// A fresh token, or why there is none (the service's words, never a credential).
    async fn fetch(&self, client: &reqwest::Client) -> Result<Expiring<Secret>, String>;

    /// Where the tokens come from, in a few words (`the service account a@b in key.json`).
    fn describe(&self) -> String;

    /// Whose tokens these are, for errors (`Google`, `Microsoft Entra ID`).
    fn issuer(&self) -> &'static str;

    /// Headers sent beside the token (Google's quota project).
    fn extra_headers(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// Bearer tokens from a [`TokenSource`], kept until five minutes before they expire.
#[derive(Debug)]
pub struct BearerTokens<S> {
    source: S,
    client: ServiceClient,
    cached: Refreshing<Secret>,
}

impl<S: TokenSource> BearerTokens<S> {
    /// Tokens from `source`.
    pub fn new(source: S) -> Self {
        Self {
            source,
            client: ServiceClient::default(),
            cached: Refreshing::default(),
        }
    }

    /// Where they come from.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// A token good for at least five more minutes.
    pub async fn token(&self) -> Result<Secret, ModelError> {
        self.cached
            .get(|| async {
                let client = self.client.get()?;
                self.source.fetch(client).await
            })
            .await
            .map_err(|why| {
                ModelError::Config(format!(
                    "no {} token from {}: {why}",
                    self.source.issuer(),
                    self.source.describe()
                ))
            })
    }
}

#[agentry::async_trait]
impl<S: TokenSource> Authorize for BearerTokens<S> {
    async fn headers(&self, _url: &reqwest::Url, _body: &[u8]) -> Result<HeaderMap, ModelError> {
        let token = self.token().await?;
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            credential_header(&format!("Bearer {}", token.expose()), "the token")?,
        );
        for (name, value) in self.source.extra_headers() {
            let value = reqwest::header::HeaderValue::from_str(&value)
                .map_err(|_| ModelError::Config(format!("{name} cannot be a header: {value}")))?;
            headers.insert(HeaderName::from_static(name), value);
        }
        Ok(headers)
    }
}
