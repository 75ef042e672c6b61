//! Cancelling a chat during the model stream, a tool, and a permission question.

use super::support::*;
use agentry::event::{AgentEvent, StopReason, ToolCallStatus::*};
use agentry::model::Message;
use agentry::model::scripted::ScriptStep;
use agentry::permission::PermissionOutcome;
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn cancelling_during_the_model_stream_ends_the_chat_cancelled_with_the_partial_text() {
    let h = harness([response([
        ScriptStep::Text("Hel".into()),
        ScriptStep::DelayMs(60_000),
        ScriptStep::Text("lo".into()),
    ])])
    .build();
    let cancel = h.cancel.clone();
    let io = h.io();
    let Harness {
        mut session,
        mut events,
        ..
    } = h;
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if matches!(event, AgentEvent::TextDelta { .. }) {
                cancel.cancel();
            }
        }
    });
    let started = Instant::now();
    let content = vec![agentry::tool::ContentBlock::Text { text: "hi".into() }];
    let summary = session
        .prompt_with(content, &Default::default(), &io)
        .await
        .unwrap();
    assert_eq!(summary.stop_reason, StopReason::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(summary.result, "Hel");
    assert!(matches!(
        session.history().last(),
        Some(Message::Assistant { .. })
    ));
}

#[tokio::test]
async fn cancelling_during_a_tool_stops_it_and_fails_the_call() {
    let mut h = harness([response([
        call("slow", "Look", json!({"path": "slow", "millis": 60_000})),
        call("after", "Change", json!({"path": "after"})),
    ])])
    .build();
    let cancel = h.cancel.clone();
    let log = h.log.clone();
    let watcher = tokio::spawn(async move {
        while !log.entries().contains(&"start slow".to_owned()) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
    });
    let summary = h.prompt("go").await.unwrap();
    watcher.await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::Cancelled);
    // The tool saw the cancellation and stopped before its chat ended: nothing is left running.
    assert_eq!(h.log.entries(), ["start slow", "cancelled slow"]);
    let events = h.events();
    assert_eq!(statuses(&events, "slow"), [Pending, InProgress, Failed]);
    assert!(
        update_text(&final_update(&events, "slow")).contains("Cancelled by the user while running")
    );
    assert_eq!(statuses(&events, "after"), [Pending, Failed]);
    assert!(
        matches!(events.last(), Some(AgentEvent::ChatEnded(s)) if s.stop_reason == StopReason::Cancelled)
    );
    // The history stays valid for the next chat: every call has a result.
    assert!(
        matches!(h.session.history().last(), Some(Message::ToolResults { results }) if results.len() == 2)
    );
}

#[tokio::test]
async fn cancelling_during_a_permission_question_answers_it_cancelled() {
    // No answers queued: the handler never answers by itself.
    let mut h = harness([response([call("c", "Change", json!({"path": "a"}))])]).build();
    let cancel = h.cancel.clone();
    let asked = h.answers.asked.clone();
    tokio::spawn(async move {
        while asked.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
    });
    let summary = h.prompt("go").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::Cancelled);
    let events = h.events();
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::PermissionResolved {
            outcome: PermissionOutcome::Cancelled,
            ..
        }
    )));
    assert_eq!(statuses(&events, "c"), [Pending, Failed]);
    assert!(h.log.entries().is_empty());
}
