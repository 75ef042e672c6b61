//! Token services on 127.0.0.1 that check what Google's and Microsoft's check. Google's
//! ([`GoogleTokenService`]): an OAuth token endpoint that takes a service account's RS256 JWT
//! (verified with the key's public half: signature, issuer, audience, scope, lifetime) or a
//! user's refresh token, and a metadata server that wants `Metadata-Flavor: Google`.
//! Microsoft Entra ID's ([`EntraTokenService`]): a tenant's token endpoint that takes a client
//! secret or a federated token for the Cognitive Services scope, the instance metadata
//! service's managed identity endpoint (`Metadata: true`) and App Service's
//! (`X-IDENTITY-HEADER`). Each token a service issues is new (`ya29.test-N`, `entra-test-N`),
//! good for the lifetime it was started with; it counts what it issued.

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{self, KeyPair, RsaKeyPair, UnparsedPublicKey};
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The scope Vertex AI's tokens must be asked for.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// A service account's key made for one test: its PEM private key for the key file, and its
/// public half for the token endpoint.
pub struct ServiceAccountKey {
    /// The PKCS#8 private key, PEM.
    pub private_pem: String,
    /// The RSA public key (PKCS#1 DER).
    pub public_der: Vec<u8>,
}

impl ServiceAccountKey {
    /// A fresh 2048-bit RSA key.
    pub fn generate() -> Self {
        let key = RsaKeyPair::generate(KeySize::Rsa2048).unwrap();
        let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der>::as_der(&key).unwrap();
        let lines: Vec<String> = STANDARD
            .encode(der.as_ref())
            .as_bytes()
            .chunks(64)
            .map(|line| String::from_utf8(line.to_vec()).unwrap())
            .collect();
        Self {
            private_pem: format!(
                "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                lines.join("\n")
            ),
            public_der: key.public_key().as_ref().to_vec(),
        }
    }

    /// Writes a service account key file as Google's console does, its token endpoint at
    /// `token_uri`; its path.
    pub fn write_key_file(&self, dir: &Path, client_email: &str, token_uri: &str) -> PathBuf {
        let path = dir.join("service-account.json");
        let file = json!({
            "type": "service_account",
            "project_id": "agentry-test",
            "private_key_id": "key-1",
            "private_key": self.private_pem,
            "client_email": client_email,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": token_uri,
        });
        std::fs::write(&path, file.to_string()).unwrap();
        path
    }
}

/// The refresh-token grant a user's credentials file holds.
#[derive(Clone)]
pub struct UserGrant {
    /// The OAuth client's id.
    pub client_id: String,
    /// Its secret.
    pub client_secret: String,
    /// The refresh token.
    pub refresh_token: String,
}

struct Accepts {
    /// The service account and its key's public half.
    service_account: Option<(String, Vec<u8>)>,
    user: Option<UserGrant>,
    lifetime: u64,
    issued: AtomicUsize,
    url: std::sync::OnceLock<String>,
}

/// A Google token endpoint (`POST /token`) and metadata server, running.
pub struct GoogleTokenService {
    url: String,
    accepts: Arc<Accepts>,
}

