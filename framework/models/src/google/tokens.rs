//! Fetching Google access tokens from a [`GoogleSource`]: a service account signs an RS256 JWT
//! (RFC 7523) with its key and exchanges it at its `token_uri`; a user's refresh token is
//! exchanged there too; the metadata server hands out its account's tokens. Each token is kept
//! by [`BearerTokens`](crate::auth::BearerTokens) until shortly before it expires.

use super::adc::GoogleSource;
use crate::auth::{Expiring, TokenSource, oauth_token};
use crate::secret::Secret;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::json;
use std::time::{SystemTime, UNIX_EPOCH};

/// The scope Vertex AI's tokens are asked for.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long a service account's JWT is good for (Google's most).
const ASSERTION_LIFETIME_SECS: u64 = 3600;

#[agentry::async_trait]
impl TokenSource for GoogleSource {
    async fn fetch(&self, client: &reqwest::Client) -> Result<Expiring<Secret>, String> {
        match self {
            Self::ServiceAccount {
                client_email,
                private_key,
                private_key_id,
                token_uri,
                ..
            } => {
                let assertion = signed_assertion(
                    client_email,
                    private_key,
                    private_key_id.as_deref(),
                    token_uri,
                    SystemTime::now(),
                )?;
                let form = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", assertion.as_str()),
                ];
                oauth_token(client.post(token_uri).form(&form)).await
            }
            Self::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
                ..
            } => {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id.as_str()),
                    ("client_secret", client_secret.expose()),
                    ("refresh_token", refresh_token.expose()),
                ];
                oauth_token(client.post(token_uri).form(&form)).await
            }
            Self::MetadataServer { host } => {
                let url = format!(
                    "http://{host}/computeMetadata/v1/instance/service-accounts/default/token"
                );
                let request = client
                    .get(url)
                    .query(&[("scopes", CLOUD_PLATFORM_SCOPE)])
                    .header("metadata-flavor", "Google");
                oauth_token(request).await
            }
        }
    }

    fn describe(&self) -> String {
        GoogleSource::describe(self)
    }

    fn issuer(&self) -> &'static str {
        "Google"
    }

    fn extra_headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::AuthorizedUser {
                quota_project_id: Some(project),
                ..
            } => vec![("x-goog-user-project", project.clone())],
            _ => Vec::new(),
        }
    }
}

/// The JWT a service account presents at `token_uri`: RS256 over its header and claims, for
/// the cloud-platform scope, good for an hour from `now`.
pub fn signed_assertion(
    client_email: &str,
    private_key_pem: &Secret,
    private_key_id: Option<&str>,
    token_uri: &str,
    now: SystemTime,
) -> Result<String, String> {
    let key = RsaKeyPair::from_pkcs8(&pem_body(private_key_pem.expose())?)
        .map_err(|e| format!("the service account's private_key is not an RSA key ({e})"))?;
    let issued = now
        .duration_since(UNIX_EPOCH)
        .map_err(|_| "the clock is before 1970".to_owned())?
        .as_secs();
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(id) = private_key_id {
        header["kid"] = json!(id);
    }
    let claims = json!({
        "iss": client_email,
        "scope": CLOUD_PLATFORM_SCOPE,
        "aud": token_uri,
        "iat": issued,
        "exp": issued + ASSERTION_LIFETIME_SECS,
    });
    let signed_part = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut signature = vec![0; key.public_modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signed_part.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "the service account's key cannot sign".to_owned())?;
    Ok(format!(
        "{signed_part}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

/// The DER bytes of a PEM `PRIVATE KEY` block.
fn pem_body(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|line| *line != "-----BEGIN PRIVATE KEY-----")
        .skip(1)
        .take_while(|line| !line.starts_with("-----END"))
        .collect();
    if body.is_empty() {
        return Err(
            "the service account's private_key holds no PEM `PRIVATE KEY` block".to_owned(),
        );
    }
    STANDARD
        .decode(body)
        .map_err(|e| format!("the service account's private_key is not base64 PEM ({e})"))
}
