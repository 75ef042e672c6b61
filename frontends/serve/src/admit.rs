//! The door of `agentry serve`: before any route, a request must come to a name the server
//! answers to and from no other site's page ([`Admission::check_site`]); then, but for the
//! page's own files, carry the token; and a request to the REST API that has a body must say
//! it is JSON (a cross-site form can only send `text/plain` and its kin).

use agentry_admission::{Admission, Credentials, Refused};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Lets a request through, or answers for it.
pub async fn admit(
    State(admission): State<Arc<Admission>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    // `?token=` is taken where a client cannot send a header: on a WebSocket's URL (and the
    // page's own link, which sets its cookie). Elsewhere a URL with the token would leak it
    // into logs and histories.
    let path = request.uri().path();
    let websocket = path == "/ws" || path.starts_with("/socket.io");
    let credentials = Credentials::from_headers(
        |name| headers.get(name).and_then(|value| value.to_str().ok()),
        request.uri().query().filter(|_| websocket),
    );
    if let Err(refused) = admission.check_site(&credentials) {
        return refusal(&refused);
    }
    let page = crate::page::is_page(request.uri().path());
    if !page && let Err(refused) = admission.check_token(&credentials) {
        return refusal(&refused);
    }
    if request.uri().path().starts_with("/api/") && !json_or_empty(request.method(), headers) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            axum::Json(serde_json::json!({
                "message": "the body must be JSON (Content-Type: application/json)",
                "code": "unsupported_media_type",
            })),
        )
            .into_response();
    }
    next.run(request).await
}

/// Whether a request that may change something says its body is JSON, or has none.
fn json_or_empty(method: &Method, headers: &HeaderMap) -> bool {
    if !matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        return true;
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    match content_type {
        Some(content_type) => content_type
            .split(';')
            .next()
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json")),
        None => {
            let length = headers
                .get(header::CONTENT_LENGTH)
                .and_then(|value| value.to_str().ok());
            length.is_none_or(|length| length.trim() == "0")
                && !headers.contains_key(header::TRANSFER_ENCODING)
        }
    }
}

/// The answer to a refused request: its status and why, as JSON.
fn refusal(refused: &Refused) -> Response {
    let status = StatusCode::from_u16(refused.status()).unwrap_or(StatusCode::FORBIDDEN);
    (status, axum::Json(refused.body())).into_response()
}
