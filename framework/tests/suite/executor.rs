//! The executor: statuses, validation, recovery from bad input, progress, panics.

use super::support::*;
use agentry::event::CallTracker;
use agentry::event::Refusal;
use agentry::event::{AgentEvent, ToolCallSnapshot, ToolCallStatus::*, ToolCallUpdate};
use agentry::event::{PlanEntry, PlanPriority, PlanStatus};
use agentry::model::scripted::{ScriptStep, ScriptedResponse, ScriptedToolCall};
use agentry::permission::{PermissionMode, PermissionPolicy};
use agentry::tool::{Tool, ToolContent, ToolContext, ToolError, ToolKind, ToolProgress, erase};
use serde_json::json;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn a_successful_call_goes_pending_in_progress_completed_with_everything_attached() {
    let mut h = harness([
        response([call("c1", "Look", json!({"path": "src/a.rs"}))]),
        ScriptedResponse::text("Read it."),
    ])
    .build();
    let summary = h.prompt("look").await.unwrap();
    assert_eq!(summary.result, "Read it.");
    let events = h.events();
    assert_eq!(statuses(&events, "c1"), [Pending, InProgress, Completed]);
    let announced = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCall(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(announced.title, "Look src/a.rs");
    assert_eq!(announced.kind, ToolKind::Read);
    assert_eq!(announced.raw_input, json!({"path": "src/a.rs"}));
    assert_eq!(announced.locations[0].path, h.dir.path().join("src/a.rs"));
    assert_eq!(announced.locations[0].line, Some(1));
    let progress = events.iter().any(|e| {
        matches!(e,
        AgentEvent::ToolCallUpdate(ToolCallUpdate { status: None, content: Some(c), .. })
            if c == &vec![ToolContent::text("working")])
    });
    assert!(progress, "progress content was not forwarded");
    let done = final_update(&events, "c1");
    assert_eq!(update_text(&done), "Look done with src/a.rs");
    assert_eq!(done.raw_output, Some(json!({"path": "src/a.rs"})));
    assert!(done.duration_ms.is_some());
    assert_eq!(
        results_sent(&h.model, 1),
        [("c1".to_owned(), false, "Look done with src/a.rs".to_owned())]
    );
}

fn snapshot(id: &str) -> ToolCallSnapshot {
    ToolCallSnapshot {
        tool_call_id: id.into(),
        turn_id: "t".into(),
        tool_name: "X".into(),
        title: "X".into(),
        kind: ToolKind::Other,
        status: Pending,
        raw_input: json!({}),
        locations: vec![],
    }
}

#[test]
fn the_tracker_refuses_illegal_transitions_and_emits_nothing_for_them() {
    // Each path is a list of (requested status, whether it is legal at that point).
    let paths = [
        (
            "ok",
            vec![
                (Completed, false),
                (Pending, false),
                (InProgress, true),
                (InProgress, false),
                (Pending, false),
                (Completed, true),
                (Pending, false),
                (InProgress, false),
                (Completed, false),
                (Failed, false),
            ],
        ),
        (
            "rejected",
            vec![
                (Failed, true),
                (Completed, false),
                (InProgress, false),
                (Pending, false),
            ],
        ),
        (
            "crashed",
            vec![(InProgress, true), (Failed, true), (Completed, false)],
        ),
    ];
    for (id, steps) in paths {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            move |e: AgentEvent| seen.lock().unwrap().push(e)
        };
        let mut tracker = CallTracker::announce(snapshot(id), Arc::new(sink));
        let mut expected = vec![Pending];
        for (to, legal) in steps {
            let from = tracker.status();
            let outcome = tracker.transition(to, ToolCallUpdate::default());
            assert_eq!(outcome.is_ok(), legal, "{id}: {from:?} -> {to:?}");
            if legal {
                expected.push(to);
            } else {
                assert_eq!(outcome.unwrap_err().from, from);
                assert_eq!(
                    tracker.status(),
                    from,
                    "{id}: an illegal change moved the call"
                );
            }
        }
        let emitted = seen.lock().unwrap().clone();
        assert_eq!(statuses(&emitted, id), expected, "{id}");
    }
}

