//! The example plugin loaded into the framework directly (no CLI).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::event::ToolCallStatus::*;
use agentry::provider::{Provider, ProviderOrigin};
use agentry::testing::ToolHarness;
use agentry::tool::{ToolContent, ToolKind};
use agentry_plugin_host::load;
use serde_json::json;
use std::time::Duration;

fn hello_plugin() -> std::path::PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    deps.join(format!(
        "{}agentry_plugin_hello{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}

#[tokio::test]
async fn a_loaded_plugin_is_a_provider_like_any_other() {
    let plugin = load(&hello_plugin()).unwrap();
    assert_eq!(plugin.name(), "hello");
    assert_eq!(
        plugin.origin(),
        ProviderOrigin::Plugin {
            path: hello_plugin()
        }
    );
    let tools: Vec<(String, ToolKind)> = plugin
        .tools()
        .iter()
        .map(|t| (t.name().to_owned(), t.kind()))
        .collect();
    assert_eq!(
        tools,
        [
            ("WriteGreeting".to_owned(), ToolKind::Edit),
            ("SlowCount".to_owned(), ToolKind::Think),
            ("CountWords".to_owned(), ToolKind::Read),
            ("Summarize".to_owned(), ToolKind::Read)
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    let harness = ToolHarness::new(&plugin, dir.path()).unwrap();
    let greeting = harness
        .call("WriteGreeting", json!({"name": "Lin", "file": "g.txt"}))
        .await;
    assert_eq!(greeting.statuses(), [Pending, InProgress, Completed]);
    assert_eq!(
        greeting.announced().unwrap().locations[0].path,
        dir.path().canonicalize().unwrap().join("g.txt")
    );
    assert!(
        matches!(&greeting.content()[0], ToolContent::Diff { old_text: None, new_text, .. } if new_text == "Hello, Lin!\n")
    );

    std::fs::write(dir.path().join("words.txt"), "one two\n".repeat(25_000)).unwrap();
    let words = harness
        .call("CountWords", json!({"file": "words.txt"}))
        .await;
    assert_eq!(words.statuses(), [Pending, InProgress, Completed]);
    assert_eq!(words.announced().unwrap().title, "Count words in words.txt");
    assert!(
        words.text().ends_with("words.txt has 50000 words."),
        "{}",
        words.text()
    );
    assert_eq!(words.progress().len(), 2, "a report every 10,000 lines");

    let counted = harness.call("SlowCount", json!({"to": 3})).await;
    assert_eq!(counted.text(), "Counted to 3.");
    assert_eq!(
        counted.progress().len(),
        3,
        "every step crossed the boundary"
    );

    let bad = harness.call("SlowCount", json!({"to": "three"})).await;
    assert_eq!(
        bad.statuses(),
        [Pending, Failed],
        "the host validates the plugin's schema"
    );

    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(250)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let cancelled = harness
        .call_with("SlowCount", json!({"to": 600}), cancel)
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the plugin stopped when asked"
    );
    assert!(
        cancelled
            .text()
            .contains("Cancelled by the user while running")
    );
}
