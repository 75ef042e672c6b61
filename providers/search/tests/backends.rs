//! WebSearch against local servers that answer as the real services do: SearXNG's JSON
//! format, the Brave Search API, Tavily, and a JSON API read through configured paths — with
//! domain filters, error and quota replies, and no back-end at all.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::provider::SimpleProvider;
use agentry::testing::ToolHarness;
use agentry_search::{Backend, SearchSettings, WebSearch, provider, settings_from};
use axum::Json;
use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::HashMap;

async fn searxng(Query(params): Query<HashMap<String, String>>) -> Response {
    assert_eq!(params.get("format").map(String::as_str), Some("json"));
    if params["q"] == "forbidden" {
        return (
            StatusCode::FORBIDDEN,
            "<html><body>403 Forbidden</body></html>",
        )
            .into_response();
    }
    Json(json!({
        "query": params["q"],
        "number_of_results": 0,
        "results": [
            {"url": "https://doc.rust-lang.org/book/ch04-01-what-is-ownership.html", "title": "What is Ownership?", "content": "Ownership is a set of rules that govern how a Rust program manages memory.", "engine": "duckduckgo", "parsed_url": ["https", "doc.rust-lang.org"], "engines": ["duckduckgo", "brave"], "positions": [1, 2], "score": 4.0, "category": "general"},
            {"url": "https://www.reddit.com/r/rust/comments/ownership", "title": "Ownership explained simply", "content": "A thread.", "engine": "brave", "score": 1.0, "category": "general"},
            {"url": "https://blog.rust-lang.org/2024/ownership", "title": "Rust Blog", "content": "", "engine": "bing", "score": 0.5, "category": "general"}
        ],
        "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["rust borrowing"], "unresponsive_engines": []
    }))
    .into_response()
}

