//! Configured HTTP tools against local servers: a plain GET and POST endpoint with headers from
//! the environment, a LangServe runnable (schema discovered, `invoke` called), several runnables
//! under one base (named, or found in its `openapi.json`), and errors — an error status, an
//! answer that is not JSON, a timeout — as failed calls with the server's message.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::testing::ToolHarness;
use agentry_http_tools::{entries_from, provider};
use axum::Json;
use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::HashMap;

fn run_metadata() -> Value {
    json!({"run_id": "5f4b2c1e-0000-4000-8000-000000000000", "feedback_tokens": []})
}

/// A LangServe `invoke` answer.
fn invoked(output: Value) -> Response {
    Json(json!({"output": output, "metadata": run_metadata()})).into_response()
}

/// What LangServe checks of an `invoke` body, and its input.
fn input_of(body: &Value) -> &Value {
    assert!(
        body.get("config").is_some() && body.get("kwargs").is_some(),
        "{body}"
    );
    &body["input"]
}

async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route(
            "/weather",
            get(|headers: HeaderMap, Query(q): Query<HashMap<String, String>>| async move {
                if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer weather-key") {
                    return (StatusCode::UNAUTHORIZED, Json(json!({"detail": "Not authenticated"}))).into_response();
                }
                Json(json!({"city": q["city"], "celsius": 21, "days": q["days"]})).into_response()
            }),
        )
        .route("/echo", post(|Json(body): Json<Value>| async move { Json(json!({"got": body})) }))
        .route(
            "/down",
            post(|| async { (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"detail": "upstream is down"}))) }),
        )
        .route(
            "/slow",
            post(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(10)).await;
                "late"
            }),
        )
        .route("/summarize/input_schema", get(|| async { Json(json!({"title": "SummarizeInput", "type": "string"})) }))
        .route(
            "/summarize/invoke",
            post(|Json(body): Json<Value>| async move {
                invoked(json!(format!("summary of: {}", input_of(&body).as_str().unwrap())))
            }),
        )
        .route(
            "/math/openapi.json",
            get(|| async {
                Json(json!({"openapi": "3.1.0", "info": {"title": "LangChain Server", "version": "1.0"}, "paths": {
                    "/add/invoke": {"post": {}}, "/add/batch": {"post": {}}, "/add/input_schema": {"get": {}},
                    "/multiply/invoke": {"post": {}}, "/multiply/stream": {"post": {}},
                    "/docs": {"get": {}}
                }}))
            }),
        )
        .route("/math/add/input_schema", get(|| async { Json(pair("AddInput")) }))
        .route("/math/multiply/input_schema", get(|| async { Json(pair("MultiplyInput")) }))
        .route(
            "/math/add/invoke",
            post(|Json(body): Json<Value>| async move {
                let input = input_of(&body);
                invoked(json!(input["a"].as_i64().unwrap() + input["b"].as_i64().unwrap()))
            }),
        )
        .route(
            "/math/multiply/invoke",
            post(|Json(body): Json<Value>| async move {
                let input = input_of(&body);
                invoked(json!({"product": input["a"].as_i64().unwrap() * input["b"].as_i64().unwrap()}))
            }),
        )
        .route("/broken/input_schema", get(|| async { Json(pair("BrokenInput")) }))
        .route("/broken/invoke", post(|| async { "Internal thing happened" }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A pydantic-style schema of two integers.
fn pair(title: &str) -> Value {
    json!({"title": title, "type": "object", "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}, "required": ["a", "b"]})
}

fn env(name: &str) -> Option<String> {
    (name == "WEATHER_KEY").then(|| "weather-key".to_owned())
}

async fn harness(entries: Value) -> (ToolHarness, Vec<String>, tempfile::TempDir) {
    let entries = entries_from(entries).unwrap();
    let (provider, problems) = provider(&entries, &env).await;
    let dir = tempfile::tempdir().unwrap();
    (
        ToolHarness::new(&provider, dir.path()).unwrap(),
        problems,
        dir,
    )
}

#[tokio::test]
async fn plain_endpoints_get_the_models_input_as_query_or_body_with_their_headers() {
    let base = start().await;
    let (harness, problems, _dir) = harness(json!([
        {"name": "weather", "description": "Weather in a city.", "url": format!("{base}/weather"), "method": "GET",
         "headers": {"Authorization": "Bearer ${WEATHER_KEY}"},
         "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}},
        {"name": "echo", "url": format!("{base}/echo")},
    ]))
    .await;
    assert!(problems.is_empty(), "{problems:?}");
    let weather = harness
        .call("weather", json!({"city": "Oslo", "days": 2}))
        .await;
    assert!(!weather.result.is_error, "{}", weather.text());
    let answer: Value = serde_json::from_str(&weather.text()).unwrap();
    assert_eq!(answer, json!({"city": "Oslo", "celsius": 21, "days": "2"}));
    let echo = harness.call("echo", json!({"nested": {"x": [1, 2]}})).await;
    assert_eq!(
        serde_json::from_str::<Value>(&echo.text()).unwrap(),
        json!({"got": {"nested": {"x": [1, 2]}}})
    );
    // The declared schema is enforced before anything is sent.
    let missing = harness.call("weather", json!({"days": 2})).await;
    assert!(missing.result.is_error);
    assert!(missing.text().contains("city"), "{}", missing.text());
}

#[tokio::test]
async fn a_langserve_runnable_is_discovered_and_invoked() {
    let base = start().await;
    let (harness, problems, _dir) =
        harness(json!([{"langserve": format!("{base}/summarize")}])).await;
    assert!(problems.is_empty(), "{problems:?}");
    let definitions = agentry::testing::tool_definitions(std::sync::Arc::new(
        provider(
            &entries_from(json!([{"langserve": format!("{base}/summarize")}])).unwrap(),
            &env,
        )
        .await
        .0,
    ))
    .unwrap();
    let (name, shown) = &definitions[0];
    assert_eq!(name, "summarize");
    assert_eq!(
        shown["input_schema"],
        json!({"type": "object", "properties": {"input": {"title": "SummarizeInput", "type": "string"}}, "required": ["input"]})
    );
    let out = harness
        .call("summarize", json!({"input": "a long text"}))
        .await;
    assert!(!out.result.is_error, "{}", out.text());
    assert_eq!(out.text(), "summary of: a long text");
}

#[tokio::test]
async fn several_runnables_behind_one_base_are_found_in_its_openapi_document_or_named() {
    let base = start().await;
    for tools in [json!(["*"]), json!(["add", "multiply"])] {
        let (harness, problems, _dir) = harness(json!([
            {"langserve": format!("{base}/math"), "name": "math", "tools": tools, "kind": "other"}
        ]))
        .await;
        assert!(problems.is_empty(), "{problems:?}");
        let add = harness.call("math_add", json!({"a": 2, "b": 40})).await;
        assert_eq!(add.text(), "42");
        let multiply = harness.call("math_multiply", json!({"a": 6, "b": 7})).await;
        assert_eq!(
            serde_json::from_str::<Value>(&multiply.text()).unwrap(),
            json!({"product": 42})
        );
        assert_eq!(
            add.announced().unwrap().kind,
            agentry::tool::ToolKind::Other
        );
    }
}

#[tokio::test]
async fn error_statuses_unreadable_answers_and_timeouts_are_failed_calls_with_the_servers_message()
{
    let base = start().await;
    let (harness, problems, _dir) = harness(json!([
        {"name": "down", "url": format!("{base}/down")},
        {"name": "slow", "url": format!("{base}/slow"), "timeout_secs": 1},
        {"langserve": format!("{base}/broken")},
        {"name": "nowhere", "langserve": format!("{base}/missing")},
        {"name": "bad name!", "url": format!("{base}/echo")},
    ]))
    .await;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("nowhere") && problems[0].contains("404"),
        "{problems:?}"
    );
    assert!(problems[1].contains("not a tool name"), "{problems:?}");
    let down = harness.call("down", json!({})).await;
    assert!(down.result.is_error);
    assert_eq!(down.text(), "the server answered 503: upstream is down");
    let slow = harness.call("slow", json!({})).await;
    assert!(slow.result.is_error);
    assert!(
        slow.text().contains("did not answer within 1 s"),
        "{}",
        slow.text()
    );
    let broken = harness.call("broken", json!({"a": 1, "b": 2})).await;
    assert!(broken.result.is_error);
    assert!(
        broken.text().contains("not valid JSON")
            && broken.text().contains("Internal thing happened"),
        "{}",
        broken.text()
    );
}
