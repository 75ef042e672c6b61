//! A local web site on 127.0.0.1 for WebFetch's tests, and a name lookup that maps test names to
//! addresses (private ones included) with a last check that fails the test if anything but a
//! loopback address would be connected to.

use agentry_webfetch::fetch::{FetchSettings, Fetcher};
use agentry_webfetch::guard::AddressGuard;
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// An article with the chrome WebFetch drops around it.
pub const ARTICLE: &str = r#"<!doctype html><html><head><title>Rust</title>
<style>body { color: red }</style><script>var tracking = "secret-script";</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About-nav-link</a></nav>
<header>Site header banner</header>
<main><h1>Ownership</h1><p>Each value has <strong>one</strong> owner.</p>
<ul><li>Moves</li><li>Borrows</li></ul>
<pre><code>let s = String::from("hi");</code></pre>
<p>See <a href="https://doc.rust-lang.org/book/">the book</a>.</p></main>
<footer>Copyright footer</footer><noscript>enable-js</noscript></body></html>"#;

/// The running site.
pub struct Site {
    /// Its address.
    pub addr: SocketAddr,
    /// Bytes of `/huge` sent so far.
    pub huge_sent: Arc<AtomicUsize>,
}

impl Site {
    /// `http://site.test:PORT/PATH` (the test lookup maps `site.test` to 127.0.0.1).
    pub fn url(&self, path: &str) -> String {
        format!("http://site.test:{}{path}", self.addr.port())
    }
}

/// Starts the site.
pub async fn start() -> Site {
    let huge_sent = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let port = addr.port();
    let app =
        Router::new()
            .route("/article", get(|| async { html(ARTICLE) }))
            .route(
                "/data.json",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        r#"{"name":"agentry","tags":["rust","agents"]}"#,
                    )
                }),
            )
            .route("/notes.txt", get(|| async { "plain notes\nline two\n" }))
            .route(
                "/latin1.txt",
                // "Café crème" in ISO-8859-1.
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/plain; charset=ISO-8859-1")],
                        b"Caf\xe9 cr\xe8me".to_vec(),
                    )
                }),
            )
            .route(
                "/logo.png",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "image/png")],
                        vec![0x89u8, b'P', b'N', b'G'],
                    )
                }),
            )
            .route("/hop/1", get(|| async { Redirect::temporary("/hop/2") }))
            .route("/hop/2", get(|| async { Redirect::permanent("/hop/3") }))
            .route("/hop/3", get(|| async { Redirect::to("/article") }))
            .route("/loop", get(|| async { Redirect::temporary("/loop") }))
            .route(
                "/to-private-name",
                get(move || async move {
                    Redirect::temporary(&format!("http://evil.test:{port}/article"))
                }),
            )
            .route(
                "/to-metadata-name",
                get(move || async move {
                    Redirect::temporary(&format!("http://meta.test:{port}/latest/meta-data/"))
                }),
            )
            .route(
                "/to-other-loopback",
                // 2130706434 is 127.0.0.2, which the tests' allow-list does not name.
                get(move || async move {
                    Redirect::temporary(&format!("http://2130706434:{port}/article"))
                }),
            )
            .route(
                "/gzip",
                get(|headers: HeaderMap| async move { compressed(&headers, "gzip") }),
            )
            .route(
                "/brotli",
                get(|headers: HeaderMap| async move { compressed(&headers, "br") }),
            )
            .route("/huge", get(huge))
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    "too late"
                }),
            )
            .route(
                "/missing",
                get(|| async { (StatusCode::NOT_FOUND, "no such page here") }),
            )
            .with_state(huge_sent.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Site { addr, huge_sent }
}

fn html(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// The article, compressed as `encoding` (when the client accepts it).
fn compressed(headers: &HeaderMap, encoding: &str) -> Response {
    let accepted = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        accepted.contains(encoding),
        "the client accepts {encoding}: {accepted}"
    );
    let body = match encoding {
        "gzip" => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(ARTICLE.as_bytes()).unwrap();
            encoder.finish().unwrap()
        }
        _ => {
            let mut out = Vec::new();
            let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            writer.write_all(ARTICLE.as_bytes()).unwrap();
            drop(writer);
            out
        }
    };
    (
        [
            (header::CONTENT_TYPE, "text/html"),
            (header::CONTENT_ENCODING, encoding),
        ],
        body,
    )
        .into_response()
}

/// An endless text body, counting what was sent.
async fn huge(State(sent): State<Arc<AtomicUsize>>) -> Response {
    let chunk = vec![b'x'; 16 * 1024];
    let stream = futures::stream::unfold((sent, chunk), |(sent, chunk)| async move {
        if sent.load(Ordering::Relaxed) > 512 * 1024 * 1024 {
            return None;
        }
        sent.fetch_add(chunk.len(), Ordering::Relaxed);
        let bytes = bytes::Bytes::from(chunk.clone());
        Some((Ok::<_, std::io::Error>(bytes), (sent, chunk)))
    });
    (
        [(header::CONTENT_TYPE, "text/plain")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// Maps the tests' names to addresses: `site.test` to loopback, `evil.test` to a private
/// address, `meta.test` to the cloud metadata address, `mixed.test` to both kinds.
pub struct TestLookup;

impl Resolve for TestLookup {
    fn resolve(&self, name: Name) -> Resolving {
        let addresses: Vec<IpAddr> = match name.as_str() {
            "site.test" => vec!["127.0.0.1".parse().unwrap()],
            "evil.test" => vec!["10.0.0.1".parse().unwrap()],
            "meta.test" => vec!["169.254.169.254".parse().unwrap()],
            "mixed.test" => vec!["10.0.0.1".parse().unwrap(), "127.0.0.1".parse().unwrap()],
            other => panic!("the tests resolve no name {other}"),
        };
        Box::pin(async move {
            let addrs: Addrs = Box::new(addresses.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The settings the tests fetch with: 127.0.0.1 allowed, http kept, small caps.
pub fn settings() -> FetchSettings {
    FetchSettings {
        guard: AddressGuard::allowing(vec!["127.0.0.1".parse().unwrap()]),
        upgrade_http: false,
        max_bytes: 64 * 1024,
        timeout: Duration::from_secs(2),
        ..FetchSettings::default()
    }
}

/// A fetcher with the test lookup whose last check fails the test on any non-loopback address.
pub fn fetcher(settings: FetchSettings) -> Fetcher {
    Fetcher::with_lookup(
        settings,
        Arc::new(TestLookup),
        Some(Arc::new(|host: &str, addresses: &[SocketAddr]| {
            assert!(
                addresses.iter().all(|a| a.ip().is_loopback()),
                "{host} would connect to {addresses:?}: only loopback may ever be reached"
            );
        })),
    )
}
