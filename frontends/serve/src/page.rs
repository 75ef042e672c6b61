//! The web page, built into the binary: `/` (the HTML), its script, styles and icon, and the
//! colours of highlighted code. It speaks
//! the plain-WebSocket transport and the REST API, like any client. Opened with the link the
//! server prints (`/?token=…`), it trades the token for an `HttpOnly`, `SameSite=Strict`
//! cookie, which its requests then carry, and drops the token from the address bar.

use agentry_admission::{Admission, TOKEN_COOKIE};
use axum::Router;
use axum::extract::RawQuery;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

/// What the page may load and run: its own scripts and styles, nothing inline, no frames or
/// plugins, requests only to its own server. An answer that slipped markup past the sanitiser
/// still could not run a script or fetch from another site.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page's files besides `/`: path, content type, content.
const FILES: [(&str, &str, &str); 3] = [
    (
        "/app.js",
        "text/javascript; charset=utf-8",
        include_str!("../page/app.js"),
    ),
    (
        "/style.css",
        "text/css; charset=utf-8",
        include_str!("../page/style.css"),
    ),
    (
        "/favicon.svg",
        "image/svg+xml",
        include_str!("../page/favicon.svg"),
    ),
];

/// The page: `/`, its files, and `/highlight.css` (the colours of highlighted code).
pub fn routes<S: Clone + Send + Sync + 'static>(admission: Arc<Admission>) -> Router<S> {
    let mut router = Router::new()
        .route(
            "/",
            get(move |RawQuery(query): RawQuery| async move { guarded(index(&admission, query)) }),
        )
        .route(
            "/highlight.css",
            get(|| async {
                guarded(
                    (
                        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
                        crate::markdown::highlight_css(),
                    )
                        .into_response(),
                )
            }),
        );
    for (path, content_type, content) in FILES {
        router = router.route(
            path,
            get(move || async move {
                guarded(([(header::CONTENT_TYPE, content_type)], content).into_response())
            }),
        );
    }
    router
}

/// `response` with the page's security headers.
fn guarded(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
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
    path == "/" || path == "/highlight.css" || FILES.iter().any(|(file, ..)| *file == path)
}
