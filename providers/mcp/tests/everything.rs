//! The MCP provider against the reference server, `@modelcontextprotocol/server-everything`
//! (installed under `tests/peers` by `scripts/test`; see `agentry_tests::peers`), run through the real executor.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::provider::{Provider, ProviderOrigin};
use agentry::testing::ToolHarness;
use agentry::tool::{ContentBlock, ToolContent, ToolKind};
use agentry_mcp::{McpError, McpOptions, McpServerConfig, StdioServer, connect, connect_all};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn everything() -> McpServerConfig {
    let (command, args) = agentry_tests::peers::everything_server();
    McpServerConfig::Stdio(StdioServer {
        command,
        args,
        env: BTreeMap::new(),
        cwd: None,
        lazy: false,
    })
}

fn stdio(command: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig::Stdio(StdioServer {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: BTreeMap::new(),
        cwd: None,
        lazy: false,
    })
}

fn project() -> PathBuf {
    std::env::temp_dir()
}

async fn harness() -> ToolHarness {
    let provider = connect("everything", &everything(), &project())
        .await
        .unwrap();
    ToolHarness::new(&provider, project()).unwrap()
}

fn blocks(content: &[ToolContent]) -> Vec<&ContentBlock> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Content { content } => Some(content),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn tools_are_listed_with_prefixed_names_kinds_and_schemas() {
    let provider = connect("everything", &everything(), &project())
        .await
        .unwrap();
    assert_eq!(provider.name(), "everything");
    assert_eq!(
        provider.origin(),
        ProviderOrigin::McpServer {
            server: "everything".into()
        }
    );
    assert!(
        provider.description().starts_with("Everything"),
        "the server's own name: {}",
        provider.description()
    );
    let tools = provider.tools();
    let echo = tools
        .iter()
        .find(|t| t.name() == "mcp__everything__echo")
        .unwrap();
    assert_eq!(
        echo.kind(),
        ToolKind::Other,
        "a server's readOnlyHint does not let its tool run unasked"
    );
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(
        echo.input_schema()["properties"]["message"]["type"],
        "string"
    );
    let gzip = tools
        .iter()
        .find(|t| t.name() == "mcp__everything__gzip-file-as-resource")
        .unwrap();
    assert_eq!(
        gzip.kind(),
        ToolKind::Other,
        "neither read-only nor destructive"
    );
    assert!(tools.len() >= 10, "{} tools", tools.len());
    // Trusted by the user's configuration, its hints count.
    let options = agentry_mcp::McpOptions {
        trusted_hints: vec!["everything".to_owned()],
        ..agentry_mcp::McpOptions::default()
    };
    let trusted = agentry_mcp::connect_with("everything", &everything(), &project(), &options)
        .await
        .unwrap();
    let tools = trusted.tools();
    let echo = tools
        .iter()
        .find(|t| t.name() == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo.kind(), ToolKind::Read);
}

#[tokio::test]
async fn a_call_completes_with_the_servers_text_and_title() {
    let outcome = harness()
        .await
        .call("mcp__everything__echo", json!({"message": "hi there"}))
        .await;
    assert!(!outcome.result.is_error, "{}", outcome.text());
    assert_eq!(outcome.text(), "Echo: hi there");
    assert_eq!(outcome.announced().unwrap().title, "Echo Tool");
}

#[tokio::test]
async fn images_structured_content_and_resource_links_are_kept() {
    let harness = harness().await;
    let image = harness
        .call("mcp__everything__get-tiny-image", json!({}))
        .await;
    assert!(!image.result.is_error, "{}", image.text());
    let content = image.content();
    assert!(
        blocks(&content)
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { mime_type, data } if mime_type == "image/png" && !data.is_empty())),
        "{content:?}"
    );

    let weather = harness
        .call(
            "mcp__everything__get-structured-content",
            json!({"location": "Chicago"}),
        )
        .await;
    assert!(!weather.result.is_error, "{}", weather.text());
    let raw = weather.final_update().unwrap().raw_output.clone().unwrap();
    assert!(raw["temperature"].is_number(), "{raw}");

    let link = harness
        .call(
            "mcp__everything__gzip-file-as-resource",
            json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"}),
        )
        .await;
    assert!(!link.result.is_error, "{}", link.text());
    let content = link.content();
    assert!(
        blocks(&content)
            .iter()
            .any(|b| matches!(b, ContentBlock::ResourceLink { name, .. } if name == "hello.gz")),
        "{content:?}"
    );
    assert!(link.text().contains("hello.gz"), "{}", link.text());
}

