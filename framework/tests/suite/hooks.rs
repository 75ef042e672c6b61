//! Hooks around tool use, with Claude Code's contract: real shell commands read the event on
//! stdin and answer with their exit code and stdout.

use super::support::*;
use agentry::event::AgentEvent;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::PermissionOptionKind::AllowOnce;
use agentry_stock::hooks::{HookSettings, SettingsHooks};
use serde_json::json;
use std::sync::Arc;

/// Hooks from the `hooks` of a Claude Code `settings.json`.
fn hooks(settings: serde_json::Value) -> Arc<SettingsHooks> {
    let settings: HookSettings = serde_json::from_value(settings).unwrap();
    Arc::new(SettingsHooks::new(settings))
}

fn one_call(tool: &str, path: &str) -> Vec<ScriptedResponse> {
    vec![
        response([call("c1", tool, json!({"path": path}))]),
        ScriptedResponse::text("done"),
    ]
}

#[tokio::test]
async fn a_pre_hook_exiting_2_denies_the_call_with_its_stderr_for_the_model() {
    let mut h = harness(one_call("Run", "rm-everything"))
        .hooks(hooks(json!({"PreToolUse": [{"matcher": "Run", "hooks": [{"type": "command",
            "command": "input=$(cat); case \"$input\" in *rm-everything*) echo 'no deleting here' >&2; exit 2;; esac"}]}]})))
        .build();
    h.prompt("go").await.unwrap();
    assert!(
        h.log.entries().is_empty(),
        "the call ran: {:?}",
        h.log.entries()
    );
    assert!(h.answers.asked_tools().is_empty(), "the user was asked");
    let results = results_sent(&h.model, 1);
    assert!(results[0].1, "{results:?}");
    assert!(
        results[0]
            .2
            .contains("A hook denied this call: no deleting here"),
        "{results:?}"
    );
}

#[tokio::test]
async fn the_hook_gets_the_event_as_claude_code_sends_it() {
    let mut h = harness(one_call("Look", "notes.md"))
        .hooks(hooks(
            json!({"PreToolUse": [{"matcher": "", "hooks": [{"type": "command",
            "command": "cat > \"$CLAUDE_PROJECT_DIR/event.json\""}]}]}),
        ))
        .build();
    h.prompt("go").await.unwrap();
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(h.dir.path().join("event.json")).unwrap())
            .unwrap();
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "Look");
    assert_eq!(event["tool_input"], json!({"path": "notes.md"}));
    assert_eq!(event["tool_use_id"], "c1");
    assert_eq!(event["permission_mode"], "default");
    assert_eq!(event["session_id"], h.session.id().to_string());
    assert_eq!(h.log.entries(), ["start notes.md", "end notes.md"]);
}

#[tokio::test]
async fn a_json_allow_skips_the_question_and_ask_forces_it() {
    let allow = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#;
    let mut h = harness(one_call("Change", "a.txt"))
        .hooks(hooks(json!({"PreToolUse": [{"matcher": "kind:edit", "hooks": [{"type": "command", "command": allow}]}]})))
        .build();
    h.prompt("go").await.unwrap();
    assert!(h.answers.asked_tools().is_empty());
    assert_eq!(h.log.entries(), ["start a.txt", "end a.txt"]);

    let ask = r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "look first"}}'"#;
    let mut h = harness(one_call("Look", "b.txt"))
        .answers(Answers::with([AllowOnce]))
        .hooks(hooks(json!({"PreToolUse": [{"matcher": "Look", "hooks": [{"type": "command", "command": ask}]}]})))
        .build();
    h.prompt("go").await.unwrap();
    assert_eq!(
        h.answers.asked_tools(),
        ["Look"],
        "a read-only call was asked because the hook said so"
    );
}

#[tokio::test]
async fn a_pre_hook_rewrites_the_input() {
    let rewrite = r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"path": "safe.txt"}}}'"#;
    let mut h = harness(one_call("Run", "danger.txt"))
        .hooks(hooks(json!({"PreToolUse": [{"matcher": "Run", "hooks": [{"type": "command", "command": rewrite}]}]})))
        .build();
    h.prompt("go").await.unwrap();
    assert_eq!(h.log.entries(), ["start safe.txt", "end safe.txt"]);
    assert!(
        results_sent(&h.model, 1)[0]
            .2
            .contains("Run done with safe.txt")
    );
}

#[tokio::test]
async fn a_hook_that_times_out_or_fails_is_reported_and_the_call_goes_on() {
    let mut h = harness(one_call("Look", "x.txt"))
        .hooks(hooks(json!({"PreToolUse": [{"matcher": "Look", "hooks": [
            {"type": "command", "command": "sleep 30", "timeout": 1},
            {"type": "command", "command": "echo broken >&2; exit 1"}
        ]}]})))
        .build();
    let started = std::time::Instant::now();
    h.prompt("go").await.unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the turn hung"
    );
    assert_eq!(h.log.entries(), ["start x.txt", "end x.txt"]);
    let notices: Vec<String> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("`sleep 30` timed out after 1 s")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("failed (exit code 1): broken")),
        "{notices:?}"
    );
}

