//! The MCP provider against `mcp-test-server` (tests/mcp/server.rs, built on rmcp), for what
//! the reference server cannot show: a server that crashes and is restarted, one that cannot
//! be, a slow one, cancellation seen from the server's side, list changes, streamable HTTP,
//! and questions asked during concurrent calls reaching the call they belong to.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry::provider::{Provider, ProviderStatus};
use agentry::question::{Answers, Question};
use agentry::testing::ToolHarness;
use agentry::tool::{AskUser, ToolContext, ToolError, UserAnswer};
use agentry_mcp::{
    HttpServer, McpOptions, McpProvider, McpServerConfig, StdioServer, connect_all,
    connect_in_background, connect_with,
};
use futures::future::BoxFuture;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn server(args: &[&str], env: &[(&str, &Path)]) -> McpServerConfig {
    McpServerConfig::Stdio(StdioServer {
        command: env!("CARGO_BIN_EXE_mcp-test-server").to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.display().to_string()))
            .collect(),
        cwd: None,
        lazy: false,
    })
}

fn quick_restarts() -> McpOptions {
    McpOptions {
        restart_delay: Duration::from_millis(100),
        restart_attempts: 2,
        ..McpOptions::default()
    }
}

async fn connected(config: &McpServerConfig, options: &McpOptions) -> McpProvider {
    connect_with("test", config, &std::env::temp_dir(), options)
        .await
        .unwrap()
}

/// Waits (up to 10 s) until `check` holds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Calls a tool of the provider as it is now.
async fn call(provider: &McpProvider, tool: &str, input: serde_json::Value) -> (bool, String) {
    let outcome = ToolHarness::new(provider, std::env::temp_dir())
        .unwrap()
        .call(tool, input)
        .await;
    (outcome.result.is_error, outcome.text())
}

#[tokio::test]
async fn a_server_that_dies_is_restarted_and_one_that_cannot_start_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let refuse = dir.path().join("refuse");
    let provider = connected(
        &server(&[], &[("MCP_TEST_REFUSE_START", &refuse)]),
        &quick_restarts(),
    )
    .await;
    let (_, first_pid) = call(&provider, "mcp__test__pid", json!({})).await;

    let (failed, message) = call(&provider, "mcp__test__crash", json!({})).await;
    assert!(failed);
    assert!(
        message.contains("the MCP server `test` stopped before `crash` answered"),
        "{message}"
    );
    eventually("restarted", || provider.status() == ProviderStatus::Ready).await;
    let (failed, second_pid) = call(&provider, "mcp__test__pid", json!({})).await;
    assert!(!failed, "{second_pid}");
    assert_ne!(first_pid, second_pid, "a new process");

    std::fs::write(&refuse, "").unwrap();
    call(&provider, "mcp__test__crash", json!({})).await;
    eventually("given up", || {
        matches!(provider.status(), ProviderStatus::Failed { .. })
    })
    .await;
    let (failed, message) = call(&provider, "mcp__test__echo", json!({"text": "hi"})).await;
    assert!(failed);
    assert!(
        message.contains(
            "the MCP server `test` is not running: failed: gave up after 2 restart attempts"
        ),
        "{message}"
    );
    assert!(message.contains("did not start"), "{message}");
}

#[tokio::test]
async fn a_server_that_keeps_dying_soon_after_starting_is_given_up() {
    let provider = connected(&server(&["--exit-after-ms", "300"], &[]), &quick_restarts()).await;
    eventually("given up", || {
        matches!(provider.status(), ProviderStatus::Failed { .. })
    })
    .await;
    let ProviderStatus::Failed { reason } = provider.status() else {
        unreachable!()
    };
    assert!(
        reason.contains("gave up after 2 restart attempts"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_cancelled_call_tells_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancel.log");
    let provider = connected(
        &server(&[], &[("MCP_TEST_CANCEL_LOG", &log)]),
        &McpOptions::default(),
    )
    .await;
    let harness = ToolHarness::new(&provider, dir.path()).unwrap();
    let cancel = CancellationToken::new();
    let cancel_soon = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel_soon.cancel();
    });
    let outcome = harness
        .call_with("mcp__test__wait_for_cancel", json!({}), cancel)
        .await;
    assert!(outcome.result.is_error);
    eventually("the server saw notifications/cancelled", || {
        std::fs::read_to_string(&log).is_ok_and(|text| text == "cancelled\n")
    })
    .await;
}

#[tokio::test]
async fn list_changes_reach_the_tools_and_the_prompts() {
    let provider = connected(&server(&[], &[]), &McpOptions::default()).await;
    // Every page of the server's lists (two items a page).
    assert_eq!(provider.tools().len(), 9);
    let revision = provider.revision();
    let mut prompts = provider.watch_prompts();
    call(&provider, "mcp__test__add_tool", json!({"name": "fresh"})).await;
    eventually("the new tool is offered", || {
        provider.revision() != revision
            && provider
                .tools()
                .iter()
                .any(|t| t.name() == "mcp__test__fresh")
    })
    .await;
    let (failed, text) = call(&provider, "mcp__test__fresh", json!({})).await;
    assert!(!failed);
    assert_eq!(text, "fresh was added later");

    call(&provider, "mcp__test__add_prompt", json!({"name": "later"})).await;
    tokio::time::timeout(Duration::from_secs(10), prompts.changed())
        .await
        .expect("the prompt list changed")
        .unwrap();
    let names: Vec<String> = provider.prompts().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["greet", "later"]);
}

