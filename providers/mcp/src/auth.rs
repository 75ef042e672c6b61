//! Logging in to MCP servers behind OAuth, as the MCP authorization spec says, on rmcp's `auth`
//! support: discovery from the server's `401` challenge and metadata, registration (a
//! configured client, or dynamic registration), the authorization code with PKCE and the
//! resource indicator, the issuer checks, and refreshing.
//!
//! [`login`] opens the authorization URL with the system's opener (`$BROWSER` first, printed
//! when there is none) and takes the redirect on a loopback port; the tokens are kept in the
//! system keyring, or where there is none in a file under the data folder readable by the user
//! alone ([`token_folder`]; see [`crate::tokens`]). A
//! connection to a server with kept tokens sends them and refreshes them when the server
//! rejects them; a server that asks for a login it has not had is reported as needing one.

use crate::McpError;
use crate::config::HttpServer;
use crate::tokens::TokenFile;
use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthClient, AuthorizationCallback, AuthorizationManager, AuthorizationRequest, OAuthState,
};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The name agentry registers itself under with an authorization server.
const CLIENT_NAME: &str = "agentry";

/// Logs in to server `name` (its tokens kept in `folder`): asks the server who
/// authorizes it, registers agentry if it has no configured client, has `open` show the
/// authorization URL to the user and waits for the redirect on a loopback port; the tokens are
/// kept for the server's connections.
pub async fn login(
    name: &str,
    server: &HttpServer,
    folder: &Path,
    open: impl FnOnce(&str),
) -> Result<(), McpError> {
    let scopes = configured_scopes(server);
    authorize(name, server, folder, challenge(server).await, scopes, open).await
}

/// Logs in to server `name` again after it refused a request with `403 insufficient_scope`
/// and `challenge` (its `WWW-Authenticate`): for the scopes granted so far, the configured
/// ones and those the challenge names, as the MCP authorization spec's step-up asks.
pub(crate) async fn step_up(
    name: &str,
    server: &HttpServer,
    folder: &Path,
    challenge: String,
    open: impl FnOnce(&str),
) -> Result<(), McpError> {
    let granted = TokenFile::new(folder, name, &server.url)
        .read()
        .await
        .map(|kept| kept.granted_scopes)
        .unwrap_or_default();
    let challenged = challenged_scopes(&challenge);
    let mut scopes = granted;
    for scope in configured_scopes(server).into_iter().chain(challenged) {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    authorize(name, server, folder, Some(challenge), scopes, open).await
}

/// The scopes the configuration asks for (none: the server's choice).
fn configured_scopes(server: &HttpServer) -> Vec<String> {
    server
        .oauth
        .as_ref()
        .map(|client| client.scopes.clone())
        .unwrap_or_default()
}

/// The scopes a `WWW-Authenticate` challenge names (its `scope` parameter).
fn challenged_scopes(challenge: &str) -> Vec<String> {
    let Some((_, rest)) = challenge.split_once("scope=") else {
        return Vec::new();
    };
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().unwrap_or_default(),
        None => rest.split([',', ' ']).next().unwrap_or_default(),
    };
    value.split_whitespace().map(str::to_owned).collect()
}

