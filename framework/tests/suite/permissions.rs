//! Permission modes, option kinds and remembered answers, through whole chats.

use super::support::*;
use agentry::event::Refusal;
use agentry::event::{AgentEvent, ToolCallStatus::*};
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::{
    PermissionMode, PermissionOptionKind::*, PermissionOutcome, PermissionPolicy, PermissionRule,
    RuleAction,
};
use serde_json::json;

fn two_changes() -> Vec<ScriptedResponse> {
    vec![
        response([call("c1", "Change", json!({"path": "a"}))]),
        response([call("c2", "Change", json!({"path": "b"}))]),
        ScriptedResponse::text("done"),
    ]
}

#[tokio::test]
async fn default_mode_asks_for_edits_with_the_four_options_and_allow_once_asks_again() {
    let mut h = harness(two_changes())
        .answers(Answers::with([AllowOnce, AllowOnce]))
        .build();
    h.prompt("change").await.unwrap();
    assert_eq!(h.answers.asked_tools(), ["Change", "Change"]);
    let asked = h.answers.asked.lock().unwrap()[0].clone();
    let kinds: Vec<_> = asked.options.iter().map(|o| o.kind).collect();
    assert_eq!(kinds, [AllowOnce, AllowAlways, RejectOnce, RejectAlways]);
    assert_eq!(asked.tool_call.status, Pending);
    assert_eq!(asked.tool_call.title, "Change a");
    let events = h.events();
    assert_eq!(statuses(&events, "c1"), [Pending, InProgress, Completed]);
    assert_eq!(statuses(&events, "c2"), [Pending, InProgress, Completed]);
    // The handler's answer is what the transcript records.
    let resolved: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::PermissionResolved {
                tool_call_id,
                outcome,
            } => Some((tool_call_id.as_str(), *outcome)),
            _ => None,
        })
        .collect();
    let allowed_once = PermissionOutcome::Selected { kind: AllowOnce };
    assert_eq!(resolved, [("c1", allowed_once), ("c2", allowed_once)]);
}

#[tokio::test]
async fn allow_always_is_remembered_for_the_session() {
    let mut h = harness(two_changes())
        .answers(Answers::with([AllowAlways]))
        .build();
    h.prompt("change").await.unwrap();
    assert_eq!(h.answers.asked_tools(), ["Change"]);
    assert_eq!(h.log.entries(), ["start a", "end a", "start b", "end b"]);
    assert!(h.session.remembered_answers().allowed.contains("Change"));
}

#[tokio::test]
async fn reject_once_fails_the_call_and_tells_the_model_and_reject_always_stops_asking() {
    let mut h = harness(vec![
        response([call("c1", "Change", json!({"path": "a"}))]),
        response([call("c2", "Change", json!({"path": "b"}))]),
        response([call("c3", "Change", json!({"path": "c"}))]),
        ScriptedResponse::text("giving up"),
    ])
    .answers(Answers::with([RejectOnce, RejectAlways]))
    .build();
    h.prompt("change").await.unwrap();
    assert_eq!(h.answers.asked_tools(), ["Change", "Change"]);
    assert!(h.log.entries().is_empty(), "a rejected tool ran");
    let events = h.events();
    for id in ["c1", "c2", "c3"] {
        assert_eq!(statuses(&events, id), [Pending, Failed], "{id}");
    }
    let refusals = ["c1", "c2", "c3"].map(|id| final_update(&events, id).refusal.unwrap());
    assert_eq!(
        refusals[..2],
        [
            Refusal::RejectedByUser {
                tool: "Change".into(),
                always: false
            },
            Refusal::RejectedByUser {
                tool: "Change".into(),
                always: true
            }
        ]
    );
    assert!(
        matches!(&refusals[2], Refusal::DeniedByRule { reason } if reason.contains("rest of this session"))
    );
    let first = results_sent(&h.model, 1);
    assert!(first[0].1 && first[0].2.contains("The user rejected this call of Change"));
    let second = results_sent(&h.model, 2);
    assert!(second[0].2.contains("every later one in this session"));
    let third = results_sent(&h.model, 3);
    assert!(
        third[0]
            .2
            .contains("rejected Change for the rest of this session"),
        "{}",
        third[0].2
    );
}

#[tokio::test]
async fn plan_mode_runs_reads_and_refuses_everything_else_without_asking() {
    let mut h = harness(vec![
        response([
            call("r", "Look", json!({"path": "a"})),
            call("w", "Change", json!({"path": "a"})),
            call("x", "Run", json!({"path": "a"})),
        ]),
        ScriptedResponse::text("planned"),
    ])
    .policy(PermissionPolicy::new(PermissionMode::Plan, vec![]))
    .build();
    h.prompt("plan").await.unwrap();
    assert!(h.answers.asked_tools().is_empty());
    let events = h.events();
    assert_eq!(statuses(&events, "r"), [Pending, InProgress, Completed]);
    assert_eq!(statuses(&events, "w"), [Pending, Failed]);
    assert_eq!(statuses(&events, "x"), [Pending, Failed]);
    assert!(results_sent(&h.model, 1)[1].2.contains("plan mode"));
}

#[tokio::test]
async fn accept_edits_runs_edits_but_asks_for_commands_and_bypass_asks_nothing() {
    let script = || {
        vec![
            response([
                call("w", "Change", json!({"path": "a"})),
                call("x", "Run", json!({"path": "a"})),
            ]),
            ScriptedResponse::text("ok"),
        ]
    };
    let mut accept = harness(script())
        .policy(PermissionPolicy::new(PermissionMode::AcceptEdits, vec![]))
        .answers(Answers::with([AllowOnce]))
        .build();
    accept.prompt("go").await.unwrap();
    assert_eq!(accept.answers.asked_tools(), ["Run"]);

    let mut bypass = harness(script())
        .policy(PermissionPolicy::new(PermissionMode::Bypass, vec![]))
        .build();
    bypass.prompt("go").await.unwrap();
    assert!(bypass.answers.asked_tools().is_empty());
    assert_eq!(bypass.log.entries().len(), 4);
}

#[tokio::test]
async fn rules_allow_and_deny_by_tool_and_path() {
    let mut h = harness(vec![
        response([
            call("ok", "Change", json!({"path": "src/a.rs"})),
            call("no", "Run", json!({"path": "x"})),
        ]),
        ScriptedResponse::text("ok"),
    ])
    .policy(PermissionPolicy::new(
        PermissionMode::Default,
        vec![
            PermissionRule::parse(RuleAction::Allow, "Change(**/src/*.rs)").unwrap(),
            PermissionRule::parse(RuleAction::Deny, "Run").unwrap(),
        ],
    ))
    .build();
    h.prompt("go").await.unwrap();
    assert!(h.answers.asked_tools().is_empty());
    let events = h.events();
    assert_eq!(statuses(&events, "ok"), [Pending, InProgress, Completed]);
    assert_eq!(statuses(&events, "no"), [Pending, Failed]);
    assert!(
        results_sent(&h.model, 1)[1]
            .2
            .contains("denied by the permission rule `Run`")
    );
}