#[tokio::test]
async fn a_slow_server_holds_up_neither_the_others_nor_the_start() {
    let project = std::env::temp_dir();
    let options = McpOptions::default();
    let started = Instant::now();
    let slow = connect_in_background(
        "slow",
        &server(&["--startup-delay-ms", "1500"], &[]),
        &project,
        &options,
    );
    let fast = connect_in_background("fast", &server(&[], &[]), &project, &options);
    assert!(started.elapsed() < Duration::from_millis(200));
    assert_eq!(slow.status(), ProviderStatus::Starting);
    assert!(slow.tools().is_empty());
    eventually("the fast one is up", || !fast.tools().is_empty()).await;
    assert_eq!(slow.status(), ProviderStatus::Starting, "still starting");
    eventually("the slow one is up", || !slow.tools().is_empty()).await;
    assert_eq!(slow.status(), ProviderStatus::Ready);

    let waiting = McpOptions {
        startup_timeout: Duration::from_millis(500),
        ..McpOptions::default()
    };
    let servers = BTreeMap::from([
        ("fast".to_owned(), server(&[], &[])),
        (
            "slow".to_owned(),
            server(&["--startup-delay-ms", "3000"], &[]),
        ),
    ]);
    let results = connect_all(&servers, &project, &waiting).await;
    assert!(results[0].1.is_ok());
    let error = results[1].1.as_ref().err().unwrap().to_string();
    assert!(error.contains("no answer within 0.5 s"), "{error}");
}

/// The test server over streamable HTTP (`args` added), killed when the child is dropped, and
/// its URL.
async fn over_http(args: &[&str]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-test-server"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let url = lines.next_line().await.unwrap().unwrap();
    (child, url)
}

#[tokio::test]
async fn streamable_http_servers_are_reached_by_url() {
    let (_child, url) = over_http(&[]).await;
    let config = McpServerConfig::Http(HttpServer {
        url,
        headers: BTreeMap::from([("Authorization".to_owned(), "Bearer test".to_owned())]),
        oauth: None,
        lazy: false,
    });
    let provider = connected(&config, &McpOptions::default()).await;
    let (failed, text) = call(&provider, "mcp__test__echo", json!({"text": "over HTTP"})).await;
    assert!(!failed, "{text}");
    assert_eq!(text, "over HTTP");
    let mut prompts = provider.watch_prompts();
    call(&provider, "mcp__test__add_prompt", json!({"name": "later"})).await;
    tokio::time::timeout(Duration::from_secs(10), prompts.changed())
        .await
        .expect("list_changed over HTTP")
        .unwrap();
}

#[tokio::test]
async fn a_server_flooding_notifications_is_listed_again_a_few_times_and_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let provider = connected(&server(&[], &[]), &McpOptions::default()).await;
    let harness = ToolHarness::new(&provider, dir.path()).unwrap();
    let flood = harness
        .call("mcp__test__flood", json!({"count": 2000}))
        .await;
    assert!(!flood.result.is_error, "{}", flood.text());
    assert_eq!(flood.text(), "sent 2000 of each notification");
    let progress = flood
        .events
        .iter()
        .filter(|e| matches!(e, agentry::event::AgentEvent::ToolCallUpdate(_)))
        .count();
    assert!(progress > 0, "the progress notifications reach the call");
    let (failed, echoed) = call(&provider, "mcp__test__echo", json!({"text": "still here"})).await;
    assert!(!failed);
    assert_eq!(echoed, "still here");
    // 4,000 list changes, answered by a handful of listings.
    let (_, lists) = call(&provider, "mcp__test__tool_lists", json!({})).await;
    let lists: usize = lists.parse().unwrap();
    assert!(lists < 100, "listed {lists} times for 4,000 changes");
    assert_eq!(provider.status(), ProviderStatus::Ready);
}

/// Answers each question with the colour named after the call that asked it, and notes which
/// call asked what.
#[derive(Default)]
struct ColourPerCall(std::sync::Mutex<Vec<(String, String)>>);

impl AskUser for ColourPerCall {
    fn ask(
        &self,
        call: &ToolContext,
        questions: Vec<Question>,
    ) -> BoxFuture<'static, Result<UserAnswer, ToolError>> {
        let call = call.tool_call_id.to_string();
        self.0
            .lock()
            .unwrap()
            .push((call.clone(), questions[0].question.clone()));
        let answers = Answers {
            selections: Default::default(),
            custom: BTreeMap::from([("0".to_owned(), format!("colour of {call}"))]),
        };
        Box::pin(async move { Ok(UserAnswer::Answered(answers)) })
    }
}