impl GoogleTokenService {
    /// Starts one that accepts the JWTs of `service_account` (its email and public key) and
    /// the refresh token of `user`, issuing tokens good for `lifetime` seconds.
    pub fn start(
        service_account: Option<(&str, &ServiceAccountKey)>,
        user: Option<UserGrant>,
        lifetime: u64,
    ) -> Self {
        let accepts = Arc::new(Accepts {
            service_account: service_account
                .map(|(email, key)| (email.to_owned(), key.public_der.clone())),
            user,
            lifetime,
            issued: AtomicUsize::new(0),
            url: std::sync::OnceLock::new(),
        });
        let app = axum::Router::new()
            .route("/token", post(token))
            .route(
                "/computeMetadata/v1/instance/service-accounts/default/token",
                get(metadata_token),
            )
            .with_state(accepts.clone());
        let url = format!("http://{}", crate::http::serve_on_own_thread(app));
        accepts.url.set(url.clone()).unwrap();
        Self { url, accepts }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token endpoint's URL.
    pub fn token_uri(&self) -> String {
        format!("{}/token", self.url)
    }

    /// The metadata server's `host:port`, as `GCE_METADATA_HOST` takes it.
    pub fn metadata_host(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }

    /// How many tokens it has issued.
    pub fn issued(&self) -> usize {
        self.accepts.issued.load(Ordering::SeqCst)
    }
}

/// The `n`th token the service issues.
pub fn issued_token(n: usize) -> String {
    format!("ya29.test-{n}")
}

fn issue(accepts: &Accepts) -> Response {
    let n = accepts.issued.fetch_add(1, Ordering::SeqCst) + 1;
    axum::Json(json!({
        "access_token": issued_token(n),
        "expires_in": accepts.lifetime,
        "token_type": "Bearer",
    }))
    .into_response()
}

/// The scope Azure OpenAI's and Foundry's tokens must be asked for.
pub const COGNITIVE_SERVICES_SCOPE: &str = "https://cognitiveservices.azure.com/.default";

/// The `n`th token an Entra ID service issues.
pub fn entra_token(n: usize) -> String {
    format!("entra-test-{n}")
}

/// What an Entra ID service accepts.
pub struct EntraAccepts {
    /// The tenant.
    pub tenant: String,
    /// The application's (client) id.
    pub client_id: String,
    /// Its client secret, when it has one.
    pub client_secret: Option<String>,
    /// The federated (workload identity) token it trusts, when any.
    pub federated_token: Option<String>,
    /// App Service's identity header, when it plays App Service.
    pub identity_header: Option<String>,
    /// How long its tokens are good for, in seconds.
    pub lifetime: u64,
}

struct EntraState {
    accepts: EntraAccepts,
    issued: AtomicUsize,
}

/// A Microsoft Entra ID token endpoint, managed identity endpoints beside it, running.
pub struct EntraTokenService {
    url: String,
    state: Arc<EntraState>,
}

impl EntraTokenService {
    /// Starts one.
    pub fn start(accepts: EntraAccepts) -> Self {
        let state = Arc::new(EntraState {
            accepts,
            issued: AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .route("/{tenant}/oauth2/v2.0/token", post(entra_token_grant))
            .route("/metadata/identity/oauth2/token", get(imds_token))
            .route("/msi/token", get(app_service_token))
            .with_state(state.clone());
        let url = format!("http://{}", crate::http::serve_on_own_thread(app));
        Self { url, state }
    }

    /// `http://127.0.0.1:PORT`: the authority (`AZURE_AUTHORITY_HOST`) and the instance
    /// metadata service (`AZURE_POD_IDENTITY_AUTHORITY_HOST`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// App Service's identity endpoint (`IDENTITY_ENDPOINT`).
    pub fn identity_endpoint(&self) -> String {
        format!("{}/msi/token", self.url)
    }

    /// How many tokens it has issued.
    pub fn issued(&self) -> usize {
        self.state.issued.load(Ordering::SeqCst)
    }
}

fn entra_issue(state: &EntraState, managed: bool) -> Response {
    let n = state.issued.fetch_add(1, Ordering::SeqCst) + 1;
    let lifetime = state.accepts.lifetime;
    let expires_on = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + lifetime;
    // The managed identity endpoints give numbers as strings, and App Service no expires_in.
    let answer = if managed {
        json!({"access_token": entra_token(n), "expires_on": expires_on.to_string(),
               "resource": "https://cognitiveservices.azure.com", "token_type": "Bearer"})
    } else {
        json!({"token_type": "Bearer", "expires_in": lifetime, "ext_expires_in": lifetime,
               "access_token": entra_token(n)})
    };
    axum::Json(answer).into_response()
}

/// Entra ID's refusal: an AADSTS code, then trace lines.
fn entra_refused(error: &str, code: &str) -> Response {
    refused(
        error,
        &format!(
            "{code}\r\nTrace ID: 0f1e2d3c\r\nCorrelation ID: 4b5a6978\r\nTimestamp: 2026-11-28 12:00:00Z"
        ),
    )
}

async fn entra_token_grant(
    State(state): State<Arc<EntraState>>,
    axum::extract::Path(tenant): axum::extract::Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let accepts = &state.accepts;
    let field = |name: &str| form.get(name).map(String::as_str);
    if tenant != accepts.tenant {
        return entra_refused("invalid_request", "AADSTS90002: Tenant not found.");
    }
    if field("grant_type") != Some("client_credentials")
        || field("scope") != Some(COGNITIVE_SERVICES_SCOPE)
    {
        return entra_refused(
            "invalid_scope",
            "AADSTS70011: The provided scope is not valid.",
        );
    }
    if field("client_id") != Some(accepts.client_id.as_str()) {
        return entra_refused(
            "unauthorized_client",
            "AADSTS700016: Application not found.",
        );
    }
    let by_secret = accepts.client_secret.is_some()
        && field("client_secret") == accepts.client_secret.as_deref();
    let by_federation = accepts.federated_token.is_some()
        && field("client_assertion_type")
            == Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        && field("client_assertion") == accepts.federated_token.as_deref();
    if by_secret || by_federation {
        entra_issue(&state, false)
    } else {
        entra_refused(
            "invalid_client",
            "AADSTS7000215: Invalid client secret provided.",
        )
    }
}

async fn imds_token(
    State(state): State<Arc<EntraState>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if headers.get("metadata").and_then(|v| v.to_str().ok()) != Some("true") {
        return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_request", "error_description": "Required metadata header not specified"}))).into_response();
    }
    managed_token(&state, &query)
}

async fn app_service_token(
    State(state): State<Arc<EntraState>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let given = headers
        .get("x-identity-header")
        .and_then(|v| v.to_str().ok());
    if given.is_none() || given != state.accepts.identity_header.as_deref() {
        return (StatusCode::UNAUTHORIZED, "").into_response();
    }
    managed_token(&state, &query)
}

fn managed_token(state: &EntraState, query: &HashMap<String, String>) -> Response {
    if query.get("resource").map(String::as_str) != Some("https://cognitiveservices.azure.com") {
        return entra_refused(
            "invalid_resource",
            "AADSTS500011: The resource principal was not found.",
        );
    }
    if query
        .get("client_id")
        .is_some_and(|id| *id != state.accepts.client_id)
    {
        return entra_refused("invalid_request", "Identity not found");
    }
    entra_issue(state, true)
}

fn refused(error: &str, description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

async fn token(
    State(accepts): State<Arc<Accepts>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let field = |name: &str| form.get(name).map(String::as_str).unwrap_or_default();
    match field("grant_type") {
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
            match verify_assertion(&accepts, field("assertion")) {
                Ok(()) => issue(&accepts),
                Err(why) => refused("invalid_grant", &why),
            }
        }
        "refresh_token" => match &accepts.user {
            Some(user)
                if field("client_id") == user.client_id
                    && field("client_secret") == user.client_secret
                    && field("refresh_token") == user.refresh_token =>
            {
                issue(&accepts)
            }
            _ => refused("invalid_grant", "Token has been expired or revoked."),
        },
        other => refused(
            "unsupported_grant_type",
            &format!("Invalid grant_type: {other}"),
        ),
    }
}

/// Checks a service account's JWT as Google does: RS256 by the account's key, issued by the
/// account, for this endpoint, asking for a scope, good for at most an hour from about now.
fn verify_assertion(accepts: &Accepts, assertion: &str) -> Result<(), String> {
    let (email, public_key) = accepts
        .service_account
        .as_ref()
        .ok_or("no service account is known here")?;
    let parts: Vec<&str> = assertion.split('.').collect();
    let [header, claims, signature_b64] = parts[..] else {
        return Err("Invalid JWT: Token must be a short-lived token".to_owned());
    };
    let decode = |part: &str| -> Result<Value, String> {
        let bytes = URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|e| format!("Invalid JWT: {e}"))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("Invalid JWT: {e}"))
    };
    let signature_bytes = URL_SAFE_NO_PAD
        .decode(signature_b64)
        .map_err(|_| "Invalid JWT Signature.".to_owned())?;
    UnparsedPublicKey::new(&signature::RSA_PKCS1_2048_8192_SHA256, public_key)
        .verify(format!("{header}.{claims}").as_bytes(), &signature_bytes)
        .map_err(|_| "Invalid JWT Signature.".to_owned())?;
    let header = decode(header)?;
    let claims = decode(claims)?;
    if header["alg"] != "RS256" {
        return Err(format!("Invalid JWT: alg {}", header["alg"]));
    }
    if claims["iss"] != email.as_str() {
        return Err("Invalid JWT: iss is not the service account".to_owned());
    }
    let audience = format!("{}/token", accepts.url.get().unwrap());
    if claims["aud"] != audience.as_str() {
        return Err(format!("Invalid JWT: aud must be {audience}"));
    }
    if claims["scope"] != CLOUD_PLATFORM_SCOPE {
        return Err("Invalid JWT: no cloud-platform scope".to_owned());
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (iat, exp) = (
        claims["iat"].as_u64().unwrap_or(0),
        claims["exp"].as_u64().unwrap_or(0),
    );
    if iat.abs_diff(now) > 300 || exp <= iat || exp - iat > 3600 {
        return Err("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.".to_owned());
    }
    Ok(())
}

async fn metadata_token(
    State(accepts): State<Arc<Accepts>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if headers.get("metadata-flavor").and_then(|v| v.to_str().ok()) != Some("Google") {
        return (
            StatusCode::FORBIDDEN,
            "Missing Metadata-Flavor:Google header.",
        )
            .into_response();
    }
    if query.get("scopes").map(String::as_str) != Some(CLOUD_PLATFORM_SCOPE) {
        return (StatusCode::BAD_REQUEST, "scopes must name cloud-platform").into_response();
    }
    let mut answer = issue(&accepts);
    answer
        .headers_mut()
        .insert("metadata-flavor", "Google".parse().unwrap());
    answer
}