#[tokio::test]
async fn bad_input_fails_the_call_and_the_model_recovers() {
    let raw = ScriptStep::ToolCall(ScriptedToolCall {
        id: Some("bad_json".into()),
        name: "Look".into(),
        arguments: None,
        raw_arguments: Some("{\"path\": \"a.rs\"".into()),
    });
    let mut h = harness([
        response([
            raw,
            call("bad_schema", "Look", json!({"path": 7})),
            call("no_tool", "Nope", json!({})),
        ]),
        response([call("good", "Look", json!({"path": "a.rs"}))]),
        ScriptedResponse::text("Recovered."),
    ])
    .build();
    let summary = h.prompt("look").await.unwrap();
    assert_eq!(summary.result, "Recovered.");
    let events = h.events();
    for id in ["bad_json", "bad_schema", "no_tool"] {
        assert_eq!(statuses(&events, id), [Pending, Failed], "{id}");
    }
    assert_eq!(statuses(&events, "good"), [Pending, InProgress, Completed]);
    let refusal = |id| final_update(&events, id).refusal.unwrap();
    assert!(matches!(refusal("bad_json"), Refusal::BadJson { tool, .. } if tool == "Look"));
    assert!(
        matches!(refusal("bad_schema"), Refusal::SchemaMismatch { problems, .. } if problems.contains("/path"))
    );
    assert!(
        matches!(refusal("no_tool"), Refusal::UnknownTool { tool, available } if tool == "Nope" && available.contains("Look"))
    );
    assert_eq!(final_update(&events, "good").refusal, None);
    let sent = results_sent(&h.model, 1);
    assert!(sent.iter().all(|(_, is_error, _)| *is_error));
    assert!(sent[0].2.contains("not valid JSON"), "{}", sent[0].2);
    assert!(
        sent[1].2.contains("do not match Look's input schema"),
        "{}",
        sent[1].2
    );
    assert!(sent[1].2.contains("/path"), "{}", sent[1].2);
    assert!(
        sent[2].2.contains("There is no tool named `Nope`"),
        "{}",
        sent[2].2
    );
    assert!(sent[2].2.contains("Look"), "{}", sent[2].2);
    // The raw input of the invalid JSON call is shown as the string the model sent.
    let raw_input = events.iter().find_map(|e| match e {
        AgentEvent::ToolCall(s) if s.tool_call_id.as_str() == "bad_json" => {
            Some(s.raw_input.clone())
        }
        _ => None,
    });
    assert_eq!(raw_input, Some(json!("{\"path\": \"a.rs\"")));
    assert!(h.log.entries().iter().all(|e| e.ends_with("a.rs")));
}

struct Panics;

impl Tool for Panics {
    type Input = PathInput;
    type Output = String;
    fn name(&self) -> &str {
        "Panics"
    }
    fn description(&self) -> String {
        "Always panics.".into()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    async fn call(&self, input: PathInput, ctx: ToolContext) -> Result<String, ToolError> {
        ctx.progress.report(ToolProgress::Plan(vec![PlanEntry {
            content: "step".into(),
            priority: PlanPriority::High,
            status: PlanStatus::InProgress,
        }]));
        panic!("boom at {}", input.path);
    }
}

#[tokio::test]
async fn a_panicking_tool_becomes_a_failed_call_and_plans_reach_the_stream() {
    let mut h = harness([
        response([call("p", "Panics", json!({"path": "x"}))]),
        ScriptedResponse::text("ok"),
    ])
    .tool(erase(Panics))
    .policy(PermissionPolicy::new(PermissionMode::Default, vec![]))
    .build();
    h.prompt("go").await.unwrap();
    let events = h.events();
    assert_eq!(statuses(&events, "p"), [Pending, InProgress, Failed]);
    assert!(update_text(&final_update(&events, "p")).contains("the tool panicked: boom at x"));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Plan { entries } if entries[0].content == "step"))
    );
}

/// A tool whose schema is not JSON Schema (`type` must be a string or a list).
struct BrokenSchema;

impl agentry::tool::DynTool for BrokenSchema {
    fn name(&self) -> &str {
        "Broken"
    }
    fn description(&self) -> String {
        "Has a schema no validator compiles.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Think
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({"type": 12})
    }
    fn prepare(
        &self,
        _input: serde_json::Value,
        _cwd: &std::path::Path,
    ) -> Result<Box<dyn agentry::tool::PreparedCall>, ToolError> {
        Err(ToolError::failed("prepared without a valid schema"))
    }
}

#[tokio::test]
async fn a_tool_whose_schema_does_not_compile_fails_its_calls_and_the_rest_work() {
    let mut h = harness([
        response([
            call("b", "Broken", json!({})),
            call("ok", "Look", json!({"path": "a.rs"})),
        ]),
        ScriptedResponse::text("done"),
    ])
    .tool(Arc::new(BrokenSchema))
    .build();
    h.prompt("go").await.unwrap();
    let events = h.events();
    assert_eq!(statuses(&events, "b"), [Pending, Failed]);
    assert!(
        matches!(final_update(&events, "b").refusal, Some(Refusal::BrokenSchema { tool, .. }) if tool == "Broken")
    );
    assert_eq!(statuses(&events, "ok"), [Pending, InProgress, Completed]);
    let sent = results_sent(&h.model, 1);
    assert!(
        sent[0]
            .2
            .contains("its input schema is not valid JSON Schema"),
        "{}",
        sent[0].2
    );
}