#[tokio::test]
async fn an_error_result_fails_the_call_with_the_servers_message() {
    let outcome = harness()
        .await
        .call(
            "mcp__everything__gzip-file-as-resource",
            json!({"name": "x.gz", "data": "ftp://example.invalid/file"}),
        )
        .await;
    assert!(outcome.result.is_error);
    assert!(
        outcome.text().contains("Unsupported URL protocol"),
        "{}",
        outcome.text()
    );
}

#[tokio::test]
async fn a_cancelled_call_ends_at_once_and_the_server_keeps_working() {
    let harness = harness().await;
    let cancel = CancellationToken::new();
    let cancel_soon = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel_soon.cancel();
    });
    let started = Instant::now();
    let outcome = harness
        .call_with(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 30, "steps": 30}),
            cancel,
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(outcome.result.is_error);
    assert_eq!(
        outcome.statuses().last().copied(),
        Some(agentry::event::ToolCallStatus::Failed)
    );
    let after = harness
        .call("mcp__everything__echo", json!({"message": "still here"}))
        .await;
    assert_eq!(after.text(), "Echo: still here");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let missing = connect("ghost", &stdio("/nonexistent/mcp-server", &[]), &project())
        .await
        .err()
        .unwrap();
    assert!(matches!(missing, McpError::Start { .. }));
    assert!(
        missing
            .to_string()
            .contains("cannot run `/nonexistent/mcp-server`"),
        "{missing}"
    );

    let crashing = connect(
        "broken",
        &stdio("sh", &["-c", "echo 'config file is missing' >&2; exit 3"]),
        &project(),
    )
    .await
    .err()
    .unwrap()
    .to_string();
    assert!(
        crashing.contains("MCP server `broken` did not start"),
        "{crashing}"
    );
    assert!(crashing.contains("config file is missing"), "{crashing}");
}

#[tokio::test]
async fn a_hanging_server_does_not_hold_up_the_others() {
    let servers = BTreeMap::from([
        ("everything".to_owned(), everything()),
        ("silent".to_owned(), stdio("sleep", &["60"])),
    ]);
    let started = Instant::now();
    let options = McpOptions {
        startup_timeout: Duration::from_secs(3),
        ..McpOptions::default()
    };
    let results = connect_all(&servers, &project(), &options).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    let (name, everything) = &results[0];
    assert_eq!(name, "everything");
    assert!(everything.is_ok());
    let (name, silent) = &results[1];
    assert_eq!(name, "silent");
    let error = silent.as_ref().err().unwrap().to_string();
    assert!(error.contains("no answer within 3 s"), "{error}");
}

#[tokio::test]
async fn prompts_are_listed_and_filled_in() {
    let provider = connect("everything", &everything(), &project())
        .await
        .unwrap();
    let prompts = provider.prompts();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"simple-prompt") && names.contains(&"args-prompt"),
        "{names:?}"
    );
    let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    assert_eq!(args.arguments[0].name, "city");
    assert!(args.arguments[0].required);
    assert!(!args.arguments[1].required);
    let content = args
        .get(BTreeMap::from([("city".to_owned(), "Paris".to_owned())]))
        .await
        .unwrap();
    assert_eq!(
        content,
        [ContentBlock::Text {
            text: "What's weather in Paris?".into()
        }]
    );
    let missing = args.get(BTreeMap::new()).await.unwrap_err();
    assert!(missing.contains("`city`"), "{missing}");
}