async fn brave(headers: HeaderMap, Query(params): Query<HashMap<String, String>>) -> Response {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some("brave-key")
    {
        return (StatusCode::UNAUTHORIZED, Json(json!({"type": "ErrorResponse", "error": {"id": "e1", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid.", "meta": {}}, "time": 1700000000}))).into_response();
    }
    if params["q"] == "quota" {
        return (StatusCode::TOO_MANY_REQUESTS, Json(json!({"type": "ErrorResponse", "error": {"id": "e2", "status": 429, "code": "RATE_LIMITED", "detail": "Request rate limit exceeded for plan.", "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2, "quota_limit": 2000, "quota_current": 12, "component": "rate_limiter"}}, "time": 1700000000}))).into_response();
    }
    assert_eq!(params["count"], "10");
    Json(json!({
        "type": "search",
        "query": {"original": params["q"], "more_results_available": true},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
        "web": {"type": "search", "family_friendly": true, "results": [
            {"title": "Tokio - An asynchronous Rust runtime", "url": "https://tokio.rs/", "is_source_local": false, "description": "Tokio is an <strong>asynchronous</strong> runtime for Rust.", "profile": {"name": "Tokio"}, "language": "en", "family_friendly": true, "type": "search_result"},
            {"title": "tokio - crates.io", "url": "https://crates.io/crates/tokio", "description": "An event-driven, non-blocking I/O platform.", "type": "search_result"}
        ]}
    }))
    .into_response()
}

async fn tavily(headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer tvly-key") {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"detail": {"error": "Unauthorized: missing or invalid API key."}})),
        )
            .into_response();
    }
    if body["query"] == "quota" {
        return (StatusCode::from_u16(432).unwrap(), Json(json!({"detail": {"error": "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com"}}))).into_response();
    }
    assert_eq!(body["include_domains"], json!(["serde.rs"]));
    Json(json!({
        "query": body["query"],
        "follow_up_questions": null,
        "answer": null,
        "images": [],
        "results": [
            {"title": "Overview · Serde", "url": "https://serde.rs/", "content": "Serde is a framework for serializing and deserializing Rust data structures.", "score": 0.98, "raw_content": null},
            {"title": "serde_json", "url": "https://docs.rs/serde_json", "content": "JSON support for Serde.", "score": 0.7, "raw_content": null}
        ],
        "response_time": 1.02,
        "request_id": "123e4567"
    }))
    .into_response()
}

async fn generic(headers: HeaderMap, Query(params): Query<HashMap<String, String>>) -> Response {
    assert_eq!(
        headers.get("x-key").and_then(|v| v.to_str().ok()),
        Some("generic-secret")
    );
    Json(json!({"data": {"total": 1, "items": [
        {"name": "Axum", "link": "https://docs.rs/axum", "meta": {"summary": format!("web framework ({} results asked)", params["n"])}}
    ]}}))
    .into_response()
}

async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/search", get(searxng).post(tavily))
        .route("/res/v1/web/search", get(brave))
        .route("/api", get(generic));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

fn settings(table: Value) -> SearchSettings {
    settings_from(table).unwrap()
}

/// The environment the tests' `${ENV}` settings read.
fn env(name: &str) -> Option<String> {
    match name {
        "TEST_BRAVE_KEY" => Some("brave-key".to_owned()),
        "TEST_GENERIC_KEY" => Some("generic-secret".to_owned()),
        _ => None,
    }
}

async fn search(settings: Option<SearchSettings>, input: Value) -> (bool, String, Value) {
    let provider = match &settings {
        Some(settings) => SimpleProvider::new("search", "")
            .with_tool(WebSearch::new(Backend::with_env(settings, &env))),
        None => provider(None),
    };
    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&provider, dir.path()).unwrap();
    let out = harness.call("WebSearch", input).await;
    let raw = out
        .final_update()
        .and_then(|u| u.raw_output.clone())
        .unwrap_or(Value::Null);
    (out.result.is_error, out.text(), raw)
}

#[tokio::test]
async fn searxng_results_come_as_a_numbered_list_with_domain_filters() {
    let base = start().await;
    let config = settings(json!({"backend": "searxng", "url": base}));
    let (failed, text, raw) = search(
        Some(config.clone()),
        json!({"query": "rust ownership", "blocked_domains": ["reddit.com"]}),
    )
    .await;
    assert!(!failed, "{text}");
    insta::assert_snapshot!(text);
    assert_eq!(raw["backend"], "SearXNG");
    assert_eq!(raw["results"].as_array().unwrap().len(), 2);
    let (_, only, _) = search(
        Some(config.clone()),
        json!({"query": "rust ownership", "allowed_domains": ["rust-lang.org"]}),
    )
    .await;
    assert!(
        only.contains("doc.rust-lang.org") && only.contains("blog.rust-lang.org"),
        "{only}"
    );
    assert!(!only.contains("reddit"), "{only}");
    let (failed, error, _) = search(Some(config), json!({"query": "forbidden"})).await;
    assert!(failed);
    assert!(
        error.contains("SearXNG answered 403") && error.contains("Forbidden"),
        "{error}"
    );
}

#[tokio::test]
async fn brave_is_asked_with_its_token_and_its_errors_and_rate_limits_are_named() {
    let base = start().await;
    let config = settings(json!({"backend": "brave", "url": base, "api_key": "${TEST_BRAVE_KEY}"}));
    let (failed, text, raw) = search(Some(config.clone()), json!({"query": "tokio"})).await;
    assert!(!failed, "{text}");
    assert!(text.starts_with("Results for \"tokio\":\n\n1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n"), "{text}");
    assert!(text.contains("2. tokio - crates.io"), "{text}");
    assert!(
        text.contains("   Tokio is an asynchronous runtime for Rust.\n"),
        "emphasis tags dropped: {text}"
    );
    assert_eq!(raw["results"][1]["url"], "https://crates.io/crates/tokio");
    let (failed, quota, _) = search(Some(config), json!({"query": "quota"})).await;
    assert!(failed);
    assert!(
        quota.contains("Brave Search answered 429")
            && quota.contains("rate limit")
            && quota.contains("Request rate limit exceeded for plan."),
        "{quota}"
    );
    let wrong = settings(json!({"backend": "brave", "url": base, "api_key": "nope"}));
    let (_, invalid, _) = search(Some(wrong), json!({"query": "tokio"})).await;
    assert!(
        invalid.contains("401") && invalid.contains("subscription token is invalid"),
        "{invalid}"
    );
}

#[tokio::test]
async fn tavily_gets_the_domain_filters_and_its_plan_limit_is_named() {
    let base = start().await;
    let config = settings(json!({"backend": "tavily", "url": base, "api_key": "tvly-key"}));
    let (failed, text, _) = search(
        Some(config.clone()),
        json!({"query": "serde", "allowed_domains": ["serde.rs"]}),
    )
    .await;
    assert!(!failed, "{text}");
    assert!(text.contains("1. Overview · Serde"), "{text}");
    assert!(!text.contains("docs.rs"), "filtered here too: {text}");
    let (failed, limit, _) = search(
        Some(config),
        json!({"query": "quota", "allowed_domains": ["serde.rs"]}),
    )
    .await;
    assert!(failed);
    assert!(
        limit.contains("Tavily answered 432")
            && limit.contains("usage limit")
            && limit.contains("quota"),
        "{limit}"
    );
}

#[tokio::test]
async fn a_json_api_is_read_through_the_configured_paths() {
    let base = start().await;
    let config = settings(json!({
        "backend": "json",
        "url": format!("{base}/api?q={{query}}&n={{count}}"),
        "max_results": 5,
        "json": {"headers": {"X-Key": "${TEST_GENERIC_KEY}"}, "results": "data.items", "title": "name", "url": "link", "snippet": "meta.summary"}
    }));
    let (failed, text, _) = search(Some(config), json!({"query": "rust web"})).await;
    assert!(!failed, "{text}");
    assert!(
        text.contains("1. Axum\n   https://docs.rs/axum\n   web framework (5 results asked)"),
        "{text}"
    );
}

#[tokio::test]
async fn without_a_backend_each_call_says_how_to_configure_one() {
    let (failed, text, _) = search(None, json!({"query": "anything"})).await;
    assert!(failed);
    assert!(
        text.contains("[web_search]") && text.contains("backend = \"searxng\""),
        "{text}"
    );
    let unusable = settings(json!({"backend": "searxng"}));
    let (failed, text, _) = search(Some(unusable), json!({"query": "x"})).await;
    assert!(failed);
    assert!(text.contains("needs url"), "{text}");
    assert!(settings_from(json!({"backend": "bing"})).is_err());
}

#[test]
fn the_tool_as_the_model_sees_it() {
    let provider = std::sync::Arc::new(provider(None));
    for (name, shown) in agentry::testing::tool_definitions(provider).unwrap() {
        insta::with_settings!({sort_maps => true, prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!(name, shown);
        });
    }
}