#[tokio::test]
async fn a_question_asked_during_one_of_several_calls_reaches_that_call() {
    // A server of a revision with server requests: it asks on the stream of the call's request.
    let (_child, url) = over_http(&["--protocol", "2025-11-25"]).await;
    let config = McpServerConfig::Http(HttpServer {
        url,
        headers: BTreeMap::new(),
        oauth: None,
        lazy: false,
    });
    let provider = connected(&config, &McpOptions::default()).await;
    let asker = std::sync::Arc::new(ColourPerCall::default());
    let harness = ToolHarness::new(&provider, std::env::temp_dir())
        .unwrap()
        .with_ask_user(asker.clone());
    // The first call asks while the second is waiting too: the latest call is not the one.
    let first = harness.call(
        "mcp__test__ask_after",
        json!({"label": "first", "delay_ms": 300}),
    );
    let second = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        harness
            .call(
                "mcp__test__ask_after",
                json!({"label": "second", "delay_ms": 1000}),
            )
            .await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(
        first.text(),
        r#"first got "colour of call_1""#,
        "{:?}",
        first.result
    );
    assert_eq!(second.text(), r#"second got "colour of call_2""#);
    let asked = asker.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    for (call, label) in [("call_1", "first"), ("call_2", "second")] {
        let (_, question) = asked.iter().find(|(asker, _)| asker == call).unwrap();
        assert!(
            question.contains(&format!("Which colour for {label}?")),
            "{call} was asked {question}"
        );
    }
}

/// A hostile server's tools, in a session of the default mode with nobody to ask.
async fn hostile(folder: &Path) -> (McpProvider, ToolHarness) {
    let config = McpServerConfig::Stdio(StdioServer {
        command: env!("CARGO_BIN_EXE_mcp-test-server").to_owned(),
        args: vec!["--hostile".to_owned()],
        env: BTreeMap::new(),
        cwd: Some(folder.to_path_buf()),
        lazy: false,
    });
    let provider = connect_with("evil", &config, folder, &McpOptions::default())
        .await
        .unwrap();
    let harness = ToolHarness::new(&provider, folder)
        .unwrap()
        .with_policy(agentry::permission::PermissionPolicy::default());
    (provider, harness)
}

/// [`hostile`] in bypass mode: every call runs.
async fn hostile_bypassed(folder: &Path) -> ToolHarness {
    let (_provider, harness) = hostile(folder).await;
    harness.with_policy(agentry::permission::PermissionPolicy::new(
        agentry::permission::PermissionMode::Bypass,
        Vec::new(),
    ))
}

#[tokio::test]
async fn a_servers_read_only_hint_does_not_let_its_tool_run_unasked() {
    let folder = tempfile::tempdir().unwrap();
    let (_provider, harness) = hostile(folder.path()).await;
    let outcome = harness
        .call("mcp__evil__delete_everything", json!({}))
        .await;
    assert!(outcome.result.is_error, "{}", outcome.text());
    assert!(outcome.text().contains("permission"), "{}", outcome.text());
    assert!(!folder.path().join("deleted").exists(), "it ran unasked");
}

#[tokio::test]
async fn colliding_and_overlong_tool_names_never_stop_the_agent() {
    let folder = tempfile::tempdir().unwrap();
    let (provider, _harness) = hostile(folder.path()).await;
    let names: Vec<String> = provider
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names
            .iter()
            .filter(|n| *n == "mcp__evil__get_thing")
            .count(),
        1,
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.len() <= 64), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("mcp__evil__xxxx")),
        "{names:?}"
    );
    // The agent starts with it, the colliding tool left out.
    agentry::agent::Agent::builder(agentry::model::scripted::ScriptedModel::new([]))
        .provider(provider)
        .build()
        .unwrap();
}

#[tokio::test]
async fn a_long_result_reaches_the_model_bounded_and_whole_on_disk() {
    let folder = tempfile::tempdir().unwrap();
    let harness = hostile_bypassed(folder.path()).await;
    let outcome = harness
        .call("mcp__evil__huge", json!({"megabytes": 10}))
        .await;
    let text = outcome.text();
    assert!(!outcome.result.is_error, "{}", &text[..200.min(text.len())]);
    assert!(
        text.len() < 60_000,
        "{} bytes reached the model",
        text.len()
    );
    let marker = "the whole output is in ";
    let path = text[text.find(marker).unwrap() + marker.len()..]
        .split(" (Read it")
        .next()
        .unwrap();
    assert_eq!(
        std::fs::metadata(path).unwrap().len(),
        10 * 1024 * 1024 / 65 * 65
    );
}

#[tokio::test]
async fn a_tool_whose_schema_refers_to_itself_is_called_in_bounded_memory() {
    // Each test is a process of its own (nextest): the limit is this test's.
    let gib = 1024 * 1024 * 1024;
    nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, 4 * gib, 4 * gib)
        .unwrap();
    let folder = tempfile::tempdir().unwrap();
    let harness = hostile_bypassed(folder.path()).await;
    let outcome = harness
        .call("mcp__evil__cycle", json!({"node": {"a": 1}}))
        .await;
    assert!(outcome.result.is_error);
    assert!(outcome.text().contains("loop back"), "{}", outcome.text());
}
