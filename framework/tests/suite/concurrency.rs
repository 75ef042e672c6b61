//! Several calls in one response: reads together, the rest one at a time, results in order.

use super::support::*;
use agentry::agent::ChatOptions;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::{PermissionMode, PermissionOptionKind, PermissionPolicy};
use agentry::tool::ContentBlock;
use agentry::tool::{Tool, ToolContext, ToolError, ToolKind, erase};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::Barrier;

/// A read-only tool that waits until `n` calls are inside it at once: it can only finish when
/// the executor runs them concurrently.
struct Rendezvous(Arc<Barrier>);

impl Tool for Rendezvous {
    type Input = PathInput;
    type Output = String;
    fn name(&self) -> &str {
        "Meet"
    }
    fn description(&self) -> String {
        "Waits for the others.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }
    async fn call(&self, input: PathInput, _ctx: ToolContext) -> Result<String, ToolError> {
        self.0.wait().await;
        Ok(format!("met at {}", input.path))
    }
}

#[tokio::test]
async fn read_only_calls_run_concurrently() {
    let mut h = harness(vec![
        response([
            call("m1", "Meet", json!({"path": "1"})),
            call("m2", "Meet", json!({"path": "2"})),
            call("m3", "Meet", json!({"path": "3"})),
        ]),
        ScriptedResponse::text("all met"),
    ])
    .tool(erase(Rendezvous(Arc::new(Barrier::new(3)))))
    .build();
    // Run one after another, the first call would wait forever at the barrier.
    let summary = h.prompt("meet").await.unwrap();
    assert_eq!(summary.result, "all met");
    let sent: Vec<_> = results_sent(&h.model, 1).into_iter().map(|r| r.2).collect();
    assert_eq!(sent, ["met at 1", "met at 2", "met at 3"]);
}

#[tokio::test]
async fn mutating_calls_run_one_at_a_time_in_order_and_results_keep_the_models_order() {
    let mut h = harness(vec![
        response([
            call("w1", "Change", json!({"path": "w1", "millis": 60})),
            call("r1", "Look", json!({"path": "r1", "millis": 80})),
            call("r2", "Look", json!({"path": "r2", "millis": 1})),
            call("w2", "Run", json!({"path": "w2", "millis": 1})),
            call("w3", "Change", json!({"path": "w3", "millis": 1})),
        ]),
        ScriptedResponse::text("ok"),
    ])
    .policy(PermissionPolicy::new(PermissionMode::Bypass, vec![]))
    .build();
    h.prompt("go").await.unwrap();
    let log = h.log.entries();
    // w1 runs alone; the reads run together after it (r2 ends first); w2 then w3 after them.
    assert_eq!(
        log,
        [
            "start w1", "end w1", "start r1", "start r2", "end r2", "end r1", "start w2", "end w2",
            "start w3", "end w3"
        ]
    );
    let ids: Vec<_> = results_sent(&h.model, 1).into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["w1", "r1", "r2", "w2", "w3"]);
}

/// Front-ends (ACP, the WebSocket server) run each session's chats on tasks of their own, so a
/// chat that asks permission and runs tools must be a `Send` future.
#[tokio::test]
async fn a_chat_with_permission_questions_runs_on_a_spawned_task() {
    let h = harness(vec![
        response([call("w1", "Change", json!({"path": "w1", "millis": 1}))]),
        ScriptedResponse::text("changed"),
    ])
    .answers(Answers::with([PermissionOptionKind::AllowOnce]))
    .build();
    let io = h.io();
    let mut session = h.session;
    let chat = tokio::spawn(async move {
        let content = vec![ContentBlock::Text { text: "go".into() }];
        session
            .prompt_with(content, &ChatOptions::default(), &io)
            .await
    });
    let summary = chat.await.unwrap().unwrap();
    assert_eq!(summary.answer(), "changed");
    assert_eq!(h.answers.asked_tools(), ["Change"]);
    assert_eq!(h.log.entries(), ["start w1", "end w1"]);
}
