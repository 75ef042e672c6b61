//! Every stop reason, the structured-output loop and model failures.

use super::support::*;
use agentry::AgentError;
use agentry::agent::{AgentConfig, ChatOptions};
use agentry::event::{AgentEvent, StopReason, ToolCallStatus::*};
use agentry::model::FinishReason;
use agentry::model::scripted::{ScriptStep, ScriptedResponse};
use serde_json::json;

#[tokio::test]
async fn end_turn_after_text() {
    let mut h = harness([ScriptedResponse::text("Paris.")]).build();
    let summary = h.prompt("capital of France?").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::EndTurn);
    assert_eq!(summary.model_requests, 1);
    let kinds: Vec<String> = h
        .events()
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "chat_started",
            "turn_started",
            "user_message",
            "turn_ended",
            "turn_started",
            "text_delta",
            "turn_ended",
            "chat_ended"
        ]
    );
}

#[tokio::test]
async fn max_tokens_and_refusal_stop_the_chat_and_fail_unrun_calls() {
    let mut h = harness([ScriptedResponse::text("cut o")
        .then_tool_call("Look", json!({"path": "a"}))
        .with_stop(FinishReason::MaxTokens)])
    .build();
    let summary = h.prompt("long").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::MaxTokens);
    assert_eq!(summary.result, "cut o");
    assert!(h.log.entries().is_empty());
    let events = h.events();
    assert_eq!(statuses(&events, "call_1_1"), [Pending, Failed]);

    let mut refusal =
        harness([ScriptedResponse::text("I can't").with_stop(FinishReason::Refusal)]).build();
    let summary = refusal.prompt("bad").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::Refusal);
}

#[tokio::test]
async fn max_turn_requests_caps_model_requests_per_chat() {
    let looping = (0..5).map(|i| response([call(&format!("c{i}"), "Look", json!({"path": "a"}))]));
    let mut h = harness(looping)
        .config(AgentConfig {
            max_chat_requests: 2,
            ..AgentConfig::default()
        })
        .build();
    let summary = h.prompt("loop").await.unwrap();
    assert_eq!(summary.stop_reason, StopReason::MaxTurnRequests);
    assert_eq!(summary.model_requests, 2);
    assert_eq!(h.model.requests().len(), 2);
    // The history stays valid: the last tool results are kept for the next chat.
    assert!(matches!(
        h.session.history().last(),
        Some(agentry::model::Message::ToolResults { .. })
    ));
}

#[tokio::test]
async fn model_errors_fail_the_chat_with_a_chat_failed_event() {
    let mut h = harness([response([
        ScriptStep::Text("par".into()),
        ScriptStep::Error("connection reset".into()),
    ])])
    .build();
    let error = h.prompt("hi").await.unwrap_err();
    assert!(matches!(error, AgentError::Model(_)));
    assert!(error.to_string().contains("connection reset"));
    let events = h.events();
    assert!(
        matches!(events.last(), Some(AgentEvent::ChatFailed { message, .. }) if message.contains("connection reset"))
    );
}

#[tokio::test]
async fn an_output_schema_is_enforced_with_bounded_corrections() {
    let schema = json!({"type": "object", "required": ["countries"],
        "properties": {"countries": {"type": "array", "items": {"type": "string"}}}});
    let options = ChatOptions {
        output_schema: Some(schema.clone()),
    };
    let mut h = harness([
        ScriptedResponse::text("Russia, Canada, China"),
        ScriptedResponse::text(
            "```json\n{\"countries\": [\"Russia\", \"Canada\", \"China\"]}\n```",
        ),
    ])
    .build();
    let summary = h
        .prompt_with("three largest countries", &options)
        .await
        .unwrap();
    assert_eq!(
        summary.result,
        json!({"countries": ["Russia", "Canada", "China"]})
    );
    let correction = &h.model.requests()[1];
    assert!(correction.system.contains("JSON Schema"));
    let asked = format!("{:?}", correction.messages.last().unwrap());
    assert!(
        asked.contains("does not satisfy the required JSON Schema"),
        "{asked}"
    );

    let mut stubborn =
        harness((0..3).map(|_| ScriptedResponse::text("{\"countries\": 3}"))).build();
    let error = stubborn.prompt_with("again", &options).await.unwrap_err();
    match error {
        AgentError::OutputSchema { attempts, problems } => {
            assert_eq!(attempts, 3);
            assert!(problems.contains("/countries"), "{problems}");
        }
        other => panic!("unexpected {other:?}"),
    }
}
