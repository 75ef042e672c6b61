//! The web page, built into the binary: `/` (the HTML), `/app.js` and `/style.css`. It speaks
//! the plain-WebSocket transport and the REST API, like any client.

use axum::Router;
use axum::http::header;
use axum::routing::get;

/// The page's three files.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    include_str!("../page/index.html"),
                )
            }),
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

/// Whether `path` is one of the page's files (served to anyone: they hold no data).
pub fn is_page(path: &str) -> bool {
    matches!(path, "/" | "/app.js" | "/style.css")
}
