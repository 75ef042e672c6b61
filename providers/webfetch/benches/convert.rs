//! WebFetch's cost (not a test): a 1 MB HTML page served on 127.0.0.1, fetched by a plain
//! reqwest GET (the peer) and by WebFetch's fetcher plus its HTML → Markdown conversion, and
//! the conversion alone. Prints medians of alternating runs and the ratio.
//! Target: converting the 1 MB page under 20 ms.
//!
//! `cargo bench -p agentry-webfetch --bench convert`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry_webfetch::convert;
use agentry_webfetch::fetch::{FetchSettings, Fetcher};
use agentry_webfetch::guard::AddressGuard;
use std::fmt::Write;
use std::time::{Duration, Instant};

const RUNS: usize = 30;

/// About 1 MB of article-like HTML: headings, paragraphs with links and emphasis, lists, code,
/// a table, and the scripts and navigation a real page carries.
fn page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Bench</title><style>body{margin:0}</style></head><body>",
    );
    let mut section = 0;
    while html.len() < 1_000_000 {
        section += 1;
        write!(
            html,
            "<nav><a href=\"/a\">Home</a><a href=\"/b\">Docs</a></nav>\
             <script>window.track({section});</script>\
             <h2>Section {section}</h2>\
             <p>Ownership is <strong>Rust's</strong> most unique feature, and it enables Rust to \
             make <em>memory safety</em> guarantees without a <a href=\"https://example.com/gc/{section}\">garbage collector</a>. \
             Each value has an owner; there can be one owner at a time.</p>\
             <ul><li>Moves</li><li>Borrows</li><li>Lifetimes of {section}</li></ul>\
             <pre><code>fn main() {{ let s = String::from(\"{section}\"); println!(\"{{s}}\"); }}</code></pre>\
             <table><tr><th>Kind</th><th>Count</th></tr><tr><td>values</td><td>{section}</td></tr></table>"
        )
        .unwrap();
    }
    html.push_str("</body></html>");
    html
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let html = page();
    let size = html.len();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = html.clone();
    let app = axum::Router::new().route(
        "/page",
        axum::routing::get(move || {
            let body = served.clone();
            async move { ([("content-type", "text/html; charset=utf-8")], body) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let url = format!("http://{addr}/page");
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    let fetcher = Fetcher::new(FetchSettings {
        guard: AddressGuard::allowing(vec!["127.0.0.1".parse().unwrap()]),
        upgrade_http: false,
        ..FetchSettings::default()
    });
    let prepared = fetcher.prepare(&url).unwrap();
    let (mut gets, mut fetches, mut conversions) = (Vec::new(), Vec::new(), Vec::new());
    let mut markdown_len = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        let body = plain.get(&url).send().await.unwrap().text().await.unwrap();
        gets.push(started.elapsed());
        assert_eq!(body.len(), size);

        let started = Instant::now();
        let fetched = fetcher.get(&prepared).await.unwrap();
        let markdown = convert::readable(&fetched).unwrap();
        fetches.push(started.elapsed());
        markdown_len = markdown.len();

        let started = Instant::now();
        let markdown = convert::html_to_markdown(&html);
        conversions.push(started.elapsed());
        assert!(!markdown.contains("window.track"));
    }
    let (get, fetch, conversion) = (median(gets), median(fetches), median(conversions));
    println!(
        "WebFetch on a {:.2} MB HTML page over 127.0.0.1 (medians of {RUNS} alternating runs)",
        size as f64 / 1e6
    );
    println!("  plain reqwest GET (peer)        {:8.2} ms", ms(get));
    println!(
        "  WebFetch fetch + Markdown       {:8.2} ms   ({:.2}x the GET; overhead {:.2} ms)",
        ms(fetch),
        fetch.as_secs_f64() / get.as_secs_f64(),
        ms(fetch.saturating_sub(get))
    );
    println!(
        "  HTML -> Markdown alone          {:8.2} ms   (target < 20 ms; {markdown_len} bytes of Markdown)",
        ms(conversion)
    );
}