/// The authorization code flow with server `name`: discovery (from `challenge` when the
/// server gave one), registration, `open` showing the authorization URL for `scopes` (the
/// server's choice when empty), the redirect on a loopback port, and the tokens kept.
async fn authorize(
    name: &str,
    server: &HttpServer,
    folder: &Path,
    challenge: Option<String>,
    scopes: Vec<String>,
    open: impl FnOnce(&str),
) -> Result<(), McpError> {
    let failed = |message: String| McpError::Login {
        server: name.to_owned(),
        message,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| failed(format!("cannot listen for the redirect on loopback: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| failed(e.to_string()))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut request = AuthorizationRequest::new(&redirect)
        .with_initial_scope_selection()
        .with_client_name(CLIENT_NAME);
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(client) = &server.oauth {
        if let Some(id) = &client.client_id {
            request = request.with_preregistered_client(id);
        }
        if let Some(secret) = &client.client_secret {
            request = request.with_client_secret(secret);
        }
        if let Some(document) = &client.client_metadata_url {
            request = request.with_client_metadata_url(document);
        }
    }
    let store = TokenFile::new(folder, name, &server.url);
    let mut manager = AuthorizationManager::new(server.url.as_str())
        .await
        .map_err(|e| failed(e.to_string()))?;
    manager.set_credential_store(store);
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let url = state
        .get_authorization_url()
        .await
        .map_err(|e| failed(e.to_string()))?;
    open(&url);
    let callback = redirect_to(&listener, port)
        .await
        .map_err(|e| failed(format!("the redirect did not come: {e}")))?;
    let callback =
        AuthorizationCallback::from_redirect_url(&callback).map_err(|e| failed(e.to_string()))?;
    state
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|e| failed(e.to_string()))
}

/// The login to one server over HTTP, as its provider offers it
/// ([`Provider::login`](agentry::provider::Provider::login)): the tokens kept in `folder` (the
/// [`McpOptions::token_folder`](crate::McpOptions::token_folder)), the address printed on
/// standard error and opened in the browser.
pub(crate) struct ServerLogin {
    pub(crate) name: String,
    pub(crate) server: HttpServer,
    pub(crate) folder: Option<PathBuf>,
}

impl ServerLogin {
    /// Where the tokens are kept, or why they cannot be.
    fn folder(&self) -> Result<&Path, String> {
        self.folder
            .as_deref()
            .ok_or_else(|| NO_TOKEN_FOLDER.to_owned())
    }
}

/// Why a login cannot be kept: the host gave the provider no data folder.
pub(crate) const NO_TOKEN_FOLDER: &str =
    "this agent keeps no data folder, so an MCP server's login tokens cannot be kept";

impl agentry::provider::Login for ServerLogin {
    fn log_in(&self) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            login(&self.name, &self.server, self.folder()?, |url| {
                eprintln!("Open this address to log in:\n  {url}");
                open_in_browser(url);
            })
            .await
            .map_err(|e| e.to_string())
        })
    }

    fn log_out(&self) -> BoxFuture<'_, Result<bool, String>> {
        Box::pin(async move {
            logout(&self.name, &self.server.url, self.folder()?)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// Opens `url` with `$BROWSER` (a `:`-separated list of commands, `%s` standing for the
/// address, else it is appended) or, without one, the system's opener (`xdg-open`, `open` on
/// macOS); whether one started. It is not waited for.
pub fn open_in_browser(url: &str) -> bool {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let commands: Vec<String> = match browser {
        Some(browser) => browser.split(':').map(str::to_owned).collect(),
        None => vec![opener.to_owned()],
    };
    commands.iter().any(|command| {
        let mut words = command
            .split_whitespace()
            .map(|word| word.replace("%s", url));
        let Some(program) = words.next() else {
            return false;
        };
        let mut args: Vec<String> = words.collect();
        if !command.contains("%s") {
            args.push(url.to_owned());
        }
        std::process::Command::new(&program)
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .is_ok()
    })
}

/// The challenge of a request the server refused for want of scope (`403 insufficient_scope`),
/// if that is why `error` happened.
pub(crate) fn scope_challenge(error: &rmcp::ServiceError) -> Option<String> {
    use rmcp::transport::streamable_http_client::InsufficientScopeError;
    cause::<InsufficientScopeError>(error).map(|refused| refused.www_authenticate_header.clone())
}

/// Whether the server refused the request that failed with `error` for want of a login
/// (`401`): it takes no kept tokens, refreshed or not (say it moved to another authorization
/// server).
pub(crate) fn wants_login(error: &rmcp::ServiceError) -> bool {
    use rmcp::transport::streamable_http_client::AuthRequiredError;
    cause::<AuthRequiredError>(error).is_some()
}

/// The error of type `E` among the causes of a request's failure, if there is one.
fn cause<E: std::error::Error + 'static>(error: &rmcp::ServiceError) -> Option<&E> {
    let rmcp::ServiceError::TransportSend(error) = error else {
        return None;
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(current) = source {
        if let Some(found) = current.downcast_ref::<E>() {
            return Some(found);
        }
        source = current.source();
    }
    None
}

/// Forgets the tokens of server `name` reached at `url`, in the system keyring too; whether
/// there were any.
pub async fn logout(name: &str, url: &str, folder: &Path) -> Result<bool, McpError> {
    TokenFile::new(folder, name, url)
        .remove()
        .await
        .map_err(|e| McpError::Login {
            server: name.to_owned(),
            message: format!("cannot forget its tokens: {e}"),
        })
}

/// An HTTP client that sends server `name`'s kept tokens (refreshing them when the server
/// rejects them), when there are any.
pub(crate) async fn authorized_client(
    name: &str,
    server: &HttpServer,
    folder: &Path,
) -> Option<AuthClient<reqwest::Client>> {
    let store = TokenFile::new(folder, name, &server.url);
    if !store.exists() {
        return None;
    }
    let mut manager = AuthorizationManager::new(server.url.as_str()).await.ok()?;
    manager.set_credential_store(store);
    match manager.initialize_from_store().await {
        Ok(true) => Some(AuthClient::new(reqwest::Client::new(), manager)),
        Ok(false) => None,
        Err(error) => {
            tracing::warn!("MCP server `{name}`: its kept tokens cannot be used: {error}");
            None
        }
    }
}

/// The `WWW-Authenticate` challenge the server answers an unauthorized first request with, if
/// it does: it may name the scopes to ask for and where the resource's metadata is. Both ways a
/// connection can start are tried, the newest revision's `server/discover` first: a server may
/// let `initialize` through unauthorized and guard the rest.
async fn challenge(server: &HttpServer) -> Option<String> {
    let discover = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": rmcp::model::ProtocolVersion::LATEST,
        }}
    });
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE,
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
        }
    });
    for request in [discover, initialize] {
        let Ok(response) = reqwest::Client::new()
            .post(&server.url)
            .header("Accept", "application/json, text/event-stream")
            .json(&request)
            .send()
            .await
        else {
            continue;
        };
        let header = response.headers().get(reqwest::header::WWW_AUTHENTICATE);
        if let Some(challenge) = header.and_then(|value| value.to_str().ok()) {
            return Some(challenge.to_owned());
        }
    }
    None
}