async fn harness_with(options: &McpOptions) -> ToolHarness {
    let provider = agentry_mcp::connect_with("everything", &everything(), &project(), options)
        .await
        .unwrap();
    ToolHarness::new(&provider, project()).unwrap()
}

#[tokio::test]
async fn progress_notifications_become_tool_updates() {
    let outcome = harness()
        .await
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 0.8, "steps": 4}),
        )
        .await;
    assert!(!outcome.result.is_error, "{}", outcome.text());
    let reports: Vec<String> = outcome
        .progress()
        .iter()
        .filter_map(|update| update.content.as_ref())
        .flat_map(|content| blocks(content).into_iter().cloned())
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        })
        .collect();
    assert!(
        reports.contains(&"Progress 1 of 4".to_owned()),
        "{reports:?}"
    );
    assert!(
        reports.contains(&"Progress 3 of 4".to_owned()),
        "{reports:?}"
    );
    assert!(outcome.text().contains("Long running operation completed"));
}

#[tokio::test]
async fn the_call_timeout_starts_again_with_each_progress_notification() {
    let options = McpOptions {
        tool_timeout: Duration::from_millis(700),
        ..McpOptions::default()
    };
    let harness = harness_with(&options).await;
    // 2 s in all, a progress notification every 0.4 s: never 0.7 s of silence.
    let reporting = harness
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 2, "steps": 5}),
        )
        .await;
    assert!(!reporting.result.is_error, "{}", reporting.text());
    // 1.5 s of silence before the only notification.
    let silent = harness
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 1.5, "steps": 1}),
        )
        .await;
    assert!(silent.result.is_error);
    assert!(
        silent
            .text()
            .contains("neither answered nor reported progress for 0.7 s"),
        "{}",
        silent.text()
    );
}

#[tokio::test]
async fn tools_the_server_adds_after_initialize_are_offered_and_roots_name_the_project() {
    let provider = connect("everything", &everything(), &project())
        .await
        .unwrap();
    // The server registers its roots tool once it knows the client has roots, and says so
    // with notifications/tools/list_changed.
    let deadline = Instant::now() + Duration::from_secs(10);
    let has_roots_tool = |provider: &agentry_mcp::McpProvider| {
        provider
            .tools()
            .iter()
            .any(|t| t.name() == "mcp__everything__get-roots-list")
    };
    while !has_roots_tool(&provider) {
        assert!(
            Instant::now() < deadline,
            "the tool list was not read again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let outcome = ToolHarness::new(&provider, project())
        .unwrap()
        .call("mcp__everything__get-roots-list", json!({}))
        .await;
    let project_uri = url_of(&project());
    assert!(outcome.text().contains(&project_uri), "{}", outcome.text());
}

fn url_of(folder: &std::path::Path) -> String {
    format!("file://{}", folder.display())
}

#[tokio::test]
async fn a_prompt_with_an_embedded_resource_keeps_it() {
    let provider = connect("everything", &everything(), &project())
        .await
        .unwrap();
    let prompts = provider.prompts();
    let prompt = prompts
        .iter()
        .find(|p| p.name == "resource-prompt")
        .unwrap();
    let content = prompt
        .get(BTreeMap::from([
            ("resourceType".to_owned(), "Text".to_owned()),
            ("resourceId".to_owned(), "3".to_owned()),
        ]))
        .await
        .unwrap();
    assert_eq!(content.len(), 2, "{content:?}");
    assert!(
        matches!(&content[0], ContentBlock::Text { text } if text.contains("resource with id: 3"))
    );
    let ContentBlock::Resource {
        uri,
        mime_type,
        text,
    } = &content[1]
    else {
        panic!("{content:?}")
    };
    assert!(uri.ends_with("/3"), "{uri}");
    assert_eq!(mime_type.as_deref(), Some("text/plain"));
    assert!(text.as_deref().is_some_and(|t| !t.is_empty()));
}