#[tokio::test]
async fn a_post_hook_gives_the_model_feedback_with_the_result() {
    let mut h = harness(one_call("Look", "y.txt"))
        .hooks(hooks(json!({"PostToolUse": [{"matcher": "Look", "hooks": [{"type": "command",
            "command": "input=$(cat); case \"$input\" in *'Look done with y.txt'*) echo 'lint: 2 warnings' >&2; exit 2;; esac"}]}]})))
        .build();
    h.prompt("go").await.unwrap();
    let result = &results_sent(&h.model, 1)[0].2;
    assert!(result.contains("Look done with y.txt"), "{result}");
    assert!(
        result.contains("PostToolUse hook feedback:\nlint: 2 warnings"),
        "{result}"
    );
}

#[tokio::test]
async fn a_prompt_hook_blocks_a_prompt_or_adds_context_to_it() {
    let mut h = harness([ScriptedResponse::text("answered")])
        .hooks(hooks(json!({"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "input=$(cat); case \"$input\" in *secret*) echo 'no secrets in prompts' >&2; exit 2;; esac; echo 'The build is green.'"}]}]})))
        .build();
    let blocked = h.prompt("here is my secret").await.unwrap_err();
    assert_eq!(
        blocked.to_string(),
        "a hook blocked the prompt: no secrets in prompts"
    );
    assert!(
        h.model.requests().is_empty(),
        "the model saw a blocked prompt"
    );
    h.prompt("how is the build?").await.unwrap();
    let sent = serde_json::to_string(&h.model.requests()[0].messages).unwrap();
    assert!(
        sent.contains("how is the build?") && sent.contains("The build is green."),
        "{sent}"
    );
}

#[tokio::test]
async fn a_stop_hook_makes_the_agent_go_on_once_with_its_reason() {
    // Exit 2 unless a stop hook already made the chat go on (Claude Code's stop_hook_active).
    let mut h = harness([ScriptedResponse::text("first try"), ScriptedResponse::text("tests run")])
        .hooks(hooks(json!({"Stop": [{"hooks": [{"type": "command",
            "command": "grep -q '\"stop_hook_active\":true' && exit 0; echo 'run the tests first' >&2; exit 2"}]}]})))
        .build();
    let summary = h.prompt("fix it").await.unwrap();
    assert_eq!(summary.result, "tests run");
    assert_eq!(h.model.requests().len(), 2);
    let second = serde_json::to_string(&h.model.requests()[1].messages).unwrap();
    assert!(
        second.contains("Stop hook feedback:\\nrun the tests first"),
        "{second}"
    );
}

/// Hooks that never let the agent stop.
struct NeverStop;

#[agentry::async_trait]
impl agentry::hooks::AgentHooks for NeverStop {
    fn takes(&self, event: &str) -> bool {
        event == "Stop"
    }

    async fn on_event(&self, _input: &agentry::hooks::HookInput) -> agentry::hooks::HookReply {
        agentry::hooks::HookReply::block("not done yet")
    }
}

#[tokio::test]
async fn stop_hooks_that_never_let_the_agent_stop_are_overruled_after_eight_refusals() {
    let answers = (1..=12).map(|n| ScriptedResponse::text(format!("answer {n}")));
    let mut h = harness(answers).hooks(Arc::new(NeverStop)).build();
    let summary = h.prompt("go").await.unwrap();
    assert_eq!(h.model.requests().len(), 9, "one answer and eight refusals");
    assert_eq!(summary.result, "answer 9");
    let mut notices = Vec::new();
    while let Ok(event) = h.events.try_recv() {
        if let AgentEvent::Notice { message } = event {
            notices.push(message);
        }
    }
    assert!(
        notices
            .iter()
            .any(|n| n.contains("8 times in a row: it stops anyway")),
        "{notices:?}"
    );
}

/// Hooks written in Rust: every call's input gets a prefix, and each call is counted.
struct Prefixing(std::sync::Mutex<Vec<String>>);

#[agentry::async_trait]
impl agentry::hooks::AgentHooks for Prefixing {
    fn takes(&self, event: &str) -> bool {
        event == "PreToolUse"
    }

    async fn on_event(&self, input: &agentry::hooks::HookInput) -> agentry::hooks::HookReply {
        let agentry::hooks::HookEvent::PreToolUse(call) = &input.event else {
            unreachable!("only PreToolUse is taken")
        };
        self.0.lock().unwrap().push(call.tool_name.clone());
        let path = call.tool_input["path"].as_str().unwrap_or_default();
        agentry::hooks::HookReply {
            updated_input: Some(json!({"path": format!("sandbox/{path}")})),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn hooks_written_in_rust_see_and_rewrite_calls() {
    let hooks = Arc::new(Prefixing(Default::default()));
    let mut h = harness(one_call("Look", "a.txt"))
        .hooks(hooks.clone())
        .build();
    h.prompt("go").await.unwrap();
    assert_eq!(*hooks.0.lock().unwrap(), ["Look"]);
    assert_eq!(
        h.log.entries(),
        ["start sandbox/a.txt", "end sandbox/a.txt"]
    );
}
