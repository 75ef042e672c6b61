//! Fetching against a local site: conversions, redirects, the address guard end to end (names
//! that resolve to private addresses, redirects into them), compression, the size cap while
//! streaming, timeouts and error statuses.

use crate::site;
use agentry_webfetch::convert;
use agentry_webfetch::error::FetchError;
use agentry_webfetch::fetch::FetchSettings;
use std::sync::atomic::Ordering;

async fn fetched(path: &str) -> Result<String, String> {
    let site = site::start().await;
    let fetcher = site::fetcher(site::settings());
    let url = fetcher
        .prepare(&site.url(path))
        .map_err(|e| e.to_string())?;
    let page = fetcher.get(&url).await.map_err(|e| e.to_string())?;
    convert::readable(&page).map_err(|e| e.to_string())
}

#[tokio::test]
async fn html_becomes_markdown_without_scripts_styles_or_navigation() {
    let text = fetched("/article").await.unwrap();
    insta::assert_snapshot!(text);
    for dropped in [
        "secret-script",
        "color: red",
        "About-nav-link",
        "Site header banner",
        "Copyright footer",
        "enable-js",
    ] {
        assert!(!text.contains(dropped), "{dropped} stays out: {text}");
    }
}

#[tokio::test]
async fn json_is_pretty_printed_text_decoded_from_its_charset_and_binary_refused() {
    assert_eq!(
        fetched("/data.json").await.unwrap(),
        "{\n  \"name\": \"agentry\",\n  \"tags\": [\n    \"rust\",\n    \"agents\"\n  ]\n}"
    );
    assert_eq!(
        fetched("/notes.txt").await.unwrap(),
        "plain notes\nline two\n"
    );
    assert_eq!(fetched("/latin1.txt").await.unwrap(), "Café crème");
    let refused = fetched("/logo.png").await.unwrap_err();
    assert!(
        refused.contains("image/png") && refused.contains("does not read"),
        "{refused}"
    );
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let text = fetched("/hop/1").await.unwrap();
    assert!(text.contains("# Ownership"), "{text}");
    let site = site::start().await;
    let fetcher = site::fetcher(FetchSettings {
        max_redirects: 2,
        ..site::settings()
    });
    let error = fetcher
        .get(&fetcher.prepare(&site.url("/hop/1")).unwrap())
        .await
        .unwrap_err();
    assert!(matches!(error, FetchError::TooManyRedirects(2)), "{error}");
    let looping = fetched("/loop").await.unwrap_err();
    assert!(looping.contains("redirects"), "{looping}");
}

#[tokio::test]
async fn names_that_resolve_to_private_addresses_are_refused_before_connecting() {
    let site = site::start().await;
    let fetcher = site::fetcher(site::settings());
    let port = site.addr.port();
    for (name, class) in [
        ("evil.test", "private (10.0.0.0/8)"),
        ("meta.test", "link-local"),
    ] {
        let url = fetcher
            .prepare(&format!("http://{name}:{port}/article"))
            .unwrap();
        let error = fetcher.get(&url).await.unwrap_err();
        assert!(matches!(error, FetchError::Refused(_)), "{name}: {error}");
        assert!(error.to_string().contains(class), "{name}: {error}");
    }
    // A name with a private and a public (here: allowed) address connects to the allowed one.
    let url = fetcher
        .prepare(&format!("http://mixed.test:{port}/notes.txt"))
        .unwrap();
    assert_eq!(
        fetcher.get(&url).await.unwrap().body,
        b"plain notes\nline two\n"
    );
}

#[tokio::test]
async fn redirects_into_private_addresses_are_refused() {
    for path in [
        "/to-private-name",
        "/to-metadata-name",
        "/to-other-loopback",
    ] {
        let error = fetched(path).await.unwrap_err();
        assert!(error.starts_with("refused:"), "{path}: {error}");
        assert!(error.contains("not a public address"), "{path}: {error}");
    }
}

#[tokio::test]
async fn literal_private_addresses_and_other_schemes_are_refused_without_a_request() {
    let fetcher = site::fetcher(site::settings());
    for url in [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://2130706434/",
        "http://0x7f.0.0.2/",
        "http://[::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
    ] {
        let error = fetcher.prepare(url).unwrap_err();
        assert!(matches!(error, FetchError::Refused(_)), "{url}: {error}");
    }
    let error = fetcher.prepare("file:///etc/passwd").unwrap_err();
    assert!(matches!(error, FetchError::Scheme(_)), "{error}");
}

#[tokio::test]
async fn http_is_upgraded_to_https_unless_configured_and_domains_are_filtered() {
    let upgrading = site::fetcher(FetchSettings {
        upgrade_http: true,
        ..site::settings()
    });
    assert_eq!(
        upgrading.prepare("http://site.test/x").unwrap().scheme(),
        "https"
    );
    let filtered = site::fetcher(FetchSettings {
        allowed_domains: vec!["site.test".into(), "docs.rs".into()],
        blocked_domains: vec!["private.docs.rs".into()],
        ..site::settings()
    });
    assert!(filtered.prepare("http://site.test/").is_ok());
    assert!(filtered.prepare("http://api.docs.rs/").is_ok());
    let blocked = filtered.prepare("http://private.docs.rs/").unwrap_err();
    assert!(blocked.to_string().contains("blocked"), "{blocked}");
    let other = filtered.prepare("http://example.com/").unwrap_err();
    assert!(other.to_string().contains("allowed_domains"), "{other}");
}

#[tokio::test]
async fn gzip_and_brotli_bodies_are_decoded() {
    for path in ["/gzip", "/brotli"] {
        let text = fetched(path).await.unwrap();
        assert!(text.contains("# Ownership"), "{path}: {text}");
    }
}

#[tokio::test]
async fn a_huge_body_is_capped_while_streaming() {
    let site = site::start().await;
    let fetcher = site::fetcher(site::settings());
    let page = fetcher
        .get(&fetcher.prepare(&site.url("/huge")).unwrap())
        .await
        .unwrap();
    assert_eq!(page.body.len(), 64 * 1024);
    assert!(page.truncated);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let sent = site.huge_sent.load(Ordering::Relaxed);
    assert!(
        sent < 64 * 1024 * 1024,
        "reading stopped early: the server sent {sent} bytes"
    );
}

#[tokio::test]
async fn a_slow_server_times_out_and_error_statuses_are_reported() {
    let slow = fetched("/slow").await.unwrap_err();
    assert!(slow.contains("did not answer within 2 s"), "{slow}");
    let missing = fetched("/missing").await.unwrap_err();
    assert!(
        missing.contains("answered 404") && missing.contains("no such page here"),
        "{missing}"
    );
}