/// Waits for the browser's redirect to the loopback callback: its full URL. It is thanked with
/// a short page; any other request is answered 404 and waited past.
async fn redirect_to(listener: &tokio::net::TcpListener, port: u16) -> std::io::Result<String> {
    let wait = async {
        loop {
            let (mut connection, _) = listener.accept().await?;
            let mut head = Vec::new();
            let mut buffer = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
                let read = connection.read(&mut buffer).await?;
                if read == 0 {
                    break;
                }
                head.extend_from_slice(&buffer[..read]);
            }
            let head = String::from_utf8_lossy(&head);
            let target = head
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("GET "))
                .and_then(|rest| rest.split(' ').next())
                .filter(|target| target.starts_with("/callback"));
            let (status, body) = match target {
                Some(_) => (
                    "200 OK",
                    "Logged in: agentry has the server's tokens. You can close this page.",
                ),
                None => ("404 Not Found", "Not found."),
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            connection.write_all(answer.as_bytes()).await?;
            if let Some(target) = target {
                return Ok(format!("http://127.0.0.1:{port}{target}"));
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(300), wait)
        .await
        .map_err(|_| std::io::Error::other("no redirect in 5 minutes"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_names_its_scopes_quoted_or_not() {
        let quoted = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://x/.well-known/oauth-protected-resource""#;
        assert_eq!(challenged_scopes(quoted), ["mcp:basic", "mcp:write"]);
        assert_eq!(
            challenged_scopes("Bearer scope=files:read, error=insufficient_scope"),
            ["files:read"]
        );
        assert!(challenged_scopes(r#"Bearer error="insufficient_scope""#).is_empty());
    }
}
