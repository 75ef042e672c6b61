//! The web page, built into the binary: `/` (the HTML), `/app.js` and `/style.css`. It speaks
//! the plain-WebSocket transport and the REST API, like any client. Opened with the link the
//! server prints (`/?token=…`), it trades the token for an `HttpOnly`, `SameSite=Strict`
//! cookie, which its requests then carry, and drops the token from the address bar.

use agentry::admission::{Admission, TOKEN_COOKIE};
use axum::Router;
use axum::extract::RawQuery;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

/// The page's three files.
pub fn routes<S: Clone + Send + Sync + 'static>(admission: Arc<Admission>) -> Router<S> {
    Router::new()
        .route(
            "/",
            get(move |RawQuery(query): RawQuery| async move { index(&admission, query) }),
        )
        .route(
            "/app.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    include_str!("../page/app.js"),
                )
            }),
        )
        .route(
            "/style.css",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
                    include_str!("../page/style.css"),
                )
            }),
        )
}

/// `/`: the page; with `?token=…`, the cookie that stands for the token, then the page again
/// without the token in its address.
fn index(admission: &Admission, query: Option<String>) -> Response {
    let token = query.as_deref().and_then(|query| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix("token="))
    });
    match token.filter(|_| admission.token().is_some()) {
        None => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            include_str!("../page/index.html"),
        )
            .into_response(),
        Some(token) if admission.is_token(token) => {
            let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
            (
                StatusCode::SEE_OTHER,
                [
                    (header::SET_COOKIE, cookie),
                    (header::LOCATION, "/".to_owned()),
                ],
            )
                .into_response()
        }
        Some(_) => (
            StatusCode::UNAUTHORIZED,
            "This link's token is not the server's: open the link `agentry serve` printed.",
        )
            .into_response(),
    }
}

/// Whether `path` is one of the page's files (served to anyone: they hold no data).
pub fn is_page(path: &str) -> bool {
    matches!(path, "/" | "/app.js" | "/style.css")
}
