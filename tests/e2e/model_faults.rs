//! A model server that misbehaves — cuts the stream, stalls, answers 429 / 529 / 500 to every
//! request, sends malformed SSE — gives the user a clear error (after the retry notices), and the
//! session goes on with the next prompt, the failed one in it once.

use crate::{run_openai, run_openai_with_env, sandbox};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::Value;

/// Quick timeouts and retries, so a fault shows within a second.
fn quick_requests(sb: &Sandbox) {
    sb.write(
        "config/agentry/config.toml",
        "[model_requests]\nidle_timeout_secs = 1\nmax_retries = 2\ninitial_backoff_ms = 10\nmax_backoff_ms = 20\n",
    );
}

/// A long answer, so cuts land inside it.
fn long_answer() -> MockReply {
    let mut reply = MockReply::text(&"All of the words of a long answer. ".repeat(20));
    reply.piece = 8;
    reply
}

/// The same fault for every request.
fn always(turn: MockTurn) -> Vec<MockTurn> {
    vec![turn; 10]
}

/// Runs `prompt` against `faulty`, expecting a model failure whose stderr says `expected`; then
/// `again` against a sound server in the same session, which must see `prompt` once.
fn fails_then_goes_on(faulty: Vec<MockTurn>, expected: &[&str]) -> (String, MockModelServer) {
    let sb = sandbox();
    quick_requests(&sb);
    let faulty = MockModelServer::start_blocking(faulty);
    let out = run_openai(
        &sb,
        &faulty,
        &["--output-format", "json", "the first prompt"],
    );
    assert_eq!(out.code, Some(3), "a model failure exits 3: {out:?}");
    for words in expected {
        assert!(out.stderr.contains(words), "{words:?} in {}", out.stderr);
    }
    let sound = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Back."))]);
    let id = out.json()["session_id"].as_str().unwrap().to_owned();
    let next = run_openai(
        &sb,
        &sound,
        &["--resume", &id, "--output-format", "json", "again"],
    );
    assert_eq!(next.code, Some(0), "{next:?}");
    assert_eq!(next.json()["result"], "Back.");
    let sent = sound.requests()[0].body["messages"].to_string();
    assert_eq!(sent.matches("the first prompt").count(), 1, "{sent}");
    assert!(sent.contains("again"));
    (out.stderr, faulty)
}

#[test]
fn a_stream_cut_mid_answer_is_an_error_and_the_next_prompt_goes_on() {
    let mut cut = long_answer();
    cut.drop_after = Some(900);
    fails_then_goes_on(vec![MockTurn::Reply(cut)], &["the response broke off"]);
}

#[test]
fn a_stalled_stream_times_out_with_a_clear_error() {
    let mut stalled = long_answer();
    stalled.stall_after = Some(900);
    fails_then_goes_on(vec![MockTurn::Reply(stalled)], &["idle timeout"]);
}

/// `status` for every request: two retry notices, then the error with the server's message.
fn refused_every_time(status: u16, message: &str) {
    let answer = MockTurn::Status {
        status,
        headers: vec![],
        body: format!(r#"{{"error":{{"message":"{message}"}}}}"#),
    };
    let expected = format!("error: model API error (HTTP {status}): {message}");
    let (stderr, faulty) = fails_then_goes_on(always(answer), &[&expected]);
    assert_eq!(stderr.matches("retrying in").count(), 2, "{stderr}");
    assert!(stderr.contains("attempt 3 of 3"), "{stderr}");
    assert_eq!(
        faulty.requests().len(),
        3,
        "max_retries = 2: three attempts"
    );
}

#[test]
fn a_server_answering_429_forever_is_retried_then_reported() {
    refused_every_time(429, "Rate limit reached");
}

#[test]
fn a_server_answering_500_forever_is_retried_then_reported() {
    refused_every_time(500, "internal error");
}

#[test]
fn an_anthropic_server_overloaded_forever_is_retried_then_reported() {
    let sb = sandbox();
    quick_requests(&sb);
    let overloaded = MockTurn::Status {
        status: 529,
        headers: vec![],
        body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            .into(),
    };
    let server = MockModelServer::start_blocking(always(overloaded));
    let url = server.url();
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant-e2e"),
        ("ANTHROPIC_BASE_URL", url.as_str()),
    ];
    let out = sb.run_with_env(
        &["run", "--model", "anthropic/claude-sonnet-4-5", "hello"],
        &env,
    );
    assert_eq!(out.code, Some(3), "{out:?}");
    assert_eq!(
        out.stderr.matches("retrying in").count(),
        2,
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Overloaded"), "{}", out.stderr);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn malformed_sse_is_an_error_naming_what_came() {
    let garbage =
        MockTurn::Raw(b"data: {\"choices\": [{\"delta\": {\"content\": \"Hi\"\n\n".to_vec());
    fails_then_goes_on(vec![garbage], &["not JSON", r#"{"choices": [{"delta""#]);
}

#[test]
fn retry_notices_reach_stream_json_as_they_happen() {
    let sb = sandbox();
    quick_requests(&sb);
    let server = MockModelServer::start_blocking([
        MockTurn::Status {
            status: 503,
            headers: vec![],
            body: "busy".into(),
        },
        MockTurn::Reply(MockReply::text("Made it.")),
    ]);
    let out = run_openai_with_env(&sb, &server, &["--output-format", "stream-json", "go"], &[]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines = out.json_lines();
    let notice = lines
        .iter()
        .position(|l| l.to_string().contains("HTTP 503") && l.to_string().contains("retrying"))
        .expect("a retry notice in the stream");
    let answer = lines
        .iter()
        .rposition(|l: &Value| l.to_string().contains("Made it."))
        .unwrap();
    assert!(notice < answer);
}
