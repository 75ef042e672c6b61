//! Recording a session's model traffic (`--record`) and playing it back offline
//! (`--model replay:FILE`), through the binary against the mock OpenAI server.

use crate::{run_openai_with_env, sandbox};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

/// A secret the environment holds, which a command prints.
const TOKEN: &str = "tok-0123456789abcdef";

#[test]
fn a_recorded_session_replays_offline_without_its_secrets_and_divergence_is_explained() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "[record]\nredact = [\"ticket-[0-9]+\"]\n",
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "c1",
            "Bash",
            json!({"command": "echo \"token: $SERVICE_TOKEN\""}),
        )),
        MockTurn::Reply(MockReply::text("The token is set.")),
    ]);
    let recording = sb.project().parent().unwrap().join("session.jsonl");
    let file = recording.display().to_string();
    let env = [("SERVICE_TOKEN", TOKEN)];
    let prompt = "Check the token for ticket-4711";
    let recorded = run_openai_with_env(
        &sb,
        &server,
        &["--allow", "Bash", "--record", &file, prompt],
        &env,
    );
    assert_eq!(recorded.code, Some(0), "{recorded:?}");
    assert_eq!(recorded.stdout.trim(), "The token is set.");
    let text = std::fs::read_to_string(&recording).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "a header and two exchanges:\n{text}");
    assert_eq!(lines[0]["agentry_recording"], 1);
    assert_eq!(lines[0]["model"], "openai/gpt-4.1");
    assert_eq!(lines[2]["events"][0]["text"], "The token is set.");
    for secret in [TOKEN, "ticket-4711", "sk-e2e"] {
        assert!(!text.contains(secret), "`{secret}` was recorded:\n{text}");
    }
    assert!(text.contains("token: [REDACTED]"), "{text}");

    let replay = format!("replay:{file}");
    let played = sb.run_with_env(
        &["run", "--model", &replay, "--allow", "Bash", prompt],
        &env,
    );
    assert_eq!(played.code, Some(0), "{played:?}");
    assert_eq!(played.stdout.trim(), "The token is set.");
    assert_eq!(server.requests().len(), 2, "the replay asked the server");

    let diverged = sb.run_with_env(
        &[
            "run",
            "--model",
            &replay,
            "--allow",
            "Bash",
            "Delete the token",
        ],
        &env,
    );
    assert_eq!(diverged.code, Some(3), "{diverged:?}");
    assert!(
        diverged.stderr.contains(
            "request 1 diverges from recorded request 1: messages[0].content[0].text differs"
        ),
        "{}",
        diverged.stderr
    );
    assert!(
        diverged.stderr.contains("-Check the token for [REDACTED]")
            && diverged.stderr.contains("+Delete the token"),
        "{}",
        diverged.stderr
    );
}

#[test]
fn an_editor_session_is_recorded_to_a_file_of_its_own() {
    let sb = sandbox();
    let server =
        MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Hello there."))]);
    let dir = sb.project().parent().unwrap().join("recordings");
    let base = format!("{}/v1", server.url());
    let out = sb.acp(
        &[
            "--model",
            "openai/gpt-4.1",
            "--record",
            &dir.display().to_string(),
        ],
        &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
        json!({"steps": crate::acp::session_steps(&sb, vec![crate::acp::prompt("hi")])}),
    );
    assert_eq!(
        out.result(2)["stopReason"],
        "end_turn",
        "{:#?}",
        out.records
    );
    let session = out.result(1)["sessionId"].as_str().unwrap().to_owned();
    let text = std::fs::read_to_string(dir.join(format!("{session}.jsonl"))).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("Hello there."), "{text}");
}
